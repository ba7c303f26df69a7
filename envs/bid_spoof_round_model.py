"""One round of the whole two-player Bid Spoof game, on the Markov observation, as a model:
what a hand, a bid or a call can lead to, so that a critic can take its targets'
expectation exactly instead of regressing on sampled rounds.

Why: as for Spoof (:mod:`hiddenhand.envs.spoof_round_model`). The Markov observation is the
round-state (both players' coins, who starts) and the present round (one's own hand and the
bid table, which holds the round's whole public history since bids only go up); every round
ends with both hands shown, so the observation misses only the other player's hand. Given
the policy both seats play, that hand's distribution follows by Bayes' rule from what the
policy would have done with each hand: its choice of hand and each bid it has made in the
round (its observation then being the bid table below that bid). The expected value of
every legal action is then a finite sum over the other's hand and its answer, with the
critic's values at the reader's next decision or, where the answer ends the round, at the
next round's start.

A round with two players, from the reader's seat: the starter's hand, the other's hand
(the direction is set as the last hand goes in), then bids that alternate, each higher than
the last, until a call ends the round. The calls, settled on the total of both hands
(``bid_spoof_v0`` has the rules): *call* (the caller loses a coin if the total reaches the
last bid, else the bidder does; the loser starts), *cliff* (the total is the last bid: the
caller wins a coin up to the cap, else loses one), *spoof* (every coin in play is held: no
change, else the caller loses one), *zero* (nobody holds a coin: the other loses one, else
the caller does); after all but *call* the caller starts. A player left with no coins loses
the game (-1), the other wins (1). The game's ``max_rounds`` cap is not in the observation,
so the model, like the exact measure (:mod:`hiddenhand.solvers.round_best_response`), plays
the game without it.
"""

from __future__ import annotations

from collections.abc import Callable

from hiddenhand.envs.bid_spoof import BidSpoofRules
from hiddenhand.envs.bid_spoof_observation import CALLS
from hiddenhand.envs.round_model_parts import col, one_hots, readers


def covers(rules: BidSpoofRules) -> bool:
    """Whether :class:`RoundModel` describes ``rules``: two players, the Markov observation
    (the present round alone) and the whole game (the single-round objective has no next
    round)."""
    return rules.num_players == 2 and rules.markov and rules.objective == "game"


