"""Bid Spoof's batched env: ``num_envs`` games stepped at once (:mod:`hiddenhand.vector`).

    from hiddenhand.vector import vector_env
    envs = vector_env("bid_spoof", num_envs=1024, num_players=2, coins=3, observation="markov")

Every configuration of ``bid_spoof_v0`` is covered (2 to 8 players, any coins, both zero
calls, the game or one round, any ``max_rounds``) with both observations, ``"full"``
(the present round and the last finished one) and ``"markov"`` (the present round),
exactly as the PettingZoo env gives them to the player to move (the layout is the
engine's, :class:`~hiddenhand.envs.bid_spoof_observation.ObservationLayout`); the rewards
are the engine's returns, and a game stopped by ``max_rounds`` ends in a truncation, as in
the AEC env. Hands are consecutive hidden turns from the round's starter, as in the engine,
so the two can be compared move for move (``tests/test_vector_env.py`` does). Bid Spoof
has no chance.

As in Goofspiel's batched env (:mod:`hiddenhand.envs.goofspiel_vector`), one numba call
per step walks the games and mirrors the engine's mechanics
(:class:`~hiddenhand.envs.bid_spoof.BidSpoofState`: ``legal_actions``, ``apply``,
``_settle``) and its encoder (:mod:`hiddenhand.envs.bid_spoof_observation`). Each game's
position is every seat's ``coins``, the round's ``starter`` and ``direction`` (0 until
chosen), the ``holds`` (-1 until made), the bid table (``bidder`` of each bid value, -1 if
unmade; bids only go up, so it is the round's whole bidding), the ``last`` bid and its
bidder, who has bid this round, the number of finished ``rounds``, and the last finished
round as the full observation shows it (each seat's hand or "out", the call, the caller).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from hiddenhand.envs.bid_spoof import BidSpoofRules
from hiddenhand.envs.bid_spoof_observation import CALLS, DIRECTIONS
from hiddenhand.vector import RulesVectorEnv

# Positions in the configuration vector the kernels read (numba treats these globals as constants).
(
    PLAYERS,
    COINS,
    BEFORE_OWN_BID,
    ONE_ROUND,
    MAX_ROUNDS,
    MARKOV,
    A_BID,
    A_CALL,
    A_DIRECTION,
    O_SEAT,
    O_COINS,
    O_STARTER,
    O_DIRECTION,
    O_HOLD,
    O_BIDS,
    L_HANDS,
    L_CALL,
    L_CALLER,
    CONFIG_SIZE,
) = range(19)
CALL, CLIFF, SPOOF, ZERO = (CALLS.index(c) for c in ("call", "cliff", "spoof", "zero"))
CLOCKWISE, ANTICLOCKWISE = (DIRECTIONS.index(d) for d in ("clockwise", "anticlockwise"))


def config(rules: BidSpoofRules) -> np.ndarray:
    """What the kernels need to know of ``rules``: sizes, codes, action numbers, offsets."""
    cfg = np.zeros(CONFIG_SIZE, dtype=np.int64)
    layout, acts = rules.layout, rules.actions
    cfg[PLAYERS], cfg[COINS] = rules.num_players, rules.coins
    cfg[BEFORE_OWN_BID] = rules.zero_call == "before_own_bid"
    cfg[ONE_ROUND], cfg[MAX_ROUNDS], cfg[MARKOV] = rules.objective == "round", rules.max_rounds, rules.markov
    cfg[A_BID], cfg[A_CALL], cfg[A_DIRECTION] = acts.bid(1), acts.call(CALLS[0]), acts.direction(DIRECTIONS[0])
    for index, name in zip(
        (O_SEAT, O_COINS, O_STARTER, O_DIRECTION, O_HOLD, O_BIDS),
        ("seat", "coins", "starter", "direction", "hold", "bids"),
    ):
        cfg[index] = layout.offset(name)
    if not rules.markov:
        last = layout.offset("last_round")
        for index, name in zip((L_HANDS, L_CALL, L_CALLER), ("hands", "call", "caller")):
            cfg[index] = last + layout.last_round.offset(name)
    return cfg


@njit(cache=True)
def _round(i, cfg, holds, direction, bidder, last, has_bid, player, starter):
    """A new round (``_start_round``): no hands, no bids, no direction; the starter moves."""
    holds[i, :] = -1
    bidder[i, :] = -1
    last[i, :] = 0
    has_bid[i, :] = 0
    direction[i] = 0
    player[i] = starter[i]


@njit(cache=True)
def _start(i, cfg, coins, starter, direction, holds, bidder, last, has_bid, rounds, shown, player):
    """A new game in slot ``i`` (``BidSpoofState.__init__``): ``player_0`` starts."""
    coins[i, :] = cfg[COINS]
    starter[i] = 0
    rounds[i] = 0
    shown[i, :] = -1  # no finished round yet
    _round(i, cfg, holds, direction, bidder, last, has_bid, player, starter)


@njit(cache=True)
def _next_in(i, coins, seat, step):
    """The next seat after ``seat`` in direction ``step`` that is still in (``_seat_order``)."""
    n = coins.shape[1]
    for k in range(1, n + 1):
        q = (seat + step * k + n * n) % n
        if coins[i, q] > 0:
            return q
    return seat


@njit(cache=True)
def _active(i, coins):
    count = 0
    for c in coins[i]:
        count += c > 0
    return count


@njit(cache=True)
def _may_zero(i, cfg, p, starter, last, has_bid):
    if cfg[BEFORE_OWN_BID]:
        return not has_bid[i, p]
    return last[i, 0] == 0 and p == starter[i]


@njit(cache=True)
def _settle(i, cfg, call, caller, coins, starter, direction, holds, last, rounds, shown, rewards):
    """A call ends the round (``_settle``). Returns 0 if the game goes on, 1 if it ended by
    its rules, 2 if ``max_rounds`` stopped it (its returns then written to ``rewards``)."""
    n, cap = cfg[PLAYERS], cfg[COINS]
    count, in_play, playing = 0, 0, 0
    for p in range(n):
        if holds[i, p] >= 0:
            count += holds[i, p]
            playing += 1
        in_play += coins[i, p]
    change = np.zeros(n, dtype=np.int64)
    opener = caller
    if call == CALL:
        loser = caller if count >= last[i, 0] else last[i, 1]
        change[loser] = -1
        opener = loser
    elif call == CLIFF:
        if count == last[i, 0]:
            change[caller] = 1 if coins[i, caller] < cap else 0
        else:
            change[caller] = -1
    elif call == SPOOF:
        change[caller] = 0 if count == in_play else -1
    elif count == 0:  # a right zero call
        for p in range(n):
            if coins[i, p] > 0 and p != caller:
                change[p] = -1
    else:
        change[caller] = -1
    # The round as the full observation shows it next: hands (the last slot: out), call, caller.
    for p in range(n):
        shown[i, p] = holds[i, p] if holds[i, p] >= 0 else cap + 1
    shown[i, n], shown[i, n + 1] = call, caller
    rounds[i] += 1
    total_change = 0
    for p in range(n):
        coins[i, p] += change[p]
        total_change += change[p]
    if cfg[ONE_ROUND]:
        for p in range(n):
            if holds[i, p] >= 0:
                rewards[i, p] = change[p] - (total_change - change[p]) / (playing - 1)
        return 1
    if _active(i, coins) == 1:
        for p in range(n):
            rewards[i, p] = 1.0 if coins[i, p] > 0 else -1.0 / (n - 1)
        return 1
    starter[i] = opener if coins[i, opener] > 0 else _next_in(i, coins, opener, 1)
    if rounds[i] >= cfg[MAX_ROUNDS]:
        return 2  # a draw: the returns are 0
    return 0


@njit(cache=True)
def _encode(i, cfg, coins, starter, direction, holds, bidder, last, has_bid, shown, player, obs, mask):
    """The observation and mask of the player to move in game ``i`` (``_observation``,
    ``legal_actions``)."""
    n, c = cfg[PLAYERS], cfg[COINS]
    p = player[i]
    if holds[i, p] < 0:
        for k in range(coins[i, p] + 1):
            mask[i, k] = 1
    elif direction[i] == 0:
        mask[i, cfg[A_DIRECTION] + CLOCKWISE] = 1
        mask[i, cfg[A_DIRECTION] + ANTICLOCKWISE] = 1
    else:
        in_play = 0
        for q in range(n):
            in_play += coins[i, q]
        for b in range(last[i, 0] + 1, in_play + 1):
            mask[i, cfg[A_BID] + b - 1] = 1
        if last[i, 0] > 0:
            for call in (CALL, CLIFF, SPOOF):
                mask[i, cfg[A_CALL] + call] = 1
        if _may_zero(i, cfg, p, starter, last, has_bid):
            mask[i, cfg[A_CALL] + ZERO] = 1
    obs[i, cfg[O_SEAT] + p] = 1.0
    for q in range(n):
        rel = (q - p + n) % n
        obs[i, cfg[O_COINS] + rel * (c + 1) + coins[i, q]] = 1.0
    obs[i, cfg[O_STARTER] + (starter[i] - p + n) % n] = 1.0
    if direction[i] != 0:
        obs[i, cfg[O_DIRECTION] + (CLOCKWISE if direction[i] == 1 else ANTICLOCKWISE)] = 1.0
    if holds[i, p] >= 0:
        obs[i, cfg[O_HOLD] + holds[i, p]] = 1.0
    for b in range(n * c):
        if bidder[i, b] >= 0:
            obs[i, cfg[O_BIDS] + b * n + (bidder[i, b] - p + n) % n] = 1.0
    if not cfg[MARKOV] and shown[i, n] >= 0:
        for q in range(n):
            obs[i, cfg[L_HANDS] + ((q - p + n) % n) * (c + 2) + shown[i, q]] = 1.0
        obs[i, cfg[L_CALL] + shown[i, n]] = 1.0
        obs[i, cfg[L_CALLER] + (shown[i, n + 1] - p + n) % n] = 1.0


@njit(cache=True)
def _reset_all(cfg, coins, starter, direction, holds, bidder, last, has_bid, rounds, shown, player, obs, mask):
    for i in range(len(player)):
        _start(i, cfg, coins, starter, direction, holds, bidder, last, has_bid, rounds, shown, player)
        _encode(i, cfg, coins, starter, direction, holds, bidder, last, has_bid, shown, player, obs, mask)


@njit(cache=True)
def _step_all(
    actions,
    cfg,
    coins,
    starter,
    direction,
    holds,
    bidder,
    last,
    has_bid,
    rounds,
    shown,
    player,
    obs,
    mask,
    rewards,
    terminations,
    truncations,
):
    """One move in every game (``BidSpoofState.apply``), then each game's next decision."""
    for i in range(len(actions)):
        p, a = player[i], actions[i]
        if a < cfg[A_BID]:  # a hand; then the next hand due clockwise from the starter, or the starter
            holds[i, p] = a
            seat, due = starter[i], -1
            for _ in range(cfg[PLAYERS]):
                if holds[i, seat] < 0:
                    due = seat
                    break
                seat = _next_in(i, coins, seat, 1)
            player[i] = starter[i] if due < 0 else due
            if due < 0 and _active(i, coins) == 2:
                direction[i] = 1  # two players in: no direction to choose
        elif a >= cfg[A_DIRECTION]:
            direction[i] = 1 if a - cfg[A_DIRECTION] == CLOCKWISE else -1
        elif a < cfg[A_CALL]:
            bid = a - cfg[A_BID] + 1
            bidder[i, bid - 1] = p
            last[i, 0], last[i, 1] = bid, p
            has_bid[i, p] = 1
            player[i] = _next_in(i, coins, p, direction[i])
        else:
            ended = _settle(i, cfg, a - cfg[A_CALL], p, coins, starter, direction, holds, last, rounds, shown, rewards)
            if ended:
                terminations[i] = ended == 1
                truncations[i] = ended == 2
                _start(i, cfg, coins, starter, direction, holds, bidder, last, has_bid, rounds, shown, player)
            else:
                _round(i, cfg, holds, direction, bidder, last, has_bid, player, starter)
        _encode(i, cfg, coins, starter, direction, holds, bidder, last, has_bid, shown, player, obs, mask)


