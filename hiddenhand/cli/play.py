"""``hiddenhand play <game>``: a person against computer players in the terminal."""

from __future__ import annotations

import argparse

from hiddenhand.cli.common import SEED, count, game_parsers, rules_from
from hiddenhand.registry import get


def add_parser(commands: argparse._SubParsersAction) -> None:
    description = "Play a full game in the terminal against computer players; you are offered another game at the end"
    for name, p in game_parsers(
        commands, "play", "play a game in the terminal against a computer", description
    ).items():
        game = get(name)
        files = ", a solution file of `hiddenhand solve`" if game.agent_file else ""
        p.add_argument(
            "--opponent",
            default=game.opponent,
            help=f"the computer player in every other seat: one of {', '.join(game.agent_names)}, a directory "
            f"(or .npz file) holding a saved policy such as the output of `hiddenhand train cfr`{files} "
            "(default %(default)s)",
        )
        p.add_argument("--seat", type=count(0), default=0, help="your seat, 0 = player_0 (default 0)")
        p.add_argument(
            "--seed",
            type=SEED,
            default=None,
            help="seed of the deal and the computer's choices (default: fresh each run)",
        )
        p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from hiddenhand.agents import load_agent
    from hiddenhand.terminal import play_in_terminal

    rules = rules_from(args)
    if args.seat >= rules.num_players:
        raise ValueError(f"--seat {args.seat}: this game has seats 0 to {rules.num_players - 1}")
    opponents = [load_agent(args.game, args.opponent, rules, seed=None) for _ in range(rules.num_players - 1)]
    play_in_terminal(rules, opponents, seat=args.seat, seed=args.seed)
    return 0
