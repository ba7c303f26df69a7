"""Spoof's batched env: ``num_envs`` games stepped at once (:mod:`hiddenhand.vector`).

    from hiddenhand.vector import vector_env
    envs = vector_env("spoof", num_envs=1024, matches=3, observation="markov")

Every configuration of ``spoof_v0`` is covered (equal or unequal starting counts, the game
or one round, any ``max_rounds``) with both observations, ``"full"`` and ``"markov"``,
exactly as the PettingZoo env gives them to the player to move (the layout is the
engine's, :class:`~hiddenhand.envs.spoof.ObservationLayout`); the rewards are the
engine's returns, and a game stopped by ``max_rounds`` ends in a truncation, as in the AEC
env. A round is four consecutive turns, as in the engine: the first bidder's hand, the
other's (hidden), then the two bids, so the two can be compared move for move
(``tests/test_vector_env.py`` does). Spoof has no chance.

As in Goofspiel's batched env (:mod:`hiddenhand.envs.goofspiel_vector`), one numba call
per step walks the games and mirrors the engine's mechanics
(:class:`~hiddenhand.envs.spoof.SpoofState`: ``current_player``, ``legal_actions``,
``apply``, ``_resolve_round``, ``_tensor``). Each game's position is its ``matches``,
who bids ``first``, this round's ``holds`` and ``bids`` (-1 until made), the number of
finished ``rounds`` and, for the full observation only, their ``history`` (first bidder,
both holds, both bids per round).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from hiddenhand.envs.spoof import ROUND_UTILITY, SpoofRules
from hiddenhand.vector import RulesVectorEnv

# Positions in the configuration vector the kernels read (numba treats these globals as constants).
(
    START_0,
    START_1,
    MAX_HOLD,
    MAX_TOTAL,
    ONE_ROUND,
    MAX_ROUNDS,
    BID_ACTION,
    SHOWN_ROUNDS,
    O_SEAT,
    O_MATCHES,
    O_FIRST,
    O_HOLD,
    O_BIDS,
    O_HISTORY,
    R_SIZE,
    R_FIRST,
    R_HOLDS,
    R_BIDS,
    CONFIG_SIZE,
) = range(19)
RIGHT, OPPONENT_RIGHT, NEITHER = ROUND_UTILITY["right"], ROUND_UTILITY["opponent_right"], ROUND_UTILITY["neither"]


def config(rules: SpoofRules) -> np.ndarray:
    """What the kernels need to know of ``rules``: counts, limits and the layout's offsets."""
    cfg = np.zeros(CONFIG_SIZE, dtype=np.int64)
    layout, block = rules.layout, rules.layout.round
    cfg[START_0], cfg[START_1] = rules.matches
    cfg[MAX_HOLD], cfg[MAX_TOTAL] = rules.max_hold, rules.max_total
    cfg[ONE_ROUND] = rules.objective == "round"
    cfg[MAX_ROUNDS], cfg[BID_ACTION], cfg[SHOWN_ROUNDS] = rules.max_rounds, rules.bid_action(0), layout.rounds
    for index, name in zip(
        (O_SEAT, O_MATCHES, O_FIRST, O_HOLD, O_BIDS, O_HISTORY), ("seat", "matches", "first", "hold", "bids", "history")
    ):
        cfg[index] = layout.offset(name)
    cfg[R_SIZE] = block.size
    for index, name in zip((R_FIRST, R_HOLDS, R_BIDS), ("first", "holds", "bids")):
        cfg[index] = block.offset(name)
    return cfg


@njit(cache=True)
def _start(i, cfg, matches, first, holds, bids, rounds, player):
    matches[i, 0], matches[i, 1] = cfg[START_0], cfg[START_1]
    first[i] = 0
    holds[i, :] = -1
    bids[i, :] = -1
    rounds[i] = 0
    player[i] = 0


@njit(cache=True)
def _mover(i, first, holds, bids):
    """``current_player``: the first bidder's hand, the other's, then the bids in the same order."""
    f = first[i]
    s = 1 - f
    if holds[i, f] < 0:
        return f
    if holds[i, s] < 0:
        return s
    return f if bids[i, f] < 0 else s


@njit(cache=True)
def _resolve(i, cfg, matches, first, holds, bids, rounds, history, rewards):
    """Both bids are in (``_resolve_round``). Returns 0 if the game goes on, 1 if it ended by
    its rules, 2 if ``max_rounds`` stopped it (its returns then written to ``rewards``)."""
    total = holds[i, 0] + holds[i, 1]
    winner = 0 if bids[i, 0] == total else 1 if bids[i, 1] == total else -1
    k = rounds[i]
    if k < history.shape[1]:
        history[i, k, 0] = first[i]
        history[i, k, 1], history[i, k, 2] = holds[i, 0], holds[i, 1]
        history[i, k, 3], history[i, k, 4] = bids[i, 0], bids[i, 1]
    rounds[i] = k + 1
    holds[i, :] = -1
    bids[i, :] = -1
    if cfg[ONE_ROUND]:
        for p in range(2):
            rewards[i, p] = NEITHER if winner < 0 else RIGHT if winner == p else OPPONENT_RIGHT
        return 1
    if winner >= 0:
        matches[i, winner] -= 1
        first[i] = winner
        if matches[i, winner] == 0:
            for p in range(2):
                rewards[i, p] = 1.0 if p == winner else -1.0
            return 1
    if rounds[i] >= cfg[MAX_ROUNDS]:
        return 2  # a draw: the returns are 0
    return 0


