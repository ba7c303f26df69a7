"""What every command shares: one grammar, ``hiddenhand <command> [<method>] <game> [options]``, whose
game options are generated from the game's declaration (:class:`hiddenhand.registry.Game`),
and checks that name the option at fault before any work starts.

An error names the flag as it was typed (``--cards 99 is out of range; allowed: 2 to 13``):
argparse does so for what it checks itself, and every command runs inside
:func:`spelled_by`, which has the library's own checks name their parameters by their flags
(:func:`hiddenhand.validation.named`) and configurations as the command line sets them up
(``goofspiel --cards 3 --players 2``: :func:`hiddenhand.validation.configuration`). The
rules are the one place that knows a game parameter's range, so an option's text that is not
an integer reaches them as text, for them to refuse with the range."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from hiddenhand.core import Rules
from hiddenhand.files import check_writable
from hiddenhand.registry import Game, Option, games, get
from hiddenhand.validation import integer_text, named, spelled_as, split_items


def count(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type for an integer in ``[low, high]``; argparse names the option in
    the error (``argument --seed: -1 is out of range; allowed: 0 to ...``)."""
    allowed = f"{low} or more" if high is None else f"{low} to {high}"

    def parse(text: str) -> int:
        value = integer_text(text)
        if value is None:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer; allowed: {allowed}")
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{value} is out of range; allowed: {allowed}")
        return value

    parse.__name__ = "integer"
    return parse


SEED = count(0, 2**63 - 1)


def _integer_or_text(text: str) -> int | str:
    """An integer option's value: the integer its text spells in ASCII digits, else the text
    itself, which the rules (or the solver) refuse naming the option and their range."""
    value = integer_text(text)
    return text if value is None else value


def _reader(option: Option, default: Any) -> Callable[[str], Any] | None:
    """How the text of an option becomes its value, with argparse-friendly errors."""
    kind = option.type or (type(default) if isinstance(default, (int, float)) else None)
    if kind is None:
        return None
    if kind is int:
        return _integer_or_text

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
    """The rules the parsed options describe; a bad value is reported as its option (:func:`spelled_by`)."""
    params = {**(extra or {}), **{name: getattr(args, name) for name in args.game_parameters}}
    return get(args.game).rules(**params)


@contextlib.contextmanager
def spelled_by(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Iterator[None]:
    """Run the block with every parameter of the command that parsed ``args`` named as its
    flag in messages (:func:`hiddenhand.validation.spelled_as`): each option's ``dest`` (the
    parameter's name: ``num_cards``) maps to its flags (``--cards``) along the chain of
    sub-commands (``train``, ``cfr``, ``goofspiel``)."""
    flags: dict[str, tuple[str, ...]] = {}
    while parser is not None:
        chosen = None
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(args, action.dest, None))
            elif action.option_strings:
                flags[action.dest] = tuple(action.option_strings)
        parser = chosen
    with spelled_as(flags):
        yield


def check_agents(game: Game, name: str, text: str, several: bool = False) -> list[str]:
    """The agents the option ``name`` gives (``several``: comma-separated), each an agent of
    ``game`` by name or an existing path (a saved agent's directory or file, which loading
    then checks); an empty name, spaces around one or a path that does not exist is refused
    naming the option, the value and what is allowed."""
    allowed = (
        f"{'comma-separated agents, each ' if several else ''}one of {', '.join(game.agent_names)}, or a saved "
        "agent's directory or file"
    )
    items = split_items(name, text, allowed, separators="," if several else "")
    for item in items:
        if item not in game.agent_names and not Path(item).exists():
            raise ValueError(
                f"{named(name, text)}: {item!r} is not an agent of {game.name}, and no file or directory {item!r} "
                f"exists; allowed: {allowed}"
            )
    return items


def check_output(path: str | None, option: str, kind: str) -> None:
    """Refuse an unusable output location before the work starts, naming ``option``."""
    if path is not None:
        check_writable(path, option, kind)
