"""The exact measure over positions as it was before its observations were compiled, frozen:
the reference that ``tests/test_goofspiel_positions.py`` holds today's measure to, value
for value, and that ``benchmarks/bench_exploitability.py`` times beside it.

It builds every observation of a level with numpy, the full observation's history by
sorting each position's spent cards (:func:`position_observations`, a copy of
``envs/goofspiel_observation.py``'s at commit 6822573), whatever the agent reads, and
gathers each seat's policies on their own (:func:`gather`, :func:`exploitability`, copies
of ``hiddenhand/solvers/goofspiel/positions.py``'s at that commit). The compiled induction
(``_respond``, ``_evaluate``) and the checks of the rules and the agent are imported from the package: they did not
change, and the comparison is about what feeds them. Do not edit it: it is the "before"
side of those comparisons, not code the package uses.
"""

from __future__ import annotations

from math import comb

import numpy as np

from hiddenhand.exploitability import Exploitability
from hiddenhand.solvers.goofspiel.positions import _evaluate, _levels, _require_markov, _respond, _rules

ROWS = 1 << 18
"""Positions per batch of policy queries."""


def position_observations(rules, hand, other, prizes, upcard, seat, markov=None) -> dict[str, np.ndarray]:
    """The observations of many two-player positions at once, built by numpy (see today's
    ``hiddenhand.envs.goofspiel_observation.position_observations``, which gives the same)."""
    if rules.num_players != 2:
        raise ValueError(f"positions are two-player; {rules} has {rules.num_players} players")
    n = rules.num_cards
    bits = (np.asarray(hand)[:, None] >> np.arange(n)) & 1
    others = (np.asarray(other)[:, None] >> np.arange(n)) & 1
    to_come = (np.asarray(prizes)[:, None] >> np.arange(n)) & 1
    rows = np.arange(len(bits))
    mask = bits.astype(np.int8)
    if rules.markov if markov is None else markov:
        obs, views = rules.markov_layout.zeros(len(bits))
        views["others"][:, 0] = others
    else:
        obs, views = rules.information_layout.zeros(len(bits))
        views["reveal"][:] = 1.0
        views["seat"][:, seat] = 1.0
        _canonical_history(rules, views, bits, others, to_come, upcard)
    views["prize"][rows, upcard] = 1.0
    views["hand"][:] = bits
    views["prizes_to_come"][:] = to_come
    return {"observation": obs, "action_mask": mask}


def _canonical_history(rules, views, hand, other, to_come, upcard) -> None:
    """Fill the history and points of full observations: in round ``r`` the ``r``-th
    lowest spent prize, own card and opponent's card."""
    n = rules.num_cards
    rows = np.arange(len(hand))
    spent_prizes = 1 - to_come
    spent_prizes[rows, upcard] = 0
    played = n - hand.sum(axis=1)
    if not (played == played[0]).all():
        raise ValueError("positions of one batch must have equal hand sizes")
    rounds = int(played[0])
    order = np.argsort(1 - np.stack([spent_prizes, 1 - hand, 1 - other]), axis=2, kind="stable")[..., :rounds]
    prize, mine, theirs = order  # (N, rounds) card indices, increasing
    block = rules.information_layout.round.views(views["history"])
    won = np.sign(mine - theirs)
    for r in range(rounds):
        block["prize"][rows, r, prize[:, r]] = 1.0
        block["own_bid"][rows, r, mine[:, r]] = 1.0
        block["others"][rows, r, 0, theirs[:, r]] = 1.0
        block["winner"][rows, r, np.where(won[:, r] > 0, 0, np.where(won[:, r] < 0, 1, 2))] = 1.0
    block["prize"][rows, rounds, upcard] = 1.0  # the round being bid on
    points = (prize + 1)[:, None] * np.stack([won > 0, won < 0], axis=1)  # (N, 2, rounds)
    views["points"][:] = points.sum(axis=2) / rules.total_prize


def gather(agent, rules, sets, k: int, seat: int) -> np.ndarray:
    """The agent's policy at every position of level ``k`` in ``seat``, as the measure gathered it."""
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
        by_rank = np.take_along_axis(probs, cards[a], axis=1)
        out[start : start + tile] = by_rank.reshape(tile, count, count, k, k)
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


def exploitability(agent, rules) -> Exploitability:
    """The exact exploitability of a Markov ``agent`` playing both seats, as the measure computed it."""
    rules = _rules(rules)
    _require_markov(agent)
    n = rules.num_cards
    seats = 1 if rules.markov else 2
    sets, _ = _levels(n, False, seats, "")
    respond = [np.zeros((1, 1, 1)) for _ in range(seats)]
    evaluate = np.zeros((1, 1, 1))
    for k in range(1, n + 1):
        if k == 1:
            policies = [np.ones((n, n, n, 1, 1), dtype=np.float64)] * seats
        else:
            policies = [gather(agent, rules, sets, k, seat) for seat in range(seats)]
        count = comb(n, k)
        below, respond = respond, [np.empty((count, count, count)) for _ in range(seats)]
        for seat in range(seats):
            _respond(policies[seat], sets.cards[k], sets.child[k], below[seat], respond[seat])
        previous, evaluate = evaluate, np.empty((count, count, count))
        _evaluate(policies[0], policies[-1], sets.cards[k], sets.child[k], previous, evaluate)
        del policies
    on_policy = float(evaluate[0, 0, 0])
    per_seat = (float(respond[-1][0, 0, 0]) - on_policy, float(respond[0][0, 0, 0]) + on_policy)
    how = "one policy for both seats" if seats == 1 else "each seat's policy"
    return Exploitability(per_seat, exact=True, method=f"backward induction over positions ({how}; Markov agent)")
