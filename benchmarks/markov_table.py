"""A tabular policy over Markov Goofspiel positions, its exact Q-values, and magnetic mirror
descent on them: the control that separates what the game and its exact measure allow from
what a network trained by sampled self-play reaches.

Why a table. Self-play learners on the Markov observation (``observation="markov"``) stall
far from the equilibrium. Either the target is wrong (the exact measure, the observation the
agent is shown, or the update rule itself) or the learner cannot reach it (sampling, the
positions self-play rarely visits, the network, the optimiser). A table with one row of
logits per position, updated with Q-values computed exactly at every position, has none of
the second kind of trouble, so whether *it* converges under the project's own measure says
which kind it is (``diagnose_selfplay.py`` runs it and the next controls).

It sits here, beside the diagnoses that run it, and not in the package, which never uses it;
the tests import it too (pytest puts ``benchmarks/`` on the path). Its kernels are its own,
not the exact measure's (:mod:`hiddenhand.solvers.goofspiel.positions`): they compute what
the measure has no need of (the value of every bid with the table in both seats, the reach
of every position), and the tests use them as a second computation, independent of the
measure they check.

Positions and their arrays are those of :mod:`hiddenhand.solvers.goofspiel.positions`: at level k
(cards in each hand) a position is the agent's hand ``a``, the other hand ``b`` and the
prizes ``p`` (each a set of size k, numbered as :class:`~hiddenhand.solvers.goofspiel.patterns.Sets`
numbers them), then the upcard, the ``u``-th card of ``p``; a policy of level k is an array
``[a, b, p, u, i]``, the probability of bidding the agent's ``i``-th card. The Markov
observation has no seat and the game is symmetric, so one table serves both seats: the
other player's policy at that position is the table's row ``[b, a, p, u]``.

The update is magnetic mirror descent (MMD; Sokota et al., ICLR 2023) in closed form, at every
position at once: ``pi' ∝ pi^(1/(1+eta*alpha)) * rho^(eta*alpha/(1+eta*alpha)) *
exp(eta*Q/(1+eta*alpha))``, with ``Q`` in points and ``alpha`` the temperature in points. With a
fixed magnet ``rho`` the iteration goes to the regularised game's fixed point, a quantal
response equilibrium (``pi ∝ rho * exp(Q/alpha)``); moving the magnet to the current policy
every few iterations (as R-NaD does) moves that fixed point towards the equilibrium.
"""

from __future__ import annotations

from math import comb

import numpy as np
from numba import njit, prange

from hiddenhand.agent import Agent
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.envs.goofspiel_observation import MarkovLayout
from hiddenhand.solvers.goofspiel import positions as gops_markov
from hiddenhand.solvers.goofspiel.patterns import Sets
from hiddenhand.validation import check_int


class Table:
    """Log-probabilities of a Markov Goofspiel policy: ``logp[k]`` for each level ``k >= 2``,
    shaped ``(C(n,k),) * 3 + (k, k)`` (see the module docstring); the last round (``k = 1``)
    plays itself. ``rank[mask]`` is the number of a card set within its size."""

    def __init__(self, num_cards: int, logp: list[np.ndarray | None] | None = None) -> None:
        self.n = check_int("num_cards", num_cards, 2, gops_markov.MAX_CARDS)
        self.sets = Sets(self.n)
        self.layout = MarkovLayout(self.n, 2)
        self.rank = np.zeros(1 << self.n, dtype=np.int64)
        for masks in self.sets.masks:
            self.rank[masks] = np.arange(len(masks))
        if logp is None:
            logp = [None, None] + [np.full((comb(self.n, k),) * 3 + (k, k), -np.log(k)) for k in range(2, self.n + 1)]
        self.logp = logp

    def copy(self) -> Table:
        other = object.__new__(Table)
        other.__dict__.update(self.__dict__)
        other.logp = [None if x is None else x.copy() for x in self.logp]
        return other

    def policy(self, k: int) -> np.ndarray:
        """Level ``k``'s probabilities (ones at ``k = 1``, where the only card is bid)."""
        if k == 1:
            return np.ones((self.n,) * 3 + (1, 1))
        return np.exp(self.logp[k])

    def positions(self, observations: np.ndarray) -> tuple[np.ndarray, ...]:
        """The positions shown by Markov observation vectors (rows): level, the numbers of
        the observer's hand, the other hand and the prizes (upcard included) within their
        size, and the upcard's index among the prizes."""
        views = self.layout.views(np.asarray(observations))
        weights = 1 << np.arange(self.n)
        hand = views["hand"].astype(np.int64) @ weights
        other = views["others"][:, 0].astype(np.int64) @ weights
        upcard = np.argmax(views["prize"], axis=1)
        prizes = (views["prizes_to_come"].astype(np.int64) @ weights) | (1 << upcard)
        level = views["hand"].sum(axis=1).astype(np.int64)
        below = np.array([bin(x).count("1") for x in (prizes & ((1 << upcard) - 1))], dtype=np.int64)
        return level, self.rank[hand], self.rank[other], self.rank[prizes], below