class RoundModel:
    """The round of ``rules`` (:func:`covers` must hold) as expectations over a batch of
    Markov observations, in torch, on the observations' device."""

    def __init__(self, rules: BidSpoofRules) -> None:
        if not covers(rules):
            raise ValueError(
                f"Bid Spoof's round model needs two players, the Markov observation and the whole game "
                f"(objective 'game'); got {rules.params}"
            )
        layout = rules.layout
        self.width = layout.size
        self.coins, self.hands, self.bids = rules.coins, rules.coins + 1, 2 * rules.coins
        self.cut = {name: layout.slice(name) for name in ("seat", "coins", "starter", "direction", "hold", "bids")}
        acts = rules.actions
        self.hold0, self.bid0, self.call0 = acts.hold(0), acts.bid(1), acts.call(CALLS[0])
        self.actions = acts.size
        self.zero_opens_only = rules.zero_call == "round_start"

    # ------------------------------------------------------------- observations
    def _read(self, obs):
        """The pieces of a batch of observations as integers: seat, own and other's coins,
        whether the reader starts, own hand (-1 before it is chosen) and the bid table as
        each bid's owner (0 the reader, 1 the other, -1 not bid)."""
        n = len(obs)
        coins = obs[:, self.cut["coins"]].reshape(n, 2, self.hands).argmax(2)
        table = obs[:, self.cut["bids"]].reshape(n, self.bids, 2)
        hold = obs[:, self.cut["hold"]]
        return (
            obs[:, self.cut["seat"]].argmax(1),
            coins[:, 0],
            coins[:, 1],
            obs[:, self.cut["starter"]][:, 0] > 0,
            hold.argmax(1).where(hold.sum(1) > 0, -1),
            table.argmax(2).where(table.sum(2) > 0, -1),
        )

    def _write(self, seat, mine, theirs, starts, hold, owners):
        """Observations from the pieces :meth:`_read` gives (ints or tensors, broadcast to
        one shape; ``owners`` with one more, trailing axis, a bid's owner), the direction
        set where the hand is: the inverse of :meth:`_read`, for positions the batch did
        not meet (the other's view, the next decision, the next round)."""
        import torch

        device = owners.device
        pieces = [torch.as_tensor(x, device=device) for x in (seat, mine, theirs, starts, hold)]
        shape = torch.broadcast_shapes(*(x.shape for x in pieces), owners.shape[:-1])
        seat, mine, theirs, starts, hold = (x.expand(shape).reshape(-1) for x in pieces)
        owners = owners.expand(*shape, self.bids).reshape(-1, self.bids)
        obs = torch.zeros(len(seat), self.width, device=device)
        one_hots(
            obs,
            self.cut,
            (
                ("seat", seat, 0),
                ("coins", mine, 0),
                ("coins", theirs, self.hands),
                ("starter", 1 - starts.long(), 0),
                ("direction", (hold >= 0).long() - 1, 0),  # clockwise once both hands are in
                ("hold", hold, 0),
            ),
        )
        made = owners >= 0
        column = 2 * torch.arange(self.bids, device=device) + owners.clamp_min(0)
        obs[:, self.cut["bids"]].scatter_(1, column, made.float())  # a view: writes into obs
        return obs.reshape(*shape, self.width)

    @staticmethod
    def _last(owners):
        """The last bid of each table (0 where nobody has bid)."""
        import torch

        values = torch.arange(1, owners.shape[-1] + 1, device=owners.device)
        return torch.where(owners >= 0, values, 0).amax(-1)

    def legal(self, obs):
        """The legal actions at each observation: a hand of 0 to one's coins before the hand
        is chosen; else a bid above the last up to the coins in play, the three calls after
        a bid, and zero where ``zero_call`` allows it."""
        import torch

        _, mine, theirs, starts, hold, owners = self._read(obs)
        last = self._last(owners)
        hands = torch.arange(self.hands, device=obs.device)
        values = torch.arange(1, self.bids + 1, device=obs.device)
        choosing, bidding = hold < 0, hold >= 0
        legal = torch.zeros(len(obs), self.actions, dtype=torch.bool, device=obs.device)
        legal[:, self.hold0 : self.hold0 + self.hands] = choosing[:, None] & (hands[None] <= mine[:, None])
        legal[:, self.bid0 : self.bid0 + self.bids] = (
            bidding[:, None] & (values[None] > last[:, None]) & (values[None] <= (mine + theirs)[:, None])
        )
        legal[:, self.call0 : self.call0 + 3] = (bidding & (last > 0))[:, None]
        silent = (owners == 0).sum(1) == 0
        legal[:, self.call0 + 3] = bidding & ((last == 0) & starts if self.zero_opens_only else silent)
        return legal

    # ------------------------------------------------------------- expectation
    def expected_q(self, obs, probs: Callable, q: Callable, scale: float):
        """For every row of ``obs`` (Markov observations of the player to move, a float
        tensor), the expected value of every legal action: where the round ends, its
        settling (``scale`` times the game's payoff where that ends the game, else the value
        of the next round's first observation), else the value of the reader's next
        observation, averaged over the other player's hand (its distribution given the
        bids it made, under ``probs``) and its answer. ``probs(x, legal)`` is the policy's
        distribution at observations ``x`` (zero where ``legal`` is false); ``q(x)`` the
        critic's values there, read as ``V(x) = sum_a probs * q``. Illegal actions get 0."""
        import torch

        h, b, c = self.hands, self.bids, self.coins
        seat, mine, theirs, starts, hold, owners = self._read(obs)
        device, dtype = obs.device, obs.dtype
        hands = torch.arange(h, device=device)
        values = torch.arange(1, b + 1, device=device)
        nobody = torch.full((b,), -1, device=device)
        other = 1 - seat
        swapped = torch.where(owners >= 0, 1 - owners, -1)  # the table from the other's seat

        policy, value = readers(self.width, self.legal, probs, q)

        # The round's settling, by caller (0 the reader), call and whether the call is right:
        # each player's change of coins and who starts, and the value of what that leads to
        # (computed once for each distinct outcome, on the rows that can settle a round).
        win, same, lose = 1, 0, -1
        changes = {  # call: (caller's change, other's change, caller starts) if right, the same if wrong
            "call": ((same, lose, False), (lose, same, True)),
            "cliff": ((win, same, True), (lose, same, True)),
            "spoof": ((same, same, True), (lose, same, True)),
            "zero": ((same, lose, True), (lose, same, True)),
        }
        settles = (hold >= 0) | ~starts  # rows whose next move or the other's can end the round
        ends = torch.zeros(len(obs), 2, len(CALLS), 2, dtype=dtype, device=device)
        outcomes: dict[tuple, object] = {}
        for caller in (0, 1):
            for k, call in enumerate(CALLS):
                for wrong, (by_caller, by_other, caller_starts) in enumerate(changes[call]):
                    change = (by_caller, by_other) if caller == 0 else (by_other, by_caller)
                    key = change, caller_starts == (caller == 0)
                    if key not in outcomes:
                        (mine_change, theirs_change), reader_starts = key
                        m = (mine[settles] + mine_change).clamp(max=c)
                        t = (theirs[settles] + theirs_change).clamp(max=c)
                        nxt = self._write(seat[settles], m.clamp_min(1), t.clamp_min(1), reader_starts, -1, nobody)
                        outcomes[key] = torch.where(m == 0, -scale, torch.where(t == 0, scale, value(nxt)))
                    ends[settles, caller, k, wrong] = outcomes[key]

        def settled(rows, caller, total, last, dims):
            """The value of each call by ``caller`` on ``total`` after bid ``last`` (both
            broadcast over ``dims`` trailing axes), stacked on a new last axis."""
            held = col(mine[rows] + theirs[rows], dims)
            right = torch.broadcast_tensors(total < last, total == last, total == held, total == 0)
            table = ends[rows, caller]
            return torch.stack(
                [torch.where(r, col(table[:, k, 0], dims), col(table[:, k, 1], dims)) for k, r in enumerate(right)],
                dim=-1,
            )

        def calls(p):
            return p[..., self.call0 : self.call0 + len(CALLS)]

        q_out = torch.zeros(len(obs), self.actions, dtype=dtype, device=device)
        # The other's hand as the policy chooses it, before it has bid.
        hand = policy(self._write(other, theirs, mine, ~starts, -1, nobody))[:, self.hold0 : self.hold0 + h]

        rows = (hold < 0) & starts  # the reader's next decision is its opening with the hand it chooses
        if rows.any():
            seen = self._write(*(col(x[rows], 1) for x in (seat, mine, theirs, starts)), hands, nobody)
            q_out[rows, self.hold0 : self.hold0 + h] = value(seen)
        rows = (hold < 0) & ~starts  # the other has chosen its hand; it opens with a bid or zero
        if rows.any():
            r = rows.nonzero().ravel()
            opening = policy(self._write(*(col(x[r], 1) for x in (other, theirs, mine, ~starts)), hands, nobody))
            opened = torch.where(values == values[:, None], 1, -1)  # [its bid, the table]: that bid the other's
            seen = self._write(*(col(x[r], 2) for x in (seat, mine, theirs, starts)), hands[:, None], opened)
            opening_bids = opening[:, None, :, self.bid0 : self.bid0 + b]
            later = (opening_bids * value(seen)[:, :, None]).sum(3)  # [row, the reader's hand, its hand]
            # Of the calls only zero may open a round: the others, settled on "bid 0" here, weigh 0.
            ended = settled(r, 1, hands[:, None] + hands, torch.zeros((), device=device), 2)  # [row, mine, its, call]
            later = later + (calls(opening)[:, None] * ended).sum(3)
            q_out[r, self.hold0 : self.hold0 + h] = (hand[r, None, :] * later).sum(2)

        rows = hold >= 0
        if not rows.any():
            return q_out * self.legal(obs)
        r = rows.nonzero().ravel()
        s, m, t, f, own, table, theirs_table = (x[r] for x in (seat, mine, theirs, starts, hold, owners, swapped))
        others = [col(x, 2) for x in (1 - s, t, m, ~f)]  # the other's seat, coins and role
        same_bid = values[:, None] == values  # [bid, bid]
        # The other's hand given the bids it made (Bayes' rule): at each of them it saw its
        # hand and the table below that bid.
        below = torch.where(values[:, None] > values, theirs_table[:, None, :], -1)  # [row, its bid, table]
        asked = policy(self._write(*others, hands[:, None], below[:, None]))  # [row, its hand, its bid, action]
        made = asked[..., self.bid0 : self.bid0 + b].diagonal(dim1=2, dim2=3)  # [row, its hand, its bid]
        likely = hand[r] * torch.where((table == 1)[:, None, :], made, 1.0).prod(2)
        mass = likely.sum(1, keepdim=True)
        # (``likely`` multiplies up to ``coins`` bids' chances: mass can be tiny yet not 0.)
        belief = torch.where(mass > 0, likely / torch.where(mass > 0, mass, 1.0), hand[r])  # [row, its hand]
        total = col(own, 1) + hands  # [row, its hand]
        # The reader's calls, on the last bid.
        ended = settled(r, 0, total, col(self._last(table), 1), 1)  # [row, its hand, call]
        q_out[r, self.call0 : self.call0 + len(CALLS)] = (belief[:, :, None] * ended).sum(1)
        # The reader's bids: the other answers with a higher bid (the reader decides again) or a call.
        after_mine = torch.where(same_bid, 0, table[:, None, :])  # [row, the reader's bid, table]
        swapped_after = torch.where(after_mine >= 0, 1 - after_mine, -1)
        answer = policy(self._write(*others, hands[:, None], swapped_after[:, None]))
        both = torch.where(same_bid, 1, after_mine[:, :, None, :])  # [row, the reader's bid, its bid, table]
        seen = self._write(*(col(x, 2) for x in (s, m, t, f)), col(own, 2), both)
        again = (answer[..., self.bid0 : self.bid0 + b] * value(seen)[:, None]).sum(3)  # [row, its hand, bid]
        ended = settled(r, 1, total[:, :, None], values, 2)  # [row, its hand, bid, call]
        q_out[r, self.bid0 : self.bid0 + b] = (belief[:, :, None] * (again + (calls(answer) * ended).sum(3))).sum(1)
        return q_out * self.legal(obs)


def round_model(rules: BidSpoofRules) -> RoundModel | None:
    """The declaration's hook: the round model of ``rules``, or ``None`` where it does not apply."""
    return RoundModel(rules) if covers(rules) else None


__all__ = ["RoundModel", "covers", "round_model"]
