"""Goofspiel's batched env: ``num_envs`` games stepped at once (:mod:`hiddenhand.vector`).

    from hiddenhand.vector import vector_env
    envs = vector_env("goofspiel", num_envs=1024, num_cards=6, observation="markov")

Every configuration of ``goofspiel_v0`` is covered (2 to 6 players, every prize order and
scoring, hidden or revealed bids) with both observations, ``"full"`` and ``"markov"``,
exactly as the PettingZoo env gives them to the player to move (the layouts are the
engine's, :class:`~hiddenhand.envs.goofspiel_observation.ObservationLayout` and
:class:`~hiddenhand.envs.goofspiel_observation.MarkovLayout`); the rewards are the engine's returns.
The bids of a round are consecutive turns, player 0 first, as in the AEC env, so the two
can be compared move for move (``tests/test_vector_env.py`` does, on random games). The
prize deck is the chance: each prize is drawn uniformly from those left, from the env's
seeded generator; the last round plays itself, as in the engine.

Why compiled loops over games rather than numpy over the batch: a step is a handful of
branches per game (is the round over, is the game over, which prize comes next) that
array expressions would have to compute for every game and then select. One numba call
per step walks the games and mirrors the engine's own mechanics line for line
(:class:`~hiddenhand.envs.goofspiel.GoofspielState`: ``apply``, ``_turn_prize``,
``_resolve_round``, ``_next_prize``), which is also what makes the comparison with it easy
to read. The full observation is kept up to date per player as the engine keeps it (a few
writes per move); the Markov one is written from the position when asked.

Each game's position is a few small integer arrays: ``hands`` (games, players, cards),
``prizes`` left (games, cards), the ``prize`` on the table, this round's ``bids`` (card
indices, -1 before a seat has bid), ``points`` and the number of finished ``rounds``.
Cards are indices here (card ``c`` is ``c - 1``), as actions are.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from hiddenhand.envs.goofspiel import PRIZE_ORDERS, SCORINGS, GoofspielRules
from hiddenhand.vector import RulesVectorEnv

# Positions in the configuration vector the kernels read (numba treats these globals as constants).
(
    CARDS,
    PLAYERS,
    ORDER,
    SCORING,
    REVEAL,
    MARKOV,
    TOTAL,
    F_REVEAL,
    F_SEAT,
    F_PRIZE,
    F_HAND,
    F_TO_COME,
    F_POINTS,
    F_HISTORY,
    R_SIZE,
    R_PRIZE,
    R_OWN,
    R_WINNER,
    R_OTHERS,
    M_PRIZE,
    M_HAND,
    M_OTHERS,
    M_TO_COME,
    CONFIG_SIZE,
) = range(24)
RANDOM, ASCENDING, DESCENDING = (PRIZE_ORDERS.index(o) for o in ("random", "ascending", "descending"))
POINT_DIFFERENCE, WIN_LOSS, TOTAL_POINTS = (SCORINGS.index(s) for s in ("point_difference", "win_loss", "total_points"))


def config(rules: GoofspielRules) -> np.ndarray:
    """What the kernels need to know of ``rules``: sizes, codes and the layouts' offsets."""
    cfg = np.zeros(CONFIG_SIZE, dtype=np.int64)
    full, block, markov = rules.information_layout, rules.information_layout.round, rules.markov_layout
    cfg[CARDS], cfg[PLAYERS] = rules.num_cards, rules.num_players
    cfg[ORDER], cfg[SCORING] = PRIZE_ORDERS.index(rules.prize_order), SCORINGS.index(rules.scoring)
    cfg[REVEAL], cfg[MARKOV], cfg[TOTAL] = rules.reveal_bids, rules.markov, rules.total_prize
    for index, name in zip(
        (F_REVEAL, F_SEAT, F_PRIZE, F_HAND, F_TO_COME, F_POINTS, F_HISTORY),
        ("reveal", "seat", "prize", "hand", "prizes_to_come", "points", "history"),
    ):
        cfg[index] = full.offset(name)
    cfg[R_SIZE] = block.size
    for index, name in zip((R_PRIZE, R_OWN, R_WINNER, R_OTHERS), ("prize", "own_bid", "winner", "others")):
        cfg[index] = block.offset(name)
    for index, name in zip((M_PRIZE, M_HAND, M_OTHERS, M_TO_COME), ("prize", "hand", "others", "prizes_to_come")):
        cfg[index] = markov.offset(name)
    return cfg


