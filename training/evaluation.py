"""Playing agents against each other: single games, seat-rotated matches, round robins.

Games are played on the rules engine directly (the same observations the PettingZoo env
hands out, without its bookkeeping), so a tournament of thousands of games takes seconds.
Matches rotate the seats, because moving first or second in a round can matter to a
heuristic even where it does not matter to the rules.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

from hiddenhand.agent import Agent
from hiddenhand.core import Rules, advance, play_chance


def play_game(rules: Rules, agents: Sequence[Agent], rng: np.random.Generator) -> list[float]:
    """One game with ``agents[p]`` in seat ``p``; chance drawn from ``rng``. Returns the returns."""
    if len(agents) != rules.num_players:
        raise ValueError(f"{len(agents)} agents given for a {rules.num_players}-player game")
    return advance(rules.new_initial_state(), agents, rng).returns()


def play_games(
    rules: Rules, agents: Sequence[Agent], games: int, seed: int | None = 0, progress: bool = False
) -> np.ndarray:
    """``games`` games with the seats rotated each game; returns an array (games, agents)
    of each agent's return (indexed by agent, not seat).

    The agents' generators are reseeded from ``seed``, so a match repeats exactly.
    """
    if games < 1:
        raise ValueError(f"games={games} must be at least 1")
    num = rules.num_players
    seeds = np.random.SeedSequence(seed).spawn(num + 1)
    for agent, s in zip(agents, seeds[1:]):
        agent.seed(s)
    rng = np.random.default_rng(seeds[0])
    results = np.zeros((games, num))
    for g in tqdm(range(games), desc="games", disable=not progress, leave=False):
        shift = g % num
        seated = [agents[(seat - shift) % num] for seat in range(num)]
        returns = play_game(rules, seated, rng)
        for seat in range(num):
            results[g, (seat - shift) % num] = returns[seat]
    return results


@dataclass(frozen=True)
class MatchResult:
    """Results of agent A against agent B over ``games`` two-player games."""

    games: int
    mean: float
    """A's mean return."""
    ci95: float
    """Half-width of the normal-approximation 95% interval of ``mean``."""
    wins: int
    draws: int
    losses: int

    @staticmethod
    def from_returns(returns_a: np.ndarray, returns_b: np.ndarray) -> MatchResult:
        n = len(returns_a)
        std = float(np.std(returns_a, ddof=1)) if n > 1 else 0.0
        return MatchResult(
            games=n,
            mean=float(np.mean(returns_a)),
            ci95=1.96 * std / math.sqrt(n),
            wins=int(np.sum(returns_a > returns_b)),
            draws=int(np.sum(returns_a == returns_b)),
            losses=int(np.sum(returns_a < returns_b)),
        )

    def __str__(self) -> str:
        return f"{self.mean:+.2f} ± {self.ci95:.2f} (W{self.wins} D{self.draws} L{self.losses})"


def can_play(agent: Agent, rules: Rules) -> bool:
    """Whether ``agent`` can play on ``rules``' observation, asked at a first decision: an
    agent that reads what the observation hides says so with ``ValueError`` (Goofspiel's
    hard heuristic reads the score, which the Markov observation leaves out)."""
    state = rules.new_initial_state()
    play_chance(state, np.random.default_rng(0))
    try:
        agent.policy(state.agent_observation(state.current_player()))
    except ValueError:
        return False
    return True


def head_to_head(rules: Rules, a: Agent, b: Agent, games: int, seed: int | None = 0) -> MatchResult:
    """A against B in a two-player game, seats alternating."""
    if rules.num_players != 2:
        raise ValueError(f"head_to_head needs a two-player game; {rules} has {rules.num_players}")
    results = play_games(rules, [a, b], games, seed)
    return MatchResult.from_returns(results[:, 0], results[:, 1])


MAX_SEATINGS = 5040
"""Seatings a tournament plays at most (7 different agents)."""


def seatings(names: Sequence[str]) -> list[tuple[str, ...]]:
    """Every distinct way to seat ``names`` (agents of the same name are interchangeable)."""
    return sorted(set(itertools.permutations(names)))


def tournament(
    rules: Rules,
    field: Sequence[tuple[str, Agent]],
    games: int,
    seed: int = 0,
    progress: bool = True,
    rules_for: Callable[[tuple[str, ...]], Rules] | None = None,
) -> dict[str, MatchResult]:
    """A table of ``rules.num_players`` players: ``field`` lists who sits at it (a name may
    appear several times). Every distinct seating of the field plays ``games`` games, so no
    agent gains from a seat; returns, per name, the mean return per game (averaged over the
    seats that name holds, so the samples stay independent) with a 95% interval; ``wins``
    counts the games in which one of its seats did best, alone or tied, ``losses`` the rest.
    ``rules_for(seating)`` gives the rules of each seating when they depend on who sits
    where (EggHead's public model names the seats of its behavioural analysts)."""
    if len(field) != rules.num_players:
        raise ValueError(f"{rules} seats {rules.num_players} players; the field has {len(field)}")
    if games < 1:
        raise ValueError(f"games={games} must be at least 1")
    names = [name for name, _ in field]
    seeds = np.random.SeedSequence(seed).spawn(len(field) + 1)
    for (_, agent), s in zip(field, seeds[1:]):
        agent.seed(s)
    rng = np.random.default_rng(seeds[0])
    per_name: dict[str, list[float]] = {name: [] for name, _ in field}
    best: dict[str, list[bool]] = {name: [] for name, _ in field}
    orders = seatings(names)
    if len(orders) > MAX_SEATINGS:
        raise ValueError(
            f"{len(orders)} seatings of {len(set(names))} different agents is too many; "
            "field at most 7 different agents"
        )
    with tqdm(total=len(orders) * games, desc="games", disable=not progress, leave=False) as bar:
        for order in orders:
            # Entries of the same name take the seats that name gets, in field order.
            pool = {name: [agent for n, agent in field if n == name] for name in set(names)}
            seated = [pool[name].pop(0) for name in order]
            table = rules if rules_for is None else rules_for(order)
            for _ in range(games):
                returns = play_game(table, seated, rng)
                for name in per_name:
                    mine = [returns[seat] for seat, n in enumerate(order) if n == name]
                    per_name[name].append(sum(mine) / len(mine))
                    best[name].append(max(mine) == max(returns))
                bar.update()
    results = {}
    for name, values in per_name.items():
        r = np.array(values)
        std = float(np.std(r, ddof=1)) if len(r) > 1 else 0.0
        wins = int(np.sum(best[name]))
        results[name] = MatchResult(len(r), float(r.mean()), 1.96 * std / math.sqrt(len(r)), wins, 0, len(r) - wins)
    return results


def round_robin(
    rules: Rules, agents: dict[str, Agent], games: int, seed: int = 0, progress: bool = True
) -> dict[tuple[str, str], MatchResult]:
    """Every ordered pair of distinct agents plays ``games`` games; keyed (row, column)."""
    names = list(agents)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    table: dict[tuple[str, str], MatchResult] = {}
    for k, (a, b) in enumerate(tqdm(pairs, desc="matches", disable=not progress)):
        results = play_games(rules, [agents[a], agents[b]], games, seed + k)
        table[a, b] = MatchResult.from_returns(results[:, 0], results[:, 1])
        table[b, a] = MatchResult.from_returns(results[:, 1], results[:, 0])
    return table
