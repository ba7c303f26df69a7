"""Card sets and interleaving patterns: the reduced states every Goofspiel solve and measure indexes.

Who wins a round depends only on the relative order of the two bids, so a pair of hands
reduces to its *interleaving pattern*: the sorted union of the two hands, each card marked
A-only, B-only or both (a tie). There are 321 patterns of two 4-card hands out of 13 cards,
instead of 715 squared hand pairs. :class:`Indexer` numbers the patterns and prize sets of
each level (hand size k) and builds the index tables the compiled kernels read;
:class:`Differences` adds the score differences a win/loss state carries; :class:`Sets`
numbers plain card sets for the measures over positions, which keep the hands themselves.

This module knows nothing of values or solutions: everything above it (kernels, storage,
solution classes, solves, measures) builds on it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from math import comb

import numpy as np

A_ONLY, B_ONLY, BOTH = 0, 1, 2


def level_patterns(k: int, num_cards: int) -> list[tuple[int, ...]]:
    """Every interleaving pattern of two k-card hands drawn from ``num_cards`` cards, sorted.

    A pattern lists the distinct cards of the two hands in increasing order, each marked
    ``A_ONLY``, ``B_ONLY`` or ``BOTH``; with ``t`` shared cards it is ``2k - t`` long, at
    most ``num_cards``.
    """
    out: list[tuple[int, ...]] = []
    for shared in range(k + 1):
        length = 2 * k - shared
        if length > num_cards:
            continue
        own = k - shared
        for both_at in itertools.combinations(range(length), shared):
            rest = [i for i in range(length) if i not in both_at]
            for a_at in itertools.combinations(rest, own):
                pattern = [B_ONLY] * length
                for i in both_at:
                    pattern[i] = BOTH
                for i in a_at:
                    pattern[i] = A_ONLY
                out.append(tuple(pattern))
    out.sort()
    return out


def pattern_of(hand_a: Iterable[int], hand_b: Iterable[int]) -> tuple[int, ...]:
    """The interleaving pattern of two hands of card values."""
    a, b = set(hand_a), set(hand_b)
    return tuple(BOTH if c in a and c in b else A_ONLY if c in a else B_ONLY for c in sorted(a | b))


def mirror_of(pattern: tuple[int, ...]) -> tuple[int, ...]:
    """The pattern seen from the other seat: A-only and B-only cards swapped."""
    return tuple(B_ONLY if s == A_ONLY else A_ONLY if s == B_ONLY else s for s in pattern)


def card_positions(pattern: tuple[int, ...]) -> tuple[list[int], list[int]]:
    """Where A's cards and B's cards sit in ``pattern`` (lowest first): A's i-th card is at ``[0][i]``."""
    a = [i for i, s in enumerate(pattern) if s != B_ONLY]
    b = [i for i, s in enumerate(pattern) if s != A_ONLY]
    return a, b


def child_pattern(pattern: tuple[int, ...], pa: int, pb: int) -> tuple[int, ...]:
    """The pattern after A plays the card at position ``pa`` and B the one at ``pb``."""
    symbols = list(pattern)
    if pa == pb:
        symbols[pa] = None
    else:
        symbols[pa] = None if symbols[pa] == A_ONLY else B_ONLY
        symbols[pb] = None if symbols[pb] == B_ONLY else A_ONLY
    return tuple(s for s in symbols if s is not None)


@dataclass
@dataclass
class Level:
    """Index tables of one level (hand size k) for the compiled kernel."""

    patterns: dict[tuple[int, ...], int]
    win: np.ndarray  # (patterns, k, k) int8: +1 when A's i-th card beats B's j-th
    child: np.ndarray  # (patterns, k, k) int32: pattern index one level down
    prize_values: np.ndarray  # (prize sets, k) float64
    prize_child: np.ndarray  # (prize sets, k) int32: prize-set index without that prize


