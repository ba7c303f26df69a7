"""Exact equilibria of games played in rounds that each end in a full reveal.

In Spoof and two-player Bid Spoof everything is shown when a round ends, so what happens
next depends only on the *round-state* (the counts of matches or coins, who starts), not on
how the players got there. The game is a stochastic game in Shapley's sense: each round is
a small extensive-form game whose leaves lead to another round-state (or end the game),
and the value of a round-state is the value of its round when every leaf is paid the value
of the round-state it leads to. We iterate those values to their fixed point (value
iteration), solving each round by the sequence-form LP (:mod:`.sequence_form`).

A game describes itself by a :class:`RoundGame`. Values are always to the round's player 0
(the round-state's first player); a leaf that hands the first role to the other player
says so with ``sign=-1`` (the games are zero-sum, so the value to them is the negation).

The iteration sweeps the round-states in the order the game lists them, updating values in
place (Gauss-Seidel), and repeats a round until its own value settles before moving on: a
round that can end where it started (nobody right in Spoof) is a fixed point of its own,
while rounds listed after the states they lead to converge in one sweep. A game whose
rounds lead back and forth (Bid Spoof, where coins are won and lost) takes more sweeps.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from tqdm.auto import tqdm

from hiddenhand.core import State
from hiddenhand.solvers.sequence_form import Behaviour, SequenceForm


@dataclass(frozen=True)
class Continuation:
    """Where a round's leaf leads: ``payoff`` to the round's player 0, plus ``sign`` times
    the value of round-state ``key`` (``None`` when the game is over)."""

    payoff: float = 0.0
    key: Hashable | None = None
    sign: float = 1.0


def two_player_continuation(state: State, counts: Sequence[int], starter: int) -> Continuation:
    """Where a finished round of a two-player game leads: the end of the game (player 0's
    return), or the round-state (starter's count, the other's count), negated when
    player 1 starts it. ``counts`` are the players' matches or coins after the round.

    A game stopped by ``max_rounds`` is not over: the solvers value the unlimited game, so
    a stop leads on to the round-state it stopped in, like any other finished round."""
    if state.is_terminal() and not state.is_truncated():
        return Continuation(payoff=state.returns()[0])
    return Continuation(key=(counts[starter], counts[1 - starter]), sign=1.0 if starter == 0 else -1.0)


class RoundGame(Protocol):
    """What the solver needs to know about a game of rounds."""

    def keys(self) -> Sequence[Hashable]:
        """Every round-state, preferably each after the states its rounds lead to."""

    def start(self, key: Hashable, first: int = 0) -> State:
        """A state at the start of a round in round-state ``key``, its player ``first`` in
        the first role (the solver always puts player 0 there; the whole-game best
        response, :mod:`.round_best_response`, seats the agent in either role)."""

    def continuation(self, state: State) -> Continuation | None:
        """Where ``state`` leads if the round is over there, else ``None``."""


@dataclass
class RoundSolution:
    """One round's equilibrium, given the converged values of the rounds that follow."""

    value: float
    form: SequenceForm
    leaf_values: np.ndarray
    plans: tuple[np.ndarray, np.ndarray]

    def policy(self, player: int) -> Behaviour:
        return self.form.behaviour(player, self.plans[player])

    def best_response_gains(self) -> tuple[float, float]:
        """What each player would gain in this round by deviating from the equilibrium
        (with the continuation values fixed): zero up to rounding at an equilibrium."""
        br0 = self.form.best_response_value(0, self.plans[1], self.leaf_values)
        br1 = self.form.best_response_value(1, self.plans[0], self.leaf_values)
        return br0 - self.value, br1 + self.value

    def leaf_probabilities(self) -> np.ndarray:
        """Probability of reaching each leaf when both players follow the equilibrium."""
        s = self.form.leaf_sequences
        return self.form.leaf_weights * self.plans[0][s[:, 0]] * self.plans[1][s[:, 1]]


