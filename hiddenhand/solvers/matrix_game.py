"""Two-player zero-sum matrix games, solved exactly in compiled code.

The Goofspiel backward induction solves billions of tiny games (at most 13 x 13), far
too many for a general LP library's per-call overhead, so this is a dense simplex in
numba. The column player's LP ``max 1.y  s.t.  M' y <= 1, y >= 0`` (with ``M' = M + c``
shifted to be positive) starts feasible at the origin with the slacks as basis, so no
phase one is needed; Bland's rule makes degenerate pivots (common: ties and equal
continuation values) safe. At the optimum ``1.y = 1 / v'`` with ``v = v' - c``; the
column strategy is ``y * v'`` and the row strategy is read off the slack columns'
reduced costs. A saddle point is checked first, which settles most games near the end.
"""

from __future__ import annotations

import numpy as np
from numba import njit

EPS = 1e-11


@njit(cache=True)
def saddle_value(m: np.ndarray) -> tuple[bool, float]:
    """(True, value) when the game has a pure saddle point."""
    rows, cols = m.shape
    lower = -np.inf  # max over rows of the row minimum
    for i in range(rows):
        low = np.inf
        for j in range(cols):
            if m[i, j] < low:
                low = m[i, j]
        if low > lower:
            lower = low
    upper = np.inf  # min over columns of the column maximum
    for j in range(cols):
        high = -np.inf
        for i in range(rows):
            if m[i, j] > high:
                high = m[i, j]
        if high < upper:
            upper = high
    return upper - lower <= EPS, lower


@njit(cache=True)
def _simplex(m: np.ndarray, shift: float, tableau: np.ndarray, basis: np.ndarray) -> float:
    """Run the simplex on ``m + shift`` (positive); fill ``tableau`` and ``basis``.
    Returns ``1.y`` at the optimum."""
    rows, cols = m.shape
    width = cols + rows + 1
    tableau[: rows + 1, :width] = 0.0
    for i in range(rows):
        for j in range(cols):
            tableau[i, j] = m[i, j] + shift
        tableau[i, cols + i] = 1.0
        tableau[i, width - 1] = 1.0
        basis[i] = cols + i
    for j in range(cols):
        tableau[rows, j] = -1.0
    while True:
        # Bland's rule: the first column with a negative reduced cost that has a pivot.
        # (Round-off can leave a reduced cost of -1e-15 on a column with no positive
        # entry; such a column is optimal in exact arithmetic and is skipped.)
        enter = -1
        leave = -1
        for j in range(cols + rows):
            if tableau[rows, j] >= -EPS:
                continue
            best = np.inf
            for i in range(rows):
                a = tableau[i, j]
                if a > EPS:
                    ratio = tableau[i, width - 1] / a
                    if ratio < best - EPS or (abs(ratio - best) <= EPS and basis[i] < basis[leave]):
                        best = ratio
                        leave = i
            if leave >= 0:
                enter = j
                break
        if enter < 0:
            break
        pivot = tableau[leave, enter]
        for j in range(width):
            tableau[leave, j] /= pivot
        for i in range(rows + 1):
            if i != leave:
                factor = tableau[i, enter]
                if factor != 0.0:
                    for j in range(width):
                        tableau[i, j] -= factor * tableau[leave, j]
        basis[leave] = enter
    return tableau[rows, width - 1]


@njit(cache=True)
def game_value(m: np.ndarray, tableau: np.ndarray, basis: np.ndarray) -> float:
    """Value of the matrix game ``m`` to the row (maximising) player.

    ``tableau`` (at least ``(rows + 1, rows + cols + 1)``) and ``basis`` (``rows``) are
    scratch space, passed in so that a hot loop allocates nothing.
    """
    is_saddle, value = saddle_value(m)
    if is_saddle:
        return value
    shift = 1.0 - m.min()
    total = _simplex(m, shift, tableau, basis)
    return 1.0 / total - shift


@njit(cache=True)
def solve_game(m: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(value, row strategy, column strategy) of the matrix game ``m``."""
    rows, cols = m.shape
    x = np.zeros(rows)
    y = np.zeros(cols)
    is_saddle, value = saddle_value(m)
    if is_saddle:
        # A pure saddle: the first row reaching the value in its minimum, the first
        # column reaching it in its maximum.
        for i in range(rows):
            if m[i].min() >= value - EPS:
                x[i] = 1.0
                break
        for j in range(cols):
            if m[:, j].max() <= value + EPS:
                y[j] = 1.0
                break
        return value, x, y
    tableau = np.zeros((rows + 1, rows + cols + 1))
    basis = np.zeros(rows, dtype=np.int64)
    shift = 1.0 - m.min()
    total = _simplex(m, shift, tableau, basis)
    scaled = 1.0 / total
    for i in range(rows):
        if basis[i] < cols:
            y[basis[i]] = tableau[i, rows + cols] * scaled
    for i in range(rows):
        x[i] = tableau[rows, cols + i] * scaled
    return scaled - shift, x, y
