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
deepest information set first (:meth:`~.sequence_form.SequenceForm.pure_best_response`). Across rounds it is a Markov
decision problem over *positions* (a round-state and the seat in its first role, as a round
may hand that role to the other player), whose actions are the responder's pure strategies
in the round and whose rewards come only when the game ends; a game that never ends is a
draw, 0. Nothing is sampled or approximated.

How it is solved: policy iteration, not value iteration. Value iteration from 0 (``n``
sweeps value the game stopped as a draw after ``n`` rounds, :meth:`RoundBestResponse.backup`)
converges only as fast as the rounds end: against an agent that ends a round with
probability ``1e-6`` it would need millions of sweeps. Instead:

- *Evaluate* a pure stationary policy of the responder exactly: one linear system over the
  positions, ``q_i V_i - sum_j Q_ij V_j = r_i`` (``Q_ij`` the probability that position
  ``i``'s round leads to position ``j != i``, ``q_i`` the probability that it leaves ``i``,
  summed leaf by leaf rather than taken as ``1 - p_loop``, so that a round that almost
  always loops keeps its precision, ``r_i`` the payoff where the game ends). Positions from
  which the game cannot end under the policy are worth 0 (the draw) and left out.
- *Improve* each position given the others' values. A round that returns to its own
  position with probability ``p`` and otherwise is worth ``A`` (summed over its other
  leaves) is worth ``A / (1 - p)`` in the whole game (0 if ``p = 1``), so the responder
  maximises that ratio over its pure strategies exactly, by Dinkelbach's iteration: each
  step a best response with the self-loop leaf paid the current guess ``lambda``, then
  ``lambda`` set to the ratio of that response, until no response beats it. This is the
  policy improvement of the Markov problem with self-loops taken out in closed form, so
  its precision does not depend on how rarely the round ends.
- *Stall*: the improvement cannot see an endless loop through several positions that are
  each worth less than 0 (staying there looks no better than the policy's own value one
  round ahead, yet it is worth 0). So when nothing improves, the largest set of positions
  worth less than 0 in which the responder can keep the game for ever (a pure strategy in
  each whose every leaf the agent may reach leads back into the set) is found by pruning,
  and the responder stalls there.

Each step raises no value and some value strictly, so the policies never repeat; when
neither step changes anything the values are optimal. (Let ``D`` be the optimal values
minus the policy's: ``D >= 0`` and, with no improving action, ``D <= P* D`` under an optimal
policy, so ``D > 0`` only on a class where that policy never ends the game, worth 0 there,
so less than 0 to the policy, and kept by the responder for ever: the set the stall step
looks for.) Tolerances: a switch needs a gain above ``1e-13`` (times the largest payoff).