@njit(cache=True)
def _start(i, u, cfg, hands, prizes, prize, bids, points, rounds, player, full):
    """A new game in slot ``i`` (``GoofspielState.__init__``), its first prize drawn with ``u``."""
    n, players = cfg[CARDS], cfg[PLAYERS]
    hands[i, :, :] = 1
    prizes[i, :] = 1
    prize[i] = -1
    bids[i, :] = -1
    points[i, :] = 0
    rounds[i] = 0
    if not cfg[MARKOV]:
        full[i, :, :] = 0.0
        for q in range(players):
            full[i, q, cfg[F_REVEAL]] = cfg[REVEAL]
            full[i, q, cfg[F_SEAT] + q] = 1.0
            for c in range(n):
                full[i, q, cfg[F_HAND] + c] = 1.0
                full[i, q, cfg[F_TO_COME] + c] = 1.0
    _advance(i, u, cfg, hands, prizes, prize, bids, points, rounds, player, full)


@njit(cache=True)
def _advance(i, u, cfg, hands, prizes, prize, bids, points, rounds, player, full):
    """After a round (or at the start): turn the next prize, drawn with ``u`` among those
    left when the order is random (``_next_prize``), and play the last round, which plays
    itself. Returns whether the game is over."""
    n, players = cfg[CARDS], cfg[PLAYERS]
    while True:
        left = 0
        for c in range(n):
            left += prizes[i, c]
        if left == 0:
            return True
        if cfg[ORDER] == RANDOM and left > 1:
            k = min(int(u * left), left - 1)  # uniform over the prizes left, in increasing order
            card = -1
            for c in range(n):
                if prizes[i, c]:
                    if k == 0:
                        card = c
                        break
                    k -= 1
        elif cfg[ORDER] == DESCENDING:
            card = n - 1
            while not prizes[i, card]:
                card -= 1
        else:
            card = 0
            while not prizes[i, card]:
                card += 1
        _turn(i, card, cfg, prizes, prize, rounds, full)
        if left > 1:
            player[i] = 0
            return False
        # The last prize: one card left in every hand, bid by itself.
        for q in range(players):
            for c in range(n):
                if hands[i, q, c]:
                    bids[i, q] = c
                    hands[i, q, c] = 0
                if not cfg[MARKOV]:
                    full[i, q, cfg[F_HAND] + c] = 0.0
        _resolve(i, cfg, prize, bids, points, rounds, full)


@njit(cache=True)
def _turn(i, card, cfg, prizes, prize, rounds, full):
    """Turn prize ``card`` (``_turn_prize``)."""
    prizes[i, card] = 0
    prize[i] = card
    if not cfg[MARKOV]:
        block = cfg[F_HISTORY] + rounds[i] * cfg[R_SIZE]
        for q in range(cfg[PLAYERS]):
            full[i, q, cfg[F_PRIZE] + card] = 1.0
            full[i, q, cfg[F_TO_COME] + card] = 0.0
            full[i, q, block + cfg[R_PRIZE] + card] = 1.0


