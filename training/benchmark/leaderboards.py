"""What the benchmark measures of each configuration once its runs are trained: for a
two-player game with an exact exploitability, a :class:`Row` per method (its seeds
summarised) and per reference agent, with head-to-head results against the references; for
any other game, an every-seating tournament of its declared line-up.

The report (:mod:`.report`) turns these into Markdown and figures; nothing here writes.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path

from hiddenhand.agent import Agent
from hiddenhand.agents.policy_agent import PolicyAgent
from hiddenhand.registry import Benchmark, Game
from hiddenhand.training.benchmark.budgets import Budget
from hiddenhand.training.benchmark.runs import TrainedRun, load, tournament_cfr
from hiddenhand.training.evaluation import MatchResult, can_play, head_to_head, tournament


@dataclass
class Row:
    """One agent of a two-player game: how exploitable it is and how it does. A learner's
    row summarises its seeds: the median of their last exploitability and its range, and
    ``best``, the lowest measured by any seed with the iteration or decision it came at."""

    agent: str
    seconds: float | None
    exploitability: float | None
    against: dict[str, MatchResult]
    steps: int | None = None
    spread: tuple[float, float] | None = None
    runs: list[TrainedRun] = field(default_factory=list)
    best: tuple[float, int] | None = None


def best(runs: list[TrainedRun]) -> tuple[float, int] | None:
    """The lowest exploitability any of ``runs`` measured, and its step count; ``None`` if none measured one."""
    points = [(point[2], point[0]) for run in runs for point in run.curve if point[2] is not None]
    return min(points, default=None)


def leaderboard(game: Game, rules, runs: list[TrainedRun], budget: Budget, seed: int) -> tuple[list[Row], list[str]]:
    """``(rows, opponents)``: a row per method of ``runs`` (its first seed's agent playing
    each reference, seats alternating), then a row per reference agent that can read this
    observation (the equilibrium and the game's heuristics; one that reads what the
    observation hides is left out), and the references' names."""
    opponents = {name: game.make_agent(name, rules, seed=seed) for name in ("equilibrium", *game.heuristics)}
    opponents = {name: agent for name, agent in opponents.items() if can_play(agent, rules)}
    rows = []
    for method in dict.fromkeys(r.method for r in runs):
        mine = [r for r in runs if r.method == method]
        agent = load(mine[0].path, game, seed)
        against = {o: head_to_head(rules, agent, opp, budget.games, seed=seed) for o, opp in opponents.items()}
        finals = [r.curve[-1][2] for r in mine if r.curve[-1][2] is not None]
        median = statistics.median(finals) if finals else None
        spread = (min(finals), max(finals)) if len(finals) > 1 else None
        seconds = statistics.median(r.curve[-1][1] for r in mine)
        rows.append(Row(method, seconds, median, against, mine[0].curve[-1][0], spread, mine, best(mine)))
    for name, agent in opponents.items():
        rows.append(Row(name, None, game.exact_exploitability(rules, agent), {}))
    return rows, list(opponents)


def tournament_table(
    game: Game, entry: Benchmark, rules, budget: Budget, out: Path, seed: int, progress: bool, resume: bool
) -> dict[str, MatchResult]:
    """An every-seating tournament of the declared line-up (CFR+ first when declared)."""
    field_: list[tuple[str, Agent]] = []
    if entry.cfr:
        field_.append(("cfr+", PolicyAgent.load(tournament_cfr(rules, budget, out, seed, progress, resume))))
    field_ += [(name, game.make_agent(name, rules)) for name in entry.lineup]
    games_per_seating = max(1, round(budget.tournament_games * entry.games_scale))
    return tournament(
        rules, field_, games_per_seating, seed=seed, progress=progress, rules_for=game.seating_rules(rules)
    )
