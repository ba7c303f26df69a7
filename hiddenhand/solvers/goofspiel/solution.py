"""Solutions of two-player Goofspiel: the values of every state, level by level; strategies on demand.

:class:`GoofspielSolution` is what every solution shares: the levels (level k holds the
states with hands of k cards), the input checks, the first-move table, and the solution
file (:mod:`~hiddenhand.solvers.goofspiel.storage`), whose ``scoring`` picks the class
that reads it. Its two kinds are siblings:

- :class:`PointsSolution`, point-difference scoring: a state is (interleaving pattern,
  prizes left) and its value A's expected point difference; it also rebuilds a whole
  level's strategies in bulk (:meth:`PointsSolution.strategy_table`).
- :class:`WinLossSolution`, win/loss scoring: a state also carries the score difference
  (:class:`~hiddenhand.solvers.goofspiel.patterns.Differences`) and its value is
  P(A wins) - P(B wins).

Strategies are not stored: each is the equilibrium of the one matrix game of its state,
built from the stored values of the level below and solved again when asked (cached per
interleaving pattern, which is all it depends on).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from hiddenhand.files import check_writable
from hiddenhand.solvers.goofspiel.kernels import as_played, check_workers, run_level, strategy_level
from hiddenhand.solvers.goofspiel.patterns import Differences, Indexer, card_positions, child_pattern, pattern_of
from hiddenhand.solvers.goofspiel.storage import (
    FORMAT_VERSION,
    POINT_DIFFERENCE,
    SOLUTION_FILE,
    WIN_LOSS,
    read_solution,
    write_solution,
)
from hiddenhand.solvers.matrix_game import solve_game
from hiddenhand.validation import check_int


class GoofspielSolution:
    """Values of every state of an ``num_cards`` Goofspiel, level by level; strategies on
    demand. The base of :class:`PointsSolution` and :class:`WinLossSolution`; :meth:`load`
    on it reads either."""

    scoring: str
    """The scoring this solution's values are in; saved with the file and checkpoints, so
    that neither is read as the other."""

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

    def _strategy_by_rank(self, pattern: tuple[int, ...], prizes: tuple[int, ...], upcard: int, *score):
        """Both players' equilibrium bids by the rank of the card in their hand: the same
        for every pair of hands with this interleaving pattern, hence cached by it (per
        solution, in ``__init__``)."""
        raise NotImplementedError

    def level_shape(self, k: int) -> tuple[int, ...]:
        """The shape of level ``k``'s values as this object holds them."""
        raise NotImplementedError

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
        path = check_writable(path, SOLUTION_FILE)
        stored = [np.ascontiguousarray(self._file_rows(k, level)) for k, level in enumerate(self.levels)]
        return write_solution(path, self.num_cards, self.scoring, stored)

    def _file_rows(self, k: int, level: np.ndarray) -> np.ndarray:
        """The rows of level ``k`` that a file keeps (format 2)."""
        raise NotImplementedError

    def _from_file(self, k: int, level: np.ndarray, file_format: int, path) -> np.ndarray:
        """Level ``k`` as this object holds it, from a file of ``file_format``."""
        raise NotImplementedError

    @classmethod
    def load(cls, path: str | os.PathLike, num_cards: int | None = None) -> GoofspielSolution:
        """Read a file written by :meth:`save` (:func:`~hiddenhand.solvers.goofspiel.storage.read_solution`
        says what it refuses). A file's ``scoring`` (absent before win/loss solutions: point
        difference) picks the class it is read as; on a subclass, a file of the other
        scoring is refused."""
        meta, levels = read_solution(path, num_cards)
        kind = solution_class(meta.get("scoring", POINT_DIFFERENCE), f"{path}'s scoring")
        if not issubclass(kind, cls):
            raise ValueError(f"{path} holds a {kind.scoring} solution, not a {cls.scoring} one")
        solution = kind(meta["num_cards"], levels)
        solution.levels = [
            solution._from_file(k, level, meta["format"], path) for k, level in enumerate(solution.levels)
        ]
        for k, level in enumerate(solution.levels):
            if level.shape != solution.level_shape(k):
                raise ValueError(f"{path}: level {k} has shape {level.shape}, expected {solution.level_shape(k)}")
        return solution


