"""The training-run lifecycle every trainer shares (hiddenhand.training.run): the clock that
leaves measures out, the measuring cadence, the curve and run record on disk, and Ctrl-C
(in the training block, and again during the save)."""

import csv
import json
import os
import pickle
import signal
from types import SimpleNamespace

import numpy as np
import pytest

from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.interrupt import Interrupted
from hiddenhand.training import run as run_module
from hiddenhand.training.run import NotResumable, Point, Run


@pytest.fixture
def clock(monkeypatch):
    """A fake ``time.perf_counter`` for the run: ``clock.now`` moves only when a test moves it."""
    fake = SimpleNamespace(now=0.0)
    monkeypatch.setattr(run_module, "time", SimpleNamespace(perf_counter=lambda: fake.now))
    return fake


def train(run, clock, every, step=1, interrupt_at=None, seconds_per_measure=100.0):
    """The loop a trainer writes: a measure when due (which takes ``seconds_per_measure``),
    then ``step`` decisions taking a second each; a KeyboardInterrupt at ``interrupt_at``."""
    calls = []

    def measure():
        clock.now += seconds_per_measure
        calls.append(run.steps)
        return 1.0 / (1 + run.steps), {"random": run.steps / 10}

    with run.training():
        while run.going():
            if run.due(every):
                run.measure(measure)
            if run.steps == interrupt_at:
                raise KeyboardInterrupt
            clock.now += step
            run.advance(step, games=1)
    return measure, calls


def test_the_clock_leaves_the_measures_out_and_the_files_hold_the_curve(tmp_path, clock):
    run = Run("test learner", GoofspielRules(num_cards=3), tmp_path, total=10, details=lambda: {"k": len(run.curve)})
    measure, calls = train(run, clock, every=4)
    saved = []
    curve = run.finish(lambda: saved.append(run.steps), measure, {"seed": 7})
    assert calls == [0, 4, 8, 10] and saved == [10]  # the last measure after the save
    assert curve == [Point(s, float(s), 1.0 / (1 + s), {"random": s / 10}) for s in (0, 4, 8, 10)]
    with open(tmp_path / "curve.csv") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["steps", "seconds", "exploitability", "vs_random"]
    assert rows[-1] == ["10", "10.000", "0.0909091", "1.0000"]
    assert (tmp_path / "curve.png").read_bytes()[:4] == b"\x89PNG"
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["game"] == "goofspiel" and record["learner"] == "test learner" and record["seed"] == 7
    assert (record["steps"], record["games"], record["seconds"], record["interrupted"]) == (10, 10, 10.0, False)
    assert [(p["steps"], p["seconds"], p["k"]) for p in record["curve"]] == [
        (0, 0.0, 1),
        (4, 4.0, 2),
        (8, 8.0, 3),
        (10, 10.0, 4),
    ]


def test_a_budget_of_seconds_ends_the_run_before_its_total_and_leaves_the_measures_out(tmp_path, clock):
    run = Run("test learner", GoofspielRules(num_cards=3), tmp_path, total=100, seconds=5)
    measure, calls = train(run, clock, every=2, step=1, seconds_per_measure=100.0)
    # 1 s a step: 5 training seconds make 5 steps, though each measure took 100 s of the clock.
    assert run.steps == 5 and run.seconds == 5.0 and calls == [0, 2, 4]
    assert [p.steps for p in run.finish(lambda: None, measure, {})] == [0, 2, 4, 5]
    assert json.loads((tmp_path / "run.json").read_text())["steps"] == 5


def test_the_share_spent_is_the_further_of_steps_and_seconds(tmp_path, clock):
    """What an annealed schedule reads: with a budget of seconds far shorter than the steps,
    the seconds; without one, the steps; never past 1."""
    run = Run("test learner", GoofspielRules(num_cards=3), tmp_path, total=10**12, seconds=8)
    assert run.spent() == 0.0
    clock.now += 2.0
    run.advance(10)
    assert run.spent() == 0.25
    clock.now += 100.0
    assert run.spent() == 1.0
    steps_only = Run("test learner", GoofspielRules(num_cards=3), tmp_path / "b", total=40)
    steps_only.advance(10)
    clock.now += 1000.0
    assert steps_only.spent() == 0.25


@pytest.mark.parametrize("seconds", [0, -1, float("inf"), "60", True])
def test_a_bad_budget_of_seconds_is_refused(tmp_path, seconds):
    with pytest.raises(ValueError, match=f"seconds={seconds!r} is not allowed; allowed: a positive number"):
        Run("test learner", GoofspielRules(num_cards=3), tmp_path, total=10, seconds=seconds)


