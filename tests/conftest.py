"""Shared test helpers, and the example of a user's game (``examples/kuhn_poker.py``), loaded
once as the module ``kuhn_poker`` so that it is registered, and held to the conformance
suite, like our own games. Every test runs under :mod:`outside_guard`: one that reads a
file beside the clone fails."""

import contextlib
import importlib.util
import os
import signal
import sys
import warnings
from pathlib import Path

import numpy as np
import outside_guard
import pytest

from hiddenhand.core import CHANCE, sample_chance
from hiddenhand.envs.goofspiel import GoofspielRules

sys.addaudithook(outside_guard.audit)

EXAMPLE_GAME = Path(__file__).resolve().parent.parent / "examples" / "kuhn_poker.py"


def _load_example_game() -> None:
    """Import the example as a module of its own (not ``runpy``, whose module vanishes), so
    that its classes pickle as any installed game's do."""
    spec = importlib.util.spec_from_file_location("kuhn_poker", EXAMPLE_GAME)
    module = importlib.util.module_from_spec(spec)
    sys.modules["kuhn_poker"] = module
    spec.loader.exec_module(module)


if EXAMPLE_GAME.exists():
    _load_example_game()


def play_out(state, bids_by_round, prizes=None):
    """Play ``bids_by_round`` (card values, one tuple per round) on ``state``, turning
    ``prizes`` (card values) at the chance nodes; returns the state."""
    prizes = list(prizes or [])
    for bids in bids_by_round:
        if state.is_chance_node():
            state.apply(prizes.pop(0) - 1)
        for card in bids:
            state.apply(card - 1)
    return state


def decisions(state, rng):
    """Yield ``state`` at each decision until the game ends, drawing chance with ``rng``;
    the caller applies the player's action before asking for the next one."""
    while not state.is_terminal():
        if state.current_player() == CHANCE:
            state.apply(sample_chance(state, rng))
        else:
            yield state


def tiny(game):
    """The smallest configuration a registered game declares (``Game.env.configurations``)."""
    return game.env.configurations["tiny"]


def quiet_warnings():
    """Silence warnings for a test module's faces (PettingZoo's notes on dict observation
    spaces): ``quiet = pytest.fixture(autouse=True)(quiet_warnings)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def ctrl_c_reaches_the_child() -> None:
    """``preexec_fn`` for a child process that a test sends SIGINT: Ctrl-C back to its default
    disposition, which a suite started in the background (``nohup``, ``&`` in a script)
    passes down as ignored, so that the child would never see the press."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture(autouse=True)
def _ctrl_c_raises_in_marked_tests(request):
    """A test marked ``ctrl_c`` presses Ctrl-C in this process: it runs with Python's own
    handler, whatever the suite was started with (a background job ignores SIGINT)."""
    if request.node.get_closest_marker("ctrl_c") is None:
        yield
        return
    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def ctrl_c_during_measure_then_save(monkeypatch, run, module, measure_name, saver) -> list[int]:
    """Run ``run()`` with real SIGINTs: the first during the second exact measure
    (``module.measure_name``), stopping the training, the second as ``saver.save`` starts.
    Fails the test unless the run ends in :class:`~hiddenhand.interrupt.Interrupted` after
    the save completed; returns the measures taken (``[1, 2]``: the final one skipped)."""
    from hiddenhand.interrupt import Interrupted

    real_measure, real_save = getattr(module, measure_name), saver.save
    measures: list[int] = []

    def measure_or_ctrl_c(*args):
        measures.append(len(measures) + 1)
        if len(measures) == 2:
            os.kill(os.getpid(), signal.SIGINT)  # the first Ctrl-C
        return real_measure(*args)

    def save_with_ctrl_c(self, *args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # the second Ctrl-C, as the save starts
        return real_save(self, *args, **kwargs)

    monkeypatch.setattr(module, measure_name, measure_or_ctrl_c)
    monkeypatch.setattr(saver, "save", save_with_ctrl_c)
    try:
        run()
    except Interrupted as stopped:
        assert "stopped by Ctrl-C" in stopped.message
    except KeyboardInterrupt:
        pytest.fail("the second Ctrl-C broke off the save: the run's files were lost")
    else:
        pytest.fail("two Ctrl-Cs did not stop the run")
    return measures


@pytest.fixture
def rules5():
    return GoofspielRules(num_cards=5)


def finite_horizon_values(round_game, rounds):
    """Each round-state's value when the game stops as a draw after ``rounds`` rounds:
    that many steps of value iteration from zero, with the leaf bookkeeping (payoff, next
    round-state, sign) the stochastic solver uses. Tests set it against a whole-tree solve."""
    from hiddenhand.solvers.sequence_form import SequenceForm

    forms = {key: SequenceForm.build(round_game.start(key), round_game.continuation) for key in round_game.keys()}
    values = dict.fromkeys(forms, 0.0)
    for _ in range(rounds):
        values = {
            key: form.value(np.array([c.payoff + (c.sign * values[c.key] if c.key else 0.0) for c in form.leaves]))
            for key, form in forms.items()
        }
    return values


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def pytest_addoption(parser):
    parser.addoption(
        "--update-playthroughs", action="store_true", help="rewrite tests/playthroughs/ from the current code"
    )


@pytest.fixture(scope="module")
def ray_local():
    """A local Ray instance for one test module: 127.0.0.1, usage statistics off, two CPUs,
    shut down at the end."""
    from hiddenhand.ray_cluster import start_ray

    start_ray(num_cpus=2)  # before Ray is imported: it reads the single-machine switch then
    import ray

    assert os.environ["RAY_USAGE_STATS_ENABLED"] == "0"
    assert [node["NodeManagerAddress"] for node in ray.nodes()] == ["127.0.0.1"]
    yield ray
    ray.shutdown()


@contextlib.contextmanager
def killed_at_update(monkeypatch, updates: int):
    """Inside the block, an ``mmd-critic`` learner's update number ``updates`` raises an
    exception that no handler sees, as a kill or a restarted machine leaves a run (its
    state is the one saved at the last measure); afterwards its updates are whole again."""
    from hiddenhand.training.critic_mmd import CriticMMD

    update = CriticMMD.update

    def killed(learner, left=1.0):
        if learner.updates == updates:
            raise RuntimeError("killed")
        return update(learner, left)

    monkeypatch.setattr(CriticMMD, "update", killed)
    try:
        with pytest.raises(RuntimeError, match="killed"):
            yield
    finally:
        monkeypatch.setattr(CriticMMD, "update", update)
