"""benchmarks/bench_targets.py: a budget of decisions in place of one of seconds."""

from __future__ import annotations

from bench_targets import one_run


def test_a_budget_of_decisions_ends_the_run_there_whatever_the_seconds(tmp_path):
    # A budget of seconds this small stops before the first batch (a curve of one point);
    # the decisions' budget replaces it, rounded up to whole batches (196,608 decisions here).
    run = one_run("regret", "goofspiel-4", 0, 1e-9, str(tmp_path), steps=400_000)
    decisions = [point[0] for point in run["curve"]]
    assert decisions[0] == 0 and 400_000 <= decisions[-1] < 600_000
    assert run["curve"][-1][2] < run["curve"][0][2]  # measured at the end, and it learnt
