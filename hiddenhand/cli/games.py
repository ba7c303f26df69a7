"""``hiddenhand games``: every registered game and what it comes with."""

from __future__ import annotations

import argparse

from hiddenhand.registry import Game, games


def add_parser(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser(
        "games",
        help="list the registered games, their ids, agents and exact methods",
        description="List every registered game (ours, installed packages', the user's).",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    print(format_games(games().values()))
    return 0


def format_games(declared) -> str:
    """One paragraph per game: ids, parameters, agents, exact methods."""
    blocks = []
    for game in declared:
        game: Game
        lines = [
            f"{game.command}: {game.title} ({game.env_module})",
            f"  ids: {game.env_id} (PettingZoo), {game.openspiel_name} (OpenSpiel)",
            f"  parameters: {', '.join(f'{k}={v!r}' for k, v in game.rules_class.param_defaults().items())}",
            f"  agents: {', '.join(game.agent_names)}",
        ]
        if game.solver is not None:
            lines.append(f"  exact solve: {game.solver.configurations}")
        if game.exploitability is not None:
            lines.append(f"  exact exploitability: {game.exploitability.configurations}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