class PointsSolution(GoofspielSolution):
    """Values of every state (interleaving pattern, prizes left) of ``num_cards`` Goofspiel
    scored by point difference; strategies on demand, one state at a time or a level at once."""

    scoring = POINT_DIFFERENCE

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
        a_pos, b_pos = card_positions(pattern)
        k = len(a_pos)
        rest = tuple(c for c in prizes if c != upcard)
        below, prize_index = self.indexer.patterns(k - 1), self.indexer.prizes(k - 1)[rest]
        values = self.levels[k - 1]
        m = np.empty((k, k))
        for i, pa in enumerate(a_pos):
            for j, pb in enumerate(b_pos):
                m[i, j] = ((pa > pb) - (pa < pb)) * upcard + values[below[child_pattern(pattern, pa, pb)], prize_index]
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
        the same way; it is also what :class:`~hiddenhand.agents.GoofspielEquilibriumAgent` plays
        in either seat, seen as A. Rows sum to 1 up to the dropped round-off
        (:data:`~hiddenhand.solvers.goofspiel.kernels.DROPPED`).

        Size: ``patterns x C(n, k) x k x k`` float64. The largest level takes 9 MB at 8
        cards (k = 5), 320 MB at 10 (k = 6), 11 GB at 12 and 77 GB at 13 (k = 8); compute
        it once per level and keep it. Time: about what solving the level took, since it
        solves the level's matrix games again (docs/goofspiel.md, "Speed and scale").
        """
        k = check_int("k", k, 1, self.num_cards)
        workers = check_workers(workers)
        level = self.indexer.level(k)
        patterns, prize_sets = self.indexer.shape(k)
        table = np.empty((patterns, prize_sets, k, k))
        below = np.ascontiguousarray(self.levels[k - 1])

        def run(start: int, stop: int) -> int:
            strategy_level(level.win, level.child, level.prize_values, level.prize_child, below, table, start, stop)
            return (stop - start) * prize_sets * k

        bar = tqdm(total=self.indexer.lps(k), unit="LP", unit_scale=True, disable=not progress, desc=f"level {k}")
        with bar, ThreadPoolExecutor(max_workers=workers) as pool:
            run_level(pool, workers, patterns, run, bar)
        return table

    def _file_rows(self, k: int, level: np.ndarray) -> np.ndarray:
        return level[self.indexer.halves(k)[0]]

    def _from_file(self, k: int, level: np.ndarray, file_format: int, path) -> np.ndarray:
        return self._unfold(k, level, path) if file_format == FORMAT_VERSION else level

    def _unfold(self, k: int, stored: np.ndarray, path) -> np.ndarray:
        """Level ``k`` whole from the rows a format-2 file keeps."""
        shape = (len(self.indexer.halves(k)[0]), *self.level_shape(k)[1:])
        if stored.shape != shape:
            raise ValueError(f"{path}: level {k} has shape {stored.shape}, expected {shape}")
        row, sign = self.indexer.stored_rows(k)
        return sign[:, None] * stored[row]  # a mirror's values are its twin's, negated


class WinLossSolution(GoofspielSolution):
    """Values of every state (hands, prizes left, score difference) of ``num_cards``
    Goofspiel scored win/loss; strategies on demand. Level ``k`` holds, for each pattern
    that :meth:`Indexer.halves` keeps, the values of every prize set's undecided
    differences (:class:`Differences`); a mirrored pattern is read from its mirror's row
    (:meth:`Indexer.stored_rows`), in memory as in files, which halves both (12 cards take 15 GB)."""

    scoring = WIN_LOSS

    def __init__(self, num_cards, levels, level_seconds=None, level_games=None) -> None:
        super().__init__(num_cards, levels, level_seconds)
        self.differences = [Differences.of(self.indexer, k) for k in range(num_cards + 1)]
        self.level_games = dict(level_games or {})
        """Matrix games each level solved in the solve that made this object (the rest are
        read by antisymmetry, filled by monotonicity or unreachable); resumed levels are absent."""

    def level_shape(self, k: int) -> tuple[int, ...]:
        return len(self.indexer.halves(k)[0]), self.differences[k].width

    def _file_rows(self, k: int, level: np.ndarray) -> np.ndarray:
        return level  # already the kept patterns only

    def _from_file(self, k: int, level: np.ndarray, file_format: int, path) -> np.ndarray:
        if file_format == 1:  # every pattern's row
            full = (len(self.indexer.patterns(k)), self.differences[k].width)
            if level.shape != full:
                raise ValueError(f"{path}: level {k} has shape {level.shape}, expected {full}")
            return np.ascontiguousarray(level[self.indexer.halves(k)[0]])
        return level

    def _stored(self, k: int, pattern: tuple[int, ...], prizes: tuple[int, ...], diff: int) -> float:
        diffs = self.differences[k]
        q = self.indexer.prizes(k)[prizes]
        if abs(diff) > diffs.left[q]:
            return float(np.sign(diff))
        if abs(diff) > diffs.radius[q]:
            raise ValueError(
                f"diff={diff} cannot happen with prizes {list(prizes)} left: at most {int(diffs.radius[q])} "
                "points have been played"
            )
        centre = diffs.offset[q] + diffs.radius[q]
        if not diffs.reachable[centre + diff]:
            played = sorted(set(range(1, self.num_cards + 1)) - set(prizes))
            raise ValueError(
                f"diff={diff} cannot happen with prizes {list(prizes)} left: the prizes played, {played}, "
                f"won (+), lost (-) or tied (0), never add up to {diff}"
            )
        rows, signs = self.indexer.stored_rows(k)
        index = self.indexer.patterns(k)[pattern]
        sign = int(signs[index])  # -1: the mirror's row, from the other seat (as in the win/loss solve's kernel)
        return float(sign * self.levels[k][rows[index], centre + sign * diff])

    def value(self, hand_a: Iterable[int], hand_b: Iterable[int], prizes: Iterable[int], diff: int = 0) -> float:
        """P(A wins) - P(B wins) from here on, before the next prize is turned, when A leads by
        ``diff`` points (negative: trails)."""
        a, b, p = self._check(hand_a, hand_b, prizes)
        return self._stored(len(a), pattern_of(a, b), p, int(diff))

    def strategy(self, hand_a, hand_b, prizes, upcard: int, diff: int = 0):
        """The equilibrium mixed bids of A and of B once ``upcard`` is turned, A leading by
        ``diff`` points, as ``{card: probability}``."""
        a, b, p = self._check(hand_a, hand_b, prizes)
        if upcard not in p:
            raise ValueError(f"upcard={upcard} is not among the prizes {list(p)}")
        self._stored(len(a), pattern_of(a, b), p, int(diff))  # refuses a difference that cannot happen
        x, y = self._strategy_by_rank(pattern_of(a, b), p, upcard, int(diff))
        return _distribution(a, x), _distribution(b, y)

    def _strategy_by_rank(self, pattern, prizes, upcard, diff=0):
        a_pos, b_pos = card_positions(pattern)
        k = len(a_pos)
        rest = tuple(c for c in prizes if c != upcard)
        m = np.empty((k, k))
        for i, pa in enumerate(a_pos):
            for j, pb in enumerate(b_pos):
                won = (pa > pb) - (pa < pb)
                m[i, j] = self._stored(k - 1, child_pattern(pattern, pa, pb), rest, diff + won * upcard)
        _, x, y = solve_game(m)
        return x, y


def solution_class(scoring: str, what: str = "scoring") -> type[GoofspielSolution]:
    """The solution class of a scoring: :class:`PointsSolution` for point difference,
    :class:`WinLossSolution` for win/loss."""
    classes = {cls.scoring: cls for cls in (PointsSolution, WinLossSolution)}
    if scoring not in classes:
        raise ValueError(f"{what}={scoring!r}: the exact solver covers 'point_difference' and 'win_loss'")
    return classes[scoring]


def _distribution(cards: Sequence[int], probs: np.ndarray) -> dict[int, float]:
    probs = probs.copy()
    as_played(probs)
    return {int(c): float(p) for c, p in zip(cards, probs) if p > 0.0}
