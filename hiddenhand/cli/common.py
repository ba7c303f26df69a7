"""What every command shares: one grammar, ``hiddenhand <command> [<method>] <game> [options]``, whose
game options are generated from the game's declaration (:class:`hiddenhand.registry.Game`),
and checks that name the option at fault before any work starts."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from hiddenhand.core import Rules
from hiddenhand.files import check_writable
from hiddenhand.registry import Game, Option, games, get


def count(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type for an integer in ``[low, high]``; argparse names the option in
    the error (``argument --seed: -1 is out of range; allowed: 0 to ...``)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low or (high is not None and value > high):
            allowed = f"{low} or more" if high is None else f"{low} to {high}"
            raise argparse.ArgumentTypeError(f"{value} is out of range; allowed: {allowed}")
        return value

    parse.__name__ = "integer"
    return parse


SEED = count(0, 2**63 - 1)


def _reader(option: Option, default: Any) -> Callable[[str], Any] | None:
    """How the text of an option becomes its value, with argparse-friendly errors."""
    kind = option.type or (type(default) if isinstance(default, (int, float)) else None)
    if kind is None:
        return None

    def read(text: str) -> Any:
        try:
            return kind(text)
        except (TypeError, ValueError) as err:
            raise argparse.ArgumentTypeError(f"{text!r}: {err}") from None

    read.__name__ = getattr(kind, "__name__", "value")
    return read


def add_option(group, name: str, option: Option, default: Any) -> None:
    """One ``--flag`` for the parameter ``name`` (booleans get ``--flag/--no-flag``)."""
    shown = "" if default is None else " (default %(default)s)"
    kwargs: dict[str, Any] = {"dest": name, "default": default, "help": option.help + shown}
    if isinstance(default, bool):
        kwargs["action"] = argparse.BooleanOptionalAction
    else:
        if option.choices:
            kwargs["choices"] = option.choices
        reader = _reader(option, default)
        if reader is not None:
            kwargs["type"] = reader
        kwargs["metavar"] = name.upper() if not option.choices else None
    group.add_argument(option.spelling(name), **kwargs)


def game_parsers(
    commands: argparse._SubParsersAction,
    name: str,
    help: str,
    description: str,
    select: Callable[[Game], bool] = lambda game: True,
    parameters: Callable[[Game], Iterable[str] | None] = lambda game: None,
) -> dict[str, argparse.ArgumentParser]:
    """The command ``name`` with one sub-parser per registered game (those ``select`` keeps),
    each carrying the game's options (``parameters(game)`` of them, or all)."""
    command = commands.add_parser(name, help=help, description=description)
    sub = command.add_subparsers(dest="game", required=True, metavar="GAME")
    parsers = {}
    for game in games().values():
        if not select(game):
            continue
        p = sub.add_parser(game.command, help=f"{game.title}", description=f"{description} ({game.title})")
        add_game_options(p, game, parameters(game))
        parsers[game.name] = p
    return parsers


def add_game_options(p: argparse.ArgumentParser, game: Game, names: Iterable[str] | None = None) -> None:
    """The game's parameters as options, defaulting as the command line declares."""
    defaults = {**game.rules_class.param_defaults(), **game.command_line_defaults}
    group = p.add_argument_group(f"{game.title} rules")
    chosen = list(names) if names is not None else list(defaults)
    for name in chosen:
        add_option(group, name, game.options[name], defaults[name])
    p.set_defaults(game_parameters=chosen)


def rules_from(args: argparse.Namespace, extra: Mapping[str, Any] | None = None) -> Rules:
    """The rules the parsed options describe; a bad value is reported as its option."""
    game = get(args.game)
    params = {**(extra or {}), **{name: getattr(args, name) for name in args.game_parameters}}
    try:
        return game.rules(**params)
    except (TypeError, ValueError) as err:
        named = [k for k in params if k in str(err)]
        prefix = game.options[named[0]].spelling(named[0]) + ": " if named else ""
        raise ValueError(f"{prefix}{err}") from None


def check_output(path: str | None, option: str, kind: str) -> None:
    """Refuse an unusable output location before the work starts, naming ``option``."""
    if path is not None:
        check_writable(path, option, kind)
