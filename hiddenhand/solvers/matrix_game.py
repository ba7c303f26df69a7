"""Two-player zero-sum matrix games solved exactly in compiled code: values, strategies, optimal bases.

A saddle point is checked first, which settles most games near the end of a Goofspiel
backward induction; the others go to the dense simplex (:mod:`hiddenhand.solvers.simplex`),
whose final tableau gives the value (``1.y = 1 / v'`` for the game shifted by ``c``,
``v = v' - c``), the column strategy (``y * v'``) and the row strategy (read off the slack
columns' reduced costs). The optimal basis the simplex ended in is recorded too, so that a
certificate rebuilds the strategies from it by one small dense solve, and a neighbouring
game tries it first (:func:`value_from_hint`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hiddenhand.moved import moved
from hiddenhand.solvers.simplex import (
    ACCURACY,
    EPS,
    simplex,
)

__getattr__ = moved(
    __name__, dict.fromkeys(("MAX_REBUILDS", "PIVOT_TOLERANCES", "SINGULAR"), "hiddenhand.solvers.simplex")
)


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
def solve_game(m: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(value, row strategy, column strategy) of the matrix game ``m``."""
    rows, cols = m.shape
    x = np.empty(rows)
    y = np.empty(cols)
    tableau = np.empty((rows + 1, rows + cols + 1))
    basis = np.empty(rows, dtype=np.int64)
    return solve_into(m, tableau, basis, x, y), x, y


