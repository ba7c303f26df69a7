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
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import pyspiel
from scipy import sparse
from scipy.optimize import linprog

_ROOT = ""  # the empty sequence


@dataclass
class _Player:
    """The sequences and infosets of one player, indexed as they are met."""

    sequences: dict[tuple[str, int] | str, int]
    parents: dict[str, int]  # infoset -> index of the sequence leading to it
    actions: dict[str, list[int]]


@dataclass(frozen=True)
class SequenceFormSolution:
    """Value to player 0 and each player's equilibrium behaviour, infostate -> {action: prob}."""

    value: float
    policies: tuple[dict[str, dict[int, float]], dict[str, dict[int, float]]]

    def tabular_policy(self) -> pyspiel.TabularPolicy:
        """Both players' strategies as one OpenSpiel tabular policy."""
        table = {}
        for policy in self.policies:
            for infostate, probs in policy.items():
                table[infostate] = sorted(probs.items())
        return pyspiel.TabularPolicy(table)


def _walk(game: pyspiel.Game):
    players = [_Player({_ROOT: 0}, {}, {}) for _ in range(2)]
    payoff: dict[tuple[int, int], float] = defaultdict(float)
    stack = [(game.new_initial_state(), 1.0, [0, 0])]
    while stack:
        state, reach, seqs = stack.pop()
        if state.is_terminal():
            payoff[seqs[0], seqs[1]] += reach * state.returns()[0]
            continue
        if state.is_chance_node():
            for action, prob in state.chance_outcomes():
                stack.append((state.child(action), reach * prob, seqs))
            continue
        p = state.current_player()
        me = players[p]
        infostate = state.information_state_string(p)
        if infostate not in me.parents:
            me.parents[infostate] = seqs[p]
            me.actions[infostate] = list(state.legal_actions())
            for action in me.actions[infostate]:
                me.sequences[(infostate, action)] = len(me.sequences)
        for action in me.actions[infostate]:
            child_seqs = list(seqs)
            child_seqs[p] = me.sequences[(infostate, action)]
            stack.append((state.child(action), reach, child_seqs))
    return players, payoff


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


def _behaviour(player: _Player, plan: np.ndarray) -> dict[str, dict[int, float]]:
    policy = {}
    for infostate, parent in player.parents.items():
        weights = np.array([max(plan[player.sequences[(infostate, a)]], 0.0) for a in player.actions[infostate]])
        total = weights.sum()
        probs = weights / total if total > 1e-12 else np.full(len(weights), 1.0 / len(weights))
        policy[infostate] = {a: float(p) for a, p in zip(player.actions[infostate], probs)}
    return policy


def solve(game: pyspiel.Game) -> SequenceFormSolution:
    """The value to player 0 and an equilibrium of a two-player zero-sum ``game``.

    The whole game tree is walked once: for small games (Kuhn poker, Goofspiel up to 4
    cards, a round of Spoof).
    """
    kind = game.get_type()
    if game.num_players() != 2 or kind.utility != pyspiel.GameType.Utility.ZERO_SUM:
        raise ValueError(f"{game} is not a two-player zero-sum game")
    players, payoff = _walk(game)
    shape = (len(players[0].sequences), len(players[1].sequences))
    keys = list(payoff)
    a = sparse.csr_matrix(
        ([payoff[k] for k in keys], ([k[0] for k in keys], [k[1] for k in keys])), shape=shape
    )
    value, plan0 = _solve_for(players[0], players[1], a)
    minus_value, plan1 = _solve_for(players[1], players[0], (-a).T.tocsr())
    if abs(value + minus_value) > 1e-6 * max(1.0, abs(value)):
        raise RuntimeError(f"the two LPs disagree on the value: {value} and {-minus_value}")
    return SequenceFormSolution(value, (_behaviour(players[0], plan0), _behaviour(players[1], plan1)))
