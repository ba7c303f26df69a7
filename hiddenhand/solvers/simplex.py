"""The dense simplex that solves one small matrix game's LP, in compiled code.

The Goofspiel backward induction solves billions of tiny games (at most 13 x 13), far
too many for a general LP library's per-call overhead, so this is a dense simplex in
numba. The column player's LP ``max 1.y  s.t.  M' y <= 1, y >= 0`` (with ``M' = M + c``
shifted to be positive) starts feasible at the origin with the slacks as basis, so no
phase one is needed; Bland's rule makes degenerate pivots (common: ties and equal
continuation values) safe. At the optimum ``1.y = 1 / v'`` with ``v = v' - c``. Every
answer is checked against the game itself, and solved again more carefully when
round-off has grown into it (:func:`simplex`): the retries, the tableau rebuilds and the
check share the tableau, so they stay together here. What the tableau says (the value,
both strategies, the optimal basis) is read by :mod:`hiddenhand.solvers.matrix_game`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

EPS = 1e-11
ACCURACY = 1e-12
"""How far (in the game's units) the value may be from either strategy's guarantee before
the simplex tries again (see :func:`simplex`)."""
PIVOT_TOLERANCES = (EPS, 1e-9, 1e-7)
"""The smallest entry the simplex pivots on, in its first attempt and its retries."""
MAX_REBUILDS = 4
"""Tableau recomputations per attempt at most."""
SINGULAR = 1e14
"""A basis matrix whose condition number is not below this is not rebuilt (:func:`_rebuild`)."""


@njit(cache=True)
def simplex(m: np.ndarray, shift: float, tableau: np.ndarray, basis: np.ndarray) -> tuple[float, float]:
    """Run the simplex on ``m + shift`` (positive); fill ``tableau`` and ``basis``.
    Returns ``1.y`` at the optimum and the answer's :func:`_error`.

    Every answer is checked against ``m`` itself (:func:`_error`), because a small pivot
    can multiply the round-off already in the tableau past any tolerance: duplicate rows,
    common here, leave 1e-15 where exact arithmetic has 0, and after a legitimate pivot of
    2e-4 such an entry reads 1e-11 and passes for a pivot. Dividing by it once put an
    11-card game's value 5e-3 off (its basis turned infeasible, which no later pivot
    repairs) and a 9-card game's row strategy 2% off. An answer further than
    :data:`ACCURACY` from either strategy's guarantee is solved again from the start with
    the next, stricter, of :data:`PIVOT_TOLERANCES` (:func:`_attempt`); when none passes,
    the most accurate answer stands (a game whose rows differ by 1e-9 keeps its value
    1e-11 off). About one game in 5,000 is solved again; the others are untouched.
    """
    best_error, best_tolerance = np.inf, EPS
    for tolerance in PIVOT_TOLERANCES:
        error = _attempt(m, shift, tableau, basis, tolerance)
        if error <= ACCURACY:
            return tableau[m.shape[0], m.shape[0] + m.shape[1]], error
        if error < best_error:
            best_error, best_tolerance = error, tolerance
    if best_tolerance != PIVOT_TOLERANCES[-1]:
        best_error = _attempt(m, shift, tableau, basis, best_tolerance)
    return tableau[m.shape[0], m.shape[0] + m.shape[1]], best_error


@njit(cache=True)
def _attempt(m: np.ndarray, shift: float, tableau: np.ndarray, basis: np.ndarray, tolerance: float) -> float:
    """Solve from the slack basis with pivots larger than ``tolerance``; returns the answer's
    :func:`_error`. A failed answer whose basis may still be sound (the tableau only drifted)
    gets its tableau recomputed from the basis (:func:`_rebuild`) and pivoting resumes."""
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
    _pivot(tableau, basis, rows, cols, tolerance)
    error = _error(m, shift, tableau, basis)
    for _ in range(MAX_REBUILDS):
        if error <= ACCURACY or not _rebuild(m, shift, tableau, basis):
            break
        moved = _pivot(tableau, basis, rows, cols, tolerance)
        error = _error(m, shift, tableau, basis)
        if not moved:
            break  # the basis stands, read off a fresh tableau: as exact as it gets
    return error


@njit(cache=True)
def _pivot(tableau: np.ndarray, basis: np.ndarray, rows: int, cols: int, tolerance: float) -> int:
    """Pivot ``tableau`` to optimality by Bland's rule, on entries larger than ``tolerance``;
    returns the number of pivots."""
    width = cols + rows + 1
    pivots = 0
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
                if a > tolerance:
                    ratio = tableau[i, width - 1] / a
                    if ratio < best - EPS or (abs(ratio - best) <= EPS and basis[i] < basis[leave]):
                        best = ratio
                        leave = i
            if leave >= 0:
                enter = j
                break
        if enter < 0:
            return pivots
        pivots += 1
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


@njit(cache=True)
def _error(m: np.ndarray, shift: float, tableau: np.ndarray, basis: np.ndarray) -> float:
    """How far the answer in ``tableau`` may be from exact, computed from ``m``: the most by
    which the value exceeds what the row strategy guarantees or falls short of what the
    column strategy concedes (see :func:`~hiddenhand.solvers.matrix_game.solve_into` for
    where they are read). Both are made mixed strategies first (negative round-off
    dropped, normalised), so that the two bound the game's true value: a corrupted tableau
    can hold "strategies" with negative entries that would vouch for any value, or none at
    all (every entry negative: an infinite error, where dividing by their sum stopped a
    13-card solve at level 8)."""
    rows, cols = m.shape
    width = cols + rows + 1
    if not tableau[rows, width - 1] > 0.0:
        return np.inf
    value = 1.0 / tableau[rows, width - 1] - shift
    mass = 0.0
    for i in range(rows):
        mass += max(tableau[rows, cols + i], 0.0)
    if not mass > 0.0:  # no row strategy at all: a tableau that round-off wrecked
        return np.inf
    guaranteed = np.inf
    for j in range(cols):
        total = 0.0
        for i in range(rows):
            total += max(tableau[rows, cols + i], 0.0) * m[i, j]
        guaranteed = min(guaranteed, total / mass)
    mass = 0.0
    for r in range(rows):
        if basis[r] < cols:
            mass += max(tableau[r, width - 1], 0.0)
    if not mass > 0.0:
        return np.inf
    conceded = -np.inf
    for i in range(rows):
        total = 0.0
        for r in range(rows):
            if basis[r] < cols:
                total += m[i, basis[r]] * max(tableau[r, width - 1], 0.0)
        conceded = max(conceded, total / mass)
    return max(value - guaranteed, conceded - value)


@njit(cache=True)
def _rebuild(m: np.ndarray, shift: float, tableau: np.ndarray, basis: np.ndarray) -> bool:
    """Recompute the tableau of ``basis`` from the data, free of the round-off that pivoting
    accumulated: ``B^-1 [M + shift | I | 1]`` by LU with partial pivoting (``B``: the basis
    columns), and the objective row ``c_B B^-1 [...] - c`` (``c``: 1 on ``y``, 0 on the slacks).
    Returns False, leaving the tableau as it was, when ``B`` is singular to working precision:
    pivots on round-off can reach such a basis (an 11-card win/loss game, whose entries take
    few distinct values, did), and no tableau of it is worth rebuilding."""
    rows, cols = m.shape
    width = cols + rows + 1
    data = np.zeros((rows, width))
    for i in range(rows):
        for j in range(cols):
            data[i, j] = m[i, j] + shift
        data[i, cols + i] = 1.0
        data[i, width - 1] = 1.0
    columns = np.empty((rows, rows))
    for i in range(rows):
        columns[:, i] = data[:, basis[i]]
    if not np.linalg.cond(columns) < SINGULAR:
        return False
    solved = np.linalg.solve(columns, data)
    for j in range(width):
        reduced = -1.0 if j < cols else 0.0
        for i in range(rows):
            tableau[i, j] = solved[i, j]
            if basis[i] < cols:
                reduced += solved[i, j]
        tableau[rows, j] = reduced
    return True
