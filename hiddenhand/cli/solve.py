"""``hiddenhand solve <game>``: the game's exact solve, for the games that declare one."""

from __future__ import annotations

import argparse

from hiddenhand.cli.common import add_option, check_output, game_parsers, rules_from
from hiddenhand.registry import get


def add_parser(commands: argparse._SubParsersAction) -> None:
    parsers = game_parsers(
        commands,
        "solve",
        "exact equilibria (the games with an exact solver)",
        "Solve a game exactly",
        select=lambda game: game.solver is not None,
        parameters=lambda game: game.solver.parameters,
    )
    for name, p in parsers.items():
        solver = get(name).solver
        p.description = solver.description or p.description
        p.set_defaults(**{k: v for k, v in solver.defaults.items() if k in solver.parameters})
        group = p.add_argument_group("solver")
        for option_name, option in solver.options.items():
            add_option(group, option_name, option, option.default)
        p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    solver = get(args.game).solver
    fixed = {k: v for k, v in solver.defaults.items() if k not in solver.parameters}
    rules = rules_from(args, extra=fixed)
    options = {name: getattr(args, name) for name in solver.options}
    for name, option in solver.options.items():
        if option.path:
            check_output(options[name], option.spelling(name), option.path)
    print(solver(rules, **options))
    return 0
