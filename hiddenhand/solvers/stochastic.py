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

The strategies so found are stationary, each round optimal given the values of the rounds
after it. A round that loops back to its own round-state pays that loop the round's own
value, so the round's LP is indifferent to looping, while in the whole game an endless
loop is a draw: the player a round-state favours may need to *end* the loop. With a
:class:`LoopEnding`, :func:`end_loops` gives the plans to play that do (each round's
``played``; the values stay those of the fixed point). Spoof needs it, and its module
says why and what it costs; Bid Spoof's equilibrium ends its rounds as it is.
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
    """The round's equilibrium with every leaf paid the value of the round-state it leads to
    (a leaf back to this round-state paid ``value``)."""
    loops: np.ndarray | None = None
    """Per leaf, whether it leads back to this round-state with the same player first."""
    played: tuple[np.ndarray, np.ndarray] | None = None
    """The plans to play in the whole game (:func:`end_loops`); ``plans`` where ``None``."""

    def policy(self, player: int) -> Behaviour:
        """``player``'s strategy to play (:attr:`strategy`) as a behaviour strategy. Played
        plans reach some infosets with probabilities far below 1e-12 on purpose, so only
        infosets they never reach count as unreached."""
        if self.played is None:
            return self.form.behaviour(player, self.plans[player])
        return self.form.behaviour(player, self.played[player], unreached=0.0)

    @property
    def strategy(self) -> tuple[np.ndarray, np.ndarray]:
        """The plans to play: :attr:`played`, else the round's equilibrium."""
        return self.plans if self.played is None else self.played

    def best_response_gains(self, plans: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[float, float]:
        """What each player would gain in this round by deviating from ``plans`` (the round's
        equilibrium by default), with the continuation values fixed (a loop paid the round's
        value): zero up to rounding at the round's equilibrium."""
        plans = self.plans if plans is None else plans
        br0 = self.form.best_response_value(0, plans[1], self.leaf_values)
        br1 = self.form.best_response_value(1, plans[0], self.leaf_values)
        return br0 - self.value, br1 + self.value

    def leaf_probabilities(self) -> np.ndarray:
        """Probability of reaching each leaf when both players play :attr:`strategy`."""
        s, plans = self.form.leaf_sequences, self.strategy
        return self.form.leaf_weights * plans[0][s[:, 0]] * plans[1][s[:, 1]]


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
    ending: LoopEnding | None = None,
) -> StochasticSolution:
    """Value-iterate ``game`` until no round-state's value moves by more than ``tol``
    (:func:`iterate`, which raises ``RuntimeError`` when that does not happen), then solve
    each round for its equilibrium; with ``ending``, also the plans to play that end the
    loops (:func:`end_loops`, each round's ``played``)."""
    keys = list(game.keys())
    index = {k: i for i, k in enumerate(keys)}
    rounds = [_Round(game, k, index) for k in tqdm(keys, desc="building rounds", disable=not progress, leave=False)]
    values, sweeps = iterate(
        keys, lambda i, v: rounds[i].form.value(rounds[i].leaf_values(v)), tol, max_sweeps, max_repeats, progress
    )
    solutions = {}
    for i, (key, r) in enumerate(zip(keys, rounds)):
        leaf_values = r.leaf_values(values)
        value, plan0, plan1 = r.form.solve(leaf_values)
        loops = (r.next == i) & (r.sign > 0)
        solutions[key] = RoundSolution(value, r.form, leaf_values, (plan0, plan1), loops)
        if ending is not None:
            solutions[key].played = end_loops(solutions[key], float(values[i]), ending)
    return StochasticSolution({k: float(values[i]) for k, i in index.items()}, solutions, sweeps)


@dataclass(frozen=True)
class LoopEnding:
    """How :func:`end_loops` makes a round that can loop back to itself end: the ender's
    round equilibrium mixed with weight ``weight`` with its optimal plan of the round whose
    loop is paid ``1 - discount`` times the round's value; behaviour probabilities below
    ``threshold`` (the LP's round-off) are set to 0 first. ``weight=0`` keeps the round's
    equilibrium, cleaned of round-off."""

    discount: float = 0.1
    weight: float = 1e-10
    threshold: float = 1e-6