class TableAgent(Agent):
    """A :class:`Table` as an agent on the Markov observation: Markov by construction, so
    :func:`hiddenhand.solvers.goofspiel.positions.exploitability` measures it exactly, through the
    same observations it measures a network on."""

    uses_score = False
    uses_history = False

    def __init__(self, table: Table, seed: int | None = None) -> None:
        super().__init__(seed)
        self.table = table

    def policy(self, observation) -> np.ndarray:
        return self.policy_batch({key: np.asarray(value)[None] for key, value in observation.items()})[0]

    def policy_batch(self, observations) -> np.ndarray:
        table = self.table
        level, a, b, p, u = table.positions(observations["observation"])
        out = np.zeros((len(level), table.n))
        for k in np.unique(level):
            rows = np.flatnonzero(level == k)
            probs = table.policy(k)[a[rows], b[rows], p[rows], u[rows]]
            out[rows[:, None], table.sets.cards[k][a[rows]]] = probs
        return out

    def __repr__(self) -> str:
        return f"TableAgent({self.table.n} cards)"


@njit(parallel=True, cache=True)
def _q_level(policy, cards, child, below, q, v):  # pragma: no cover - compiled
    """Exact Q and values of one level against the same policy in the other seat:
    ``q[a, b, p, u, i]``, the points still to come to the holder of ``a`` who bids its
    ``i``-th card on the ``u``-th prize of ``p`` while the other bids from ``policy[b, a, p,
    u]``, both following ``policy`` afterwards (values ``below``); ``v[a, b, p]`` the on-policy
    value before the upcard is turned (each of the k prizes equally likely)."""
    sets, k = cards.shape
    for a in prange(sets):
        for b in range(sets):
            for p in range(sets):
                total = 0.0
                for u in range(k):
                    prize = cards[p, u] + 1.0
                    rest = child[p, u]
                    for i in range(k):
                        mine = cards[a, i]
                        gain = 0.0
                        for j in range(k):
                            y = policy[b, a, p, u, j]
                            if y > 0.0:
                                won = (mine > cards[b, j]) - (mine < cards[b, j])
                                gain += y * (won * prize + below[child[a, i], child[b, j], rest])
                        q[a, b, p, u, i] = gain
                        total += policy[a, b, p, u, i] * gain
                v[a, b, p] = total / k


def exact_q(table: Table) -> tuple[list[np.ndarray | None], list[np.ndarray]]:
    """Q-values of every position and bid (points still to come) and the on-policy values,
    per level (``q[k]`` shaped like ``table.logp[k]``, ``v[k]`` ``(C(n,k),) * 3``), by one
    backward pass over the levels with the table in both seats."""
    sets = table.sets
    below = np.zeros((1, 1, 1))
    qs: list[np.ndarray | None] = [None] * (table.n + 1)
    vs: list[np.ndarray] = [below] + [None] * table.n
    for k in range(1, table.n + 1):
        count = comb(table.n, k)
        q, v = np.empty((count,) * 3 + (k, k)), np.empty((count,) * 3)
        _q_level(table.policy(k), sets.cards[k], sets.child[k], below, q, v)
        qs[k], vs[k] = (q if k > 1 else None), v
        below = v
    return qs, vs


@njit(cache=True)
def _reach_level(policy, cards, child, here, below):  # pragma: no cover - compiled
    """Add to ``below`` the probability of reaching each position of the next level down
    from ``here`` (this level's reach probabilities) with ``policy`` in both seats."""
    sets, k = cards.shape
    for a in range(sets):
        for b in range(sets):
            for p in range(sets):
                r = here[a, b, p] / k
                if r == 0.0:
                    continue
                for u in range(k):
                    for i in range(k):
                        x = policy[a, b, p, u, i]
                        for j in range(k):
                            below[child[a, i], child[b, j], child[p, u]] += r * x * policy[b, a, p, u, j]


def reach(table: Table) -> list[np.ndarray | None]:
    """The probability that self-play with the table reaches each position ``[a, b, p]`` of
    each level ``k >= 1`` (before the upcard is turned; player 0 holds ``a``): what weights a
    position in the samples of on-policy training. Each level's probabilities sum to 1."""
    sets = table.sets
    out: list[np.ndarray | None] = [None] * (table.n + 1)
    out[table.n] = np.ones((1, 1, 1))
    for k in range(table.n, 1, -1):
        out[k - 1] = np.zeros((comb(table.n, k - 1),) * 3)
        _reach_level(table.policy(k), sets.cards[k], sets.child[k], out[k], out[k - 1])
    return out


def mmd_step(table: Table, q: list, eta: float, alpha: float, magnet: Table | None = None) -> None:
    """One MMD update of every position in place (see the module docstring): ``eta`` the step
    size, ``alpha`` the temperature in points, ``magnet`` ``None`` for the uniform policy."""
    shrink = 1.0 / (1.0 + eta * alpha)
    for k in range(2, table.n + 1):
        logits = shrink * (table.logp[k] + eta * q[k])
        if magnet is not None:
            logits += shrink * eta * alpha * magnet.logp[k]
        logits -= logits.max(axis=-1, keepdims=True)
        table.logp[k] = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))


def measure(table: Table) -> float:
    """The project's exact exploitability (NashConv / 2) of the table playing both seats, by
    :func:`hiddenhand.solvers.goofspiel.positions.exploitability` through its Markov observations."""
    rules = GoofspielRules(num_cards=table.n, observation="markov")
    return gops_markov.exploitability(TableAgent(table), rules, progress=False).value


__all__ = ["Table", "TableAgent", "exact_q", "measure", "mmd_step", "reach"]