def test_a_measure_is_due_at_the_start_then_once_per_multiple_of_every(tmp_path, clock):
    run = Run("test learner", GoofspielRules(num_cards=3), tmp_path, total=12)
    _, calls = train(run, clock, every=4, step=3)
    assert calls == [0, 6, 9]  # 3 steps at a time: the first count at or past 4, 8 (12 is the final's)
    run.finish(lambda: None, None, {})  # no final measure asked for
    assert [p.steps for p in run.curve] == [0, 6, 9]


@pytest.mark.ctrl_c
def test_ctrl_c_in_training_saves_measures_and_raises_with_the_curve(tmp_path, clock):
    run = Run("test learner", GoofspielRules(num_cards=3), tmp_path, total=10)
    measure, calls = train(run, clock, every=4, interrupt_at=5)
    saved = []
    with pytest.raises(Interrupted, match="test learner stopped by Ctrl-C after 5 of 10 decisions") as info:
        run.finish(lambda: saved.append(run.steps), measure, {})
    assert saved == [5] and calls == [0, 4, 5]  # saved, then measured where it stopped
    assert info.value.result is run.curve and [p.steps for p in run.curve] == [0, 4, 5]
    assert json.loads((tmp_path / "run.json").read_text())["interrupted"] is True
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.ctrl_c
def test_a_ctrl_c_during_the_save_is_held_and_skips_only_the_final_measure(tmp_path, clock):
    run = Run("test learner", GoofspielRules(num_cards=3), tmp_path, total=10)
    measure, calls = train(run, clock, every=4)
    written = []

    def save():
        os.kill(os.getpid(), signal.SIGINT)  # held: the save goes on
        written.append("whole")

    with pytest.raises(Interrupted, match="after 10 of 10 decisions"):
        run.finish(save, measure, {})
    assert written == ["whole"] and calls == [0, 4, 8]  # the final measure, at 10, skipped
    record = json.loads((tmp_path / "run.json").read_text())
    assert (
        record["interrupted"] is True and record["steps"] == 10 and [p["steps"] for p in record["curve"]] == [0, 4, 8]
    )
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def _learn(run, clock, learner, every, stop=None, at=None):
    """A learner's loop over a state that draws from its own generator and numpy's global
    one: a measure (the sum drawn so far) when due, then a step. At step ``at``, ``stop``:
    ``"kill"`` raises an exception no handler sees (a kill), ``"raise"`` a
    ``KeyboardInterrupt`` from inside the step (a library's), ``"ctrl-c"`` and ``"sigterm"``
    send the signal (the loop then ends after the step), and ``"measure"`` sends Ctrl-C
    during that step's measure."""

    def measure():
        if stop == "measure" and run.steps == at:
            os.kill(os.getpid(), signal.SIGINT)
        return learner["sum"], {}

    with run.training():
        while run.going():
            if run.due(every):
                run.measure(measure)
            if run.steps == at and stop in ("kill", "raise", "ctrl-c", "sigterm"):
                if stop == "kill":
                    raise RuntimeError("killed")
                if stop == "raise":
                    raise KeyboardInterrupt
                os.kill(os.getpid(), signal.SIGINT if stop == "ctrl-c" else signal.SIGTERM)
            learner["sum"] += learner["rng"].random() + np.random.random()
            clock.now += 1
            run.advance(1)
    return measure


def _fresh():
    return {"rng": np.random.default_rng(3), "sum": 0.0}


def _rules():
    return GoofspielRules(num_cards=3)


def _straight(tmp_path, clock):
    np.random.seed(0)
    run = Run("test learner", _rules(), tmp_path / "straight", total=10)
    learner = run.keep(_fresh(), {"seed": 1})
    return run.finish(lambda: None, _learn(run, clock, learner, every=4), {}), learner


def _cut_and_resumed(tmp_path, clock, stop, at):
    """A run cut by ``stop`` at step ``at`` (:func:`_learn`), then resumed by another process
    (numpy's global generator elsewhere); the resumed curve and learner."""
    np.random.seed(0)
    run = Run("test learner", _rules(), tmp_path / "cut", total=10)
    learner = run.keep(_fresh(), {"seed": 1})
    if stop == "kill":
        with pytest.raises(RuntimeError, match="killed"):
            _learn(run, clock, learner, every=4, stop=stop, at=at)
    else:
        measure = _learn(run, clock, learner, every=4, stop=stop, at=at)
        with pytest.raises(Interrupted, match="; results, and the state to resume from, in"):
            run.finish(lambda: None, measure, {})
    np.random.seed(99)
    run = Run("test learner", _rules(), tmp_path / "cut", total=10)
    learner = run.keep(_fresh(), {"seed": 1}, resume=True)
    return run.finish(lambda: None, _learn(run, clock, learner, every=4), {}), learner


