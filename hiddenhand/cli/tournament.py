"""``hiddenhand tournament <game>``: computer players against each other, with 95% intervals."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence

from hiddenhand.cli.common import SEED, check_agents, count, game_parsers, rules_from
from hiddenhand.core import Rules
from hiddenhand.registry import get
from hiddenhand.training.evaluation import MatchResult

DESCRIPTION = (
    "Two players: every pair of the chosen agents plays GAMES games with seats alternating; prints each row "
    "agent's mean return against each column agent, with a 95% interval. Three or more players: the agents "
    "fill the seats in turn and every distinct seating plays GAMES games; prints each agent's mean return "
    "with a 95% interval"
)


def add_parser(commands: argparse._SubParsersAction) -> None:
    parsers = game_parsers(
        commands, "tournament", "computer players against each other, with 95%% intervals", DESCRIPTION
    )
    for name, p in parsers.items():
        game = get(name)
        p.add_argument(
            "--agents",
            default=",".join(game.heuristics),
            help=f"comma-separated agents: {', '.join(game.agent_names)}, saved-policy directories or agent files "
            "(default %(default)s)",
        )
        p.add_argument("--games", type=count(1), default=400, help="games per pair or seating (default 400)")
        p.add_argument("--seed", type=SEED, default=0, help="seed of the whole tournament (default 0)")
        p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    rules = rules_from(args)
    names = check_agents(get(args.game), "agents", args.agents, several=True)
    print(two_player(args.game, rules, names, args) if rules.num_players == 2 else table(args.game, rules, names, args))
    return 0


def two_player(game: str, rules: Rules, names: Sequence[str], args: argparse.Namespace) -> str:
    from hiddenhand.agents import load_agent
    from hiddenhand.training.evaluation import round_robin

    names = list(dict.fromkeys(names))
    if len(names) < 2:
        raise ValueError(f"--agents {args.agents!r} names fewer than two different agents")
    agents = {name: load_agent(game, name, rules) for name in names}
    return format_round_robin(rules, names, round_robin(rules, agents, args.games, seed=args.seed), args.games)


def format_round_robin(
    rules: Rules, names: Sequence[str], table: Mapping[tuple[str, str], MatchResult], games: int
) -> str:
    """The round robin as a square table: the row agent's mean return against the column's."""
    width = max(18, *(len(n) + 2 for n in names))
    label = max(map(len, names)) + 1
    lines = [
        f"{rules!r}: mean return of the row agent against the column agent, ± 95% interval, {games} games each",
        "".ljust(label) + "".join(n.rjust(width) for n in names),
    ]
    for a in names:
        cells = ["—" if a == b else f"{table[a, b].mean:+.2f} ± {table[a, b].ci95:.2f}" for b in names]
        lines.append(a.ljust(label) + "".join(c.rjust(width) for c in cells))
    return "\n".join(lines)


def table(game: str, rules: Rules, names: Sequence[str], args: argparse.Namespace) -> str:
    """Three or more players: one table, every seating of the named agents (filled in turn)."""
    from hiddenhand.agents import load_agent
    from hiddenhand.training.evaluation import seatings, tournament

    n = rules.num_players
    if not names or len(names) > n:
        raise ValueError(f"--agents {args.agents!r}: name 1 to {n} agents for the {n} seats (repeats allowed)")
    seated_names = [names[i % len(names)] for i in range(n)]
    field = [(name, load_agent(game, name, rules, seed=i)) for i, name in enumerate(seated_names)]
    results = tournament(rules, field, args.games, seed=args.seed, rules_for=get(game).seating_rules(rules))
    return format_table(rules, seated_names, len(seatings(seated_names)), args.games, results)


def format_table(
    rules: Rules, seated: Sequence[str], count_seatings: int, games: int, results: Mapping[str, MatchResult]
) -> str:
    """Each agent's mean return over the seats it held, best first."""
    lines = [
        f"{rules!r}: seats {', '.join(seated)}; every seating ({count_seatings}) plays {games} games",
        f"{'agent':<24}{'mean return':>16}{'games':>8}{'best in':>9}   (mean over the seats an agent holds)",
    ]
    for name, r in sorted(results.items(), key=lambda kv: -kv[1].mean):
        lines.append(f"{name:<24}{f'{r.mean:+.3f} ± {r.ci95:.3f}':>16}{r.games:>8}{r.wins / r.games:>9.1%}")
    return "\n".join(lines)