@njit(cache=True)
def _resolve(i, cfg, prize, bids, points, rounds, full):
    """Every bid is in: the single highest takes the prize (``_resolve_round``)."""
    n, players = cfg[CARDS], cfg[PLAYERS]
    top, count, winner = -1, 0, -1
    for q in range(players):
        if bids[i, q] > top:
            top, count, winner = bids[i, q], 1, q
        elif bids[i, q] == top:
            count += 1
    if count > 1:
        winner = -1
    card = prize[i]
    if winner >= 0:
        points[i, winner] += card + 1
    if not cfg[MARKOV]:
        block = cfg[F_HISTORY] + rounds[i] * cfg[R_SIZE]
        for q in range(players):
            full[i, q, cfg[F_PRIZE] + card] = 0.0
            full[i, q, block + cfg[R_OWN] + bids[i, q]] = 1.0
            slot = players if winner < 0 else (winner - q + players) % players
            full[i, q, block + cfg[R_WINNER] + slot] = 1.0
            for p in range(players):
                rel = (p - q + players) % players
                full[i, q, cfg[F_POINTS] + rel] = points[i, p] / cfg[TOTAL]
                if cfg[REVEAL] and rel > 0:
                    full[i, q, block + cfg[R_OTHERS] + (rel - 1) * n + bids[i, p]] = 1.0
    rounds[i] += 1
    bids[i, :] = -1
    prize[i] = -1


@njit(cache=True)
def _pay(i, cfg, points, rewards):
    """The returns of a finished game (``scores_to_returns``)."""
    players = cfg[PLAYERS]
    if cfg[SCORING] == TOTAL_POINTS:
        for p in range(players):
            rewards[i, p] = points[i, p]
    elif cfg[SCORING] == POINT_DIFFERENCE:
        total = 0
        for p in range(players):
            total += points[i, p]
        for p in range(players):
            rewards[i, p] = points[i, p] - (total - points[i, p]) / (players - 1)
    else:
        best, winners = -1, 0
        for p in range(players):
            if points[i, p] > best:
                best, winners = points[i, p], 1
            elif points[i, p] == best:
                winners += 1
        if winners < players:
            for p in range(players):
                rewards[i, p] = 1.0 / winners if points[i, p] == best else -1.0 / (players - winners)


@njit(cache=True)
def _encode(i, cfg, hands, prizes, prize, bids, player, full, obs, mask):
    """The observation and mask of the player to move in game ``i`` (``observation_tensor``;
    Markov: the others' hands as the round began, a bid made this round still hidden)."""
    n, players = cfg[CARDS], cfg[PLAYERS]
    p = player[i]
    for c in range(n):
        mask[i, c] = hands[i, p, c]
    if not cfg[MARKOV]:
        obs[i, :] = full[i, p, :]
        return
    obs[i, cfg[M_PRIZE] + prize[i]] = 1.0
    for c in range(n):
        obs[i, cfg[M_HAND] + c] = hands[i, p, c]
        obs[i, cfg[M_TO_COME] + c] = prizes[i, c]
    for k in range(1, players):
        q = (p + k) % players
        row = cfg[M_OTHERS] + (k - 1) * n
        for c in range(n):
            obs[i, row + c] = hands[i, q, c]
        if bids[i, q] >= 0:
            obs[i, row + bids[i, q]] = 1.0


@njit(cache=True)
def _reset_all(uniforms, cfg, hands, prizes, prize, bids, points, rounds, player, full, obs, mask):
    for i in range(len(uniforms)):
        _start(i, uniforms[i], cfg, hands, prizes, prize, bids, points, rounds, player, full)
        _encode(i, cfg, hands, prizes, prize, bids, player, full, obs, mask)


