"""The ``hiddenhand`` command (also ``python -m hiddenhand``): one grammar,
``hiddenhand <command> [<method>] <game> [options]``, one module per command.

Each game's options are generated from its declaration, so ``hiddenhand play goofspiel
--help`` lists exactly the options of that game, and a registered game of one's own appears
everywhere. Bad input, an unusable output path or a damaged file gives one line naming the
option or the file and exits with status 2 (as argparse does); Ctrl-C, once or twice, exits
with status 130 after the command has written what was complete.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from hiddenhand.cli import advise, benchmark, exploitability, games, play, simulate, solve, tournament, train

COMMANDS = (games, play, tournament, train, solve, exploitability, advise, simulate, benchmark)
"""The modules of the commands, each with ``add_parser(commands)`` (which sets ``run``)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hiddenhand",
        description="Imperfect-information games for RL and game theory: play them, pit agents against each other, "
        "train CFR and PPO agents, solve them exactly. Grammar: hiddenhand COMMAND [METHOD] GAME [options]; "
        "every command and game has its own --help.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if getattr(args, "game", None):
            args.game = args.game.replace("-", "_")
        return args.run(args)
    except KeyboardInterrupt as interrupt:
        message = getattr(interrupt, "message", "interrupted by Ctrl-C")
        print(f"\nhiddenhand: {message}", file=sys.stderr)
        raise SystemExit(130) from None
    except (ValueError, OSError) as err:  # bad input, an unusable path, a damaged file: one clear line
        print(f"hiddenhand: error: {err}", file=sys.stderr)
        raise SystemExit(2) from None


__all__ = ["build_parser", "main"]
