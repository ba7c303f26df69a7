"""``hiddenhand benchmark``: the main job (see :mod:`hiddenhand.training.benchmark`)."""

from __future__ import annotations

import argparse

from hiddenhand.cli.common import SEED, check_output
from hiddenhand.registry import BenchmarkSection, games


def add_parser(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "benchmark",
        help="the main job: train CFR, PPO and self-play learners and measure them against the exact equilibria",
        description="Train agents on every two-player configuration that a game declares for the benchmark "
        "with an exact measure: CFR+, external-sampling MCCFR and pool PPO where the tree is small (4-card Goofspiel, "
        "single rounds of Spoof and Bid Spoof), and the self-play learners (sampled regret matching, MMD, MMD"
        " with a critic, tuned PPO, OpenSpiel's NFSP and PSRO, RLlib's PPO and MMD with a critic) on the "
        "Markov observation of 4- and 6-card Goofspiel (8 in the full budget) and whole games of Spoof (3 "
        "matches) and two-player Bid Spoof (3 coins, full budget). Reports a leaderboard per configuration "
        "(exploitability against the exact equilibrium, its spread over seeds and best measured point, wall-"
        "clock, CFR iterations or learner decisions, head-to-head results with 95% intervals against the "
        "equilibrium and the heuristics), then every-seating tournaments of the other declared configurations"
        " (three-player Bid Spoof with CFR+, EggHead), and in the full budget MMD on 13-card Goofspiel "
        "against the heuristics (and the equilibrium, with --gops13). Writes REPORT.md, one PNG per "
        "configuration (exploitability against seconds and decisions, log scales, every measured point of "
        "every seed) and summary.json (one record per run, with the saved agent's path) into OUT, and prints "
        "the report. small: one seed each of sampled regret matching, MMD, MMD with a critic and tuned PPO, "
        "within 15 minutes on two cores (what `make run` runs); full: every learner (RLlib needs the [ray] "
        "extra), three seeds, two runs at a time, hours on two cores (docs/benchmark_full.md times each "
        "part). Ctrl-C stops it and writes the sections that finished; --resume goes on from there.",
    )
    p.add_argument("--budget", choices=("small", "full"), default="small", help="how long to train (default small)")
    p.add_argument("--out", default="runs/benchmark", help="output directory (default runs/benchmark)")
    p.add_argument("--seed", type=SEED, default=0, help="seed of every run (default 0; learners' seeds count up)")
    for option, section in _file_options().items():
        p.add_argument(f"--{option}", metavar="FILE", help=section.help)
    p.add_argument(
        "--resume",
        action="store_true",
        help="read back every training run that already finished in OUT (same rules, seed, length, learner "
        "settings and code: run.json records a digest of hiddenhand's sources, so a run made by other code trains "
        "again; not cut by Ctrl-C) instead of training it again, and go on with a cut run of a learner that saves "
        "its state (mmd-critic, mmd, ppo-selfplay) from that state, then measure and report everything as usual: a "
        "benchmark cut short (Ctrl-C, a machine taken away) goes on where it stopped",
    )
    p.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help="run only this part (repeatable): a game's name (all its configurations and sections) or a "
        "configuration's directory name under OUT, such as goofspiel_num_cards=8_observation=markov; where "
        "one cannot keep a machine as long as the whole takes. Each part's REPORT.md stands alone (give each its own "
        "OUT, or the next part replaces it); a name that matches nothing is refused with the names that do",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from hiddenhand.training.benchmark import run_benchmark

    check_output(args.out, "--out", "dir")
    files = {option: getattr(args, option.replace("-", "_")) for option in _file_options()}
    print(run_benchmark(args.budget, args.out, args.seed, files=files, resume=args.resume, only=args.only))
    return 0


def _file_options() -> dict[str, BenchmarkSection]:
    """The options that give a game's own benchmark section a file, as the games declare them."""
    return {s.option: s for game in games().values() for s in game.benchmark_sections if s.option}
