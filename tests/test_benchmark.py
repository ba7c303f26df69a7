"""The main job end to end on a tiny budget: every method trains, every agent is measured,
the report and the plots are written."""

import json

from hiddenhand.training.benchmark import Budget, run_benchmark

TINY = Budget(cfr_iterations=10, mccfr_iterations=100, ppo_steps=1024, evaluations=2, games=20,
              many_cfr_iterations=5, tournament_games=6, egghead_target=1)


def test_benchmark_on_a_tiny_budget(tmp_path):
    report = run_benchmark(TINY, tmp_path, seed=0, progress=False)
    assert (tmp_path / "REPORT.md").read_text() == report
    for game in ("goofspiel", "spoof", "bid_spoof"):
        assert (tmp_path / f"{game}.png").stat().st_size > 10_000
    summary = json.loads((tmp_path / "summary.json").read_text())
    goofspiel = next(rows for title, rows in summary["games"].items() if title.startswith("GoofspielRules"))
    by_agent = {row["agent"]: row for row in goofspiel}
    assert set(by_agent) >= {"cfr+", "mccfr-external", "ppo", "equilibrium", "random", "easy", "medium", "hard"}
    assert by_agent["equilibrium"]["exploitability"] < 1e-9  # the exact solution, measured by the exact DP
    assert by_agent["random"]["exploitability"] > by_agent["cfr+"]["exploitability"]
    assert set(by_agent["ppo"]["against"]) == {"equilibrium", "random", "easy", "medium", "hard"}
    assert "every seating" in report and "EggHead, 3 players" in report
