"""The ``hiddenhand`` command (also ``python -m hiddenhand``): one grammar,
``hiddenhand <command> [<method>] <game> [options]``, one module per command.

Each game's options are generated from its declaration, so ``hiddenhand play goofspiel
--help`` lists exactly the options of that game, and a registered game of one's own appears
everywhere. Bad input, an unusable output path or a damaged file gives one line naming the
option or the file and exits with status 2 (as argparse does); Ctrl-C, once or twice, at any
moment (the imports included), exits with status 130 after the command has written what was
complete; a reader that goes away (``hiddenhand games | head -1``) ends the command quietly with
status 141 (128 + SIGPIPE), as git does.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from hiddenhand.interrupt import EXIT_STATUS, ctrl_c_raises, exit_after_ctrl_c

COMMANDS = ("games", "play", "tournament", "train", "solve", "exploitability", "advise", "simulate", "benchmark")
"""The modules of the commands (``hiddenhand.cli.<name>``), each with ``add_parser(commands)``
(which sets ``run``), imported by :func:`build_parser` rather than with this module: ``--help``
of one command needs them all anyway, and until they are imported Ctrl-C ends the command at
once (:func:`hiddenhand.interrupt.end_the_command_on_ctrl_c`)."""

BROKEN_PIPE = 141
"""The status of a command whose output pipe was closed: what a shell reports for git, ``ls``
and other commands that SIGPIPE ends."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hiddenhand",
        description="Imperfect-information games for RL and game theory: play them, pit agents against each other, "
        "train CFR and PPO agents, solve them exactly. Grammar: hiddenhand COMMAND [METHOD] GAME [options]; "
        "every command and game has its own --help.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"hiddenhand.cli.{name}").add_parser(commands)
    return parser


def version() -> str:
    """The installed distribution's version; the package's own where it is not installed."""
    from importlib import metadata

    try:
        return metadata.version("hiddenhand")
    except metadata.PackageNotFoundError:
        from hiddenhand import __version__

        return __version__


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _run(argv)
    except KeyboardInterrupt as interrupt:
        exit_after_ctrl_c(
            getattr(interrupt, "message", "interrupted by Ctrl-C"), getattr(interrupt, "status", EXIT_STATUS)
        )
    except BrokenPipeError:
        # Whatever is still buffered for the closed pipe goes nowhere, instead of failing again at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(BROKEN_PIPE) from None
    except (ValueError, OSError) as err:  # bad input, an unusable path, a damaged file: one clear line
        print(f"hiddenhand: error: {err}", file=sys.stderr)
        raise SystemExit(2) from None


def _run(argv: Sequence[str] | None) -> int:
    try:
        parser = build_parser()  # the last of the imports: until here Ctrl-C ends the command at once
        ctrl_c_raises()
        args = parser.parse_args(argv)
        from hiddenhand.cli.common import spelled_by  # imported with the commands, by build_parser

        with spelled_by(parser, args):  # the library's messages name the flags typed
            if getattr(args, "game", None):
                args.game = args.game.replace("-", "_")
            return args.run(args)
    finally:  # --help and --version included: a closed pipe shows here, where main handles it, not at exit
        sys.stdout.flush()


__all__ = ["build_parser", "main", "version"]
