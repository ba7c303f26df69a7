"""``hiddenhand simulate egghead``: the behavioural-analysis study's experiment."""

from __future__ import annotations

import argparse

from hiddenhand.cli.common import SEED, check_output, count


def add_parser(commands: argparse._SubParsersAction) -> None:
    from hiddenhand.envs.egghead import MODERATORS

    simulate = commands.add_parser(
        "simulate",
        help="experiments of a study (egghead: rounds needed to score)",
        description="The experiments of the studies we reproduce.",
    )
    games = simulate.add_subparsers(dest="game", required=True, metavar="GAME")
    p = games.add_parser(
        "egghead",
        help="rounds needed to score, naive deducers against behavioural analysts",
        description="The study's experiment: one game of ROUNDS questions without a score cap, every player calling "
        "exactly when they know; players 0..ANALYSTS-1 analyse behaviour, the others deduce from answers alone. "
        "Prints the mean and variance of the rounds needed to score one point for each kind of player and every "
        "player's chance of reaching 10 points first (from the ten-fold convolution of the one-point distribution); "
        "writes summary.json and cdf.png (CDFs for 1 and 10 points, winning chances) into OUT. Each player added "
        "makes the deduction, and so each round, dearer; docs/performance.md has the timings.",
    )
    p.add_argument("--players", type=count(3, 5), default=4, help="players, 3 to 5 (default 4)")
    p.add_argument("--analysts", type=count(0), default=0, help="how many players analyse behaviour (default 0)")
    p.add_argument("--rounds", type=count(1), default=1000, help="questions to play (default 1000)")
    p.add_argument("--seed", type=SEED, default=0, help="seed of the deal and the questions (default 0)")
    p.add_argument(
        "--moderator",
        choices=MODERATORS,
        default="external",
        help="external (the study's setup) or rotating (default external)",
    )
    p.add_argument("--deck", default="standard", help="'standard' or question ids, separated by ';' or ','")
    p.add_argument("--out", default="runs/egghead", help="output directory (default runs/egghead)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from hiddenhand.training.egghead_experiment import simulate, write_report

    if args.analysts > args.players:
        raise ValueError(f"--analysts {args.analysts}: at most --players ({args.players})")
    check_output(args.out, "--out", "dir")
    result = simulate(args.players, args.analysts, args.rounds, args.seed, args.moderator, args.deck)
    print(format_summary(args, result, write_report(result, args.out)))
    return 0


def format_summary(args: argparse.Namespace, result, summary: dict) -> str:
    lines = [
        f"EggHead, {args.players} players, {args.analysts} analysing, {args.rounds} rounds, seed {args.seed}",
        f"{'kind':<10}{'points':>8}{'mean rounds':>14}{'variance':>10}",
    ]
    for kind, row in summary["rounds_to_score"].items():
        lines.append(f"{kind:<10}{row['points']:>8}{row['mean']:>14.2f}{row['variance']:>10.2f}")
    wins = summary["win_probability_to_10"]
    if wins is None:
        lines.append(
            "chance of reaching 10 points first: not estimated, some kind of player has not scored yet "
            "(play more rounds)"
        )
    else:
        lines.append(
            "chance of reaching 10 points first (ties count for each): "
            + ", ".join(f"player_{p} ({result.kind(p)}) {w:.3f}" for p, w in enumerate(wins))
        )
    lines.append(
        "the study (another deck of 23 questions): naive 9.78 (variance 29.3), analyst 6.16 (variance 14); "
        f"results in {args.out}"
    )
    return "\n".join(lines)
