"""One round of the whole two-player Spoof game, on the Markov observation, as a model: what
a hand or a bid can lead to, so that a critic can take its targets' expectation exactly
instead of regressing on sampled rounds.

Why. A critic that learns ``Q(o, a)`` from sampled play regresses on one sampled round per
decision: the other player's hand and bid are drawn, and that noise held the critic, and the
learner with it, near its temperature's floor (docs/training.md, "Self-play MMD with a
critic"). Spoof's Markov observation is the present round alone (the counts of matches, who
bids first, one's own hand and the bids so far): every round ends with both hands shown and
what follows depends only on the counts and who bids first, so the observation misses only
the other player's hand. Given the policy both seats play, that hand's distribution at the
observation follows by Bayes' rule from what the policy would have done with each hand (its
choice of hand, and its bid where it bid first), and the expected value of every legal
action is a finite sum over the other's hands and bids, with the critic's values at the
observations that follow. This module computes it for a batch of observations at once (a
centralised critic's targets: training may see the policy both seats play; the policy still
reads its own observation).

A round, from the player's seat, is four decisions in order: the first bidder's hand, the
other's hand, the first bidder's bid, the other's bid (which may not repeat the first). A
bid equal to the total of both hands takes one match off its bidder, who bids first next;
the player who gives away their last match wins (1), the other loses (-1); a round nobody
guesses is played again from the same counts. The game's ``max_rounds`` cap is not in the
observation, so the model, like the exact measure (:mod:`hiddenhand.solvers.round_best_response`),
plays the game without it.
"""

from __future__ import annotations

from collections.abc import Callable

from hiddenhand.envs.round_model_parts import col, one_hots, readers
from hiddenhand.envs.spoof import SpoofRules


def covers(rules: SpoofRules) -> bool:
    """Whether :class:`RoundModel` describes ``rules``: the Markov observation (the present
    round alone) and the whole game (the single-round objective has no next round)."""
    return rules.markov and rules.objective == "game"


