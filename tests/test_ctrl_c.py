"""Ctrl-C at any moment of a training run, compiled sections included: every time the run
stops with :class:`~hiddenhand.interrupt.Interrupted` (status 130 from the command), a
policy file that loads and plays, and ``run.json`` saying ``interrupted``.

A Ctrl-C that lands inside numba-compiled code is the case that used to lose the policy: the
``KeyboardInterrupt`` came back out as a ``SystemError`` or a failed unboxing. A timer cannot
aim at a kernel, so :func:`pressing_inside` replaces a kernel by a compiled one that sends
the signal from inside compiled code (libc's ``kill`` through ctypes, which numba calls in
nopython mode) and then runs the real kernel."""

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace

import numpy as np
import pytest
from conftest import ctrl_c_reaches_the_child
from numba import njit

from hiddenhand.agents import RandomAgent, load_agent
from hiddenhand.envs import goofspiel_observation, goofspiel_vector
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.interrupt import Interrupted
from hiddenhand.registry import get
from hiddenhand.solvers.goofspiel import positions
from hiddenhand.training import policy_gradient, regret_kernels, run, sampled_regret
from hiddenhand.training.evaluation import play_games
from hiddenhand.training.sampled_regret import RegretSettings

pytestmark = pytest.mark.ctrl_c

MARKOV = {"num_cards": 4, "observation": "markov"}

_libc = ctypes.CDLL(None)
_kill, _getpid = _libc.kill, _libc.getpid
_kill.argtypes, _kill.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
_getpid.argtypes, _getpid.restype = [], ctypes.c_int


def pressing_inside(monkeypatch, module, name: str, call: int = 1, signum: int = signal.SIGINT) -> None:
    """Replace the compiled ``module.name`` so that its ``call``-th call from Python sends
    this process ``signum`` from inside compiled code, then runs the real kernel."""
    real = getattr(module, name)
    sent = int(signum)

    @njit
    def press_then_run(*args):
        _kill(_getpid(), sent)
        return real(*args)

    calls = []

    def kernel(*args):
        calls.append(1)
        return press_then_run(*args) if len(calls) == call else real(*args)

    monkeypatch.setattr(module, name, kernel)


def regret(out, steps: int = 10**9):
    return sampled_regret.train_regret(
        get("goofspiel").rules(**MARKOV),
        steps=steps,
        out=out,
        eval_every=20_000,
        settings=RegretSettings(games=64),
        progress=False,
    )


def selfplay(out):
    settings = replace(policy_gradient.settings_for("mmd", "goofspiel"), games=16, batch=256, epochs=1)
    return policy_gradient.train_selfplay(
        get("goofspiel").rules(**MARKOV), steps=10**9, out=out, eval_every=512, settings=settings, progress=False
    )


def assert_kept(out) -> dict:
    """The interrupted run's record, after checking that its policy loads and plays whole games."""
    record = json.loads((out / "run.json").read_text())
    assert record["interrupted"] is True
    agent = load_agent("goofspiel", str(out), MARKOV)
    returns = play_games(GoofspielRules(**MARKOV), [agent, RandomAgent()], 4, seed=0)
    assert returns.shape == (4, 2) and np.all(returns.sum(axis=1) == 0)
    assert not list(out.glob(".*.tmp"))
    return record


def stopped(train, out) -> Interrupted:
    with pytest.raises(Interrupted) as info:
        train(out)
    return info.value


KERNELS = [
    (regret_kernels, "hash_observations", 5),
    (regret_kernels, "find_rows", 5),
    (regret_kernels, "act", 5),
    (regret_kernels, "credit", 2),
    (regret_kernels, "learn", 2),
    (regret_kernels, "restart_probes", 9),
    (goofspiel_vector, "_step_all", 7),
    (goofspiel_observation, "_canonical_markov", 3),
    (positions, "_respond", 2),  # the exact measure
    (positions, "_evaluate", 1),
]


SELF_PLAY_KERNELS = [(goofspiel_vector, "_step_all", 40), (positions, "_respond", 3)]


@pytest.mark.parametrize(("module", "name", "call"), KERNELS, ids=[f"{m.__name__}.{n}" for m, n, _ in KERNELS])
def test_ctrl_c_inside_a_compiled_kernel_of_sampled_regret_keeps_the_run(module, name, call, tmp_path, monkeypatch):
    pressing_inside(monkeypatch, module, name, call)
    interrupt = stopped(regret, tmp_path)
    assert "sampled regret stopped by Ctrl-C" in interrupt.message
    assert_kept(tmp_path)


def on_training_start(monkeypatch, action) -> None:
    """Call ``action()`` the moment a run's training block has begun (Ctrl-C is its flag)."""
    real = run.Run.training

    @contextlib.contextmanager
    def training(self):
        with real(self):
            action()
            yield

    monkeypatch.setattr(run.Run, "training", training)


def test_ctrl_c_before_the_first_batch_saves_the_untrained_policy(tmp_path, monkeypatch):
    """Pressed as the training block starts: nothing is learnt, which the message says; the
    saved policy is the uniform one, and it plays."""
    on_training_start(monkeypatch, lambda: os.kill(os.getpid(), signal.SIGINT))
    interrupt = stopped(regret, tmp_path)
    assert "before any training" in interrupt.message
    record = assert_kept(tmp_path)
    assert record["steps"] == 0 and record["rows"] == 0


