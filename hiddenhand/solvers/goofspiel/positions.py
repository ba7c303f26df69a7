"""Exact exploitability and values of Markov Goofspiel agents, by induction over positions.

In two-player Goofspiel with revealed bids and point-difference scoring, what is still to be
won depends only on the *position*: the two hands, the prizes left and the prize on the
table. An agent whose policy depends on nothing else (it declares ``uses_score`` and
``uses_history`` false: the equilibrium, random play, the easy and medium heuristics, a
PPO agent trained on ``observation="markov"``) is therefore measured exactly by a backward
induction over positions, in two steps per level (hand size k, from 1 up to the whole
game):

1. gather the agent's policy at every position of the level, in batches
   (:meth:`~hiddenhand.agent.Agent.policy_batch`: one forward pass of a network per
   batch), as observations the rules build in bulk
   (:func:`~hiddenhand.envs.goofspiel_observation.position_observations`);
2. a compiled kernel (numba, parallel over the agent's hands) computes every position's
   value from the level below: the best responder's (the bid maximising the mean over the
   agent's mixed bid of the round's points plus what follows), and the value of the agent
   against a second policy (itself, for its on-policy value, or the equilibrium).

A level holds ``C(n, k)^3`` positions (hand, other hand, prizes), each with ``k``
upcards: about 3 million policy queries at 8 cards and 190 million at 10, against the
billions of histories that the reference dynamic programme
(:mod:`~hiddenhand.solvers.goofspiel.histories`) or OpenSpiel's tree walk would visit.
Memory is the level's policies, ``C(n, k)^3 * k * k`` float64 per seat: 3.2 GB at 10
cards, which is why 10 cards is the documented limit.

Card sets are bitmasks (bit ``c - 1`` for card ``c``); the sets of size k are numbered in
:func:`itertools.combinations` order, and a value array of level k is indexed
``[hand of the agent, hand of the other, prizes]``.
"""

from __future__ import annotations

from math import comb

import numpy as np
from numba import njit, prange
from tqdm.auto import tqdm

from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.envs.goofspiel_observation import position_observations
from hiddenhand.exploitability import Exploitability, NotMeasurable
from hiddenhand.solvers.goofspiel.coverage import unsolved
from hiddenhand.solvers.goofspiel.patterns import Sets
from hiddenhand.validation import named

ROWS = 1 << 18
"""Positions per batch of policy queries (bounds the memory of the observations)."""

MAX_CARDS = 10
"""The largest game measured over positions (the level's policies take 3.2 GB at 10 cards)."""


def is_markov(agent) -> bool:
    """Whether ``agent`` declares that it reads neither the score nor the history."""
    return not agent.uses_score and not agent.uses_history


@njit(parallel=True, cache=True)
def _respond(policy, cards, child, below, out):  # pragma: no cover - compiled
    """Best-response values of one level, to the responder: ``out[a, b, p]`` with the agent
    holding set ``a``, the responder ``b``, prizes ``p``; ``policy[a, b, p, u, i]`` is the
    agent's probability of bidding its ``i``-th card on the ``u``-th prize of ``p``."""
    sets, k = cards.shape
    for a in prange(sets):
        for b in range(sets):
            for p in range(sets):
                total = 0.0
                for u in range(k):
                    prize = cards[p, u] + 1.0
                    rest = child[p, u]
                    best = -np.inf
                    for j in range(k):
                        mine = cards[b, j]
                        gain = 0.0
                        for i in range(k):
                            prob = policy[a, b, p, u, i]
                            if prob > 0.0:
                                theirs = cards[a, i]
                                won = (mine > theirs) - (mine < theirs)
                                gain += prob * (won * prize + below[child[a, i], child[b, j], rest])
                        best = max(best, gain)
                    total += best
                out[a, b, p] = total / k


