"""``hiddenhand benchmark``: the main job (see :mod:`hiddenhand.training.benchmark`)."""

from __future__ import annotations

import argparse

from hiddenhand.cli.common import SEED, check_output


def add_parser(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "benchmark",
        help="the main job: train CFR+, MCCFR and PPO and measure them against the exact equilibria",
        description="Train CFR+, external-sampling MCCFR and self-play PPO on every two-player configuration that "
        "a game declares for the benchmark with an exact measure (4-card Goofspiel; one round of Spoof and of "
        "two-player Bid Spoof), report each agent's exploitability against the exact equilibrium and its "
        "head-to-head results (95% intervals) against the equilibrium and the heuristics, then every-seating "
        "tournaments of the other declared configurations (three-player Bid Spoof with CFR+, EggHead). Writes "
        "REPORT.md, one PNG per game (exploitability against wall-clock time, every method) and summary.json into "
        "OUT, and prints the report. The small budget takes a few minutes on two cores; full trains ten times "
        "longer and plays five times more games. Ctrl-C stops it and writes the sections that finished.",
    )
    p.add_argument("--budget", choices=("small", "full"), default="small", help="how long to train (default small)")
    p.add_argument("--out", default="runs/benchmark", help="output directory (default runs/benchmark)")
    p.add_argument("--seed", type=SEED, default=0, help="seed of every run (default 0)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from hiddenhand.training.benchmark import run_benchmark

    check_output(args.out, "--out", "dir")
    print(run_benchmark(args.budget, args.out, args.seed))
    return 0