@njit(cache=True)
def _encode(i, cfg, matches, first, holds, bids, rounds, history, player, obs, mask):
    """The observation and mask of the player to move in game ``i`` (``_tensor``, ``legal_actions``)."""
    p = player[i]
    hold_size, bid_size = cfg[MAX_HOLD] + 1, cfg[MAX_TOTAL] + 1
    if holds[i, p] < 0:
        for k in range(matches[i, p] + 1):
            mask[i, k] = 1
    else:
        taken = bids[i, 1 - p]
        for b in range(matches[i, 0] + matches[i, 1] + 1):
            if b != taken:
                mask[i, cfg[BID_ACTION] + b] = 1
    obs[i, cfg[O_SEAT] + p] = 1.0
    obs[i, cfg[O_FIRST] + (first[i] - p + 2) % 2] = 1.0
    if holds[i, p] >= 0:
        obs[i, cfg[O_HOLD] + holds[i, p]] = 1.0
    for rel in range(2):
        q = (p + rel) % 2
        obs[i, cfg[O_MATCHES] + rel * hold_size + matches[i, q]] = 1.0
        if bids[i, q] >= 0:
            obs[i, cfg[O_BIDS] + rel * bid_size + bids[i, q]] = 1.0
    for k in range(min(rounds[i], cfg[SHOWN_ROUNDS])):
        block = cfg[O_HISTORY] + k * cfg[R_SIZE]
        obs[i, block + cfg[R_FIRST] + (history[i, k, 0] - p + 2) % 2] = 1.0
        for rel in range(2):
            q = (p + rel) % 2
            obs[i, block + cfg[R_HOLDS] + rel * hold_size + history[i, k, 1 + q]] = 1.0
            obs[i, block + cfg[R_BIDS] + rel * bid_size + history[i, k, 3 + q]] = 1.0


@njit(cache=True)
def _reset_all(cfg, matches, first, holds, bids, rounds, history, player, obs, mask):
    for i in range(len(player)):
        _start(i, cfg, matches, first, holds, bids, rounds, player)
        _encode(i, cfg, matches, first, holds, bids, rounds, history, player, obs, mask)


@njit(cache=True)
def _step_all(
    actions, cfg, matches, first, holds, bids, rounds, history, player, obs, mask, rewards, terminations, truncations
):
    """One move in every game (``SpoofState.apply``), then each game's next decision."""
    for i in range(len(actions)):
        p, a = player[i], actions[i]
        if a < cfg[BID_ACTION]:
            holds[i, p] = a
        else:
            bids[i, p] = a - cfg[BID_ACTION]
            if bids[i, 1 - p] >= 0:
                ended = _resolve(i, cfg, matches, first, holds, bids, rounds, history, rewards)
                if ended:
                    terminations[i] = ended == 1
                    truncations[i] = ended == 2
                    _start(i, cfg, matches, first, holds, bids, rounds, player)
        player[i] = _mover(i, first, holds, bids)
        _encode(i, cfg, matches, first, holds, bids, rounds, history, player, obs, mask)


class SpoofVectorEnv(RulesVectorEnv):
    """``num_envs`` Spoof games of ``spoof_v0``'s keyword arguments; see the module
    docstring and :mod:`hiddenhand.vector`."""

    rules_class = SpoofRules

    def __init__(self, num_envs: int, **game_kwargs: Any) -> None:
        super().__init__(num_envs, **game_kwargs)
        n = self.num_envs
        self._cfg = config(self.rules)
        self._matches = np.zeros((n, 2), dtype=np.int64)
        self._first = np.zeros(n, dtype=np.int64)
        self._holds = np.zeros((n, 2), dtype=np.int64)
        self._bids = np.zeros((n, 2), dtype=np.int64)
        self._rounds = np.zeros(n, dtype=np.int64)
        # The finished rounds the observation shows (none for the Markov one): first bidder, holds, bids.
        self._history = np.zeros((n, self.rules.layout.rounds, 5), dtype=np.int64)

    def _position(self) -> tuple[np.ndarray, ...]:
        return (self._cfg, self._matches, self._first, self._holds, self._bids, self._rounds, self._history)

    def _round_state(self) -> np.ndarray:
        """``SpoofState.round_state`` of every game."""
        size = max(self.rules.matches) + 1
        key = (self._first * size + self._matches[:, 0]) * size + self._matches[:, 1]
        return np.where((self._holds < 0).all(axis=1), key, -1)

    def _reset_games(self, uniforms: np.ndarray, obs: np.ndarray, mask: np.ndarray) -> None:
        _reset_all(*self._position(), self._player, obs, mask)

    def _step_games(self, actions, uniforms, obs, mask, rewards, terminations, truncations) -> None:
        _step_all(actions, *self._position(), self._player, obs, mask, rewards, terminations, truncations)


__all__ = ["SpoofVectorEnv"]
