"""The win/loss solve: exact equilibria of two-player Goofspiel scored win/loss (OpenSpiel's default).

The game is :mod:`~hiddenhand.solvers.goofspiel.points` solve's (two players, prizes in random order, bids
revealed, a tied bid discards the prize) with ``scoring="win_loss"``: +1 to whoever won
more points, -1 to the other, 0 for a tie; the value of a state is P(A wins) - P(B wins).
What is still to be won now depends on the score as well, through the difference ``d`` of
A's points and B's, so a state is (hands, prizes left, d) and its value is the mean over
the prize turned of a matrix game whose entry for bids (a, b) is the value of the state
after, at ``d + sign(a - b) * prize``.

Reductions, on top of the points solve's interleaving patterns (who wins a round still
depends only on the order of the bids) and prize sets:

- *Decided states are cut.* With ``s`` points left to win, a state with ``|d| > s`` is
  decided (``sign(d)``): it is never stored nor solved, and a lookup of it returns the sign.
  A reachable ``d`` is also at most the points already played, so a prize set ``q`` stores
  ``2 r + 1`` differences, ``r = min(points played, points left)``.
- *Unreachable differences are skipped.* A difference is a signed sum of the prizes played
  (each won, lost or tied), so after prizes 2 and 4 it is even: the others inside the
  radius are never solved (NaN in the level; 17% of the games at 9 cards).
- *Antisymmetry*: swapping the players mirrors the pattern (A-only and B-only cards swap)
  and negates the difference, ``V(B, A, P, d) = -V(A, B, P, -d)``; only one pattern of each
  mirror pair is solved and stored, and the other is read from it, negated and reversed in
  ``d`` (:meth:`Indexer.stored_rows`). That halves the memory too: the two largest levels of a
  12-card solve take 12 GB instead of 23.
- *Monotonicity in d*: more points can only help, so ``V`` is non-decreasing in ``d``, and
  so is each upcard's matrix-game value. Once a game's value reaches +1 at some ``d``,
  every larger ``d`` is +1 as well (a row of +1s there stays a row of +1s), and
  symmetrically for -1; the differences are walked outwards from 0 and stop at the first
  sure win or sure loss. The values are the same bit for bit (a saddle point of +1s would
  give exactly 1.0).

Each level (hand size k) is solved from the one below, in the points solve's compiled
matrix-game solver (:mod:`hiddenhand.solvers.matrix_game`), over chunks of patterns on a
pool of threads; checkpoints and resume work as for points (the manifest records the
scoring). Strategies are recomputed on demand from the stored values, as for points.
"""

from __future__ import annotations

import functools
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit
from tqdm.auto import tqdm

from hiddenhand.solvers.goofspiel.kernels import as_played, check_workers, run_level, scratch
from hiddenhand.solvers.goofspiel.patterns import (
    Differences,
    Indexer,
    card_positions,
    child_pattern,
    mirror_of,
    pattern_of,
)
from hiddenhand.solvers.goofspiel.solution import PointsSolution, WinLossSolution
from hiddenhand.solvers.goofspiel.storage import WIN_LOSS, open_checkpoint, save_level
from hiddenhand.solvers.matrix_game import value_and_basis
from hiddenhand.validation import check_int


@njit(nogil=True)
def _fill(m, win, child, below, p, prize, rest, d, left, radius, offset, row, sign):
    """The matrix game of pattern ``p`` at difference ``d`` once ``prize`` is turned, into
    ``m``: the values of the level below (``below``, its :class:`Differences` ``left``,
    ``radius`` and ``offset``, its :meth:`Indexer.stored_rows` ``row`` and ``sign``) at prize set
    ``rest``, where a decided difference is its sign.

    The lookup is written out here rather than called per entry: numba counts references
    to every array passed to a compiled call, and 36 such calls per game cost 40 times the
    lookups themselves (about 1.5 microseconds a game, atomically shared across threads)."""
    k = m.shape[0]
    decided = left[rest]
    centre = offset[rest] + radius[rest]
    for i in range(k):
        for j in range(k):
            after = d + win[p, i, j] * prize
            if after > decided:
                m[i, j] = 1.0
            elif after < -decided:
                m[i, j] = -1.0
            else:
                c = child[p, i, j]
                m[i, j] = sign[c] * below[row[c], centre + sign[c] * after]


@njit(nogil=True)
def solve_winloss_patterns(todo, win, child, prize_values, prize_child, diffs, below, diffs_below, out, start, stop):
    """Values of patterns ``todo[start:stop]`` of one level, for every prize set and
    reachable difference (NaN at the others), into rows ``start:stop`` of ``out``; returns
    the number of matrix games solved. ``diffs`` is (left, radius, offset, reachable) of
    this level (:class:`Differences`) and ``diffs_below`` (left, radius, offset, row, sign)
    of the one below (with :meth:`Indexer.stored_rows`). A reachable state's games look up only
    reachable differences below (a signed sum of the prizes played, plus or minus the next
    one, is one)."""
    left, radius, offset, reachable = diffs
    left_b, radius_b, offset_b, row_b, sign_b = diffs_below
    k = win.shape[1]
    m, tableau, basis, _, _ = scratch(k)
    total = np.empty(2 * int(radius.max()) + 1)
    games = 0
    for t in range(start, stop):
        p = todo[t]
        for q in range(prize_values.shape[0]):
            r = radius[q]
            total[: 2 * r + 1] = 0.0
            for u in range(k):
                prize = int(prize_values[q, u])
                rest = prize_child[q, u]
                for step in (1, -1):  # outwards from 0, up then down
                    d = 0 if step == 1 else -1
                    sure = False  # a sure win (loss) here: one at every larger (smaller) d too
                    while -r <= d <= r:
                        if sure:
                            total[r + d] += step
                        elif reachable[offset[q] + r + d]:
                            _fill(m, win, child, below, p, prize, rest, d, left_b, radius_b, offset_b, row_b, sign_b)
                            value, _ = value_and_basis(m, tableau, basis)
                            games += 1
                            total[r + d] += value
                            sure = value == float(step)
                        d += step
            for i in range(2 * r + 1):
                out[t, offset[q] + i] = total[i] / k if reachable[offset[q] + i] else np.nan
    return games