def test_ctrl_c_at_moments_spread_over_a_sampled_regret_run(tmp_path, monkeypatch):
    """Twelve presses from a timer started with the training block, from its first
    milliseconds to well into training (a 4-card run measures every 20,000 decisions, so
    some land in a measure)."""
    timers = []

    def press_later():
        timers.append(threading.Timer(delays[len(timers)], os.kill, (os.getpid(), signal.SIGINT)))
        timers[-1].start()

    delays = np.linspace(0.0, 1.5, 12)
    on_training_start(monkeypatch, press_later)
    for k in range(len(delays)):
        try:
            stopped(regret, tmp_path / str(k))
        finally:
            timers[-1].join()
        assert_kept(tmp_path / str(k))


@pytest.mark.parametrize(("module", "name", "call"), SELF_PLAY_KERNELS)
def test_ctrl_c_inside_a_compiled_kernel_of_self_play_keeps_the_run(module, name, call, tmp_path, monkeypatch):
    pressing_inside(monkeypatch, module, name, call)
    assert "stopped by Ctrl-C" in stopped(selfplay, tmp_path).message
    assert_kept(tmp_path)


def signal_the_command(out, signum: int, delay: float, preexec_fn) -> tuple[int, str]:
    """Run ``hiddenhand train regret`` into ``out``, send it ``signum`` ``delay`` seconds after
    its progress bar is up (the training block has begun), and return its status and stderr."""
    argv = ["train", "regret", "goofspiel", "--cards", "4", "--observation", "markov", "--games", "64"]
    argv += ["--eval-every", "1000000000", "--steps", "100000000", "--out", str(out)]
    process = subprocess.Popen(
        [sys.executable, "-m", "hiddenhand", *argv],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        preexec_fn=preexec_fn,
    )
    seen = b""
    while b"sampled regret on" not in seen:
        chunk = os.read(process.stderr.fileno(), 4096)
        assert chunk, f"the command ended before training: {seen.decode(errors='replace')}"
        seen += chunk
    time.sleep(delay)
    process.send_signal(signum)
    rest = process.stderr.read()
    process.wait(timeout=120)
    err = (seen + rest).decode(errors="replace")
    assert "Traceback" not in err
    return process.returncode, err


@pytest.mark.parametrize("delay", [0.0, 0.4, 1.5])
def test_the_command_exits_130_with_its_files_after_ctrl_c(delay, tmp_path):
    """``hiddenhand train regret`` as a user runs it, Ctrl-C after ``delay`` seconds."""
    status, err = signal_the_command(tmp_path / "r", signal.SIGINT, delay, ctrl_c_reaches_the_child)
    assert status == 130, err
    assert err.strip().splitlines()[-1].startswith("hiddenhand: sampled regret stopped by Ctrl-C"), err
    assert_kept(tmp_path / "r")


def test_ctrl_c_cuts_a_psro_iteration_between_two_of_its_oracle_s_games(tmp_path, monkeypatch):
    """PSRO's iteration trains a best response for a set number of games (here far more than
    the run could play): Ctrl-C ends it between two of them, and the population of the last
    whole iteration (the uniform policy here) is saved."""
    from hiddenhand.training import psro

    settings = replace(psro.PSRO_OURS, episodes_per_oracle=10**6, sims_per_entry=4, min_buffer_size_to_learn=32)
    on_training_start(monkeypatch, lambda: threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start())
    rules = get("goofspiel").rules(**MARKOV)
    with pytest.raises(Interrupted):
        psro.train_psro(rules, steps=10**9, out=tmp_path, eval_every=10**9, settings=settings, progress=False)
    record = assert_kept(tmp_path)
    assert 0 < record["games"] < 10**6 and record["iterations"] == 0


@pytest.fixture
def sigterm_default():
    """SIGTERM with its default disposition, as a command's process starts with, whatever
    the test runner installed."""
    before = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    yield
    signal.signal(signal.SIGTERM, before)


def test_sigterm_stops_a_run_as_ctrl_c_does_but_skips_the_last_measure(tmp_path, monkeypatch, sigterm_default):
    """Sent as the training block starts: the run saves and records, as after Ctrl-C, with
    no measure after the signal (after Ctrl-C the untrained policy is measured), and says
    what stopped it, with the status 128 + SIGTERM."""
    on_training_start(monkeypatch, lambda: os.kill(os.getpid(), signal.SIGTERM))
    interrupt = stopped(regret, tmp_path)
    assert interrupt.message.startswith("sampled regret stopped by SIGTERM before any training")
    assert interrupt.status == 143
    record = assert_kept(tmp_path)
    assert record["steps"] == 0 and record["curve"] == []


@pytest.mark.parametrize(("module", "name", "call"), SELF_PLAY_KERNELS)
def test_sigterm_inside_a_compiled_kernel_of_self_play_keeps_the_run(
    module, name, call, tmp_path, monkeypatch, sigterm_default
):
    pressing_inside(monkeypatch, module, name, call, signal.SIGTERM)
    interrupt = stopped(selfplay, tmp_path)
    assert "stopped by SIGTERM" in interrupt.message and interrupt.status == 143
    assert_kept(tmp_path)


def background_job() -> None:
    """``preexec_fn`` for a child started as ``nohup … &`` starts one: SIGINT ignored,
    SIGTERM at its default."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def test_a_background_command_that_sigterm_stops_exits_143_with_its_files(tmp_path):
    """``hiddenhand train regret`` run in the background, where Ctrl-C cannot reach it and
    ``kill`` is how it is stopped."""
    status, err = signal_the_command(tmp_path / "r", signal.SIGTERM, 0.4, background_job)
    assert status == 143, err
    assert err.strip().splitlines()[-1].startswith("hiddenhand: sampled regret stopped by SIGTERM"), err
    record = assert_kept(tmp_path / "r")
    assert all(point["steps"] < record["steps"] for point in record["curve"])