@njit(cache=True)
def _step_all(
    actions, uniforms, cfg, hands, prizes, prize, bids, points, rounds, player, full, obs, mask, rewards, ended
):
    """One bid in every game (``GoofspielState.apply``), then each game's next decision. A
    step draws chance at most once per game (the next prize, or a new game's first), so one
    uniform per game serves it."""
    for i in range(len(actions)):
        p, a = player[i], actions[i]
        hands[i, p, a] = 0
        if not cfg[MARKOV]:
            full[i, p, cfg[F_HAND] + a] = 0.0
        bids[i, p] = a
        if p + 1 < cfg[PLAYERS]:
            player[i] = p + 1
        else:
            _resolve(i, cfg, prize, bids, points, rounds, full)
            if _advance(i, uniforms[i], cfg, hands, prizes, prize, bids, points, rounds, player, full):
                _pay(i, cfg, points, rewards)
                ended[i] = True
                _start(i, uniforms[i], cfg, hands, prizes, prize, bids, points, rounds, player, full)
        _encode(i, cfg, hands, prizes, prize, bids, player, full, obs, mask)


@njit(cache=True)
def _round_states(hands, prizes, prize, player):  # pragma: no cover - compiled
    """``GoofspielState.round_state`` of every game whose player 0 is to bid (a round's
    start), -1 elsewhere: each hand's cards, then the prizes to come, as bits, and the prize
    index above them."""
    n = prizes.shape[1]
    keys = np.full(len(player), -1, dtype=np.int64)
    for i in range(len(player)):
        if player[i] != 0:
            continue
        key, bit = np.int64(0), 0
        for p in range(hands.shape[1]):
            for c in range(n):
                key |= np.int64(hands[i, p, c] != 0) << bit
                bit += 1
        for c in range(n):
            key |= np.int64(prizes[i, c] != 0) << bit
            bit += 1
        keys[i] = key | np.int64(prize[i]) << bit
    return keys


class GoofspielVectorEnv(RulesVectorEnv):
    """``num_envs`` Goofspiel games of ``goofspiel_v0``'s keyword arguments; see the module
    docstring and :mod:`hiddenhand.vector`."""

    rules_class = GoofspielRules

    def __init__(self, num_envs: int, **game_kwargs: Any) -> None:
        super().__init__(num_envs, **game_kwargs)
        rules = self.rules
        shape = (self.num_envs, rules.num_players)
        self._cfg = config(rules)
        self._hands = np.zeros(shape + (rules.num_cards,), dtype=np.int8)
        self._prizes = np.zeros((self.num_envs, rules.num_cards), dtype=np.int8)
        self._prize = np.zeros(self.num_envs, dtype=np.int64)
        self._bids = np.zeros(shape, dtype=np.int64)
        self._points = np.zeros(shape, dtype=np.int64)
        self._rounds = np.zeros(self.num_envs, dtype=np.int64)
        # Every player's full observation, kept up to date as the engine keeps its own (none for Markov).
        self._full = np.zeros(shape + (0 if rules.markov else rules.information_layout.size,), dtype=np.float32)

    def _position(self) -> tuple[np.ndarray, ...]:
        return (
            self._cfg,
            self._hands,
            self._prizes,
            self._prize,
            self._bids,
            self._points,
            self._rounds,
            self._player,
            self._full,
        )

    def _round_state(self) -> np.ndarray:
        """``GoofspielState.round_state`` of every game."""
        if not self.rules.round_state_bits:
            return super()._round_state()
        return _round_states(self._hands, self._prizes, self._prize, self._player)

    def _banked(self) -> np.ndarray:
        """The points won so far as the return counts them (``scores_to_returns``), where the
        scoring adds them up; ``win_loss`` settles nothing before the end."""
        points = self._points.astype(np.float64)
        scoring = self.rules.scoring
        if scoring == "total_points":
            return points
        if scoring == "point_difference":
            total = points.sum(axis=1, keepdims=True)
            return points - (total - points) / (self.num_players - 1)
        return np.zeros_like(points)

    def _reset_games(self, uniforms: np.ndarray, obs: np.ndarray, mask: np.ndarray) -> None:
        _reset_all(uniforms, *self._position(), obs, mask)

    def _step_games(self, actions, uniforms, obs, mask, rewards, terminations, truncations) -> None:
        _step_all(actions, uniforms, *self._position(), obs, mask, rewards, terminations)


__all__ = ["GoofspielVectorEnv"]
