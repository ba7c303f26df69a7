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
   (:func:`~hiddenhand.envs.goofspiel_observation.position_observations`, compiled),
   only what the agent reads (:attr:`~hiddenhand.agent.Agent.reads`: random play reads
   only the legal bids) and once for both seats (:func:`gather_seats`);
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

import sys
from contextlib import contextmanager
from math import comb

import numpy as np
from numba import njit, prange
from tqdm.auto import tqdm

from hiddenhand.agent import agent_reads
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.envs.goofspiel_observation import position_observations
from hiddenhand.exploitability import Exploitability, NotMeasurable
from hiddenhand.solvers.goofspiel.coverage import unsolved
from hiddenhand.solvers.goofspiel.patterns import Sets
from hiddenhand.validation import named

ROWS = 1 << 13
"""Positions per batch of policy queries. Small enough that a batch's observations (8 MB of
full ones at 8 cards, 12 MB at 10) stay in the processor's cache from being written to
being read by the agent, rather than making a round trip through memory, which cost more
than writing them; large enough that a network's forward pass and the calls around it are
few (23,000 batches per seat at 10 cards)."""

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


@contextmanager
def _torch_threads_kept():
    """Keep torch's thread count, if the caller has imported torch, across compiled parallel
    kernels. numba's OpenMP threading layer sets the OpenMP thread count, which torch
    shares, to its own for every parallel kernel, so a network asked between two levels ran
    on every core whatever its owner had set: each of its small operations then waited for
    threads that a busy machine did not schedule, several times the network's one-thread
    cost. Nothing is imported here: an agent without torch is left alone."""
    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch is not None else None
    try:
        yield
    finally:
        if torch is not None:
            torch.set_num_threads(threads)


def gather(
    agent, rules: GoofspielRules, sets: Sets, k: int, seat: int, bar: tqdm | None = None, into=None
) -> np.ndarray:
    """The agent's policy at every position of level ``k`` (see :func:`_respond` for the
    indexing), from its batched policy over the observations it would get in ``seat``
    (written into ``into``'s memory, if given: see :func:`gather_seats`)."""
    return gather_seats(agent, rules, sets, k, (seat,), bar, None if into is None else [into])[0]


def gather_seats(
    agent,
    rules: GoofspielRules,
    sets: Sets,
    k: int,
    seats: tuple[int, ...],
    bar: tqdm | None = None,
    into: list[np.ndarray] | None = None,
) -> list[np.ndarray]:
    """:func:`gather` in each of ``seats``, every batch of observations built once.

    The positions of the level are taken :data:`ROWS` at a time, in the order of the
    result's rows, and their observations written into one buffer that every batch
    reuses (:func:`~hiddenhand.envs.goofspiel_observation.position_observations`,
    compiled). Only what the agent reads is built (:func:`~hiddenhand.agent.agent_reads`):
    for an agent that reads only the mask (random play) the observation vectors, most of
    the work, are skipped. A full observation differs between the seats only in the seat
    piece, so a batch is built once and that piece rewritten for the next seat; where the
    agent cannot see the seat (a Markov observation, or it reads no observation) it is
    asked once and its answer serves every seat (the same array, once per seat).

    ``into``, if given, holds a flat float64 array per seat, at least ``C(n, k)^3 k^2``
    long, whose memory the policies take: a caller that keeps one per seat for every level
    has the system hand it fresh pages once rather than once a level (at 10 cards the
    levels' policies are 7.9 GB a seat, the largest 3.2 GB), which cost several seconds of
    the system's time a measure."""
    cards, masks, n = sets.cards[k], sets.masks[k], sets.n
    count = len(masks)
    total = count**3 * k
    observe = agent_reads(agent, "observation")
    asked = seats if observe and not rules.markov else seats[:1]
    shape = (count, count, count, k, k)
    if into is None:
        out = [np.empty(shape, dtype=np.float64) for _ in asked]
    else:
        out = [memory[: total * k].reshape(shape) for memory in into[: len(asked)]]
    flat = [policy.reshape(total, k) for policy in out]
    size = min(ROWS, total)
    buffer = {"action_mask": np.empty((size, n), dtype=np.int8)}
    if observe:
        layout = rules.markov_layout if rules.markov else rules.information_layout
        buffer["observation"] = np.empty((size, layout.size), dtype=np.float32)
    if len(asked) > 1:
        seat_piece, one_hot = rules.information_layout.slice("seat"), np.eye(2, dtype=np.float32)
    for start in range(0, total, ROWS):
        stop = min(total, start + ROWS)
        a, rest = np.divmod(np.arange(start, stop), count * count * k)
        b, rest = np.divmod(rest, count * k)
        p, u = np.divmod(rest, k)
        upcard = cards[p, u]
        batch = {key: value[: stop - start] for key, value in buffer.items()}
        if observe:
            position_observations(rules, masks[a], masks[b], masks[p] ^ (1 << upcard), upcard, asked[0], out=batch)
        else:
            batch["action_mask"][:] = masks[a, None] >> np.arange(n) & 1
        for seat, policy in zip(asked, flat):
            if seat != asked[0]:
                batch["observation"][:, seat_piece] = one_hot[seat]
            probs = np.ascontiguousarray(agent.policy_batch(batch), dtype=np.float64)
            _store(agent, probs, batch["action_mask"], cards, start, count * count * k, policy)
            if bar is not None:
                bar.update(stop - start)
    return out if len(asked) == len(seats) else out * len(seats)


