"""Long jobs under Ctrl-C, refused before they start, and their files: what a user meets
when a command runs for minutes."""

import json
import os
import signal
import subprocess
import sys

import pyspiel
import pytest
from conftest import ctrl_c_during_measure_then_save, ctrl_c_reaches_the_child

from hiddenhand.agents import load_agent
from hiddenhand.cli import main
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.envs.spoof import SpoofRules
from hiddenhand.interrupt import Interrupted, held_ctrl_c
from hiddenhand.registry import get
from hiddenhand.training import cfr
from hiddenhand.training.cfr import CFRSettings, check_tree_size, estimate_tree_size, train_cfr


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
        train_cfr(rules, steps=50, eval_every=5, out=tmp_path, progress=False, settings=CFRSettings("cfr+"))
    assert [p.steps for p in info.value.result] == [5]
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["interrupted"] is True and run["steps"] == 7 and [p["steps"] for p in run["curve"]] == [5]
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
    import hiddenhand.solvers.goofspiel.report as gops

    monkeypatch.setattr(gops, "solve", lambda *a, **k: pytest.fail("the solve started before the output was checked"))
    with pytest.raises(SystemExit) as info:
        main(["solve", "goofspiel", "--cards", "10", "--out", out])
    assert info.value.code == 2
    assert message in capsys.readouterr().err


# --------------------------------------------------------------------------- a second Ctrl-C during the save


def _tiny_run(name):
    """``(train(out), the module whose exact measure it calls, that function's name, the class
    whose save writes the agent, game, params)`` for a run of each trainer that saves after
    Ctrl-C, small enough for seconds."""
    from dataclasses import replace

    from hiddenhand.agents import NetworkAgent, PolicyAgent
    from hiddenhand.agents.ppo import PPOAgent
    from hiddenhand.training import nfsp, policy_gradient, ppo_pool, psro, sampled_regret
    from hiddenhand.training.sampled_regret import RegretSettings

    markov = {"num_cards": 3, "observation": "markov"}
    if name == "cfr":
        return (
            lambda out: train_cfr(
                GoofspielRules(num_cards=3),
                steps=50,
                eval_every=5,
                out=out,
                progress=False,
                settings=CFRSettings("cfr+"),
            ),
            (cfr.pyspiel, "nash_conv"),
            PolicyAgent,
            "goofspiel",
            {"num_cards": 3},
        )
    if name == "ppo":
        return (
            lambda out: ppo_pool.train_ppo(
                GoofspielRules(**markov),
                steps=4096,
                out=out,
                eval_every=512,
                settings=ppo_pool.PoolSettings(n_steps=256, snapshot_every=256, eval_games=4),
                progress=False,
            ),
            (ppo_pool, "exact_measure"),
            PPOAgent,
            "goofspiel",
            markov,
        )
    if name == "selfplay":
        settings = replace(policy_gradient.settings_for("mmd", "goofspiel"), games=8, batch=256, epochs=1)
        return (
            lambda out: policy_gradient.train_selfplay(
                get("goofspiel").rules(**markov), steps=3000, out=out, eval_every=300, settings=settings, progress=False
            ),
            (policy_gradient, "exact_measure"),
            PPOAgent,
            "goofspiel",
            markov,
        )
    if name == "regret":
        return (
            lambda out: sampled_regret.train_regret(
                get("goofspiel").rules(**markov),
                steps=40_000,
                out=out,
                eval_every=4000,
                settings=RegretSettings(games=64),
                progress=False,
            ),
            (sampled_regret, "exact_measure"),
            PolicyAgent,
            "goofspiel",
            markov,
        )
    if name == "nfsp":
        settings = replace(nfsp.NFSP_OURS, min_buffer_size_to_learn=64, batch_size=32, learn_every=16)
        return (
            lambda out: nfsp.train_nfsp(
                get("goofspiel").rules(**markov), steps=3000, out=out, eval_every=200, settings=settings, progress=False
            ),
            (nfsp, "exact_measure"),
            NetworkAgent,
            "goofspiel",
            markov,
        )
    pytest.importorskip("cvxpy")  # psro_v2 imports it
    settings = replace(
        psro.PSRO_OURS,
        episodes_per_oracle=30,
        sims_per_entry=4,
        prd_iterations=200,
        min_buffer_size_to_learn=32,
        mixture_max_histories=0,
    )
    return (
        lambda out: psro.train_psro(
            get("goofspiel").rules(**markov), steps=5000, out=out, eval_every=1, settings=settings, progress=False
        ),
        (psro, "exact_measure"),
        NetworkAgent,
        "goofspiel",
        markov,
    )


