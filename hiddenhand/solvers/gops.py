"""Exact equilibria of two-player Goofspiel by LP backward induction.

The game: two players, point-difference scoring, prizes in uniformly random order, bids
revealed after each round (``goofspiel_v0`` with ``num_players=2``, ``reveal_bids=True``,
the defaults). Before the next prize is turned, the state is (hand A, hand B, prizes
left); its value to A is the mean, over the prize turned, of the value of the matrix game
whose entry for bids (a, b) is ``sign(a - b) * prize`` plus the value of the state after.

State reduction. Who wins a round depends only on the relative order of the two bids, so
a pair of hands reduces to its *interleaving pattern*: the sorted union of the two hands,
each card marked A-only, B-only or both (a tie). There are 321 patterns of two 4-card
hands out of 13 cards, instead of 715 squared hand pairs; with the prize sets that makes
about 3.4e8 states and 2.7e9 matrix games at 13 cards. Each level (hand size k) is solved
from the one below it, so only two levels are needed while solving; every level is kept
for queries (memory-mapped from the checkpoint directory when one is used).

Swapping the seats mirrors a pattern (A-only and B-only cards swap) and negates its
values, so one pattern of each mirror pair is solved and the other copied
(:func:`mirror_level`): 1.34e9 matrix games at 13 cards. Files keep that half too.

The matrix games are solved in compiled code (:mod:`hiddenhand.solvers.matrix_game`:
saddle point first, then a dense simplex), in parallel over chunks of patterns on a pool
of threads (the kernel releases the GIL). Each game first tries the optimal basis of the
game before it with the same hands and upcard rank, which holds most of the time
(:func:`solve_patterns`). Together these took the 13-card solve from 26 minutes to 7 on
two cores.
Strategies are not stored: :meth:`GopsSolution.strategy` re-solves the one matrix game
of a state from the stored values of the level below, and
:meth:`GopsSolution.strategy_table` re-solves a whole level's in the same compiled kernels.
:mod:`hiddenhand.solvers.gops_certify` certifies the solution (its exact exploitability
and how far the stored values are from a fixed point), from the optimal basis of every
matrix game when the solve wrote them (``bases``: :mod:`hiddenhand.solvers.gops_bases`),
otherwise by re-solving every level once more.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from math import comb
from pathlib import Path

import numpy as np
from numba import njit
from tqdm.auto import tqdm

from hiddenhand.files import (
    atomic_write,
    check_writable,
    digest,
    load_npz,
    read_json,
    read_npz_meta,
    remove_stale_temps,
    save_npz,
)
from hiddenhand.solvers import gops_bases
from hiddenhand.solvers.gops_best_response import best_response_value, exploitability
from hiddenhand.solvers.matrix_game import solve_game, solve_into, value_and_basis, value_from_hint
from hiddenhand.validation import check_int, named

FORMAT_VERSION = 2
"""Of solution files: format 2 stores one pattern of each mirror pair (:meth:`Indexer.halves`),
format 1 (still read) every pattern."""
CHECKPOINT_FORMAT = 1
"""Of checkpoint directories, which hold whole levels (memory-mapped while solving)."""
A_ONLY, B_ONLY, BOTH = 0, 1, 2
DROPPED = 1e-12
"""Bid probabilities at or below this (after normalising) are not played: round-off of the simplex."""


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


def _positions(pattern: tuple[int, ...]) -> tuple[list[int], list[int]]:
    a = [i for i, s in enumerate(pattern) if s != B_ONLY]
    b = [i for i, s in enumerate(pattern) if s != A_ONLY]
    return a, b


def _child(pattern: tuple[int, ...], pa: int, pb: int) -> tuple[int, ...]:
    """The pattern after A plays the card at position ``pa`` and B the one at ``pb``."""
    symbols = list(pattern)
    if pa == pb:
        symbols[pa] = None
    else:
        symbols[pa] = None if symbols[pa] == A_ONLY else B_ONLY
        symbols[pb] = None if symbols[pb] == B_ONLY else A_ONLY
    return tuple(s for s in symbols if s is not None)


@dataclass
class _Level:
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
        self._levels: dict[int, _Level] = {}
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

    def level(self, k: int) -> _Level:
        if k in self._levels:
            return self._levels[k]
        patterns, below = self.patterns(k), self.patterns(k - 1)
        win = np.zeros((len(patterns), k, k), dtype=np.int8)
        child = np.zeros((len(patterns), k, k), dtype=np.int32)
        for pattern, p in patterns.items():
            a_pos, b_pos = _positions(pattern)
            for i, pa in enumerate(a_pos):
                for j, pb in enumerate(b_pos):
                    win[p, i, j] = (pa > pb) - (pa < pb)
                    child[p, i, j] = below[_child(pattern, pa, pb)]
        prizes, prizes_below = self.prizes(k), self.prizes(k - 1)
        values = np.array(list(prizes), dtype=np.float64).reshape(len(prizes), k)
        prize_child = np.array(
            [[prizes_below[s[:i] + s[i + 1 :]] for i in range(k)] for s in prizes], dtype=np.int32
        ).reshape(len(prizes), k)
        level = _Level(patterns, win, child, values, prize_child)
        self._levels[k] = level
        return level

    def lps(self, k: int) -> int:
        """Matrix games solved at level k."""
        patterns, prize_sets = self.shape(k)
        return patterns * prize_sets * k


# The kernels are not cached: numba's cache would not notice a change in matrix_game.py.
# Each is serial and GIL-free over patterns ``start:stop`` of one level, with its own
# scratch arrays, so that :func:`run_level` can run chunks of patterns on a pool of threads.


@njit(nogil=True)
def fill_matrix(m, win, child, below, p, prize, rest):
    """The matrix game of pattern ``p`` once ``prize`` is turned, with ``rest`` (the index
    of the prizes left) and ``below`` the values of the level below, into ``m``: A's bid by
    rank (rows) against B's (columns)."""
    k = m.shape[0]
    for i in range(k):
        for j in range(k):
            m[i, j] = win[p, i, j] * prize + below[child[p, i, j], rest]


