"""The main job end to end on a tiny budget: every method trains, every agent is measured,
the report and the plots are written."""

import json

import pytest

from hiddenhand.interrupt import Interrupted
from hiddenhand.training.benchmark import Budget, run_benchmark

TINY = Budget(
    cfr_iterations=10,
    mccfr_iterations=100,
    ppo_steps=1024,
    evaluations=2,
    games=20,
    many_cfr_iterations=5,
    tournament_games=6,
    small=True,
)


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