The rounds are the very trees the exact solvers build (:mod:`.stochastic`, a
:class:`~.stochastic.RoundGame`), played by the game's own rules: the agent is shown, at
each of its information sets, the observation the real game gives there in a round started
from that round-state (its seat, the layout of the rules it was built for), and its policy
sets its realization plan in the round. The measure values the unlimited game:
``max_rounds``, which stops a game as a draw, is left aside, as the solvers leave it (under
the equilibrium the stop is vanishingly rare; see ``spoof_v0``). The agent's own value
(agent against itself) is the same linear system with the agent's plans in both seats, so
each seat's figure is what a best responder there gains over the agent's own play
(OpenSpiel's player improvements).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

import numpy as np

from hiddenhand.exploitability import Exploitability, NotMeasurable
from hiddenhand.solvers.sequence_form import SequenceForm
from hiddenhand.solvers.stochastic import RoundGame

if TYPE_CHECKING:
    from hiddenhand.agent import Agent

Position = tuple[Hashable, int]
"""A round-state's key (as the :class:`~.stochastic.RoundGame` names it) and the seat in its first role."""

METHOD = (
    "policy iteration over round-states with an exact best response inside each round and self-loops in "
    "closed form (an agent that reads only the round-state and the present round); the unlimited game, "
    "max_rounds aside"
)

GAIN = 1e-13
"""The least gain (times the largest payoff) for which the responder changes its policy."""


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
        """Number the positions the leaves lead to (``next``, -1 for the end; ``loop`` marks
        the leaves back to this position), set the agent's plan in each seat from its policy
        at each of its information sets, the leaves' probabilities when it plays both seats
        (``reach``), and per seat the probability that chance and the agent in the other
        seat reach each leaf (``against``)."""
        self.next = np.array([-1 if p is None else index[p] for p in self.leads_to])
        self.loop = self.next == index[self.position]
        self.plans = tuple(self.form.plan(seat, _policy(agent, self.form, seat, self.position)) for seat in (0, 1))
        s = self.form.leaf_sequences
        self.against = tuple(self.form.leaf_weights * self.plans[1 - seat][s[:, 1 - seat]] for seat in (0, 1))
        self.reach = self.against[0] * self.plans[0][s[:, 0]]

    def leaf_values(self, responder: int, values: np.ndarray) -> np.ndarray:
        """Each leaf's value to ``responder`` given the positions' ``values`` (to the
        responder; the last entry, the game's end, 0), self-loops left out (paid 0)."""
        sign = 1.0 if responder == 0 else -1.0
        return sign * self.payoff + np.where(self.loop, 0.0, values[self.next])

    def ratio(self, reach: np.ndarray, leaf_values: np.ndarray) -> tuple[float, float]:
        """With the leaves reached with probabilities ``reach`` and worth ``leaf_values``
        (self-loops paid 0): the round's value over the leaves that leave the position, and
        the probability of leaving it."""
        return float(reach @ leaf_values), float(reach[~self.loop].sum())

    def response(self, responder: int, plan: np.ndarray) -> np.ndarray:
        """The leaves' probabilities when the responder plays ``plan`` against the agent."""
        return self.against[responder] * plan[self.form.leaf_sequences[:, responder]]

    def best_ratio(
        self, responder: int, values: np.ndarray, start: float, plan: np.ndarray | None, gain: float
    ) -> tuple[float, np.ndarray | None]:
        """The responder's best whole-game value of this round, ``A / (1 - p)`` over its pure
        strategies, by Dinkelbach's iteration from ``start`` (the value of ``plan``, the
        policy's present strategy): each step the best response with the self-loop paid the
        current value. Returns the best value and strategy; ``plan`` is kept unless a
        strategy beats it by more than ``gain``. With ``plan=None`` the first step starts
        from ``start`` as a guess below every value, and a round the agent never lets end
        is worth 0."""
        leaf_values = self.leaf_values(responder, values)
        best, value = plan, start
        for _ in range(200):
            _, candidate = self.form.pure_best_response(
                responder, self.against[responder], leaf_values + value * self.loop
            )
            rest, leaves = self.ratio(self.response(responder, candidate), leaf_values)
            if leaves <= 0.0:
                return (0.0, candidate) if best is None else (value, best)
            if rest / leaves <= value + (gain if best is plan else 0.0):
                return value, best
            best, value = candidate, rest / leaves
        raise RuntimeError(f"position {self.position!r}: Dinkelbach's iteration did not settle")

    def can_stay(self, responder: int, inside: np.ndarray) -> np.ndarray | None:
        """A pure strategy of the responder whose every leaf the agent may reach leads to a
        position in ``inside`` (a boolean per position, the end outside), or ``None``."""
        leaving = ~np.append(inside, False)[self.next]
        value, plan = self.form.pure_best_response(responder, self.against[responder], -leaving.astype(float))
        return plan if value == 0.0 else None


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


def chain_values(reaches: list[np.ndarray], rounds: list[_Round], sign: float) -> np.ndarray:
    """The positions' values (to seat 0 times ``sign``) when each position's round reaches its
    leaves with probabilities ``reaches[i]``: one linear system over the positions from
    which the game can end; the others never end, a draw (0). The last entry, the game's
    end, is 0."""
    n = len(rounds)
    matrix, rhs = np.zeros((n, n)), np.zeros(n)
    ends = np.zeros(n, dtype=bool)
    for i, (reach, r) in enumerate(zip(reaches, rounds)):
        leaving = ~r.loop
        np.add.at(matrix[i], r.next[leaving & (r.next >= 0)], -reach[leaving & (r.next >= 0)])
        matrix[i, i] = reach[leaving].sum()  # the probability of leaving, summed, not 1 - p_loop
        rhs[i] = sign * (reach @ r.payoff)
        ends[i] = (reach[r.next < 0] > 0).any()
    # The positions from which the game can end: those that end, and those that lead to them.
    can_end = ends.copy()
    while True:
        more = can_end | ((matrix[:, can_end] < 0).any(axis=1))
        if (more == can_end).all():
            break
        can_end = more
    values = np.zeros(n + 1)
    live = np.flatnonzero(can_end)
    if len(live):
        scale = matrix[live, live][:, None]  # each row by its probability of leaving: the chain without self-loops
        values[live] = np.linalg.solve(matrix[np.ix_(live, live)] / scale, rhs[live] / scale[:, 0])
    return values


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
        self.scale = max(1.0, max(float(np.abs(r.payoff).max(initial=0.0)) for r in self.rounds))
        self.improvements: dict[int, int] = {}
        """Per responder seat, the policy-iteration steps its last :meth:`values` took."""

    def backup(self, i: int, values: np.ndarray, responder: int | None) -> float:
        """One round of value iteration: position ``i``'s value given ``values`` of the
        positions (``values[-1]``, the game's end, is 0), to seat ``responder``
        best-responding against the agent in the other seat, or with ``responder=None`` to
        seat 0 with the agent in both seats. ``n`` plain steps from 0 value the game stopped
        as a draw after ``n`` rounds (what the tests hold against OpenSpiel)."""
        r = self.rounds[i]
        if responder is None:
            return float(r.reach @ (r.payoff + values[r.next]))
        # Leaf values to seat 0 under the responder's valuation (the game is zero-sum).
        sign = 1.0 if responder == 0 else -1.0
        return r.form.best_response_value(responder, r.plans[1 - responder], r.payoff + sign * values[r.next])

    def evaluate(self, responder: int, policy: list[np.ndarray]) -> np.ndarray:
        """The positions' values to ``responder`` playing the pure round strategies ``policy``
        against the agent (last entry, the game's end, 0)."""
        reaches = [r.response(responder, plan) for r, plan in zip(self.rounds, policy)]
        return chain_values(reaches, self.rounds, 1.0 if responder == 0 else -1.0)

    def best_response(self, responder: int, max_steps: int = 1000) -> tuple[np.ndarray, list[np.ndarray]]:
        """Policy iteration (see the module docstring): the best responder's values (last
        entry, the game's end, 0) and its pure round strategy in each position. Raises
        ``RuntimeError`` if it has not settled after ``max_steps`` steps."""
        gain = GAIN * self.scale
        n = len(self.rounds)
        # A first policy: one Gauss-Seidel sweep in the listed order, which in a game whose
        # rounds lead only on or back to themselves (Spoof) is already the best response,
        # stalls aside (a stall is worth 0, which the ratio leaves to the stall step).
        values = np.zeros(n + 1)
        policy: list[np.ndarray] = []
        for i, r in enumerate(self.rounds):
            values[i], plan = r.best_ratio(responder, values, -2.0 * self.scale, None, gain)
            policy.append(plan)
        for step in range(1, max_steps + 1):
            values = self.evaluate(responder, policy)
            changed = False
            for i, r in enumerate(self.rounds):
                _, plan = r.best_ratio(responder, values, values[i], policy[i], gain)
                if plan is not policy[i]:
                    policy[i], changed = plan, True
            if not changed:
                stall = self._stall(responder, values, gain)
                for i, plan in stall.items():
                    policy[i] = plan
                changed = bool(stall)
            if not changed:
                self.improvements[responder] = step
                return values, policy
        raise RuntimeError(f"policy iteration did not settle in {max_steps} steps")

    def _stall(self, responder: int, values: np.ndarray, gain: float) -> dict[int, np.ndarray]:
        """The largest set of positions worth less than 0 (by more than ``gain``) in which
        the responder can keep the game for ever, with a strategy in each that stays."""
        inside = values[:-1] < -gain
        while True:
            stays = {i: self.rounds[i].can_stay(responder, inside) for i in np.flatnonzero(inside)}
            out = [i for i, plan in stays.items() if plan is None]
            if not out:
                return stays
            inside[out] = False

    def values(self, responder: int | None) -> np.ndarray:
        """Every position's value (the last entry, the game's end, 0): to seat ``responder``
        best-responding against the agent (:meth:`best_response`), or with
        ``responder=None`` to seat 0 with the agent in both seats (one linear system)."""
        if responder is None:
            return chain_values([r.reach for r in self.rounds], self.rounds, 1.0)
        return self.best_response(responder)[0]

    def exploitability(self) -> Exploitability:
        """Per seat, what a best responder there gains over the agent's own play, from the
        game's opening position."""
        root = self.index[self.opening]
        on_policy = self.values(None)[root]
        own = (on_policy, -on_policy)
        return Exploitability(
            tuple(float(self.values(seat)[root] - own[seat]) for seat in (0, 1)), exact=True, method=METHOD
        )