@njit(nogil=True)
def as_played(x):
    """The mixed bid the equilibrium agent plays, from the simplex's ``x`` (in place):
    round-off clipped to 0, normalised, then probabilities up to :data:`DROPPED` removed
    (not renormalised), as :meth:`GopsSolution.strategy` reports them."""
    total = 0.0
    for i in range(x.size):
        x[i] = max(x[i], 0.0)
        total += x[i]
    for i in range(x.size):
        x[i] /= total
        if x[i] <= DROPPED:
            x[i] = 0.0


@njit(nogil=True)
def scratch(k):
    """(matrix, tableau, basis, x, y): the working arrays of :func:`solve_into` for k x k games."""
    return np.empty((k, k)), np.empty((k + 1, 2 * k + 1)), np.empty(k, dtype=np.int64), np.empty(k), np.empty(k)


@njit(nogil=True)
def solve_patterns(todo, win, child, prize_values, prize_child, below, out, bases, warm, start, stop):
    """Values of patterns ``todo[start:stop]`` of one level, for every prize set, into
    ``out``. When ``bases`` is not empty, each matrix game's optimal basis as the simplex
    finds it (:func:`~hiddenhand.solvers.matrix_game.value_and_basis`) goes into
    ``bases[p, q, u]``; otherwise, when ``warm``, each game first tries the basis of the
    game before it with the same hands and upcard rank
    (:func:`~hiddenhand.solvers.matrix_game.value_from_hint`), half the cost when it holds.
    The hints restart with each pattern, so a pattern's values do not depend on how the
    level is cut into chunks."""
    k = win.shape[1]
    m, tableau, basis, x, _ = scratch(k)
    lu, w, z, at = np.empty((k, k)), np.empty(k), np.empty(k), np.empty(3 * k, dtype=np.int64)
    hints = np.zeros(k, dtype=np.int64)
    keep = bases.shape[0] > 0
    for r in range(start, stop):
        p = todo[r]
        hints[:] = 0
        for q in range(prize_values.shape[0]):
            total = 0.0
            for u in range(k):
                fill_matrix(m, win, child, below, p, prize_values[q, u], prize_child[q, u])
                if warm and not keep:
                    value, hints[u] = value_from_hint(m, hints[u], tableau, basis, x, lu, w, z, at)
                else:
                    value, mask = value_and_basis(m, tableau, basis)
                    if keep:
                        bases[p, q, u] = mask
                total += value
            out[p, q] = total / k


@njit(nogil=True)
def _strategy_level(win, child, prize_values, prize_child, below, out, start, stop):
    """A's equilibrium bids as played (:func:`as_played`) at patterns ``start:stop`` of one
    level, into ``out[p, q, u]`` (see :meth:`GopsSolution.strategy_table`)."""
    k = win.shape[1]
    m, tableau, basis, x, y = scratch(k)
    for p in range(start, stop):
        for q in range(prize_values.shape[0]):
            for u in range(k):
                fill_matrix(m, win, child, below, p, prize_values[q, u], prize_child[q, u])
                solve_into(m, tableau, basis, x, y)
                as_played(x)
                out[p, q, u] = x


