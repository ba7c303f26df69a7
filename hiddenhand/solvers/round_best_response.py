"""Exact exploitability over whole games of rounds (Spoof, two-player Bid Spoof), for agents
that read only the round-state and the present round.

Why it is exact. Every round ends with all hands shown, so what can still happen after a
round depends only on the round-state it leads to (the counts of matches or coins, and who
starts), not on how the game got there. An agent that declares ``uses_history = False``
reads nothing else: it plays the same round whenever the same round-state comes up (with
it in the same seat), whatever came before. Against such an agent the responder faces a
decision problem whose state, at the start of each round, is that round-state, because the
past tells the responder nothing about the agent's present hand, chosen afresh by a policy
that does not look back. Within a round the responder sees its own hand and the moves but
not the agent's hand: a one-player problem with perfect recall, whose best response (each
leaf paid what it leads to) is the dynamic programme over the responder's sequences,
:meth:`~.sequence_form.SequenceForm.best_response_value`, deepest information set first.
Across rounds it is Bellman's equation: a round-state is worth the best response to its
round when every leaf is paid the value of the round-state it leads to. So the best
responder's value is the fixed point of that equation over round-states, which value
iteration reaches; nothing is sampled or approximated but the stopping tolerance.

The responder's values are kept per *position*: a round-state and the seat in the first
role (the responder's role, as the agent's seat is fixed), because a round may hand the
first role to the other player (a leaf with ``sign=-1``). The rounds are the very trees
the exact solvers build (:mod:`.stochastic`, a :class:`~.stochastic.RoundGame`), played by
the game's own rules: the agent is shown, at each of its information sets, the observation
the real game gives there in a round started from that round-state (its seat, the layout of
the rules it was built for), and its policy sets its realization plan in the round.

Iteration starts from 0 and updates in place (Gauss-Seidel, each round repeated until its
own value settles, as the solver does: :func:`.stochastic.iterate`) until no value moves by
more than 1e-12. From 0, ``n`` sweeps of the plain (Jacobi) update give the exact values of
the game stopped as a draw after ``n`` rounds; the limit values an endless game as a draw,
0. That is the unlimited game: ``max_rounds``, which stops a game as a draw, is left aside,
as the solvers leave it (under the equilibrium the stop is vanishingly rare; see
``spoof_v0``). The agent's own value (agent against itself) is the same iteration without
the maximisation, so each seat's figure is what a best responder there gains over the
agent's own play (OpenSpiel's player improvements).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

import numpy as np

from hiddenhand.exploitability import Exploitability, NotMeasurable
from hiddenhand.solvers.sequence_form import SequenceForm
from hiddenhand.solvers.stochastic import RoundGame, iterate

if TYPE_CHECKING:
    from hiddenhand.agents.base import Agent

Position = tuple[Hashable, int]
"""A round-state's key (as the :class:`~.stochastic.RoundGame` names it) and the seat in its first role."""

METHOD = (
    "value iteration over round-states with an exact best response inside each round (an agent that reads "
    "only the round-state and the present round); the unlimited game, max_rounds aside"
)


def check_markov(agent: Agent) -> None:
    """Refuse an agent that may read past rounds: it could play a round differently by what
    came before, which merging rounds by round-state cannot see, so a figure would be wrong."""
    if getattr(agent, "uses_history", True):
        raise NotMeasurable(
            f"{agent!r} may read past rounds (uses_history is true), so its play is not a function of the "
            "round-state and the present round, which the exact whole-game best response relies on; only agents "
            "with uses_history=False are measured exactly (the equilibrium, the heuristics, random play, a PPO "
            "agent trained on observation='markov')"
        )


class _Round:
    """One position's round: its tree (the seats are its players), and where each leaf leads
    (``payoff`` to seat 0 where the game ends, else the position in ``leads_to``)."""

    def __init__(self, rounds: RoundGame, position: Position) -> None:
        self.position = position
        self.form = SequenceForm.build(rounds.start(*position), rounds.continuation)
        self.payoff = np.array([c.payoff for c in self.form.leaves])
        # With the seats as the tree's players, the sign says who starts next: -1 for seat 1.
        self.leads_to = [None if c.key is None else (c.key, 0 if c.sign > 0 else 1) for c in self.form.leaves]

    def connect(self, index: dict[Position, int], agent: Agent) -> None:
        """Number the positions the leaves lead to (``next``, -1 for the end), set the
        agent's plan in each seat from its policy at each of its information sets, and the
        leaves' probabilities when it plays both seats (``reach``)."""
        self.next = np.array([-1 if p is None else index[p] for p in self.leads_to])
        self.plans = tuple(self.form.plan(seat, _policy(agent, self.form, seat, self.position)) for seat in (0, 1))
        s = self.form.leaf_sequences
        self.reach = self.form.leaf_weights * self.plans[0][s[:, 0]] * self.plans[1][s[:, 1]]


