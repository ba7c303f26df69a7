"""The main job end to end on a tiny budget: every method trains, every agent is measured,
the report and the plots are written."""

import json

import pytest

import hiddenhand
import hiddenhand.training.benchmark as benchmark
from hiddenhand.agents import load_agent
from hiddenhand.interrupt import Interrupted
from hiddenhand.training.benchmark import Budget, run_benchmark
from hiddenhand.training.ppo import PPOPoint

TINY = Budget(
    cfr_iterations=10,
    mccfr_iterations=100,
    ppo_steps=1024,
    evaluations=2,
    games=20,
    many_cfr_iterations=5,
    tournament_games=6,
    small=True,
    learner_steps=600,
    learners=("mmd",),
    seeds=2,
    workers=2,
    name="tiny",
)


def test_benchmark_on_a_tiny_budget(tmp_path):
    report = run_benchmark(TINY, tmp_path, seed=0, progress=False)
    assert (tmp_path / "REPORT.md").read_text() == report
    plots = {p.name for p in tmp_path.glob("*.png")}
    for config in ("goofspiel_num_cards=4", "goofspiel_num_cards=6", "spoof_objective=round", "spoof_observation"):
        (name,) = [p for p in plots if p.startswith(config)]
        assert (tmp_path / name).stat().st_size > 10_000
    summary = json.loads((tmp_path / "summary.json").read_text())
    goofspiel = next(rows for title, rows in summary["games"].items() if title.startswith("GoofspielRules(num_cards=4"))
    by_agent = {row["agent"]: row for row in goofspiel}
    # hard reads the score, which the Markov observation hides: it is left out there
    assert set(by_agent) == {"cfr+", "mccfr-external", "ppo", "mmd", "equilibrium", "random", "easy", "medium"}
    assert by_agent["equilibrium"]["exploitability"] < 1e-9  # the exact solution, measured by the exact DP
    assert by_agent["random"]["exploitability"] > by_agent["cfr+"]["exploitability"]
    assert set(by_agent["mmd"]["against"]) == {"equilibrium", "random", "easy", "medium"}
    assert "every seating" in report and "EggHead, 3 players" in report
    # One record per run; every learned configuration has both seeds; each saved agent reloads
    # and measures as recorded.
    runs = summary["runs"]
    keys = {"game", "config", "method", "seed", "steps", "seconds", "exploitability", "exact", "path"}
    assert all(set(r) == keys for r in runs)
    learned = [r for r in runs if r["method"] == "mmd"]
    assert {(r["game"], r["seed"]) for r in learned} == {(g, s) for g in ("goofspiel", "spoof") for s in (0, 1)}
    assert len([r for r in learned if r["game"] == "goofspiel"]) == 4  # 4 and 6 cards
    for record in learned[:1] + [r for r in runs if r["method"] == "cfr+"][:1]:
        game = hiddenhand.games()[record["game"]]
        rules = game.rules(**record["config"])
        agent = load_agent(record["game"], record["path"])
        assert record["exact"] and game.exact_exploitability(rules, agent) == pytest.approx(
            record["exploitability"], abs=1e-9
        )


def test_ctrl_c_stops_the_whole_benchmark_and_reports_what_finished(tmp_path, monkeypatch):
    """Ctrl-C during the first PPO run: the CFR runs before it are on disk, the report is
    written and says where it was cut, and the benchmark does not go on to other games."""
    import hiddenhand.training.benchmark as benchmark

    calls = []

    def interrupted_ppo(*args, **kwargs):
        calls.append(args[0])
        raise KeyboardInterrupt

    monkeypatch.setattr(benchmark, "train_ppo", interrupted_ppo)
    with pytest.raises(Interrupted, match="benchmark stopped by Ctrl-C"):
        run_benchmark(TINY, tmp_path, seed=0, progress=False)
    assert len(calls) == 1  # nothing ran after the interruption
    report = (tmp_path / "REPORT.md").read_text()
    assert "Cut short by Ctrl-C" in report and calls[0] in report.replace("Rules", "").lower().replace(
        "bidspoof", "bid_spoof"
    )
    assert json.loads((tmp_path / "summary.json").read_text())["interrupted"] is True


def test_the_full_game_section_plays_the_heuristics_and_a_given_equilibrium(tmp_path):
    """The section the full budget runs at 13 cards, here at 5 with a 5-card solution file:
    the learner trains on the Markov observation, has no exploitability (none is pretended),
    and plays every heuristic (hard included, which reads the score) and the equilibrium."""
    from dataclasses import replace

    from hiddenhand.solvers.gops import solve

    solution = solve(5, progress=False).save(tmp_path / "gops5.npz")
    budget = replace(TINY, big_steps=600, big_cards=5, name="tiny")
    lines, summary = [], {"runs": [], "games": {}}
    benchmark._big_goofspiel(budget, tmp_path, 0, str(solution), False, lines, summary)
    (record,) = summary["runs"]
    assert record["exploitability"] is None and record["exact"] is False
    assert record["config"]["observation"] == "markov" and record["config"]["num_cards"] == 5
    played = summary["games"]["goofspiel 5 cards"]
    assert set(played) == {"equilibrium", "random", "easy", "medium", "hard"}
    assert played["equilibrium"] <= 0.5  # an untrained network does not beat the equilibrium
    assert "No exact exploitability" in "\n".join(lines)


def test_a_solution_file_of_another_size_is_refused_before_any_work(tmp_path):
    from hiddenhand.solvers.gops import solve

    solution = solve(4, progress=False).save(tmp_path / "gops4.npz")
    with pytest.raises(ValueError, match="solves num_cards=4; the benchmark plays 13 cards"):
        run_benchmark("full", tmp_path / "out", gops13=str(solution), progress=False)
    assert not (tmp_path / "out").exists()


def test_each_learner_trains_for_its_share_of_the_budget(tmp_path, monkeypatch):
    """``learner_share`` scales one learner's decisions (the full budget halves NFSP's and
    PSRO's, which play about half as fast) on top of the configuration's ``steps_scale``;
    a learner it does not name trains the whole budget, and a name that is no learner is refused."""
    asked = {}

    def fake(method, game, params, steps, out, seed, eval_every, progress):
        asked[method] = (steps, eval_every)
        return [PPOPoint(steps, 1.0, 0.5, {})]

    monkeypatch.setattr(benchmark, "train_learner", fake)
    game = hiddenhand.games()["goofspiel"]
    entry = benchmark.Benchmark({"num_cards": 6, "observation": "markov"}, learn=True, steps_scale=2)
    budget = Budget(**{**vars(TINY), "learners": ("mmd", "nfsp"), "learner_share": {"nfsp": 0.25}, "seeds": 1})
    budget = Budget(**{**vars(budget), "workers": 1, "learner_steps": 1000, "evaluations": 4})
    runs = benchmark._learned_runs(game, game.rules(**entry.params), entry, budget, tmp_path, 0, False)
    assert asked == {"mmd": (2000, 500), "nfsp": (500, 125)}
    assert [r.curve[-1][0] for r in runs] == [2000, 500]
    wrong = Budget(**{**vars(TINY), "learner_share": {"cfr": 0.5}})
    with pytest.raises(ValueError, match=r"unknown learners \['cfr'\]"):
        run_benchmark(wrong, tmp_path, progress=False)