@njit(parallel=True, cache=True)
def _evaluate(policy, other, cards, child, below, out):  # pragma: no cover - compiled
    """Values of one level to the agent (set ``a``) against a second policy: ``other[b, a,
    p, u, j]`` is the other player's probability of bidding its ``j``-th card, indexed by
    its own hand first."""
    sets, k = cards.shape
    for a in prange(sets):
        for b in range(sets):
            for p in range(sets):
                total = 0.0
                for u in range(k):
                    prize = cards[p, u] + 1.0
                    rest = child[p, u]
                    for i in range(k):
                        x = policy[a, b, p, u, i]
                        if x == 0.0:
                            continue
                        for j in range(k):
                            y = other[b, a, p, u, j]
                            if y > 0.0:
                                won = (cards[a, i] > cards[b, j]) - (cards[a, i] < cards[b, j])
                                total += x * y * (won * prize + below[child[a, i], child[b, j], rest])
                out[a, b, p] = total / k


def gather(agent, rules: GoofspielRules, sets: Sets, k: int, seat: int, bar: tqdm | None = None) -> np.ndarray:
    """The agent's policy at every position of level ``k`` (see :func:`_respond` for the
    indexing), from its batched policy over the observations it would get in ``seat``."""
    cards, masks, n = sets.cards[k], sets.masks[k], sets.n
    count = len(masks)
    out = np.empty((count, count, count, k, k), dtype=np.float64)
    per_hand = count * count * k
    step = max(1, ROWS // per_hand)
    b, p, u = (x.ravel() for x in np.meshgrid(np.arange(count), np.arange(count), np.arange(k), indexing="ij"))
    upcard = cards[p, u]
    prizes = masks[p] ^ (1 << upcard)
    for start in range(0, count, step):
        hands = np.arange(start, min(count, start + step))
        a = np.repeat(hands, per_hand)
        tile = len(hands)
        observations = position_observations(
            rules, masks[a], np.tile(masks[b], tile), np.tile(prizes, tile), np.tile(upcard, tile), seat
        )
        probs = np.asarray(agent.policy_batch(observations), dtype=np.float64)
        _check(agent, probs, observations["action_mask"], n)
        by_rank = np.take_along_axis(probs, cards[a], axis=1)  # the agent's i-th card, i < k
        out[start : start + tile] = by_rank.reshape(tile, count, count, k, k)
        if bar is not None:
            bar.update(len(a))
    return out


def _check(agent, probs: np.ndarray, mask: np.ndarray, n: int) -> None:
    if probs.shape != mask.shape:
        raise ValueError(f"{agent!r}.policy_batch gave shape {probs.shape} for {mask.shape} observations")
    illegal = (probs * (mask == 0)).sum(axis=1)
    total = probs.sum(axis=1)
    if (illegal > 1e-9).any() or (np.abs(total - 1.0) > 1e-5).any():
        row = int(np.argmax((illegal > 1e-9) | (np.abs(total - 1.0) > 1e-5)))
        raise ValueError(
            f"{agent!r} is not a distribution over the legal bids: {probs[row].round(6)} with mask {mask[row]}"
        )


def _levels(n: int, progress: bool, seats: int, label: str):
    """The sets of an ``n``-card game and a progress bar over every policy query."""
    sets = Sets(n)
    total = seats * sum(comb(n, k) ** 3 * k for k in range(2, n + 1))
    return sets, tqdm(total=total, unit="pos", unit_scale=True, disable=not progress, desc=label, leave=False)


def _rules(rules: GoofspielRules | int) -> GoofspielRules:
    rules = GoofspielRules(num_cards=rules) if isinstance(rules, (int, np.integer)) else rules
    differs = unsolved(rules)
    if rules.scoring != "point_difference":  # the score is part of the state then
        differs["scoring"] = rules.scoring
    if differs:
        raise ValueError(
            f"the exact measure over positions is for two players, point difference, random prizes and revealed "
            f"bids; this one differs in {', '.join(named(k, v) for k, v in differs.items())}"
        )
    if rules.num_cards > MAX_CARDS:
        raise NotMeasurable(
            f"{named('num_cards', rules.num_cards)}: positions are measured exactly up to {MAX_CARDS} cards (the "
            f"policies of one level take C(n, k)^3 * k^2 floats)"
        )
    return rules


def _require_markov(agent) -> None:
    if not is_markov(agent):
        raise NotMeasurable(
            f"{agent!r} may read the score or the history (uses_score={agent.uses_score}, uses_history="
            f"{agent.uses_history}), so positions do not determine its play; use the dynamic programme over "
            f"histories (hiddenhand.solvers.goofspiel.histories.best_response_value)"
        )


def exploitability(agent, rules: GoofspielRules | int, progress: bool = True) -> Exploitability:
    """Exact exploitability of a Markov ``agent`` playing both seats of ``rules`` (or that
    many cards): per seat, what a best responder there gains over the agent's own play.

    A Markov observation has no seat, so one policy serves both seats and the game's
    symmetry makes the agent's on-policy value 0; a full observation shows the seat, so
    each seat is gathered and measured on its own. The on-policy values are computed, not
    assumed, either way (by :func:`_evaluate`)."""
    rules = _rules(rules)
    _require_markov(agent)
    n = rules.num_cards
    seats = 1 if rules.markov else 2
    sets, bar = _levels(n, progress, seats, f"exploitability over positions, {n} cards")
    respond = [np.zeros((1, 1, 1)) for _ in range(seats)]
    evaluate = np.zeros((1, 1, 1))  # seat 0's agent against seat 1's
    with bar:
        for k in range(1, n + 1):
            if k == 1:  # the last round plays itself
                policies = [np.ones((n, n, n, 1, 1), dtype=np.float64)] * seats
            else:
                policies = [gather(agent, rules, sets, k, seat, bar) for seat in range(seats)]
            count = comb(n, k)
            below, respond = respond, [np.empty((count, count, count)) for _ in range(seats)]
            for seat in range(seats):
                _respond(policies[seat], sets.cards[k], sets.child[k], below[seat], respond[seat])
            previous, evaluate = evaluate, np.empty((count, count, count))
            _evaluate(policies[0], policies[-1], sets.cards[k], sets.child[k], previous, evaluate)
            del policies
    on_policy = float(evaluate[0, 0, 0])  # seat 0's value; seat 1's is its negation
    # The responder in seat 1 faces the agent in seat 0 (respond[0]), and in seat 0 the agent in seat 1.
    per_seat = (float(respond[-1][0, 0, 0]) - on_policy, float(respond[0][0, 0, 0]) + on_policy)
    how = "one policy for both seats" if seats == 1 else "each seat's policy"
    return Exploitability(per_seat, exact=True, method=f"backward induction over positions ({how}; Markov agent)")


def value(agent, opponent, rules: GoofspielRules | int, progress: bool = True) -> float:
    """The exact expected point difference of Markov ``agent`` against Markov ``opponent``,
    averaged over the two seats (each agent reads the observations of ``rules``): what
    thousands of sampled games estimate, without their noise."""
    rules = _rules(rules)
    for who in (agent, opponent):
        _require_markov(who)
    n = rules.num_cards
    seats = 1 if rules.markov else 2
    sets, bar = _levels(n, progress, 2 * seats, f"value over positions, {n} cards")
    values = [np.zeros((1, 1, 1)) for _ in range(seats)]
    with bar:
        for k in range(1, n + 1):
            count = comb(n, k)
            below, values = values, [np.empty((count, count, count)) for _ in range(seats)]
            for seat in range(seats):  # the agent in ``seat``, the opponent in the other
                if k == 1:
                    mine = theirs = np.ones((n, n, n, 1, 1), dtype=np.float64)
                else:
                    mine = gather(agent, rules, sets, k, seat, bar)
                    theirs = gather(opponent, rules, sets, k, 1 - seat, bar)
                _evaluate(mine, theirs, sets.cards[k], sets.child[k], below[seat], values[seat])
    return float(np.mean([v[0, 0, 0] for v in values]))


__all__ = ["MAX_CARDS", "exploitability", "gather", "is_markov", "value"]