class Indexer:
    """Pattern and prize-set indices of every level of an ``num_cards`` solve (built lazily)."""

    def __init__(self, num_cards: int) -> None:
        self.num_cards = num_cards
        self._levels: dict[int, Level] = {}
        self._patterns: dict[int, dict[tuple[int, ...], int]] = {}
        self._prizes: dict[int, dict[tuple[int, ...], int]] = {}
        self._mirrors: dict[int, np.ndarray] = {}
        self._rows: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def patterns(self, k: int) -> dict[tuple[int, ...], int]:
        if k not in self._patterns:
            self._patterns[k] = {p: i for i, p in enumerate(level_patterns(k, self.num_cards))}
        return self._patterns[k]

    def prizes(self, k: int) -> dict[tuple[int, ...], int]:
        if k not in self._prizes:
            sets = itertools.combinations(range(1, self.num_cards + 1), k)
            self._prizes[k] = {p: i for i, p in enumerate(sets)}
        return self._prizes[k]

    def shape(self, k: int) -> tuple[int, int]:
        return len(self.patterns(k)), comb(self.num_cards, k)

    def mirrors(self, k: int) -> np.ndarray:
        """For each pattern of level ``k``, the index of its mirror (A's and B's cards swapped)."""
        if k not in self._mirrors:
            patterns = self.patterns(k)
            self._mirrors[k] = np.array([patterns[mirror_of(p)] for p in patterns], dtype=np.int64)
        return self._mirrors[k]

    def halves(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(kept, copies): the patterns of level ``k`` that come first in their mirror pair
        (identical hands, their own mirror, among them), which a solve computes and a file
        stores, and the others, which are their mirrors' values seen from the other seat."""
        mirror, order = self.mirrors(k), np.arange(len(self.patterns(k)))
        return np.flatnonzero(order <= mirror), np.flatnonzero(order > mirror)

    def stored_rows(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """For each pattern of level ``k``: the row of a level that keeps only the
        :meth:`halves` kept patterns (in order) that holds it or its mirror, and +1 if that
        row is its own or -1 if it is the mirror's, whose values are this pattern's seen
        from the other seat (negated; under win/loss the difference reversed too)."""
        if k not in self._rows:
            kept, copies = self.halves(k)
            mirror = self.mirrors(k)
            row = np.empty(len(mirror), dtype=np.int64)
            row[kept] = np.arange(len(kept))
            row[copies] = row[mirror[copies]]
            sign = np.ones(len(mirror), dtype=np.int64)
            sign[copies] = -1
            self._rows[k] = row, sign
        return self._rows[k]

    def level(self, k: int) -> Level:
        if k in self._levels:
            return self._levels[k]
        patterns, below = self.patterns(k), self.patterns(k - 1)
        win = np.zeros((len(patterns), k, k), dtype=np.int8)
        child = np.zeros((len(patterns), k, k), dtype=np.int32)
        for pattern, p in patterns.items():
            a_pos, b_pos = card_positions(pattern)
            for i, pa in enumerate(a_pos):
                for j, pb in enumerate(b_pos):
                    win[p, i, j] = (pa > pb) - (pa < pb)
                    child[p, i, j] = below[child_pattern(pattern, pa, pb)]
        prizes, prizes_below = self.prizes(k), self.prizes(k - 1)
        values = np.array(list(prizes), dtype=np.float64).reshape(len(prizes), k)
        prize_child = np.array(
            [[prizes_below[s[:i] + s[i + 1 :]] for i in range(k)] for s in prizes], dtype=np.int32
        ).reshape(len(prizes), k)
        level = Level(patterns, win, child, values, prize_child)
        self._levels[k] = level
        return level

    def lps(self, k: int) -> int:
        """Matrix games solved at level k."""
        patterns, prize_sets = self.shape(k)
        return patterns * prize_sets * k


@dataclass(frozen=True)
class Differences:
    """Where each prize set's differences sit in a level's row of values, and which of them
    can happen.

    For prize set ``q`` (numbered as ``Indexer.prizes(k)``), the differences ``d`` from
    ``-radius[q]`` to ``radius[q]`` are stored at ``offset[q] + radius[q] + d``; a ``d`` with
    ``|d| > left[q]`` (the points still to be won) is decided and not stored. Within the
    radius, ``reachable`` marks the slots whose ``d`` is a signed sum of the prizes played
    (each won, lost or tied: +p, -p or 0); the others (a lead of 1 after prizes 2 and 4,
    say) cannot happen in any game, are never solved and hold NaN."""

    left: np.ndarray  # (prize sets,) int64: points still to be won
    radius: np.ndarray  # (prize sets,) int64: min(points played, points left)
    offset: np.ndarray  # (prize sets,) int64
    width: int
    reachable: np.ndarray  # (width,) bool

    @staticmethod
    def of(indexer: Indexer, k: int) -> Differences:
        n = indexer.num_cards
        total = n * (n + 1) // 2
        prizes = indexer.prizes(k)
        sets = np.array(list(prizes), dtype=np.int64).reshape(len(prizes), k)
        left = sets.sum(axis=1)
        radius = np.minimum(total - left, left)
        sizes = 2 * radius + 1
        offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        # Every signed sum of the prizes played, one row per prize set: column total + d.
        sums = np.zeros((len(sets), 2 * total + 1), dtype=bool)
        sums[:, total] = True
        for card in range(1, n + 1):
            played = ~(sets == card).any(axis=1)
            grown = sums[played].copy()
            grown[:, card:] |= sums[played, :-card]
            grown[:, :-card] |= sums[played, card:]
            sums[played] = grown
        set_of = np.repeat(np.arange(len(sets)), sizes)
        d = np.arange(int(sizes.sum())) - offset[set_of] - radius[set_of]
        return Differences(left, radius, offset, int(sizes.sum()), sums[set_of, total + d])


class Sets:
    """The card sets of an ``n``-card game by size: ``cards[k]`` (sets x k) lists each set's
    cards (0-based, increasing), ``masks[k]`` its bitmask, ``child[k][r, i]`` the number
    (at size k - 1) of set ``r`` without its ``i``-th card."""

    def __init__(self, n: int) -> None:
        self.n = n
        rank = np.zeros(1 << n, dtype=np.int64)
        self.cards, self.masks, self.child = [], [], []
        for k in range(n + 1):
            cards = np.array(list(itertools.combinations(range(n), k)), dtype=np.int64).reshape(comb(n, k), k)
            masks = (1 << cards).sum(axis=1)
            rank[masks] = np.arange(len(masks))
            self.cards.append(cards)
            self.masks.append(masks)
            child = masks[:, None] ^ (1 << cards)
            self.child.append(rank[child] if k else child)