def clean_plan(form: SequenceForm, player: int, plan: np.ndarray, threshold: float) -> np.ndarray:
    """``plan`` with every behaviour probability below ``threshold`` set to 0 and the rest
    of its infoset scaled up (LP round-off of order 1e-11 would otherwise be read as a
    strategy: see :func:`end_loops`)."""
    actions = form.players[player].actions
    probabilities = {}
    for infostate, probs in form.behaviour(player, plan).items():
        row = np.array([probs[a] for a in actions[infostate]])
        row[row < threshold] = 0.0
        probabilities[infostate] = row / row.sum()
    return form.plan(player, probabilities)


def stall_margin(
    form: SequenceForm,
    loops: np.ndarray,
    leaf_values: np.ndarray,
    ender: int,
    base: np.ndarray,
    plan: np.ndarray,
    value: float,
) -> float | None:
    """How well ``plan`` of the ``ender`` does against the other player's pure strategies
    that never end the round against ``base`` (every leaf they reach against it a loop):
    the most such a strategy gets, ``A - value * q`` to the ender's opponent (``A`` its
    round value over the leaves that leave the round, ``q`` the probability of leaving,
    ``value`` the round-state's value to player 0), against ``plan``. Negative: every such
    stall is ended by ``plan`` at a loss to the staller. ``None`` where there is no such
    strategy."""
    staller = 1 - ender
    sign = 1.0 if staller == 0 else -1.0
    s = form.leaf_sequences
    ends_against_base = (form.leaf_weights * base[s[:, ender]] > 0) & ~loops
    worth = np.where(loops, 0.0, sign * (leaf_values - value)) * form.leaf_weights * plan[s[:, ender]]
    forbidden = 2.0 * (1.0 + np.abs(worth).sum())  # more than any strategy that avoids them can lose
    best, _ = form.pure_best_response(staller, np.ones(len(worth)), worth - forbidden * ends_against_base)
    return None if best <= -forbidden / 2 else best


def end_loops(solution: RoundSolution, value: float, ending: LoopEnding) -> tuple[np.ndarray, np.ndarray]:
    """The plans to play in a round-state worth ``value`` (to player 0) whose round is
    ``solution``: both players' round equilibria cleaned of round-off (:func:`clean_plan`),
    and, where the other player could stall the round against the player to whom the
    round-state is worth more than a draw (the *ender*), the ender's mixed with weight
    ``ending.weight`` with ``rho``, its optimal plan in the round whose loop is paid
    ``(1 - ending.discount) * value``, halving the discount until ``rho`` ends every such
    stall at a loss to the staller (:func:`stall_margin`). See :mod:`hiddenhand.solvers.spoof`
    for why this makes the stationary strategies an equilibrium of the whole game to within
    about ``weight`` times a constant."""
    form, loops = solution.form, solution.loops
    plans = [clean_plan(form, player, solution.plans[player], ending.threshold) for player in (0, 1)]
    if ending.weight == 0 or abs(value) <= 1e-9 or loops is None or not loops.any():
        return plans[0], plans[1]
    ender = 0 if value > 0 else 1
    if stall_margin(form, loops, solution.leaf_values, ender, plans[ender], plans[ender], value) is None:
        return plans[0], plans[1]  # the equilibrium already ends the round against every reply
    discount = ending.discount
    for _ in range(40):
        _, *ends = form.solve(np.where(loops, (1.0 - discount) * value, solution.leaf_values))
        rho = clean_plan(form, ender, ends[ender], ending.threshold)
        margin = stall_margin(form, loops, solution.leaf_values, ender, plans[ender], rho, value)
        if margin is not None and margin < -1e-9:
            break
        discount /= 2.0
    else:
        raise RuntimeError(f"no plan of player {ender} ends every stall of the round worth {value}")
    plans[ender] = (1.0 - ending.weight) * plans[ender] + ending.weight * rho
    return plans[0], plans[1]


__all__ = [
    "Continuation",
    "LoopEnding",
    "RoundGame",
    "RoundSolution",
    "StochasticSolution",
    "clean_plan",
    "end_loops",
    "iterate",
    "solve",
    "two_player_continuation",
]