@dataclass
class StochasticSolution:
    """Values of every round-state (to its first player) and each round's equilibrium."""

    values: dict[Hashable, float]
    rounds: dict[Hashable, RoundSolution]
    sweeps: int

    def residual(self) -> float:
        """Largest violation of the fixed-point equations: each round re-solved with the
        final values, against the value it is meant to have."""
        return max(abs(r.form.value(r.leaf_values) - self.values[k]) for k, r in self.rounds.items())


class _Round:
    """One round-state's tree, with its leaves as arrays so that values are cheap to apply."""

    def __init__(self, game: RoundGame, key: Hashable, index: dict[Hashable, int]) -> None:
        self.form = SequenceForm.build(game.start(key), game.continuation)
        leaves: list[Continuation] = self.form.leaves
        self.payoff = np.array([c.payoff for c in leaves])
        self.sign = np.array([c.sign for c in leaves])
        self.next = np.array([index[c.key] if c.key is not None else -1 for c in leaves])

    def leaf_values(self, values: np.ndarray) -> np.ndarray:
        """Leaf values for the current ``values`` (whose last entry, the game's end, is 0)."""
        return self.payoff + self.sign * values[self.next]


def iterate(
    keys: Sequence[Hashable],
    update: Callable[[int, np.ndarray], float],
    tol: float = 1e-12,
    max_sweeps: int = 1000,
    max_repeats: int = 10_000,
    progress: bool = True,
) -> tuple[np.ndarray, int]:
    """Value iteration from zero, in place (see the module docstring): ``update(i, values)``
    is the new value of ``keys[i]`` given the current ``values``, whose extra last entry
    stands for the game's end and stays 0. Returns the values and the number of sweeps.

    Raises ``RuntimeError`` if no value stops moving by more than ``tol`` within
    ``max_sweeps`` sweeps, or a round takes more than ``max_repeats`` updates in one sweep
    (a round that can repeat for ever under every strategy has no value to iterate to).
    """
    values = np.zeros(len(keys) + 1)
    for sweep in range(1, max_sweeps + 1):
        moved = 0.0
        for i in tqdm(range(len(keys)), desc=f"sweep {sweep}", disable=not progress, leave=False):
            for repeat in range(max_repeats):
                new = update(i, values)
                change = abs(new - values[i])
                values[i] = new
                if repeat == 0:
                    moved = max(moved, change)
                if change <= tol:
                    break
            else:
                raise RuntimeError(f"round-state {keys[i]!r} did not settle in {max_repeats} updates")
        if moved <= tol:
            return values, sweep
    raise RuntimeError(f"values still moved by {moved:.3g} after {max_sweeps} sweeps")


def solve(
    game: RoundGame,
    tol: float = 1e-12,
    max_sweeps: int = 1000,
    max_repeats: int = 10_000,
    progress: bool = True,
) -> StochasticSolution:
    """Value-iterate ``game`` until no round-state's value moves by more than ``tol``
    (:func:`iterate`, which raises ``RuntimeError`` when that does not happen)."""
    keys = list(game.keys())
    index = {k: i for i, k in enumerate(keys)}
    rounds = [_Round(game, k, index) for k in tqdm(keys, desc="building rounds", disable=not progress, leave=False)]
    values, sweeps = iterate(
        keys, lambda i, v: rounds[i].form.value(rounds[i].leaf_values(v)), tol, max_sweeps, max_repeats, progress
    )
    solutions = {}
    for key, r in zip(keys, rounds):
        leaf_values = r.leaf_values(values)
        value, plan0, plan1 = r.form.solve(leaf_values)
        solutions[key] = RoundSolution(value, r.form, leaf_values, (plan0, plan1))
    return StochasticSolution({k: float(values[i]) for k, i in index.items()}, solutions, sweeps)


__all__ = [
    "Continuation",
    "RoundGame",
    "RoundSolution",
    "StochasticSolution",
    "iterate",
    "solve",
    "two_player_continuation",
]
