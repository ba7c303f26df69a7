"""Independent references for the Goofspiel solver: HiGHS on every matrix game of a plain
recursion over unreduced states (no patterns, no symmetry). Used by the tests and by
``benchmarks/bench_goofspiel.py``."""

import itertools
from functools import cache

import highspy
import numpy as np

_HIGHS = highspy.Highs()
_HIGHS.setOptionValue("output_flag", False)


def highs_value(m):
    """Value of the matrix game ``m`` for the row player, by HiGHS: maximise v subject to
    the row player's mixture x (x >= 0, sum x = 1) earning at least v against every
    column. One HiGHS instance is reused through highspy (scipy's ``linprog`` costs four
    times as much per call on these tiny games, which the recursions solve by the ten
    thousand)."""
    rows, cols = m.shape
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = rows + 1, cols + 1
    lp.col_cost_ = np.r_[np.zeros(rows), -1.0]
    lp.col_lower_ = np.r_[np.zeros(rows), -highspy.kHighsInf]
    lp.col_upper_ = np.full(rows + 1, highspy.kHighsInf)
    lp.row_lower_ = np.r_[np.full(cols, -highspy.kHighsInf), 1.0]
    lp.row_upper_ = np.r_[np.zeros(cols), 1.0]
    # Row j < cols: v - x . m[:, j] <= 0; the last row: sum x = 1. Stored column by column.
    a = np.r_[np.c_[-m.T, np.ones(cols)], np.r_[np.ones(rows), 0.0][None]]
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.arange(0, (cols + 1) * (rows + 1) + 1, cols + 1, dtype=np.int32)
    lp.a_matrix_.index_ = np.tile(np.arange(cols + 1, dtype=np.int32), rows + 1)
    lp.a_matrix_.value_ = np.ascontiguousarray(a.T).ravel()
    _HIGHS.passModel(lp)
    _HIGHS.run()
    assert _HIGHS.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return -_HIGHS.getInfo().objective_function_value


def game_value(m):
    """Value of the matrix game ``m``: its pure saddle point where it has one, else HiGHS."""
    lower, upper = m.min(axis=1).max(), m.max(axis=0).min()
    return lower if lower == upper else highs_value(m)


def plain_values(n):
    """Every state's value by direct recursion over (hand A, hand B, prizes), no reduction."""

    @cache
    def value(a, b, p):
        if not a:
            return 0.0
        total = 0.0
        for u in p:
            rest = tuple(c for c in p if c != u)
            m = np.array(
                [
                    [
                        ((x > y) - (x < y)) * u
                        + value(tuple(c for c in a if c != x), tuple(c for c in b if c != y), rest)
                        for y in b
                    ]
                    for x in a
                ]
            )
            total += game_value(m)
        return total / len(p)

    cards = range(1, n + 1)
    return {
        (a, b, p): value(a, b, p)
        for k in range(n + 1)
        for a in itertools.combinations(cards, k)
        for b in itertools.combinations(cards, k)
        for p in itertools.combinations(cards, k)
    }


def plain_winloss_values(n, max_hand=None):
    """Every undecided reachable state's value under win/loss scoring (with up to
    ``max_hand`` cards a hand), by direct recursion over (hand A, hand B, prizes, A's points
    minus B's), no reduction: the terminal value is the sign of the difference; a state is
    undecided when the difference is at most the points left, reachable when the prizes
    played, each won, lost or tied, add up to it."""

    @cache
    def value(a, b, p, d):
        if not a:
            return float(np.sign(d))
        total = 0.0
        for u in p:
            rest = tuple(c for c in p if c != u)
            m = np.array(
                [
                    [
                        value(
                            tuple(c for c in a if c != x),
                            tuple(c for c in b if c != y),
                            rest,
                            d + ((x > y) - (x < y)) * u,
                        )
                        for y in b
                    ]
                    for x in a
                ]
            )
            total += game_value(m)
        return total / len(p)

    cards = range(1, n + 1)
    states = {}
    for k in range(n + 1 if max_hand is None else max_hand + 1):
        for p in itertools.combinations(cards, k):
            reached = {0}
            for prize in set(cards) - set(p):
                reached = {d + outcome * prize for d in reached for outcome in (-1, 0, 1)}
            for a in itertools.combinations(cards, k):
                for b in itertools.combinations(cards, k):
                    for d in sorted(d for d in reached if abs(d) <= sum(p)):
                        states[a, b, p, d] = value(a, b, p, d)
    return states