def head_to_head(win_loss: WinLossSolution, points: PointsSolution) -> tuple[float, float]:
    """The win/loss equilibrium against the points equilibrium, exactly: (mean result under
    win/loss scoring, mean point difference), both to the win/loss one. Each plays as its
    agent does (:class:`~hiddenhand.agents.GoofspielEquilibriumAgent`): the win/loss one reads
    the score, the points one plays its row strategy with the hands seen from its seat. The
    game is symmetric and both ignore their seat, so the seat does not matter. A recursion
    over (pattern, prizes left, difference) along the two strategies' supports."""
    if win_loss.num_cards != points.num_cards or points.scoring != PointsSolution.scoring:
        raise ValueError("head_to_head takes a win/loss and a point-difference solution of the same size")

    @functools.cache
    def value(pattern: tuple[int, ...], prizes: tuple[int, ...], d: int) -> tuple[float, float]:
        if not prizes:
            return float(np.sign(d)), float(d)
        a_pos, b_pos = card_positions(pattern)
        result, difference = 0.0, 0.0
        for upcard in prizes:
            rest = tuple(c for c in prizes if c != upcard)
            x = _played(win_loss._strategy_by_rank(pattern, prizes, upcard, d)[0])
            y = _played(points._strategy_by_rank(mirror_of(pattern), prizes, upcard)[0])
            for i in np.flatnonzero(x):
                for j in np.flatnonzero(y):
                    won = (a_pos[i] > b_pos[j]) - (a_pos[i] < b_pos[j])
                    later = value(child_pattern(pattern, a_pos[i], b_pos[j]), rest, d + won * upcard)
                    result += x[i] * y[j] * later[0]
                    difference += x[i] * y[j] * later[1]
        return result / len(prizes), difference / len(prizes)

    full = tuple(range(1, win_loss.num_cards + 1))
    return value(pattern_of(full, full), full, 0)


def _played(probs: np.ndarray) -> np.ndarray:
    """A mixed bid as the agent plays it (:func:`~hiddenhand.solvers.goofspiel.kernels.as_played`)."""
    probs = probs.copy()
    as_played(probs)
    return probs


def solve(
    num_cards: int,
    *,
    workers: int | None = None,
    progress: bool = True,
    checkpoint=None,
) -> WinLossSolution:
    """Solve ``num_cards`` Goofspiel scored win/loss exactly; see the module docstring.
    ``workers`` and ``checkpoint`` as in :func:`hiddenhand.solvers.goofspiel.points.solve`."""
    n = check_int("num_cards", num_cards, 1, 13)
    workers = check_workers(workers)
    indexer = Indexer(n)
    diffs = [Differences.of(indexer, k) for k in range(n + 1)]

    def shape(k: int) -> tuple[int, int]:
        return len(indexer.halves(k)[0]), diffs[k].width

    folder, levels = open_checkpoint(checkpoint, shape, n, WIN_LOSS)
    states = [shape(k)[0] * shape(k)[1] for k in range(n + 1)]  # stored (undecided) states per level
    bar = tqdm(
        total=sum(states[1:]),
        initial=sum(states[1 : len(levels)]),
        unit="state",
        unit_scale=True,
        disable=not progress,
        desc=f"Goofspiel {n} win/loss",
    )
    seconds: dict[int, float] = {}
    games: dict[int, int] = {}
    with bar, ThreadPoolExecutor(max_workers=workers) as pool:
        for k in range(len(levels), n + 1):
            started = time.perf_counter()
            bar.set_description(f"Goofspiel {n} win/loss level {k}/{n}")
            level = indexer.level(k)
            todo = indexer.halves(k)[0]
            out = np.empty(shape(k))
            below = np.ascontiguousarray(levels[k - 1])
            here, under, rows_below = diffs[k], diffs[k - 1], indexer.stored_rows(k - 1)
            solved: list[int] = []

            def run(start: int, stop: int) -> int:
                solved.append(
                    solve_winloss_patterns(
                        todo,
                        level.win,
                        level.child,
                        level.prize_values,
                        level.prize_child,
                        (here.left, here.radius, here.offset, here.reachable),
                        below,
                        (under.left, under.radius, under.offset, *rows_below),
                        out,
                        start,
                        stop,
                    )
                )
                return (stop - start) * here.width

            run_level(pool, workers, len(todo), run, bar)
            levels.append(save_level(folder, k, out, n, WIN_LOSS) if folder is not None else out)
            seconds[k], games[k] = time.perf_counter() - started, sum(solved)
    return WinLossSolution(n, levels, seconds, games)


__all__ = ["head_to_head", "solve"]
