"""Exact equilibria of small two-player zero-sum games: the sequence-form LP, solved by HiGHS.

For any two-player zero-sum ``pyspiel`` game with perfect recall (ours through the
adapter, or OpenSpiel's own), player 0's realization plan ``x`` and player 1's infoset
values ``q`` solve::

    max f.q   s.t.   F^T q <= A^T x,   E x = e,   x >= 0

where ``A[s0, s1]`` sums chance-weighted payoffs of the terminals reached by the sequence
pair, and ``E``/``F`` say that each infoset's action sequences carry the weight of its
parent sequence (von Stengel's formulation). The same LP with the roles swapped gives
player 1's plan. OpenSpiel's own ``sequence_form_lp`` does this with cvxpy; here it is
sparse and on HiGHS, which is exact to its tolerance and needs nothing beyond scipy.

:class:`SequenceForm` separates the tree from its payoffs: it is built once from any root
state (a ``pyspiel`` state, or one of our :class:`~hiddenhand.core.State`) with a function
that says where the tree stops, and then solved for any values of those leaves. That is
what the stochastic-game solver needs: the same round, re-solved as the values of the
rounds that follow it converge. Constant-sum games (Spoof's single round) are solved as
the zero-sum game of half the difference of the returns, which has the same equilibria.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pyspiel
from scipy import sparse
from scipy.optimize import linprog

_ROOT = ""  # the empty sequence

Behaviour = dict[str, dict[int, float]]
"""A behaviour strategy: information-state string -> {action: probability}."""


@dataclass
class _Player:
    """The sequences and infosets of one player, indexed as they are met (depth first, so
    an infoset always comes after the infosets on the path to it)."""

    sequences: dict[tuple[str, int] | str, int] = field(default_factory=lambda: {_ROOT: 0})
    parents: dict[str, int] = field(default_factory=dict)  # infoset -> index of the sequence leading to it
    actions: dict[str, list[int]] = field(default_factory=dict)
    representatives: dict[str, Any] = field(default_factory=dict)  # infoset -> the first state met in it


def _child(state: Any, action: int) -> Any:
    """``state`` after ``action``: ``pyspiel`` states have ``child``, ours clone and apply."""
    if isinstance(state, pyspiel.State):
        return state.child(action)
    child = state.clone()
    child.apply(action)
    return child


@dataclass
class SequenceForm:
    """A two-player tree in sequence form: each player's sequences and infosets, and its
    leaves as (sequence of player 0, sequence of player 1, chance weight, what ``leaf``
    said about it). Payoffs are given per leaf when solving."""

    players: tuple[_Player, _Player]
    leaf_sequences: np.ndarray  # (leaves, 2) int
    leaf_weights: np.ndarray  # (leaves,) chance probability of reaching the leaf
    leaves: list[Any]

    @classmethod
    def build(cls, root: Any, leaf: Callable[[Any], Any]) -> SequenceForm:
        """Walk the tree under ``root`` down to the states for which ``leaf(state)`` is not
        ``None`` (terminal states must be among them)."""
        players = (_Player(), _Player())
        seqs, weights, leaves = [], [], []
        stack = [(root, 1.0, (0, 0))]
        while stack:
            state, reach, at = stack.pop()
            outcome = leaf(state)
            if outcome is not None:
                seqs.append(at), weights.append(reach), leaves.append(outcome)
                continue
            if state.is_terminal():
                raise ValueError(f"leaf() returned None at a terminal state: {state}")
            if state.is_chance_node():
                stack.extend((_child(state, a), reach * p, at) for a, p in state.chance_outcomes())
                continue
            p = state.current_player()
            me = players[p]
            infostate = state.information_state_string(p)
            if infostate not in me.parents:
                me.parents[infostate] = at[p]
                me.actions[infostate] = list(state.legal_actions())
                me.representatives[infostate] = state
                for action in me.actions[infostate]:
                    me.sequences[(infostate, action)] = len(me.sequences)
            for action in me.actions[infostate]:
                child_at = (
                    (me.sequences[(infostate, action)], at[1]) if p == 0 else (at[0], me.sequences[(infostate, action)])
                )
                stack.append((_child(state, action), reach, child_at))
        return cls(players, np.array(seqs, dtype=np.int64).reshape(-1, 2), np.array(weights), leaves)

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.players[0].sequences), len(self.players[1].sequences))

    def payoff_matrix(self, leaf_values: np.ndarray) -> sparse.csr_matrix:
        """Player 0's payoff per pair of sequences, for ``leaf_values`` (to player 0) at the leaves."""
        s = self.leaf_sequences
        return sparse.csr_matrix((self.leaf_weights * leaf_values, (s[:, 0], s[:, 1])), shape=self.shape)

    def value(self, leaf_values: np.ndarray) -> float:
        """The game's value to player 0 (one LP)."""
        return _solve_for(self.players[0], self.players[1], self.payoff_matrix(leaf_values))[0]

    def solve(self, leaf_values: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """Value to player 0 and both players' equilibrium realization plans (two LPs)."""
        a = self.payoff_matrix(leaf_values)
        value, plan0 = _solve_for(self.players[0], self.players[1], a)
        minus_value, plan1 = _solve_for(self.players[1], self.players[0], (-a).T.tocsr())
        if abs(value + minus_value) > 1e-6 * max(1.0, abs(value)):
            raise RuntimeError(f"the two LPs disagree on the value: {value} and {-minus_value}")
        return value, plan0, plan1

    def behaviour(self, player: int, plan: np.ndarray, unreached: float = 1e-12) -> Behaviour:
        """A realization plan as a behaviour strategy (uniform where the plan never goes: where
        the plan's weight of the infoset's actions is at most ``unreached``)."""
        me = self.players[player]
        policy = {}
        for infostate in me.parents:
            actions = me.actions[infostate]
            weights = np.clip([plan[me.sequences[(infostate, a)]] for a in actions], 0.0, None) + 0.0
            total = weights.sum()
            probs = weights / total if total > unreached else np.full(len(weights), 1.0 / len(weights))
            policy[infostate] = {a: float(q) for a, q in zip(actions, probs)}
        return policy

    def plan(self, player: int, probabilities: dict[str, np.ndarray]) -> np.ndarray:
        """A behaviour strategy as a realization plan (the inverse of :meth:`behaviour`):
        ``probabilities[infostate]`` are the player's probabilities of that infoset's
        actions, in the order of ``players[player].actions[infostate]``."""
        me = self.players[player]
        plan = np.zeros(self.shape[player])
        plan[0] = 1.0
        for infostate, parent in me.parents.items():  # an infoset comes after those on the path to it
            for action, p in zip(me.actions[infostate], probabilities[infostate]):
                plan[me.sequences[(infostate, action)]] = plan[parent] * p
        return plan

    @cached_property
    def _infoset_arrays(self) -> tuple[tuple[np.ndarray, list[np.ndarray]], ...]:
        """Per player, the sequence leading to each infoset and the sequences of its actions,
        infosets in the order met (an infoset after those on the path to it)."""
        arrays = []
        for me in self.players:
            parents = np.array(list(me.parents.values()), dtype=np.int64)
            children = [np.array([me.sequences[(i, a)] for a in me.actions[i]], dtype=np.int64) for i in me.parents]
            arrays.append((parents, children))
        return tuple(arrays)

    def pure_best_response(self, player: int, weights: np.ndarray, leaf_values: np.ndarray) -> tuple[float, np.ndarray]:
        """A pure best response of ``player``, each leaf worth ``weights * leaf_values`` to
        them (``weights``: the probability that chance and the other player reach the leaf):
        the dynamic programme of :meth:`best_response_value`, keeping the best action at each
        infoset (the first of those tied). Returns its value and its realization plan (0 or 1
        per sequence)."""
        parents, children = self._infoset_arrays[player]
        value = np.zeros(self.shape[player])
        np.add.at(value, self.leaf_sequences[:, player], weights * leaf_values)
        chosen = np.empty(len(children), dtype=np.int64)
        for k in range(len(children) - 1, -1, -1):
            below = children[k]
            best = below[int(np.argmax(value[below]))]
            chosen[k] = best
            value[parents[k]] += value[best]
        plan = np.zeros(self.shape[player])
        plan[0] = 1.0
        for k in range(len(children)):  # an infoset comes after those on the path to it
            plan[chosen[k]] = plan[parents[k]]
        return float(value[0]), plan

    def best_response_value(self, player: int, other_plan: np.ndarray, leaf_values: np.ndarray) -> float:
        """What ``player`` gets by best-responding to the opponent's realization plan, with
        ``leaf_values`` paid to player 0 (player 1 gets their negation).

        Dynamic programming over the player's own sequences, deepest infoset first: an
        independent check of the LP, which never enters here.
        """
        s = self.leaf_sequences
        sign = 1.0 if player == 0 else -1.0
        value = np.zeros(self.shape[player])
        np.add.at(value, s[:, player], sign * self.leaf_weights * leaf_values * other_plan[s[:, 1 - player]])
        me = self.players[player]
        for infostate in reversed(list(me.parents)):
            best = max(value[me.sequences[(infostate, a)]] for a in me.actions[infostate])
            value[me.parents[infostate]] += best
        return float(value[0])


def _constraints(player: _Player) -> sparse.csr_matrix:
    """``E``: one row for the root (weight 1) and one per infoset (children = parent)."""
    rows, cols, vals = [0], [0], [1.0]
    for r, (infostate, parent) in enumerate(player.parents.items(), start=1):
        rows.append(r), cols.append(parent), vals.append(-1.0)
        for action in player.actions[infostate]:
            rows.append(r), cols.append(player.sequences[(infostate, action)]), vals.append(1.0)
    return sparse.csr_matrix((vals, (rows, cols)), shape=(len(player.parents) + 1, len(player.sequences)))


def _solve_for(me: _Player, other: _Player, a: sparse.csr_matrix) -> tuple[float, np.ndarray]:
    """Maximise ``me``'s guaranteed payoff (payoff matrix ``a``: me x other); returns the
    value and ``me``'s realization plan."""
    e, f = _constraints(me), _constraints(other)
    nx, nq = a.shape[0], f.shape[0]
    # Variables [x (nx, >= 0), q (nq, free)]; maximise f.q with f = (1, 0, ..., 0).
    cost = np.zeros(nx + nq)
    cost[nx] = -1.0
    a_ub = sparse.hstack([-a.T, f.T]).tocsr()  # F^T q - A^T x <= 0
    a_eq = sparse.hstack([e, sparse.csr_matrix((e.shape[0], nq))]).tocsr()
    b_eq = np.zeros(e.shape[0])
    b_eq[0] = 1.0
    bounds = [(0, None)] * nx + [(None, None)] * nq
    res = linprog(cost, A_ub=a_ub, b_ub=np.zeros(a_ub.shape[0]), A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs")
    if res.status != 0:
        raise RuntimeError(f"the sequence-form LP failed: {res.message}")
    return -res.fun, res.x[:nx]


@dataclass(frozen=True)
class SequenceFormSolution:
    """Value to player 0 and each player's equilibrium behaviour, infostate -> {action: prob}."""

    value: float
    policies: tuple[Behaviour, Behaviour]

    def tabular_policy(self) -> pyspiel.TabularPolicy:
        """Both players' strategies as one OpenSpiel tabular policy."""
        table = {}
        for policy in self.policies:
            for infostate, probs in policy.items():
                table[infostate] = sorted(probs.items())
        return pyspiel.TabularPolicy(table)


def _utility_sum(game: pyspiel.Game) -> float:
    utility = game.get_type().utility
    if game.num_players() == 2 and utility == pyspiel.GameType.Utility.ZERO_SUM:
        return 0.0
    if game.num_players() == 2 and utility == pyspiel.GameType.Utility.CONSTANT_SUM:
        return game.utility_sum()
    raise ValueError(f"{game} is not a two-player zero-sum or constant-sum game")


def solve(game: pyspiel.Game) -> SequenceFormSolution:
    """The value to player 0 and an equilibrium of a two-player zero-sum (or constant-sum)
    ``game``.

    The whole game tree is walked once: for small games (Kuhn poker, Goofspiel up to 4
    cards, a round of Spoof).
    """
    total = _utility_sum(game)
    form = SequenceForm.build(game.new_initial_state(), lambda s: tuple(s.returns()) if s.is_terminal() else None)
    half_difference = np.array([(r0 - r1) / 2 for r0, r1 in form.leaves])
    value, plan0, plan1 = form.solve(half_difference)
    return SequenceFormSolution(value + total / 2, (form.behaviour(0, plan0), form.behaviour(1, plan1)))
