"""Exact best responses to any Goofspiel agent, by dynamic programming over public states.

In two-player Goofspiel with revealed bids everything is public except the two bids of
the current round, so a best response is a backward induction over public states: at
each round the responder sees the agent's mixed bid (its ``policy`` for the observation
it would get) and picks the bid that maximises the immediate point difference plus the
value of what follows. Chance (the next prize) is averaged.

Public states are merged in the memo by what the agent's policy can depend on, which the
agent declares (:attr:`~hiddenhand.agents.base.Agent.uses_score`,
:attr:`~hiddenhand.agents.base.Agent.uses_history`): the two hands and the prizes always,
the points won so far if the agent reads the score, the whole history if it may read
anything. The fewer it reads, the fewer states: the equilibrium or random agents need
one evaluation per (hands, prizes) position, which makes 5 cards a fraction of a second
where walking OpenSpiel's game tree takes minutes.
"""

from __future__ import annotations

from typing import Hashable

from hiddenhand.agents.base import Agent
from hiddenhand.core import CHANCE, TERMINAL
from hiddenhand.envs.goofspiel import GoofspielRules, GoofspielState
from hiddenhand.validation import check_int


def best_response_value(agent: Agent, num_cards: int, responder: int) -> float:
    """The expected point difference of a best response in seat ``responder`` against
    ``agent`` in the other seat (random prize order, bids revealed)."""
    n = check_int("num_cards", num_cards, 1, 13)
    check_int("responder", responder, 0, 1)
    rules = GoofspielRules(num_cards=n)
    seat = 1 - responder
    memo: dict[Hashable, float] = {}

    def key(state: GoofspielState) -> Hashable:
        parts: tuple = (state.hands.tobytes(), tuple(state.prizes_left), state.prize)
        if agent.uses_score:
            parts += tuple(state.points)
        if agent.uses_history:
            parts += tuple(state.history)
        return parts

    def gain(before: GoofspielState, after: GoofspielState) -> float:
        return (after.points[responder] - before.points[responder]) - (after.points[seat] - before.points[seat])

    def value(state: GoofspielState) -> float:
        """Best-response point difference still to come from ``state``."""
        player = state.current_player()
        if player == TERMINAL:
            return 0.0
        k = key(state)
        if k in memo:
            return memo[k]
        if player == CHANCE:
            result = 0.0
            for action, prob in state.chance_outcomes():
                child = state.clone()
                child.apply(action)
                result += prob * value(child)
        else:
            mixed = agent.policy(state.observation(seat))
            support = [(a, p) for a, p in enumerate(mixed) if p > 0.0]
            result = -float("inf")
            for reply in state.legal_actions(responder):
                total = 0.0
                for bid, prob in support:
                    child = state.clone()
                    for action in ((bid, reply) if seat == 0 else (reply, bid)):
                        child.apply(action)
                    total += prob * (gain(state, child) + value(child))
                result = max(result, total)
        memo[k] = result
        return result

    return value(rules.new_initial_state())


def exploitability(agent: Agent, num_cards: int) -> float:
    """How much a best response gains against ``agent`` on average over the two seats, in
    points (OpenSpiel's exploitability: NashConv / 2, on our point-difference scale). Zero
    exactly at an equilibrium, since the game's value is 0."""
    return 0.5 * (best_response_value(agent, num_cards, 0) + best_response_value(agent, num_cards, 1))
