"""Long jobs under Ctrl-C, refused before they start, and their files: what a user meets
when a command runs for minutes."""

import json

import pyspiel
import pytest

from hiddenhand.agents import load_agent
from hiddenhand.cli import main
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.envs.spoof import SpoofRules
from hiddenhand.interrupt import Interrupted
from hiddenhand.training import cfr
from hiddenhand.training.cfr import check_tree_size, estimate_tree_size, train_cfr


def press_ctrl_c_at_step(monkeypatch, step):
    """Make the CFR solver's ``step``-th iteration raise KeyboardInterrupt, as Ctrl-C would."""
    real = cfr._Solver.step
    calls = {"n": 0}

    def step_or_interrupt(self):
        calls["n"] += 1
        if calls["n"] == step:
            raise KeyboardInterrupt
        real(self)

    monkeypatch.setattr(cfr._Solver, "step", step_or_interrupt)


def test_ctrl_c_twice_in_train_cfr_keeps_the_policy(tmp_path, monkeypatch):
    """The first Ctrl-C stops the iterations; a second one during the final NashConv skips
    that measure, yet the policy and run.json are written whole."""
    press_ctrl_c_at_step(monkeypatch, 8)
    real_nash_conv = pyspiel.nash_conv
    calls = {"n": 0}

    def nash_conv_then_interrupt(*args):
        calls["n"] += 1
        if calls["n"] > 1:  # the one at iteration 5 runs; the final one is interrupted
            raise KeyboardInterrupt
        return real_nash_conv(*args)

    monkeypatch.setattr(cfr.pyspiel, "nash_conv", nash_conv_then_interrupt)
    rules = GoofspielRules(num_cards=3)
    with pytest.raises(Interrupted, match="after 7 of 50 iterations") as info:
        train_cfr(rules, "cfr+", 50, 5, tmp_path, progress=False)
    assert [p.iteration for p in info.value.result] == [5]
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["interrupted"] is True and run["iterations"] == 7 and run["final"]["iteration"] == 5
    agent = load_agent("goofspiel", str(tmp_path), rules.params)  # the policy is complete and verified
    assert agent.game == "goofspiel"
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary file left behind


def test_ctrl_c_in_a_command_exits_130_without_a_traceback(tmp_path, monkeypatch, capsys):
    press_ctrl_c_at_step(monkeypatch, 3)
    with pytest.raises(SystemExit) as info:
        main(["train", "cfr", "goofspiel", "--cards", "3", "--iterations", "20", "--out", str(tmp_path)])
    assert info.value.code == 130
    err = capsys.readouterr().err
    assert "cfr+ stopped by Ctrl-C after 2 of 20 iterations" in err and "Traceback" not in err
    assert (tmp_path / "policy.npz").exists() and (tmp_path / "curve.csv").exists()


def test_ctrl_c_in_a_tournament_exits_cleanly(monkeypatch, capsys):
    import hiddenhand.training.evaluation as evaluation

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(evaluation, "round_robin", interrupted)
    with pytest.raises(SystemExit) as info:
        main(["tournament", "goofspiel", "--cards", "4", "--games", "10"])
    assert info.value.code == 130
    err = capsys.readouterr().err
    assert err.strip() == "hiddenhand: interrupted by Ctrl-C"


def test_the_tree_estimate_refuses_what_would_not_fit_and_names_what_does():
    # Knuth's estimator against exact counts of small trees (histories, chance included).
    exact = sum(1 for _ in _histories(GoofspielRules(num_cards=3).new_initial_state()))
    assert estimate_tree_size(GoofspielRules(num_cards=3), probes=2000) == pytest.approx(exact, rel=0.15)
    check_tree_size(GoofspielRules(num_cards=4))  # 4 cards fit
    with pytest.raises(ValueError, match=r"Configurations of spoof that fit: tiny \(matches=1 max_rounds=3\); round"):
        check_tree_size(SpoofRules())  # the whole game: rounds without bound


def _histories(state):
    yield state
    if not state.is_terminal():
        actions = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        for action in actions:
            child = state.clone()
            child.apply(action)
            yield from _histories(child)


@pytest.mark.parametrize("out, message", [("", "the --out path is empty"), (".", "is an existing directory")])
def test_outputs_are_checked_before_the_solve_starts(out, message, monkeypatch, capsys):
    import hiddenhand.solvers.gops as gops

    monkeypatch.setattr(gops, "solve", lambda *a, **k: pytest.fail("the solve started before the output was checked"))
    with pytest.raises(SystemExit) as info:
        main(["solve", "goofspiel", "--cards", "10", "--out", out])
    assert info.value.code == 2
    assert message in capsys.readouterr().err