@njit(cache=True)
def solve_into(m: np.ndarray, tableau: np.ndarray, basis: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    """:func:`solve_game` without allocating: the value of ``m``, with the row and column
    strategies written into ``x`` and ``y``; ``tableau`` and ``basis`` are scratch as in
    :func:`value_and_basis`. It is the one implementation behind :func:`solve_game`, so that a
    hot loop over many games gets exactly the strategies (same ties broken the same way)
    that a single query does."""
    rows, cols = m.shape
    x[:] = 0.0
    y[:] = 0.0
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
        return value
    shift = 1.0 - m.min()
    total, _ = simplex(m, shift, tableau, basis)
    scaled = 1.0 / total
    for i in range(rows):
        if basis[i] < cols:
            y[basis[i]] = tableau[i, rows + cols] * scaled
    for i in range(rows):
        x[i] = tableau[rows, cols + i] * scaled
    return scaled - shift


# --------------------------------------------------------------------------- optimal bases
# A certificate that re-solves every game for its row strategy pays the simplex twice. The
# solve records which basis each game ended in (:func:`value_and_basis`), and a certificate
# rebuilds the strategies from it by one small dense solve (:func:`strategies_from_basis`),
# checked against the game itself.


@njit(cache=True)
def value_and_basis(m: np.ndarray, tableau: np.ndarray, basis: np.ndarray) -> tuple[float, int]:
    """The value of the matrix game ``m`` to the row (maximising) player, and the optimal
    basis that :func:`solve_into` reads its strategies from (the same arithmetic, so the
    same value to the bit), as a bit mask: bit ``i`` (``i < rows``)
    for each row the row strategy may play (its slack is not basic), bit ``rows + j`` for
    each column the column strategy may play (``y_j`` is basic). Both sets have the same
    size ``s`` and ``M[rows, columns]`` is the basis matrix. A pure saddle point is recorded
    as the 1 x 1 basis of the row and the column that :func:`solve_into` plays there.

    ``tableau`` (at least ``(rows + 1, rows + cols + 1)``) and ``basis`` (``rows``) are
    scratch space, passed in so that a hot loop allocates nothing. The mask needs
    ``rows + cols`` bits: 26 at most for Goofspiel's 13 x 13 games.
    """
    rows, cols = m.shape
    is_saddle, value = saddle_value(m)
    if is_saddle:
        row = 0
        for i in range(rows):
            if m[i].min() >= value - EPS:
                row = i
                break
        col = 0
        for j in range(cols):
            if m[:, j].max() <= value + EPS:
                col = j
                break
        return value, (1 << row) | (1 << (rows + col))
    shift = 1.0 - m.min()
    total, error = simplex(m, shift, tableau, basis)
    if error > ACCURACY:
        # Every retry fell short (about one game in a million at 13 cards, by up to 1e-7).
        # The same game from the other seat, -M', pivots through other numbers and is often
        # exact where this one was not; its answer stands when it is the more accurate one.
        other = -m.T.copy()
        swapped_tableau, swapped_basis = np.empty((cols + 1, rows + cols + 1)), np.empty(cols, dtype=np.int64)
        swapped_shift = 1.0 - other.min()
        swapped_total, swapped_error = simplex(other, swapped_shift, swapped_tableau, swapped_basis)
        if swapped_error < error:
            mask = _basis_mask(swapped_basis, cols, rows)
            mask = (mask >> cols) | ((mask & ((1 << cols) - 1)) << rows)  # its rows are our columns
            return swapped_shift - 1.0 / swapped_total, mask
    return 1.0 / total - shift, _basis_mask(basis, rows, cols)


@njit(cache=True)
def _basis_mask(basis: np.ndarray, rows: int, cols: int) -> int:
    """The bit mask of :func:`value_and_basis` for the simplex's final ``basis``."""
    mask = (1 << rows) - 1
    for i in range(rows):
        b = basis[i]
        if b < cols:
            mask |= 1 << (rows + b)
        else:
            mask &= ~(1 << (b - cols))
    return mask


@njit(cache=True)
def strategies_from_basis(
    m: np.ndarray, mask: int, x: np.ndarray, lu: np.ndarray, w: np.ndarray, z: np.ndarray, at: np.ndarray
) -> tuple[bool, float, float]:
    """Rebuild the row strategy of the basis ``mask`` (as :func:`value_and_basis` writes it)
    of the square game ``m`` into ``x``, without the simplex: ``(ok, lower, upper)``.

    With ``R`` the rows and ``S`` the columns of the mask (``|R| = |S| = s``), the basis
    says ``x`` equalises the columns ``S`` and ``y`` the rows ``R``: ``A' w = 1`` and
    ``A z = 1`` with ``A = M[R, S] + shift`` (shifted positive), ``x = w / sum(w)`` on ``R``
    and ``y = z / sum(z)`` on ``S``: one LU factorisation (partial pivoting) of an ``s x s``
    matrix, where the simplex pivots a ``(k + 1) x (2k + 1)`` tableau ``s`` times or more.
    Both are then made mixed strategies (round-off below 0 clipped, normalised) and checked
    against the whole game: ``lower = min_j (x M)_j`` is what ``x`` guarantees and ``upper
    = max_i (M y)_i`` what ``y`` concedes, so the game's value lies in ``[lower, upper]``
    whatever the mask said. ``ok`` when they are within ``2 * ACCURACY`` (as the simplex's
    own answers are, :func:`~hiddenhand.solvers.simplex.simplex`); otherwise (a mask that is not an optimal basis, a
    singular or ill-conditioned one) ``x`` is not to be used. ``lu`` (at least ``s x s``),
    ``w``, ``z`` (``s``) and ``at`` (``3 * rows`` integers) are scratch space.
    """
    rows, cols = m.shape
    s = 0
    t = 0
    for i in range(rows):
        if mask >> i & 1:
            at[s] = i
            s += 1
    for j in range(cols):
        if mask >> (rows + j) & 1:
            at[rows + t] = j
            t += 1
    if s != t or s == 0 or mask >> (rows + cols) != 0:
        return False, 0.0, 0.0
    x[:] = 0.0
    if s == 1:  # a pure saddle point: x plays row r, y column c
        r, c = at[0], at[rows]
        lower = np.inf
        for j in range(cols):
            lower = min(lower, m[r, j])
        upper = -np.inf
        for i in range(rows):
            upper = max(upper, m[i, c])
        x[r] = 1.0
        return upper - lower <= 2 * ACCURACY, lower, upper
    low = np.inf
    for a in range(s):
        for b in range(s):
            lu[a, b] = m[at[a], at[rows + b]]
            low = min(low, lu[a, b])
    shift = 1.0 - low
    for a in range(s):
        for b in range(s):
            lu[a, b] += shift
    # P A = L U in place (unit lower L below the diagonal); at[2 * rows + c]: the row swapped in at step c
    for c in range(s):
        best = c
        for a in range(c + 1, s):
            if abs(lu[a, c]) > abs(lu[best, c]):
                best = a
        if lu[best, c] == 0.0:
            return False, 0.0, 0.0
        at[2 * rows + c] = best
        if best != c:
            for b in range(s):
                lu[c, b], lu[best, b] = lu[best, b], lu[c, b]
        inverse = 1.0 / lu[c, c]
        for a in range(c + 1, s):
            f = lu[a, c] * inverse
            lu[a, c] = f
            for b in range(c + 1, s):
                lu[a, b] -= f * lu[c, b]
    # A z = 1: P 1 = 1, so L U z = 1
    for a in range(s):
        total = 1.0
        for b in range(a):
            total -= lu[a, b] * z[b]
        z[a] = total
    for a in range(s - 1, -1, -1):
        total = z[a]
        for b in range(a + 1, s):
            total -= lu[a, b] * z[b]
        z[a] = total / lu[a, a]
    # A' w = 1: U' L' P w = 1; solve U' v = 1, L' u = v, then undo the row swaps in reverse
    for a in range(s):
        total = 1.0
        for b in range(a):
            total -= lu[b, a] * w[b]
        w[a] = total / lu[a, a]
    for a in range(s - 1, -1, -1):
        total = w[a]
        for b in range(a + 1, s):
            total -= lu[b, a] * w[b]
        w[a] = total
    for c in range(s - 1, -1, -1):
        other = at[2 * rows + c]
        if other != c:
            w[c], w[other] = w[other], w[c]
    row_mass = 0.0
    col_mass = 0.0
    for a in range(s):
        row_mass += max(w[a], 0.0)
        col_mass += max(z[a], 0.0)
    if not (row_mass > 0.0 and col_mass > 0.0):  # NaN included
        return False, 0.0, 0.0
    for a in range(s):
        x[at[a]] = max(w[a], 0.0) / row_mass
        z[a] = max(z[a], 0.0) / col_mass
    lower = np.inf
    for j in range(cols):
        total = 0.0
        for a in range(s):
            total += x[at[a]] * m[at[a], j]
        lower = min(lower, total)
    upper = -np.inf
    for i in range(rows):
        total = 0.0
        for b in range(s):
            total += m[i, at[rows + b]] * z[b]
        upper = max(upper, total)
    return upper - lower <= 2 * ACCURACY, lower, upper


@njit(cache=True)
def value_from_hint(
    m: np.ndarray,
    hint: int,
    tableau: np.ndarray,
    basis: np.ndarray,
    x: np.ndarray,
    lu: np.ndarray,
    w: np.ndarray,
    z: np.ndarray,
    at: np.ndarray,
) -> tuple[float, int]:
    """The value of ``m`` and a basis that proves it, trying the basis ``hint`` first (0:
    none). Neighbouring games of a Goofspiel level (the same hands and upcard rank, the next
    prize set) share their optimal basis most of the time, and checking one
    (:func:`strategies_from_basis`: one small LU solve) costs about half of the simplex.
    A hint that proves the game's value to within ``2 * ACCURACY`` gives the middle of its
    bounds (within :data:`ACCURACY` of the value, as the simplex's answers are); otherwise
    the simplex runs (:func:`value_and_basis`). In a game with several optimal bases the
    one returned may not be the simplex's, so the solve keeps the simplex's own when it
    records bases (the certificate rebuilds the agent's strategies from them).
    Scratch arrays as in :func:`value_and_basis` and :func:`strategies_from_basis`."""
    if hint:
        ok, lower, upper = strategies_from_basis(m, hint, x, lu, w, z, at)
        if ok:
            return 0.5 * (lower + upper), hint
    return value_and_basis(m, tableau, basis)
