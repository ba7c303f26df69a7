"""One round of two-player Markov Goofspiel as a model: what a bid can lead to, so that a
critic can take its targets' expectation exactly instead of regressing on sampled rounds.

Why. A critic that learns ``Q(o, a)`` from sampled play regresses on one sampled round per
decision: the other player's bid (which decides who takes the prize) and the next prize
are drawn, and that noise, not the network's size, is what its error is made of
(docs/training.md, "Self-play MMD with a critic"). In two-player Goofspiel with revealed
bids and point-difference scoring, the Markov observation (:class:`MarkovLayout`) is the
whole position: the other player's observation is the same vector with the two hands
swapped, the round's reward follows from the two bids, and the next prize is drawn
uniformly from those to come. So, given the policy both seats play and the critic's
values at the next decisions, the expected value of every bid is a finite sum over the
other's bids and the next prizes, which this module computes for a batch of observations
at once (a centralised critic's targets: training may see both hands; the policy still
reads its own observation).
"""

from __future__ import annotations

from collections.abc import Callable

from hiddenhand.envs.goofspiel import GoofspielRules

PIECES = ("prize", "hand", "others", "prizes_to_come")


def covers(rules: GoofspielRules) -> bool:
    """Whether :class:`RoundModel` describes ``rules``: two players, the Markov
    observation (which implies revealed bids), point-difference scoring and prizes
    drawn at random."""
    p = rules.params
    return (
        rules.markov and p["num_players"] == 2 and p["scoring"] == "point_difference" and p["prize_order"] == "random"
    )


class RoundModel:
    """The round of ``rules`` (:func:`covers` must hold) as expectations over a batch of
    Markov observations, in torch, on the observations' device."""

    def __init__(self, rules: GoofspielRules) -> None:
        if not covers(rules):
            raise ValueError(
                f"Goofspiel's round model needs the Markov observation, two players, point_difference scoring "
                f"and random prizes; got {rules.params}"
            )
        self.n = rules.num_cards
        self.cuts = [rules.markov_layout.slice(name) for name in PIECES]

    def expected_q(
        self,
        obs,
        probs: Callable,
        q: Callable,
        scale: float,
    ):
        """For every row of ``obs`` (Markov observations of the player to bid, a float
        tensor), the expected value of every bid: the round's reward (``scale`` times the
        points won or lost) plus the value of the position that follows, averaged over the
        other player's bids under ``probs`` and over the next prizes. ``probs(x, legal)``
        is the policy's distribution at observations ``x`` (zero where ``legal`` is false);
        ``q(x)`` the critic's values there, read as ``V(x) = sum_a probs * q``. A position
        with one card left in each hand is valued exactly (its round plays itself). Bids
        not in the hand get 0."""
        import torch

        n = self.n
        prize, hand, other, come = (obs[:, cut] for cut in self.cuts)
        worth = (prize.argmax(1) + 1).to(obs.dtype) * scale
        theirs = probs(torch.cat([prize, other, hand, come], 1), other > 0)
        cards = torch.arange(n, device=obs.device)
        sign = torch.sign(cards[:, None] - cards[None, :]).to(obs.dtype)  # mine above theirs wins
        reward = worth[:, None] * (theirs @ sign.T)  # [row, my bid]

        rows, a, b, c = (hand[:, :, None, None] * other[:, None, :, None] * come[:, None, None, :]).nonzero(
            as_tuple=True
        )
        gone = torch.nn.functional.one_hot
        mine = hand[rows] - gone(a, n).to(obs.dtype)
        yours = other[rows] - gone(b, n).to(obs.dtype)
        after = torch.cat([gone(c, n).to(obs.dtype), mine, yours, come[rows] - gone(c, n).to(obs.dtype)], 1)
        value = torch.empty(len(rows), dtype=obs.dtype, device=obs.device)
        last = mine.sum(1) == 1
        value[last] = (c[last] + 1).to(obs.dtype) * scale * torch.sign(mine[last].argmax(1) - yours[last].argmax(1))
        more = ~last
        if more.any():
            # Many rows' successors are one position: the networks read each position once.
            bits = 2 ** torch.arange(n, device=obs.device, dtype=torch.int64)
            key = c[more]
            for piece in (mine, yours, after[:, self.cuts[3]]):
                key = (key << n) + (piece[more] > 0).long() @ bits
            unique, back = torch.unique(key, return_inverse=True)
            first = torch.zeros(len(unique), dtype=torch.int64, device=obs.device)
            first.scatter_(0, back, torch.arange(len(back), device=obs.device))
            x = after[more][first]
            value[more] = (probs(x, x[:, self.cuts[1]] > 0) * q(x)).sum(1)[back]
        weight = theirs[rows, b] / come.sum(1)[rows]
        expected = torch.zeros_like(reward)
        expected.index_put_((rows, a), weight * value, accumulate=True)
        return (reward + expected) * hand


def round_model(rules: GoofspielRules) -> RoundModel | None:
    """The declaration's hook: the round model of ``rules``, or ``None`` where it does not apply."""
    return RoundModel(rules) if covers(rules) else None


__all__ = ["RoundModel", "covers", "round_model"]