@pytest.mark.ctrl_c
@pytest.mark.parametrize(
    "stop, at, resumed_at, extra",
    [
        ("kill", 6, 4, None),  # from the save at the last measure
        ("raise", 5, 4, None),  # the step it broke into may be torn: the same
        ("sigterm", 5, 6, None),  # from where it stopped, after the step; no measure there
        ("ctrl-c", 5, 6, 6),  # from where it stopped, measured there
        ("measure", 8, 8, None),  # the measure cut is taken first
    ],
)
def test_a_cut_run_resumes_and_trains_what_the_uncut_run_trains(tmp_path, clock, stop, at, resumed_at, extra):
    straight, learned = _straight(tmp_path, clock)
    curve, learner = _cut_and_resumed(tmp_path, clock, stop, at)
    assert [p for p in curve if p.steps != extra] == straight  # seconds too: the clock goes on
    assert [p.steps for p in curve] == sorted({0, 4, 8, 10} | ({extra} if extra else set()))
    assert learner["sum"] == learned["sum"]
    record = json.loads((tmp_path / "cut" / "run.json").read_text())
    assert record["resumed"] == [resumed_at] and record["interrupted"] is False


def test_resuming_a_different_run_is_refused_naming_each_difference(tmp_path, clock):
    run = Run("test learner", _rules(), tmp_path, total=10)
    run.finish(lambda: None, _learn(run, clock, run.keep(_fresh(), {"seed": 1}), every=4), {})
    again = Run("test learner", GoofspielRules(num_cards=4), tmp_path, total=12)
    with pytest.raises(NotResumable, match=r"cannot resume the run saved in .*: it differs from this one in") as info:
        again.keep(_fresh(), {"seed": 2}, resume=True)
    for difference in ("seed 1 (here 2)", "steps 10 (here 12)", '"num_cards": 3', '"num_cards": 4'):
        assert difference in str(info.value)
    assert "(code:" not in str(info.value)


def test_a_state_saved_by_other_code_is_refused_before_its_learner_is_read(tmp_path, clock, monkeypatch):
    run = Run("test learner", _rules(), tmp_path, total=10)
    run.finish(lambda: None, _learn(run, clock, run.keep(_fresh(), {"seed": 1}), every=4), {})
    monkeypatch.setattr(run_module, "code_version", lambda: "0123456789abcdef")
    monkeypatch.setattr(pickle, "load", _read_only_the_header(pickle.load))
    with pytest.raises(NotResumable, match='code "[0-9a-f]{16}" \\(here "0123456789abcdef"\\)') as info:
        Run("test learner", _rules(), tmp_path, total=10).keep(_fresh(), {"seed": 1}, resume=True)
    assert "resume with the hiddenhand that started the run" in str(info.value)


def _read_only_the_header(load):
    reads = []

    def once(handle):
        reads.append(handle)
        if len(reads) > 1:
            pytest.fail("the learner was read")
        return load(handle)

    return once


def test_resuming_where_nothing_is_saved_trains_from_the_start(tmp_path, clock):
    straight, _ = _straight(tmp_path, clock)
    np.random.seed(0)
    run = Run("test learner", _rules(), tmp_path / "empty", total=10)
    learner = _fresh()
    assert run.keep(learner, {"seed": 1}, resume=True) is learner and run.steps == 0
    assert run.finish(lambda: None, _learn(run, clock, learner, every=4), {}) == straight
    assert json.loads((tmp_path / "empty" / "run.json").read_text())["resumed"] == []


def test_what_is_saved_says_how_far_the_run_came(tmp_path, clock):
    assert run_module.saved(tmp_path) is None
    run = Run("test learner", _rules(), tmp_path, total=10)
    with pytest.raises(RuntimeError, match="killed"):
        _learn(run, clock, run.keep(_fresh(), {"seed": 1}), every=4, stop="kill", at=6)
    header = run_module.saved(tmp_path)
    assert header["steps"] == 4 and header["identity"]["steps"] == 10 and header["finished"] is False
    run = Run("test learner", _rules(), tmp_path, total=10, seconds=3)  # a budget of seconds ends it
    run.finish(lambda: None, _learn(run, clock, run.keep(_fresh(), {"seed": 1}), every=4), {})
    header = run_module.saved(tmp_path)
    assert header["steps"] == 3 and header["finished"] is True


def test_a_damaged_state_is_refused_naming_the_file(tmp_path, clock):
    run = Run("test learner", _rules(), tmp_path, total=10)
    run.finish(lambda: None, _learn(run, clock, run.keep(_fresh(), {"seed": 1}), every=4), {})
    state = tmp_path / run_module.STATE
    state.write_bytes(state.read_bytes()[:-20])  # the learner's record cut short
    again = Run("test learner", _rules(), tmp_path, total=10)
    with pytest.raises(NotResumable, match=r"state.pkl cannot be read \(.*Error"):
        again.keep(_fresh(), {"seed": 1}, resume=True)
    state.write_bytes(b"not a pickle")
    with pytest.raises(NotResumable, match=r"state.pkl cannot be read$"):
        Run("test learner", _rules(), tmp_path, total=10).keep(_fresh(), {"seed": 1}, resume=True)
