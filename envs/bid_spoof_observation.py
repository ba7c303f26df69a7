"""Bid Spoof's observation codec: the layouts of the observation and of the information state, and their encoders.

The rules engine (:mod:`hiddenhand.envs.bid_spoof`) keeps a game as the present round
(coins, starter, direction, hands, bids) and the record of every finished round; the
encoders here write what one player sees of it (the present round and, in the full
observation, the last finished round) and what they know (every finished round, as a
tensor and as the string that says the same). The calls that end a round and the
directions of bidding are named here, in the order the vectors list them, and the engine
numbers its actions in the same order. The vectors are documented in
:mod:`hiddenhand.envs.bid_spoof_v0`; the batched step (:mod:`hiddenhand.envs.bid_spoof_vector`)
writes the same layouts. Nothing here imports the engine: an encoder takes the state as an
argument.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from hiddenhand.layout import Layout, Views

if TYPE_CHECKING:
    from hiddenhand.envs.bid_spoof import BidSpoofRound, BidSpoofState

CALLS = ("call", "cliff", "spoof", "zero")
DIRECTIONS = ("clockwise", "anticlockwise")


class RoundLayout(Layout):
    """One finished round, seats relative to the observer: what the observation shows of
    the last round (each seat's hand, its last slot meaning "out"; the call; who called),
    then, when ``whole``, what only the information state keeps (starter, direction, bid
    table)."""

    def __init__(self, num_players: int, coins: int, whole: bool = True) -> None:
        n, c = num_players, coins
        shown = [("hands", (n, c + 2)), ("call", len(CALLS)), ("caller", n)]
        kept = [("starter", n), ("direction", len(DIRECTIONS)), ("bids", (n * c, n))]
        super().__init__(shown + kept if whole else shown)


class ObservationLayout(Layout):
    """A Bid Spoof observation (seats relative to the observer; see ``bid_spoof_v0``), and
    in ``last_round`` the layout of its piece of that name (``None`` for the Markov
    observation, ``last_round=False``, which is the present round alone). ``bids`` is the
    bid table: for each bid 1..N*C, one-hot of the seat that made it."""

    def __init__(self, num_players: int, coins: int, last_round: bool = True) -> None:
        n, c = num_players, coins
        self.num_players, self.coins = n, c
        self.last_round = RoundLayout(n, c, whole=False) if last_round else None
        present = [
            ("seat", n),
            ("coins", (n, c + 1)),
            ("starter", n),
            ("direction", len(DIRECTIONS)),
            ("hold", c + 1),
            ("bids", (n * c, n)),
        ]
        super().__init__(present + ([("last_round", self.last_round.size)] if last_round else []))


class InformationStateLayout(Layout):
    """The perfect-recall information state: the observation, then one whole round block
    (``round``, a :class:`RoundLayout`) per finished round, in order, for up to ``rounds``
    rounds (zeros for rounds not played)."""

    def __init__(self, observation: ObservationLayout, rounds: int) -> None:
        self.observation = observation
        self.round = RoundLayout(observation.num_players, observation.coins)
        super().__init__([("observation", observation.size), ("rounds", (rounds, self.round.size))])


def observation_tensor(state: BidSpoofState, player: int) -> np.ndarray:
    """``player``'s observation of ``state`` in the rules' layout (full or Markov)."""
    return _observation(state, state.rules.layout, player)


def _observation(state: BidSpoofState, layout: ObservationLayout, player: int) -> np.ndarray:
    """``player``'s observation in ``layout``: the present round, and the last finished
    one where the layout shows it (the full observation, not the Markov one)."""
    n = state.rules.num_players
    rel = lambda p: (p - player) % n  # noqa: E731
    obs, views = layout.zeros()
    views["seat"][player] = 1.0
    for p in range(n):
        views["coins"][rel(p), state.coins[p]] = 1.0
    if not state.is_terminal():
        views["starter"][rel(state.starter)] = 1.0
        if state.direction is not None:
            views["direction"][0 if state.direction == 1 else 1] = 1.0
        if state.holds[player] is not None:
            views["hold"][state.holds[player]] = 1.0
        _write_bids(views["bids"], state.bids, rel)
    if state.history and layout.last_round is not None:
        _write_round(layout.last_round.views(views["last_round"]), state.history[-1], rel)
    return obs


def information_state_tensor(state: BidSpoofState, player: int) -> np.ndarray:
    """The full observation, then every finished round in full (:class:`InformationStateLayout`)."""
    layout = state.rules.information_layout
    rel = lambda p: (p - player) % state.rules.num_players  # noqa: E731
    tensor, views = layout.zeros()
    views["observation"][:] = _observation(state, layout.observation, player)
    for k, record in enumerate(state.history):
        _write_round(layout.round.views(views["rounds"][k]), record, rel)
    return tensor


def information_state_string(state: BidSpoofState, player: int) -> str:
    """Every finished round in full, then the present round as ``player`` knows it: the
    coins, the starter, their own hand, the direction and the bids."""
    parts = [f"p{player}"]
    for r in state.history:
        bids = ",".join(f"p{p}:{b}" for p, b in r.bids)
        parts.append(f"start p{r.starter} dir {r.direction} holds {r.holds} bids {bids} {r.call} p{r.caller}")
    if not state.is_terminal():
        parts.append(f"coins {state.coins} start p{state.starter}")
        if state.holds[player] is not None:
            parts.append(f"hold {state.holds[player]}")
        # With two players in, the direction is set (clockwise) as the last hand goes in;
        # the observation shows that, so the string does too.
        if state.direction is not None:
            parts.append(f"dir {state.direction}")
        parts.append("bids " + ",".join(f"p{p}:{b}" for p, b in state.bids))
    return " | ".join(parts)


def _write_bids(table: np.ndarray, bids: Sequence[tuple[int, int]], rel: Callable[[int], int]) -> None:
    """A bid table's views: for each bid value, one-hot of the (relative) seat that bid it."""
    for bidder, bid in bids:
        table[bid - 1, rel(bidder)] = 1.0


def _write_round(views: Views, record: BidSpoofRound, rel: Callable[[int], int]) -> None:
    """One finished round into the views of a :class:`RoundLayout`: the part the observation
    shows, and the rest when the layout is the whole round."""
    for p, hold in enumerate(record.holds):
        views["hands"][rel(p), -1 if hold is None else hold] = 1.0
    views["call"][CALLS.index(record.call)] = 1.0
    views["caller"][rel(record.caller)] = 1.0
    if "starter" in views:
        views["starter"][rel(record.starter)] = 1.0
        views["direction"][0 if record.direction == 1 else 1] = 1.0
        _write_bids(views["bids"], record.bids, rel)
