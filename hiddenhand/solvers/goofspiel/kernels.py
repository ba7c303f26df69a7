"""The compiled kernels the points solve, its strategy tables, the certificate and the Ray runner share.

Each kernel is serial and GIL-free over patterns ``start:stop`` of one level (a hand size
k), with its own scratch arrays, so that :func:`run_level` can run chunks of patterns on a
pool of threads and :mod:`~hiddenhand.solvers.goofspiel.ray_runner` as Ray tasks. The
matrix games themselves are solved by :mod:`hiddenhand.solvers.matrix_game` (saddle point
first, then the dense simplex of :mod:`hiddenhand.solvers.simplex`). The kernels are not
cached: numba's cache would not notice a change in matrix_game.py or simplex.py. Kernels
that serve one module only (the win/loss solve's, the certificate's, the measures over
positions) live in that module.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor, as_completed

import numpy as np
from numba import njit

from hiddenhand.solvers.matrix_game import solve_into, value_and_basis, value_from_hint
from hiddenhand.validation import check_int

DROPPED = 1e-12
"""Bid probabilities at or below this (after normalising) are not played: round-off of the simplex."""


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
    (not renormalised), as :meth:`~hiddenhand.solvers.goofspiel.solution.PointsSolution.strategy` reports them."""
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
def strategy_level(win, child, prize_values, prize_child, below, out, start, stop):
    """A's equilibrium bids as played (:func:`as_played`) at patterns ``start:stop`` of one
    level, into ``out[p, q, u]`` (see :meth:`~hiddenhand.solvers.goofspiel.solution.PointsSolution.strategy_table`)."""
    k = win.shape[1]
    m, tableau, basis, x, y = scratch(k)
    for p in range(start, stop):
        for q in range(prize_values.shape[0]):
            for u in range(k):
                fill_matrix(m, win, child, below, p, prize_values[q, u], prize_child[q, u])
                solve_into(m, tableau, basis, x, y)
                as_played(x)
                out[p, q, u] = x


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