class RoundModel:
    """The round of ``rules`` (:func:`covers` must hold) as expectations over a batch of
    Markov observations, in torch, on the observations' device."""

    def __init__(self, rules: SpoofRules) -> None:
        if not covers(rules):
            raise ValueError(
                f"Spoof's round model needs the Markov observation and the whole game (objective 'game'); "
                f"got {rules.params}"
            )
        layout = rules.layout
        self.width = layout.size
        self.holds, self.bids = rules.max_hold + 1, rules.max_total + 1
        self.cut = {name: layout.slice(name) for name in ("seat", "matches", "first", "hold", "bids")}
        self.hold0, self.bid0 = rules.hold_action(0), rules.bid_action(0)
        self.actions = rules.actions.size

    # ------------------------------------------------------------- observations
    def _read(self, obs):
        """The pieces of a batch of observations as integers (-1 where not yet chosen): seat,
        own and other's matches, whether the reader bids first, own hand, own and other's bid."""
        n = len(obs)
        matches = obs[:, self.cut["matches"]].reshape(n, 2, self.holds).argmax(2)
        bids = obs[:, self.cut["bids"]].reshape(n, 2, self.bids)
        hold = obs[:, self.cut["hold"]]

        def chosen(x):
            return x.argmax(1).where(x.sum(1) > 0, -1)

        return (
            obs[:, self.cut["seat"]].argmax(1),
            matches[:, 0],
            matches[:, 1],
            obs[:, self.cut["first"]][:, 0] > 0,
            chosen(hold),
            chosen(bids[:, 0]),
            chosen(bids[:, 1]),
        )

    def _write(self, *pieces):
        """Observations from integer pieces (seat, own and other's matches, whether the reader
        bids first, own hand, own and other's bid; -1: not chosen), broadcast to one shape:
        the inverse of :meth:`_read`, for positions the batch did not meet (the other's
        view, the next round)."""
        import torch

        pieces = [torch.as_tensor(x, device=pieces[0].device) for x in pieces]  # -1 may be given as an int
        seat, mine, theirs, first, hold, bid, other_bid = (x.reshape(-1) for x in torch.broadcast_tensors(*pieces))
        shape = torch.broadcast_shapes(*(x.shape for x in pieces))
        obs = torch.zeros(len(seat), self.width, device=seat.device)
        one_hots(
            obs,
            self.cut,
            (
                ("seat", seat, 0),
                ("matches", mine, 0),
                ("matches", theirs, self.holds),
                ("first", 1 - first.long(), 0),
                ("hold", hold, 0),
                ("bids", bid, 0),
                ("bids", other_bid, self.bids),
            ),
        )
        return obs.reshape(*shape, self.width)

    def legal(self, obs):
        """The legal actions at each observation: a hand of 0 to one's matches before the hand
        is chosen, else a total of 0 to all matches but the other's bid."""
        import torch

        _, mine, theirs, _, hold, _, other_bid = self._read(obs)
        hands = torch.arange(self.holds, device=obs.device)
        totals = torch.arange(self.bids, device=obs.device)
        choosing = hold < 0
        legal = torch.zeros(len(obs), self.actions, dtype=torch.bool, device=obs.device)
        legal[:, self.hold0 : self.hold0 + self.holds] = choosing[:, None] & (hands[None] <= mine[:, None])
        legal[:, self.bid0 : self.bid0 + self.bids] = (
            ~choosing[:, None] & (totals[None] <= (mine + theirs)[:, None]) & (totals[None] != other_bid[:, None])
        )
        return legal

    # ------------------------------------------------------------- expectation
    def expected_q(self, obs, probs: Callable, q: Callable, scale: float):
        """For every row of ``obs`` (Markov observations of the player to move, a float
        tensor), the expected value of every legal action: the round's outcome (``scale``
        times the game's payoff where the round ends the game) or the value of the
        observation that follows, averaged over the other player's hand (its distribution
        given what the observation shows, under ``probs``) and over its bid.
        ``probs(x, legal)`` is the policy's distribution at observations ``x`` (zero where
        ``legal`` is false); ``q(x)`` the critic's values there, read as
        ``V(x) = sum_a probs * q``. Illegal actions get 0."""
        import torch

        h, b, hold0, bid0 = self.holds, self.bids, self.hold0, self.bid0
        seat, mine, theirs, first, hold, _, other_bid = self._read(obs)
        hands = torch.arange(h, device=obs.device)
        totals = torch.arange(b, device=obs.device)

        policy, value = readers(self.width, self.legal, probs, q)

        q_out = torch.zeros(len(obs), self.actions, dtype=obs.dtype, device=obs.device)
        other = 1 - seat
        # The other's hand as the policy chooses it: it has shown nothing but, where it bid
        # first, its bid (it bids first exactly when the reader does not).
        hand = policy(self._write(other, theirs, mine, ~first, -1, -1, -1))[:, hold0 : hold0 + h]
        opening = torch.zeros(len(obs), h, b, dtype=obs.dtype, device=obs.device)  # [row, its hand, its bid]
        second = ~first  # the rows where the other bids first
        if second.any():
            opening[second] = policy(
                self._write(*(col(x[second], 1) for x in (other, theirs, mine, second)), hands, -1, -1)
            )[..., bid0 : bid0 + b]
        # What a round ends in, from the reader's seat (rows where it bids): the reader right
        # (one match off; the game won with its last), the other right, or neither (the round again).
        choosing = hold < 0
        bidding = ~choosing
        right, wrong, again = (torch.zeros(len(obs), dtype=obs.dtype, device=obs.device) for _ in range(3))
        if bidding.any():
            s, m, t, f = (x[bidding] for x in (seat, mine, theirs, first))
            right[bidding] = torch.where(m == 1, scale, value(self._write(s, m - 1, t, f | True, -1, -1, -1)))
            wrong[bidding] = torch.where(t == 1, -scale, value(self._write(s, m, t - 1, f & False, -1, -1, -1)))
            again[bidding] = value(self._write(s, m, t, f, -1, -1, -1))

        def paid(rows, total, mine_bid, theirs_bid):
            r, w, a = (col(x[rows], total.dim() - 1) for x in (right, wrong, again))
            return torch.where(mine_bid == total, r, torch.where(theirs_bid == total, w, a))

        rows = choosing & first  # the reader's next decision is its bid with the hand it chooses
        if rows.any():
            seen = self._write(*(col(x[rows], 1) for x in (seat, mine, theirs, first)), hands, -1, -1)
            q_out[rows, hold0 : hold0 + h] = value(seen)
        rows = choosing & ~first  # the other chooses its hand and bids, then the reader bids
        if rows.any():
            bids = (hand[rows, :, None] * opening[rows]).sum(1)  # [row, its bid]
            seen = self._write(*(col(x[rows], 2) for x in (seat, mine, theirs, first)), hands[:, None], -1, totals)
            q_out[rows, hold0 : hold0 + h] = (value(seen) * bids[:, None, :]).sum(2)
        rows = ~choosing & first  # the other has shown nothing; it answers the reader's bid
        if rows.any():
            answers = policy(
                self._write(
                    *(col(x[rows], 2) for x in (other, theirs, mine, ~first)),
                    hands[:, None],
                    -1,
                    totals,
                )
            )[..., bid0 : bid0 + b]  # [row, its hand, the reader's bid, its bid]
            total = col(hold[rows], 3) + hands[:, None, None]
            outcome = paid(rows, total, totals[:, None], totals)
            q_out[rows, bid0 : bid0 + b] = (hand[rows, :, None, None] * answers * outcome).sum((1, 3))
        rows = ~choosing & ~first  # the other's hand given the bid it opened with (Bayes' rule)
        if rows.any():
            said = other_bid[rows]
            likely = hand[rows] * opening[rows].gather(2, said[:, None, None].expand(-1, h, 1))[..., 0]
            mass = likely.sum(1, keepdim=True)
            belief = torch.where(mass > 0, likely / mass.clamp_min(1e-30), hand[rows])
            total = col(hold[rows], 2) + hands[:, None]
            outcome = paid(rows, total, totals, col(said, 2))
            q_out[rows, bid0 : bid0 + b] = (belief[:, :, None] * outcome).sum(1)
        return q_out * self.legal(obs)


def round_model(rules: SpoofRules) -> RoundModel | None:
    """The declaration's hook: the round model of ``rules``, or ``None`` where it does not apply."""
    return RoundModel(rules) if covers(rules) else None


__all__ = ["RoundModel", "covers", "round_model"]
