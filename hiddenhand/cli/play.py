"""``hiddenhand play <game>``: a person against computer players in the terminal.

Setting up a computer player can take long (the equilibrium of a large configuration is
solved first: minutes for Spoof from 9 matches): past :data:`SLOW_SETUP` seconds the command
says what it is doing, with the time elapsed, on stderr. Ctrl-C, there or at a prompt, exits
with status 130 as in every command.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
from collections.abc import Iterator

from hiddenhand.cli.common import SEED, check_agents, count, game_parsers, rules_from
from hiddenhand.registry import get

SLOW_SETUP = 1.0
"""Seconds of setting up the computer players after which the command says what it is doing."""


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
            "(default %(default)s). An equilibrium opponent may solve the game first: seconds, or minutes in "
            "large configurations (the time elapsed is shown)",
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
    check_agents(get(args.game), "opponent", args.opponent)
    doing = f"hiddenhand: setting up the {args.game} opponent {args.opponent!r}"
    with shown_if_slow(f"{doing} (solving the game first takes minutes in large configurations; Ctrl-C stops)"):
        opponents = [load_agent(args.game, args.opponent, rules, seed=None) for _ in range(rules.num_players - 1)]
    play_in_terminal(rules, opponents, seat=args.seat, seed=args.seed)
    return 0


@contextlib.contextmanager
def shown_if_slow(text: str) -> Iterator[None]:
    """Run the block; once it has taken :data:`SLOW_SETUP` seconds, show ``text`` and the time
    elapsed on stderr (a tqdm line, left in place with the total) until it ends. Silent work
    that may last minutes looks hung; a known-quick one should not print."""
    from tqdm.auto import tqdm

    done = threading.Event()

    def show() -> None:
        if done.wait(SLOW_SETUP):
            return
        with tqdm(desc=text, bar_format="{desc}: {elapsed}", file=sys.stderr) as line:
            while not done.wait(0.5):
                line.refresh()

    thread = threading.Thread(target=show, name="hiddenhand-setup-notice", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