class BidSpoofVectorEnv(RulesVectorEnv):
    """``num_envs`` Bid Spoof games of ``bid_spoof_v0``'s keyword arguments; see the module
    docstring and :mod:`hiddenhand.vector`."""

    rules_class = BidSpoofRules

    def __init__(self, num_envs: int, **game_kwargs: Any) -> None:
        super().__init__(num_envs, **game_kwargs)
        n, players, coins = self.num_envs, self.rules.num_players, self.rules.coins
        self._cfg = config(self.rules)
        self._coins = np.zeros((n, players), dtype=np.int64)
        self._starter = np.zeros(n, dtype=np.int64)
        self._direction = np.zeros(n, dtype=np.int64)
        self._holds = np.zeros((n, players), dtype=np.int64)
        self._bidder = np.zeros((n, players * coins), dtype=np.int64)
        self._last = np.zeros((n, 2), dtype=np.int64)  # the last bid and its bidder (0: no bid yet)
        self._has_bid = np.zeros((n, players), dtype=np.int8)
        self._rounds = np.zeros(n, dtype=np.int64)
        self._shown = np.zeros((n, players + 2), dtype=np.int64)  # the last round: hands, call, caller

    def _position(self) -> tuple[np.ndarray, ...]:
        return (
            self._cfg,
            self._coins,
            self._starter,
            self._direction,
            self._holds,
            self._bidder,
            self._last,
            self._has_bid,
            self._rounds,
            self._shown,
        )

    def _round_state(self) -> np.ndarray:
        """``BidSpoofState.round_state`` of every game."""
        key = self._starter.copy()
        for p in range(self.num_players):
            key = key * (self.rules.coins + 1) + self._coins[:, p]
        return np.where((self._holds < 0).all(axis=1), key, -1)

    def _reset_games(self, uniforms: np.ndarray, obs: np.ndarray, mask: np.ndarray) -> None:
        _reset_all(*self._position(), self._player, obs, mask)

    def _step_games(self, actions, uniforms, obs, mask, rewards, terminations, truncations) -> None:
        _step_all(actions, *self._position(), self._player, obs, mask, rewards, terminations, truncations)


__all__ = ["BidSpoofVectorEnv"]