def _policy(agent: Agent, form: SequenceForm, seat: int, position: Position) -> dict[str, np.ndarray]:
    """The agent's probabilities of the legal actions at each of ``seat``'s information sets
    in the round, from the observation the game gives there (one batch per round)."""
    me = form.players[seat]
    infostates = list(me.parents)
    if not infostates:
        return {}
    shown = [me.representatives[i].observation(seat) for i in infostates]
    probs = agent.policy_batch({key: np.stack([o[key] for o in shown]) for key in ("observation", "action_mask")})
    answer = {}
    for infostate, row in zip(infostates, probs):
        legal = me.actions[infostate]
        total, elsewhere = row[legal].sum(), row.sum() - row[legal].sum()
        if abs(total - 1.0) > 1e-6 or elsewhere > 1e-9 or (row < 0).any():
            raise ValueError(
                f"{agent!r} did not give a distribution over the legal actions {legal} in round-state "
                f"{position[0]!r} (seat {position[1]} first) at {infostate!r}: {row.tolist()}"
            )
        answer[infostate] = row[legal] / total
    return answer


def _reachable(rounds: RoundGame, opening: Position) -> dict[Position, _Round]:
    """The round of every position reachable from ``opening``."""
    trees: dict[Position, _Round] = {}
    todo = [opening]
    while todo:
        position = todo.pop()
        if position not in trees:
            trees[position] = r = _Round(rounds, position)
            todo.extend(p for p in set(r.leads_to) if p is not None)
    return trees


class RoundBestResponse:
    """Every round an agent can meet from ``opening`` (a round-state with seat 0 in its
    first role, as the game starts), with the agent's plans in each; see the module
    docstring. Raises ``ValueError`` for an agent that may read past rounds."""

    def __init__(self, rounds: RoundGame, agent: Agent, opening: Hashable) -> None:
        check_markov(agent)
        self.opening: Position = (opening, 0)
        trees = _reachable(rounds, self.opening)
        order = {key: i for i, key in enumerate(rounds.keys())}
        # Each position after those its rounds lead to, as far as the game's listing goes (see .stochastic).
        self.positions: list[Position] = sorted(trees, key=lambda p: (order[p[0]], p[1]))
        self.index = {p: i for i, p in enumerate(self.positions)}
        self.rounds = [trees[p] for p in self.positions]
        for r in self.rounds:
            r.connect(self.index, agent)

    def backup(self, i: int, values: np.ndarray, responder: int | None) -> float:
        """Position ``i``'s value given ``values`` of the positions (``values[-1]``, the
        game's end, is 0): to seat ``responder`` best-responding against the agent in the
        other seat, or with ``responder=None`` to seat 0 with the agent in both seats."""
        r = self.rounds[i]
        if responder is None:
            return float(r.reach @ (r.payoff + values[r.next]))
        # Leaf values to seat 0 under the responder's valuation (the game is zero-sum).
        sign = 1.0 if responder == 0 else -1.0
        return r.form.best_response_value(responder, r.plans[1 - responder], r.payoff + sign * values[r.next])

    def values(self, responder: int | None, tol: float = 1e-12, max_sweeps: int = 100_000) -> np.ndarray:
        """The fixed point of :meth:`backup` from zero: every position's value (the last entry,
        the game's end, 0). Raises ``RuntimeError`` if it does not settle in ``max_sweeps``."""
        return iterate(self.positions, lambda i, v: self.backup(i, v, responder), tol, max_sweeps, progress=False)[0]

    def exploitability(self) -> Exploitability:
        """Per seat, what a best responder there gains over the agent's own play, from the
        game's opening position."""
        root = self.index[self.opening]
        on_policy = self.values(None)[root]
        own = (on_policy, -on_policy)
        return Exploitability(
            tuple(float(self.values(seat)[root] - own[seat]) for seat in (0, 1)), exact=True, method=METHOD
        )
