"""Exact best responses to any Goofspiel agent, by dynamic programming over public states.

In two-player Goofspiel with revealed bids everything is public except the two bids of
the current round, so a best response is a backward induction over public states: at
each round the responder sees the agent's mixed bid (its ``policy`` for the observation
it would get) and picks the bid that maximises the immediate point difference plus the
value of what follows. Chance (the next prize) is averaged.

Public states are merged in the memo by what the agent's policy can depend on, which the
agent declares (:attr:`~hiddenhand.agent.Agent.uses_score`,
:attr:`~hiddenhand.agent.Agent.uses_history`): the two hands and the prizes always,
the points won so far if the agent reads the score, the whole history if it may read
anything. The fewer it reads, the fewer states: the equilibrium or random agents need
one evaluation per (hands, prizes) position, which makes 5 cards a fraction of a second
where walking OpenSpiel's game tree takes minutes.

Under win/loss scoring the responder's value depends on the score, whatever the agent
reads, so the score difference is always part of the key and only the final sign counts.

It asks the agent one observation at a time. For agents that read neither the score nor
the history, :mod:`~hiddenhand.solvers.goofspiel.positions` gathers every position's policy in
batches and runs the induction compiled, hundreds of times faster; this programme stays as
the method for the others and as the reference the tests hold that one to.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

import numpy as np

from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.exploitability import Exploitability
from hiddenhand.validation import check_int

if TYPE_CHECKING:
    from hiddenhand.agent import Agent


def best_response_value(agent: Agent, num_cards: int | GoofspielRules, responder: int) -> float:
    """The expected point difference (under ``win_loss`` scoring: P(win) - P(lose)) of a best
    response in seat ``responder`` against ``agent`` in the other seat (random prize order,
    bids revealed). ``num_cards`` may be the rules themselves, whose observations (full or
    Markov) the agent is shown."""
    rules = num_cards if isinstance(num_cards, GoofspielRules) else GoofspielRules(num_cards=num_cards)
    n = rules.num_cards
    win_loss = rules.scoring == "win_loss"
    check_int("responder", responder, 0, 1)
    seat = 1 - responder
    memo: dict[Hashable, float] = {}

    def value(mine: tuple, theirs: tuple, prizes: tuple, points: tuple, history: tuple, make_state) -> float:
        """Best-response point difference still to come (win/loss: the final result), before
        the next prize is turned.
        ``mine``/``theirs`` are the responder's and the agent's hands; ``points`` (responder,
        agent) and ``history`` are what was played; ``make_state()`` builds the engine's
        state, needed only to show the agent its observation when the key is new."""
        if len(mine) == 1:  # the last round plays itself
            last = ((mine[0] > theirs[0]) - (mine[0] < theirs[0])) * prizes[0]
            return float(np.sign(points[0] - points[1] + last)) if win_loss else float(last)
        key = (mine, theirs, prizes)
        if win_loss:
            key += (points[0] - points[1],)
        if agent.uses_score:
            key += points
        if agent.uses_history:
            key += history
        if key in memo:
            return memo[key]
        state = make_state()
        result = 0.0
        for upcard in prizes:
            turned = state.clone()
            turned.apply(upcard - 1)  # a chance node: more than one prize is left
            probs = agent.policy(turned.agent_observation(seat))
            mixed = [(a + 1, float(p)) for a, p in enumerate(probs) if p > 0.0]
            rest = tuple(p for p in prizes if p != upcard)
            best = -float("inf")
            for reply in mine:
                left = tuple(c for c in mine if c != reply)
                total = 0.0
                for bid, prob in mixed:
                    won = (reply > bid) - (reply < bid)
                    bids = (bid, reply) if seat == 0 else (reply, bid)
                    later = value(
                        left,
                        tuple(c for c in theirs if c != bid),
                        rest,
                        (points[0] + upcard * (won > 0), points[1] + upcard * (won < 0)),
                        history + ((upcard,) + bids,),
                        lambda turned=turned, bids=bids: _after(turned, bids),
                    )
                    total += prob * (later if win_loss else won * upcard + later)
                best = max(best, total)
            result += best / len(prizes)
        memo[key] = result
        return result

    cards = tuple(range(1, n + 1))
    return value(cards, cards, cards, (0, 0), (), rules.new_initial_state)


def _after(state, bids: tuple[int, int]):
    """A copy of ``state`` with both bids (card values, seat 0 first) played."""
    child = state.clone()
    child.apply(bids[0] - 1)
    child.apply(bids[1] - 1)
    return child


def exploitability_report(agent: Agent, num_cards: int | GoofspielRules) -> Exploitability:
    """:func:`exploitability` per seat: what a best responder in each seat gets against the
    agent in the other. That is the gain over the agent's own play in the seat when that
    is 0 (an agent that ignores its seat, in this symmetric game); NashConv, their sum, is
    exact either way, the game being zero-sum."""
    per_seat = tuple(best_response_value(agent, num_cards, responder) for responder in (0, 1))
    return Exploitability(per_seat, exact=True, method="dynamic programme over histories")


def exploitability(agent: Agent, num_cards: int) -> float:
    """How much a best response gains against ``agent`` on average over the two seats, in
    points (OpenSpiel's exploitability: NashConv / 2, on our point-difference scale). Zero
    exactly at an equilibrium, since the game's value is 0."""
    return 0.5 * (best_response_value(agent, num_cards, 0) + best_response_value(agent, num_cards, 1))