def _store(agent, probs: np.ndarray, mask: np.ndarray, cards: np.ndarray, start: int, per_hand: int, policy):
    """Check that each row of ``probs`` is a distribution over the legal bids of its mask, and
    write rows ``start`` on of ``policy`` (the level's policies, one row per position) with
    the probabilities of the agent's cards (:func:`_kept`)."""
    if probs.shape != mask.shape:
        raise ValueError(f"{agent!r}.policy_batch gave shape {probs.shape} for {mask.shape} observations")
    row = _kept(probs, mask, cards, start, per_hand, policy)
    if row >= 0:
        raise ValueError(
            f"{agent!r} is not a distribution over the legal bids: {probs[row].round(6)} with mask {mask[row]}"
        )


@njit(cache=True)
def _kept(probs, mask, cards, start, per_hand, policy):  # pragma: no cover - compiled
    """:func:`_store`'s loop: ``policy[start + r, i]`` is row ``r``'s probability of the
    ``i``-th card of the agent's hand (set ``(start + r) // per_hand``). Returns the first
    row that puts more than 1e-9 on illegal bids or does not sum to 1 within 1e-5 (NaN
    included), or -1."""
    k = cards.shape[1]
    hand, left = start // per_hand, per_hand - start % per_hand  # the agent's set, and its rows to come
    for r in range(probs.shape[0]):
        if left == 0:
            hand, left = hand + 1, per_hand
        left -= 1
        illegal = total = 0.0
        for c in range(probs.shape[1]):
            total += probs[r, c]
            illegal += probs[r, c] * (mask[r, c] == 0)
        if not (illegal <= 1e-9 and abs(total - 1.0) <= 1e-5):
            return r
        for i in range(k):
            policy[start + r, i] = probs[r, cards[hand, i]]
    return -1


def _levels(n: int, progress: bool, seats: int, label: str):
    """The sets of an ``n``-card game and a progress bar over every policy query."""
    sets = Sets(n)
    total = seats * sum(comb(n, k) ** 3 * k for k in range(2, n + 1))
    return sets, tqdm(total=total, unit="pos", unit_scale=True, disable=not progress, desc=label, leave=False)


def _memory(n: int, count: int) -> list[np.ndarray]:
    """``count`` flat arrays, each large enough for one seat's policies at any level of an
    ``n``-card game (the ``into`` of :func:`gather_seats`)."""
    size = max((comb(n, k) ** 3 * k * k for k in range(2, n + 1)), default=0)
    return [np.empty(size) for _ in range(count)]


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

    A Markov observation has no seat, and an agent that reads no observation (random play)
    cannot see it, so one policy serves both seats there and the game's symmetry makes the
    agent's on-policy value 0; otherwise a full observation shows the seat, so each seat is
    gathered (:func:`gather_seats`) and measured on its own. The on-policy values are
    computed, not assumed, either way (by :func:`_evaluate`)."""
    rules = _rules(rules)
    _require_markov(agent)
    n = rules.num_cards
    seats = 1 if rules.markov or not agent_reads(agent, "observation") else 2
    sets, bar = _levels(n, progress, seats, f"exploitability over positions, {n} cards")
    memory = _memory(n, seats)
    respond = [np.zeros((1, 1, 1)) for _ in range(seats)]
    evaluate = np.zeros((1, 1, 1))  # seat 0's agent against seat 1's
    with bar:
        for k in range(1, n + 1):
            if k == 1:  # the last round plays itself
                policies = [np.ones((n, n, n, 1, 1), dtype=np.float64)] * seats
            else:
                policies = gather_seats(agent, rules, sets, k, tuple(range(seats)), bar, memory)
            count = comb(n, k)
            below, respond = respond, [np.empty((count, count, count)) for _ in range(seats)]
            previous, evaluate = evaluate, np.empty((count, count, count))
            with _torch_threads_kept():
                for seat in range(seats):
                    _respond(policies[seat], sets.cards[k], sets.child[k], below[seat], respond[seat])
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
    memory = _memory(n, 2)
    values = [np.zeros((1, 1, 1)) for _ in range(seats)]
    with bar:
        for k in range(1, n + 1):
            count = comb(n, k)
            below, values = values, [np.empty((count, count, count)) for _ in range(seats)]
            for seat in range(seats):  # the agent in ``seat``, the opponent in the other
                if k == 1:
                    mine = theirs = np.ones((n, n, n, 1, 1), dtype=np.float64)
                else:
                    mine = gather(agent, rules, sets, k, seat, bar, memory[0])
                    theirs = gather(opponent, rules, sets, k, 1 - seat, bar, memory[1])
                with _torch_threads_kept():
                    _evaluate(mine, theirs, sets.cards[k], sets.child[k], below[seat], values[seat])
    return float(np.mean([v[0, 0, 0] for v in values]))


__all__ = ["MAX_CARDS", "exploitability", "gather", "gather_seats", "is_markov", "value"]