def mirror_level(indexer: Indexer, k: int, out: np.ndarray, bases: np.ndarray) -> None:
    """Complete level ``k`` of a solve that computed only the patterns
    :meth:`Indexer.halves` keeps. Swapping the seats mirrors the pattern and turns each
    matrix game ``M`` into ``-M.T`` (exactly, since the level below is antisymmetric too),
    so a mirror's value is the negated value, and its optimal basis is the same one with the
    roles of rows and columns swapped (the low ``k`` bits of a mask are rows, the next ``k``
    columns: :func:`~hiddenhand.solvers.matrix_game.value_and_basis`). Identical hands
    are their own mirror, a symmetric game worth exactly 0; the simplex's round-off there
    is cleared."""
    kept, copies = indexer.halves(k)
    mirror = indexer.mirrors(k)
    out[copies] = -out[mirror[copies]]
    out[kept[mirror[kept] == kept]] = 0.0
    if bases.shape[0]:
        low = np.uint32((1 << k) - 1)
        found = bases[mirror[copies]]
        bases[copies] = ((found >> np.uint32(k)) & low) | ((found & low) << np.uint32(k))


def run_level(pool: ThreadPoolExecutor, workers: int, patterns: int, work, bar) -> None:
    """Run ``work(start, stop)``, a GIL-free kernel over patterns ``start:stop`` of a level,
    on ``pool`` in about 50 chunks per worker (small enough to balance the load, large
    enough to keep the overhead of a task negligible); ``bar`` advances by what each
    chunk returns."""
    chunk = max(1, patterns // (50 * workers))
    jobs = [pool.submit(work, a, min(patterns, a + chunk)) for a in range(0, patterns, chunk)]
    for job in as_completed(jobs):
        bar.update(job.result())


def check_workers(workers: int | None) -> int:
    """Threads for the compiled kernels: ``workers``, checked, or every core."""
    return check_int("workers", workers, 1, 256) if workers is not None else os.cpu_count() or 1


class GopsSolution:
    """Values of every state of an ``num_cards`` Goofspiel, level by level; strategies on demand."""

    scoring = "point_difference"
    """The scoring this solution's values are in (:class:`~hiddenhand.solvers.gops_winloss.WinLossSolution`
    holds ``"win_loss"``); saved with the file and checkpoints, so that neither is read as the other."""

    def __init__(
        self, num_cards: int, levels: Sequence[np.ndarray], level_seconds: dict[int, float] | None = None
    ) -> None:
        self.num_cards = num_cards
        self.levels = list(levels)
        self.indexer = Indexer(num_cards)
        self.level_seconds = dict(level_seconds or {})
        """Wall-clock seconds each level took in the solve that made this object (index
        tables included); levels resumed from a checkpoint are absent."""
        self._strategy_by_rank = functools.lru_cache(maxsize=200_000)(self._strategy_by_rank)

    # ------------------------------------------------------------------ queries
    def _check(self, hand_a, hand_b, prizes) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        n = self.num_cards
        sets = []
        for name, cards in (("hand_a", hand_a), ("hand_b", hand_b), ("prizes", prizes)):
            cards = tuple(sorted(int(c) for c in cards))
            if len(set(cards)) != len(cards) or any(not 1 <= c <= n for c in cards):
                raise ValueError(f"{name}={list(cards)} must be distinct cards from 1 to {n}")
            sets.append(cards)
        if not len(sets[0]) == len(sets[1]) == len(sets[2]):
            raise ValueError(
                f"hands and prizes must have equal sizes; got {len(sets[0])}, {len(sets[1])} and {len(sets[2])}"
            )
        return sets[0], sets[1], sets[2]

    def level_shape(self, k: int) -> tuple[int, ...]:
        """The shape of level ``k``'s values: (patterns, prize sets)."""
        return self.indexer.shape(k)

    def value(self, hand_a: Iterable[int], hand_b: Iterable[int], prizes: Iterable[int]) -> float:
        """A's expected point difference from here on, before the next prize is turned."""
        a, b, p = self._check(hand_a, hand_b, prizes)
        k = len(a)
        return float(self.levels[k][self.indexer.patterns(k)[pattern_of(a, b)], self.indexer.prizes(k)[p]])

    def strategy(
        self, hand_a: Iterable[int], hand_b: Iterable[int], prizes: Iterable[int], upcard: int
    ) -> tuple[dict[int, float], dict[int, float]]:
        """The equilibrium mixed bids of A and of B once ``upcard`` is turned, as ``{card: probability}``."""
        a, b, p = self._check(hand_a, hand_b, prizes)
        if upcard not in p:
            raise ValueError(f"upcard={upcard} is not among the prizes {list(p)}")
        x, y = self._strategy_by_rank(pattern_of(a, b), p, upcard)
        return _distribution(a, x), _distribution(b, y)

    def _strategy_by_rank(self, pattern: tuple[int, ...], prizes: tuple[int, ...], upcard: int):
        """Both players' equilibrium bids by the rank of the card in their hand: the same
        for every pair of hands with this interleaving pattern, hence cached by it (per
        solution, in ``__init__``)."""
        a_pos, b_pos = _positions(pattern)
        k = len(a_pos)
        rest = tuple(c for c in prizes if c != upcard)
        below, prize_index = self.indexer.patterns(k - 1), self.indexer.prizes(k - 1)[rest]
        values = self.levels[k - 1]
        m = np.empty((k, k))
        for i, pa in enumerate(a_pos):
            for j, pb in enumerate(b_pos):
                m[i, j] = ((pa > pb) - (pa < pb)) * upcard + values[below[_child(pattern, pa, pb)], prize_index]
        _, x, y = solve_game(m)
        return x, y

    def strategy_table(self, k: int, *, workers: int | None = None, progress: bool = False) -> np.ndarray:
        """A's equilibrium bids at every position of level ``k`` (hands of ``k`` cards), in
        bulk: ``table[p, q, u, i]`` (float64) is the probability that A bids the ``i``-th
        lowest card of its hand when

        - the two hands have the interleaving pattern ``p``, numbered as
          ``indexer.patterns(k)`` numbers them (:func:`pattern_of` of A's hand and B's, in
          :func:`level_patterns` order);
        - the prizes left (the upcard included) are the set ``q``, numbered as
          ``indexer.prizes(k)`` numbers the sorted tuples (``itertools.combinations``
          order);
        - the upcard is the ``u``-th lowest of those prizes.

        Each row is what :meth:`strategy` gives for A (``[0]``) at such a position, by rank
        instead of by card: the same kernel and the same simplex, so the same ties broken
        the same way; it is also what :class:`~hiddenhand.agents.GopsEquilibriumAgent` plays
        in either seat, seen as A. Rows sum to 1 up to the dropped round-off
        (:data:`DROPPED`).

        Size: ``patterns x C(n, k) x k x k`` float64. The largest level takes 9 MB at 8
        cards (k = 5), 320 MB at 10 (k = 6), 11 GB at 12 and 77 GB at 13 (k = 8); compute
        it once per level and keep it. Time: about what solving the level took (4.5 s for
        the largest at 10 cards, on two cores).
        """
        k = check_int("k", k, 1, self.num_cards)
        workers = check_workers(workers)
        level = self.indexer.level(k)
        patterns, prize_sets = self.indexer.shape(k)
        table = np.empty((patterns, prize_sets, k, k))
        below = np.ascontiguousarray(self.levels[k - 1])

        def run(start: int, stop: int) -> int:
            _strategy_level(level.win, level.child, level.prize_values, level.prize_child, below, table, start, stop)
            return (stop - start) * prize_sets * k

        bar = tqdm(total=self.indexer.lps(k), unit="LP", unit_scale=True, disable=not progress, desc=f"level {k}")
        with bar, ThreadPoolExecutor(max_workers=workers) as pool:
            run_level(pool, workers, patterns, run, bar)
        return table

    def first_move_table(self) -> np.ndarray:
        """A's first-move probabilities: rows bids 1..n, columns upcards 1..n, as published."""
        n = self.num_cards
        full = range(1, n + 1)
        table = np.zeros((n, n))
        for upcard in full:
            mine, _ = self.strategy(full, full, full, upcard)
            for card, prob in mine.items():
                table[card - 1, upcard - 1] = prob
        return table

    # ------------------------------------------------------------------ files
    def save(self, path: str | os.PathLike) -> Path:
        """Write every level to one ``.npz`` file, atomically, with a checksum over the file
        (:func:`hiddenhand.files.save_npz`) and one per level. Each level keeps one pattern
        of each mirror pair (format 2): the other is its negation, and the file is half as
        large (1.35 GB at 13 cards)."""
        path = check_writable(path, "Goofspiel solution file")
        stored = [np.ascontiguousarray(self._file_rows(k, level)) for k, level in enumerate(self.levels)]
        sums = [digest(level) for level in stored]
        meta = {"format": FORMAT_VERSION, "num_cards": self.num_cards, "scoring": self.scoring, "sha256": sums}
        return save_npz(path, meta, {f"level_{k}": level for k, level in enumerate(stored)})

    def _file_rows(self, k: int, level: np.ndarray) -> np.ndarray:
        """The rows of level ``k`` that a file keeps (format 2)."""
        return level[self.indexer.halves(k)[0]]

    def _from_file(self, k: int, level: np.ndarray, file_format: int, path) -> np.ndarray:
        """Level ``k`` as this object holds it, from a file of ``file_format``."""
        return self._unfold(k, level, path) if file_format == FORMAT_VERSION else level

    def _unfold(self, k: int, stored: np.ndarray, path) -> np.ndarray:
        """Level ``k`` whole from the rows a format-2 file keeps."""
        shape = (len(self.indexer.halves(k)[0]), *self.level_shape(k)[1:])
        if stored.shape != shape:
            raise ValueError(f"{path}: level {k} has shape {stored.shape}, expected {shape}")
        row, sign = self.indexer.stored_rows(k)
        return sign[:, None] * stored[row]  # a mirror's values are its twin's, negated

    @classmethod
    def load(cls, path: str | os.PathLike, num_cards: int | None = None) -> GopsSolution:
        """Read a file written by :meth:`save`; a truncated, corrupt or mismatched file is
        reported as such (``ValueError`` naming it), and so is one without its checksum, except
        a format-1 file from before whole-file checksums, verified by its per-level ones. A
        file's ``scoring`` (absent before win/loss solutions: point difference) picks the class
        it is read as."""
        meta, arrays = load_npz(path, "Goofspiel solution file", ("format", "num_cards"), legacy=_level_sums)
        if meta["format"] not in (1, FORMAT_VERSION):
            raise ValueError(f"{path} has format {meta['format']!r}, this version reads 1 and {FORMAT_VERSION}")
        n = meta["num_cards"]
        if not isinstance(n, int) or not 1 <= n <= 13:
            raise ValueError(f"{path} is not a Goofspiel solution file: num_cards={n!r}")
        missing = [f"level_{k}" for k in range(n + 1) if f"level_{k}" not in arrays]
        if missing:
            raise ValueError(f"{path} is not a complete Goofspiel solution file: it lacks {', '.join(missing)}")
        if num_cards is not None and n != num_cards:
            raise ValueError(f"{path} solves {n} cards, not {num_cards}")
        kind = solution_class(meta.get("scoring", GopsSolution.scoring), f"{path}'s scoring")
        if not issubclass(kind, cls):
            raise ValueError(f"{path} holds a {kind.scoring} solution, not a {cls.scoring} one")
        solution = kind(n, [arrays[f"level_{k}"] for k in range(n + 1)])
        solution.levels = [
            solution._from_file(k, level, meta["format"], path) for k, level in enumerate(solution.levels)
        ]
        for k, level in enumerate(solution.levels):
            if level.shape != solution.level_shape(k):
                raise ValueError(f"{path}: level {k} has shape {level.shape}, expected {solution.level_shape(k)}")
        return solution


def solution_class(scoring: str, what: str = "scoring") -> type[GopsSolution]:
    """The solution class of a scoring: :class:`GopsSolution` for point difference,
    :class:`~hiddenhand.solvers.gops_winloss.WinLossSolution` for win/loss."""
    if scoring == GopsSolution.scoring:
        return GopsSolution
    if scoring == "win_loss":
        from hiddenhand.solvers.gops_winloss import WinLossSolution  # it builds on this module

        return WinLossSolution
    raise ValueError(f"{what}={scoring!r}: the exact solver covers 'point_difference' and 'win_loss'")


def _level_sums(meta: dict, arrays: dict) -> bool | None:
    """Whether a solution file from before whole-file checksums matches its per-level sha256
    list (None: it is not such a file, so nothing verifies it). Only format 1 without a
    ``scoring`` was written so: format 2 and win/loss files came after whole-file checksums,
    and one of them without its checksum is damaged."""
    sums = meta.get("sha256")
    if meta.get("format") != 1 or "scoring" in meta or not isinstance(sums, list):
        return None
    names = [f"level_{k}" for k in range(len(sums))]
    return set(names) == set(arrays) and all(digest(arrays[name]) == s for name, s in zip(names, sums))


def _distribution(cards: Sequence[int], probs: np.ndarray) -> dict[int, float]:
    probs = probs.copy()
    as_played(probs)
    return {int(c): float(p) for c, p in zip(cards, probs) if p > 0.0}


MANIFEST = "manifest.json"
CHECKPOINT_FILES = [MANIFEST] + [f"level_{k:02d}.npy" for k in range(1, 14)]
"""Every file a checkpoint directory holds (atomic_write's stale temporaries of these are removed on resume)."""


def _level_file(checkpoint: Path, k: int) -> Path:
    return checkpoint / f"level_{k:02d}.npy"


def _read_manifest(checkpoint: Path) -> dict:
    """The manifest (format, num_cards, sha256 per level) or a ``ValueError`` naming it."""
    path = checkpoint / MANIFEST
    try:
        manifest = read_json(path, "Goofspiel checkpoint manifest", required=("format", "num_cards", "sha256"))
        if not isinstance(manifest["sha256"], dict):
            raise ValueError(f"{path} is corrupt: its 'sha256' is not an object")
    except (ValueError, OSError) as err:  # OSError: unreadable (a disk error, or no permission)
        reason = str(err) if isinstance(err, ValueError) else f"{path} cannot be read ({err.strerror or err})"
        raise ValueError(f"{reason}; delete it to solve from the start") from None
    return manifest


def open_checkpoint(
    checkpoint: str | os.PathLike | None, shape, num_cards: int, scoring: str = GopsSolution.scoring
) -> tuple[Path | None, list[np.ndarray]]:
    """The checkpoint directory (checked writable and created; None without one) and the
    levels a solve starts from: level 0, then those completed in the directory (memory-mapped),
    in order, stopping at the first missing or damaged one (``shape(k)``: level k's expected
    shape). First removes the temporary files of writes killed midway (a kill -9 leaves
    them; each is up to a level's size)."""
    if checkpoint is None:
        return None, [np.zeros((1, 1))]
    folder = check_writable(checkpoint, "checkpoint directory", kind="dir")
    folder.mkdir(parents=True, exist_ok=True)
    return folder, _completed_levels(folder, shape, num_cards, scoring)


def _completed_levels(checkpoint: Path, shape, num_cards: int, scoring: str) -> list[np.ndarray]:
    remove_stale_temps(checkpoint, CHECKPOINT_FILES)
    for k in range(1, num_cards + 1):  # else writing the level would fail, after it was solved
        if _level_file(checkpoint, k).exists() and not _level_file(checkpoint, k).is_file():
            raise ValueError(_damaged(checkpoint, k, "is not a file"))
    if not (checkpoint / MANIFEST).exists():
        return [np.zeros((1, 1))]
    manifest = _read_manifest(checkpoint)
    found = manifest.get("scoring", GopsSolution.scoring)
    if manifest["num_cards"] != num_cards or manifest["format"] != CHECKPOINT_FORMAT or found != scoring:
        raise ValueError(f"checkpoint {checkpoint} belongs to another solve: {manifest}")
    levels = [np.zeros((1, 1))]
    for k in range(1, num_cards + 1):
        expected = manifest["sha256"].get(str(k))
        if expected is None:  # the solve stopped before this level was recorded: resume here
            break
        levels.append(_recorded_level(checkpoint, k, shape(k), expected))
    return levels


def _recorded_level(checkpoint: Path, k: int, shape, expected: str) -> np.ndarray:
    """Level ``k``, which the manifest records, memory-mapped. Levels are written atomically
    and recorded after they are written, so one that is missing, unreadable, of the wrong
    shape or failing its checksum was damaged afterwards: a ``ValueError`` says so."""
    file = _level_file(checkpoint, k)
    if not file.exists():
        raise ValueError(_damaged(checkpoint, k, "is missing"))
    try:
        level = np.load(file, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as err:
        reason = " ".join(str(err).split()) or type(err).__name__
        raise ValueError(_damaged(checkpoint, k, f"is truncated or not a level ({reason})")) from None
    if level.shape != tuple(shape):
        raise ValueError(_damaged(checkpoint, k, f"has shape {level.shape}, not {tuple(shape)}"))
    if digest(level) != expected:
        raise ValueError(_damaged(checkpoint, k, f"fails the checksum recorded in {MANIFEST}"))
    return level


def _damaged(checkpoint: Path, k: int, fault: str) -> str:
    """One line: which level file of ``checkpoint`` is damaged, and the two ways on."""
    file = _level_file(checkpoint, k)
    delete = f"delete {file.name} and " if os.path.lexists(file) else ""
    return (
        f"checkpoint {checkpoint} is damaged: {file.name} {fault}; delete the directory to solve from the start, "
        f"or {delete}take levels {k} and above out of its {MANIFEST} to solve again from level {k}"
    )


def save_level(
    checkpoint: Path, k: int, level: np.ndarray, num_cards: int, scoring: str = GopsSolution.scoring
) -> np.ndarray:
    """Write level k and record it in the manifest (both atomically); return it memory-mapped."""
    file = _level_file(checkpoint, k)
    with atomic_write(file) as handle:
        np.save(handle, level)
    manifest = (
        _read_manifest(checkpoint)
        if (checkpoint / MANIFEST).exists()
        else {"format": CHECKPOINT_FORMAT, "num_cards": num_cards, "scoring": scoring, "sha256": {}}
    )
    manifest["sha256"][str(k)] = digest(level)
    with atomic_write(checkpoint / MANIFEST, "w") as handle:
        json.dump(manifest, handle, indent=1)
    return np.load(file, mmap_mode="r")


def solve(
    num_cards: int,
    *,
    workers: int | None = None,
    progress: bool = True,
    checkpoint: str | os.PathLike | None = None,
    bases: str | os.PathLike | None = None,
    ray: bool = False,
    address: str | None = None,
    scoring: str = "point_difference",
    shortcuts: bool = True,
) -> GopsSolution:
    """Solve ``num_cards`` Goofspiel exactly; see the module docstring.

    ``workers``: threads running the compiled kernel, GIL-free (default: every core).
    ``checkpoint``: a directory where each completed level is written (atomically); a later
    call with the same directory resumes after the last completed level, and finished levels
    are memory-mapped from it rather than held in memory. It is checked writable before any
    work (hours of it, at 13 cards), and a resume deletes the temporary files that killed
    writes left in it.
    ``bases``: a directory where the optimal basis of every matrix game is written, level by
    level (:mod:`hiddenhand.solvers.gops_bases`), for a certificate cheaper than the solve;
    levels resumed from ``checkpoint`` get none.
    ``ray``: run each level's patterns as Ray tasks (:mod:`hiddenhand.solvers.gops_ray`) on
    the cluster at ``address`` (default: a local instance on 127.0.0.1) instead of threads;
    the values are the same bit for bit.
    ``scoring``: ``"point_difference"`` (the values are A's expected point difference) or
    ``"win_loss"`` (P(A wins) - P(B wins), over states that include the score:
    :mod:`hiddenhand.solvers.gops_winloss`, which takes ``workers``, ``progress`` and
    ``checkpoint`` alone).
    ``shortcuts``: solve one pattern of each mirror pair and copy the other
    (:func:`mirror_level`), half the matrix games, and start each game from its
    neighbour's basis (:func:`solve_patterns`); ``False`` solves every pattern's every game
    by the simplex from scratch (the solver as it was, which the benchmark runs beside this
    one and the tests compare).
    """
    if solution_class(scoring) is not GopsSolution:
        extra = {"bases": bases, "ray": ray, "address": address}
        given = {name: value for name, value in extra.items() if value not in (None, False)}
        given |= {} if shortcuts else {"shortcuts": False}
        if given:
            named_given = ", ".join(named(name, value) for name, value in given.items())
            raise ValueError(
                f"{named_given}: these apply to point-difference solves; {named('scoring', scoring)} takes none of them"
            )
        from hiddenhand.solvers import gops_winloss

        return gops_winloss.solve(num_cards, workers=workers, progress=progress, checkpoint=checkpoint)
    n = check_int("num_cards", num_cards, 1, 13)
    if ray and workers is not None:
        raise ValueError(
            f"{named('workers', workers)} sets threads; with {named('ray', True)}, each CPU of the cluster runs one "
            "task at a time"
        )
    if address is not None and not ray:
        raise ValueError(f"{named('address', address)} names a Ray cluster: it needs {named('ray', True)}")
    workers = check_workers(workers)
    indexer = Indexer(n)
    basis_folder = check_writable(bases, "bases directory", kind="dir") if bases is not None else None
    if basis_folder is not None:
        basis_folder.mkdir(parents=True, exist_ok=True)
    folder, levels = open_checkpoint(checkpoint, indexer.shape, n)

    def todo(k: int) -> np.ndarray:
        return indexer.halves(k)[0] if shortcuts else np.arange(indexer.shape(k)[0])

    games = {k: len(todo(k)) * indexer.shape(k)[1] * k for k in range(1, n + 1)}
    seconds: dict[int, float] = {}
    bar = tqdm(
        total=sum(games.values()),
        initial=sum(games[k] for k in range(1, len(levels))),
        unit="LP",
        unit_scale=True,
        disable=not progress,
        desc=f"GOPS {n}",
    )
    if ray:
        from hiddenhand.solvers.gops_ray import RayLevels  # Ray is an optional extra

        cluster = RayLevels(address)
    with bar, ThreadPoolExecutor(max_workers=workers) as pool:
        for k in range(len(levels), n + 1):
            started = time.perf_counter()
            bar.set_description(f"GOPS {n} level {k}/{n}")
            level, rows = indexer.level(k), todo(k)
            out = np.empty(indexer.shape(k))
            below = np.ascontiguousarray(levels[k - 1])
            masks = np.empty((*out.shape, k) if basis_folder else (0, 0, 0), dtype=np.uint32)

            def run(start: int, stop: int) -> int:
                solve_patterns(
                    rows,
                    level.win,
                    level.child,
                    level.prize_values,
                    level.prize_child,
                    below,
                    out,
                    masks,
                    shortcuts,
                    start,
                    stop,
                )
                return (stop - start) * out.shape[1] * k

            if ray:
                cluster.solve_level(level, rows, below, out, masks, shortcuts, bar)
            else:
                run_level(pool, workers, len(rows), run, bar)
            if shortcuts:
                mirror_level(indexer, k, out, masks)
            if basis_folder is not None:
                gops_bases.save_level(basis_folder, k, masks, below, n)
            levels.append(save_level(folder, k, out, n) if folder is not None else out)
            seconds[k] = time.perf_counter() - started
    return GopsSolution(n, levels, seconds)


__all__ = ["GopsSolution", "Indexer", "best_response_value", "exploitability", "level_patterns", "pattern_of", "solve"]


def report(
    rules,
    out: str | None = None,
    csv: bool = False,
    workers: int | None = None,
    checkpoint: str | None = None,
    load: str | None = None,
    certify: bool = False,
    bases: str | None = None,
    ray: bool = False,
    address: str | None = None,
) -> str:
    """``hiddenhand solve goofspiel``: solve ``rules``' number of cards (or ``load`` a saved
    solution of it) and show the first-move table as the published solution does (rows
    bids, columns upcards; ``*`` marks the parity carrying more probability in each column),
    or as CSV; save the solution to ``out``; with ``certify``, add the equilibrium's exact
    exploitability and the values' fixed-point residual
    (:func:`hiddenhand.solvers.gops_certify.certify`). ``bases``: a directory the solve
    writes every matrix game's optimal basis to, and the certificate reads them from;
    ``ray``, ``address``: solve on Ray (:func:`solve`). ``rules``' scoring picks the points
    or the win/loss solve (:mod:`hiddenhand.solvers.gops_winloss`)."""
    n, scoring = rules.params["num_cards"], rules.params["scoring"]
    if certify and scoring != GopsSolution.scoring:
        raise ValueError(
            f"--certify covers point-difference solutions; for {named('scoring', scoring)} measure the equilibrium "
            f"with `hiddenhand exploitability goofspiel --cards {n} --scoring {scoring} --agent equilibrium`"
        )
    start = time.perf_counter()
    if load is not None:
        solution = _load_for_report(load, n, checkpoint)
        if solution.scoring != scoring:
            raise ValueError(f"--load {load} is a {solution.scoring} solution: pass --scoring {solution.scoring}")
        origin, made = f"loaded from {load}", f"the solution was loaded from {load}"
    else:
        solution = solve(
            n, workers=workers, checkpoint=checkpoint, bases=bases, ray=ray, address=address, scoring=scoring
        )
        seconds = time.perf_counter() - start
        origin, made = f"solved in {seconds:.2f} s", f"the solve took {seconds:.2f} s"
    table = solution.first_move_table()
    if csv:
        lines = ["bid," + ",".join(f"upcard_{u}" for u in range(1, n + 1))]
        lines += [f"{bid + 1}," + ",".join(f"{p:.6f}" for p in table[bid]) for bid in range(n)]
    else:
        scored = "" if scoring == GopsSolution.scoring else f", scored {scoring}"
        lines = [f"Goofspiel, {n} cards{scored}: optimal first bid (rows) for each upcard (columns); {origin}"]
        lines.append("bid " + "".join(f"{u:>7}" for u in range(1, n + 1)))
        for bid in range(n):
            lines.append(f"{bid + 1:>3} " + "".join(f"{p:>7.4f}" if p > 5e-5 else f"{'0':>7}" for p in table[bid]))
        odd, even = table[0::2].sum(axis=0), table[1::2].sum(axis=0)
        lines.append("odd " + "".join(f"{p:>6.3f}" + ("*" if p > q else " ") for p, q in zip(odd, even)))
        lines.append("even" + "".join(f"{q:>6.3f}" + ("*" if q > p else " ") for p, q in zip(odd, even)))
    if certify:
        lines += _certificate_lines(solution, workers, made, bases)
    if out:
        lines.append(f"saved to {solution.save(out)}")
    return "\n".join(lines)


def _load_for_report(path: str, num_cards: int, checkpoint: str | None) -> GopsSolution:
    """The solution file ``--load`` names, checked to be of ``--cards`` before it is read whole."""
    if checkpoint is not None:
        raise ValueError(
            f"--load {path} reads a finished solution; --checkpoint {checkpoint} is for solving: give only one of them"
        )
    cards = read_npz_meta(path, "Goofspiel solution file").get("num_cards")
    if cards is not None and cards != num_cards:  # None: GopsSolution.load says what the file is not
        raise ValueError(f"--load {path} solves {cards} cards, but --cards is {num_cards}: pass --cards {cards}")
    return GopsSolution.load(path, num_cards)


def _certificate_lines(solution: GopsSolution, workers: int | None, made: str, bases: str | None) -> list[str]:
    from hiddenhand.solvers.gops_certify import certify  # a lazy import: that module builds on this one

    found = certify(solution, workers=workers, bases=bases)
    n = solution.num_cards
    how = (
        f"strategies rebuilt from the stored bases of {len(found.levels_from_bases)} of {n} levels, "
        f"{found.re_solved} games re-solved"
        if found.levels_from_bases
        else "every game re-solved"
    )
    return [
        f"exploitability of the equilibrium: {found.exploitability:.3g} (certified in {found.seconds:.2f} s, {how}; "
        f"{made})",
        f"fixed-point residual of the values: {found.residual:.3g} (largest |value - mean over upcards of its "
        "matrix game's value|)",
    ]