@pytest.mark.ctrl_c
@pytest.mark.parametrize("trainer", ["cfr", "ppo", "selfplay", "regret", "nfsp", "psro"])
def test_a_second_ctrl_c_during_the_save_skips_only_the_final_measure(trainer, tmp_path, monkeypatch):
    """Real SIGINTs: the first during the second exact measure (stopping the training), the
    second while the agent is being saved. The save completes, run.json is written, and only
    the final measure is skipped."""
    train, (module, measure_name), saver, game, params = _tiny_run(trainer)
    measures = ctrl_c_during_measure_then_save(monkeypatch, lambda: train(tmp_path), module, measure_name, saver)
    assert measures == [1, 2]  # the final measure was skipped
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["interrupted"] is True
    assert load_agent(game, str(tmp_path), params).game == game  # saved whole, verified on load
    assert not list(tmp_path.glob(".*.tmp"))
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # Ctrl-C raises again afterwards


@pytest.mark.ctrl_c
def test_train_cfr_keeps_its_files_when_ctrl_c_is_pressed_again_during_the_save(tmp_path):
    """The command in a process of its own, as a user runs it: the first SIGINT during the
    30th iteration, which completes (Ctrl-C is read between iterations), the second while
    the policy file is being written (from inside the write, so that it lands there every
    time)."""
    driver = (
        "import os, signal, sys\n"
        "from hiddenhand.agents import policy_agent\n"
        "from hiddenhand.cli import main\n"
        "from hiddenhand.training import cfr\n"
        "step, save_npz, calls = cfr._Solver.step, policy_agent.save_npz, []\n"
        "def stepping(self):\n"
        "    calls.append(1)\n"
        "    if len(calls) == 30:\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "    step(self)\n"
        "def saving(*args, **kwargs):\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    return save_npz(*args, **kwargs)\n"
        "cfr._Solver.step, policy_agent.save_npz = stepping, saving\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    out = tmp_path / "D"
    argv = ["train", "cfr", "goofspiel", "--cards", "3", "--iterations", "100000", "--eval-every", "25"]
    result = subprocess.run(
        [sys.executable, "-c", driver, *argv, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=ctrl_c_reaches_the_child,
    )
    assert result.returncode == 130, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"hiddenhand: cfr+ stopped by Ctrl-C after 30 of 100000 iterations; results in {out}"
    )
    assert {"curve.csv", "policy.npz", "run.json"} <= {p.name for p in out.iterdir()}
    run = json.loads((out / "run.json").read_text())
    assert run["interrupted"] is True and run["steps"] == 30 and [p["steps"] for p in run["curve"]] == [25]
    assert load_agent("goofspiel", str(out), {"num_cards": 3}).game == "goofspiel"


@pytest.mark.ctrl_c
def test_held_ctrl_c_raises_a_press_nothing_consumed_once_the_files_are_written():
    with pytest.raises(KeyboardInterrupt):
        with held_ctrl_c() as ctrl_c:
            os.kill(os.getpid(), signal.SIGINT)
            written = True  # the handler ran before this line: the press was held, not raised
    assert written and ctrl_c.pressed
    with held_ctrl_c() as ctrl_c:  # a press inside the interruptible step stops it, and is consumed
        assert ctrl_c.unless_interrupted(lambda: os.kill(os.getpid(), signal.SIGINT), "skipped") == ("skipped", True)
        assert ctrl_c.unless_interrupted(lambda: pytest.fail("ran after a Ctrl-C")) == (None, True)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
