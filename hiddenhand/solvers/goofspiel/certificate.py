"""Certify a Goofspiel solution: the exact exploitability of its equilibrium, from its values alone.

A solution file (:class:`~hiddenhand.solvers.goofspiel.solution.PointsSolution`) holds only the value of
every state; the equilibrium agent (:class:`~hiddenhand.agents.GoofspielEquilibriumAgent`)
plays, at every position, the row player's strategy ``x`` of that position's matrix game
(:meth:`~hiddenhand.solvers.goofspiel.solution.PointsSolution.strategy`, with itself as A), built from the
stored values of the level below. :func:`certify` measures that agent exactly, by a second
backward induction over the same reduced states as the solve (interleaving pattern, prize
set), in the same compiled kernels, level by level. At pattern ``p``, prizes ``q`` and
upcard ``u`` of level k it

1. builds the matrix game ``M[i, j] = win[p, i, j] * u + V[child[p, i, j], rest]`` from the
   stored values ``V`` of level k - 1 and solves it for A's strategy ``x`` (as the agent
   plays it) and its value;
2. lets B best-respond to ``x``: ``min_j sum_i x_i (win[p, i, j] * u + W[child[p, i, j],
   rest])``, where ``W`` are the best-response values of level k - 1, not ``V``: below
   this round B goes on best-responding, and A goes on playing ``x`` of each position.

``W(p, q)`` is the mean of step 2 over the upcards: the value to A of the agent in seat A
against a best response in seat B. The best response needs no more states than the solve
because the agent's bid by rank depends only on the pattern, the prizes and the upcard,
and so does who wins a round; the responder sees ``x`` but not the card drawn from it,
which is what the minimum of the mean over ``i`` says.

Why ``-W(root)`` is the exploitability (OpenSpiel's: NashConv / 2). NashConv is the sum
over seats of what a best response gains over the agent's own play there; the game is
zero-sum, so the agent's own payoffs in the two seats cancel, and NashConv is the sum of
the two best responses' values. The responder in seat B gets ``-W(root)``. The agent in
seat B plays what it would play as A with the hands swapped (it ignores its seat), and
swapping the seats is a symmetry of the rules, so the responder in seat A gets the value
of the responder in seat B at the swapped position: at the root both hold every card, so
the same ``-W(root)``. Hence NashConv / 2 = ``-W(root)``; it is 0 for an exact equilibrium
(up to the simplex's round-off) and positive for anything else.

The same pass checks the stored values: step 1's matrix-game values, averaged over the
upcards, must give back ``V(p, q)``. The largest difference, the *fixed-point residual*,
is 0 for a solution that this solver wrote (same kernels, same arithmetic) and certifies
that the file holds the game's values; a damaged or altered file shows here even when its
strategies remain unexploitable.

Both checks have earned their keep: certifying the 9- and 10-card solutions showed an
exploitability of 2e-5 where round-off should leave 1e-13. The simplex had pivoted on
round-off (:func:`hiddenhand.solvers.simplex.simplex` now rebuilds its tableau after a
tiny pivot), which corrupted the row strategies of a few dozen games and the values by
up to 1.1e-6; a 9-card file solved before that fix certifies with a residual of 1.1e-6.

Cost. Step 1 needs A's strategy in every matrix game, which the solve did not keep. With
the optimal bases the solve wrote (``bases``, :mod:`~hiddenhand.solvers.goofspiel.bases`), each
strategy is rebuilt from its basis by one small linear solve and checked against the game
(:func:`~hiddenhand.solvers.matrix_game.strategies_from_basis`: the two strategies the
basis gives must bracket the game's value within the simplex's own accuracy); the value in
step 1 is then the midpoint of that bracket, so the residual reads round-off (1e-14)
rather than 0. A game whose basis does not prove optimal is re-solved, so a damaged or
missing bases file costs time, never correctness. Certifying then takes about half as long
as the solve; without bases every game is re-solved by the simplex, about as long as the
solve or longer. Either way the strategy is the one the agent plays up to round-off (the
same basis). Memory is two levels of values and two of best-response values (the solve
holds one of each), about twice the solve's: 3 GB rather than 1.5 GB at 13 cards, plus a
level of bases memory-mapped.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numba import njit
from tqdm.auto import tqdm

from hiddenhand.solvers.goofspiel.bases import load_level
from hiddenhand.solvers.goofspiel.kernels import as_played, check_workers, fill_matrix, run_level, scratch
from hiddenhand.solvers.goofspiel.solution import PointsSolution
from hiddenhand.solvers.matrix_game import solve_into, strategies_from_basis


@dataclass(frozen=True)
class Certificate:
    """What :func:`certify` found for an ``num_cards`` solution."""

    num_cards: int
    exploitability: float
    """Exact exploitability of the equilibrium agent, in points (NashConv / 2)."""
    residual: float
    """Largest ``|V(p, q) - mean over upcards of the value of its matrix game|`` over every state."""
    level_seconds: dict[int, float]
    """Wall-clock seconds per level (hand size k)."""
    levels_from_bases: tuple[int, ...] = ()
    """The levels whose strategies were rebuilt from stored bases rather than re-solved."""
    re_solved: int = 0
    """Games of those levels whose stored basis did not prove optimal, re-solved by the simplex."""

    @property
    def seconds(self) -> float:
        return sum(self.level_seconds.values())


@njit(nogil=True)
def _certify_level(
    win, child, prize_values, prize_child, values, below, best_below, best, residual, bases, misses, start, stop
):
    """Best-response values ``best`` (to A, B best-responding to A's equilibrium bids) of
    patterns ``start:stop`` of one level, from the stored ``values`` of this level and
    ``below``, and the best-response values ``best_below``, of the level below;
    ``residual[p]`` gets pattern ``p``'s largest fixed-point residual (NaN if a value is).
    With ``bases`` not empty, each game's strategy is first rebuilt from its stored basis
    (:func:`~hiddenhand.solvers.matrix_game.strategies_from_basis`: its value is then the
    midpoint of the bracket it proves) and re-solved only when that fails; ``misses[p]``
    counts those."""
    k = win.shape[1]
    m, tableau, basis, x, y = scratch(k)
    lu, w, z, at = np.empty((k, k)), np.empty(k), np.empty(k), np.empty(3 * k, dtype=np.int64)
    stored = bases.shape[0] > 0
    for p in range(start, stop):
        worst = 0.0
        missed = 0
        for q in range(prize_values.shape[0]):
            value = 0.0
            reply = 0.0
            for u in range(k):
                prize = prize_values[q, u]
                rest = prize_child[q, u]
                fill_matrix(m, win, child, below, p, prize, rest)
                ok = False
                if stored:
                    ok, lower, upper = strategies_from_basis(m, bases[p, q, u], x, lu, w, z, at)
                    if ok:
                        value += 0.5 * (lower + upper)
                    else:
                        missed += 1
                if not ok:
                    value += solve_into(m, tableau, basis, x, y)
                as_played(x)
                lowest = np.inf
                for j in range(k):
                    total = 0.0
                    for i in range(k):
                        total += x[i] * (win[p, i, j] * prize + best_below[child[p, i, j], rest])
                    lowest = min(lowest, total)
                reply += lowest
            best[p, q] = reply / k
            gap = abs(values[p, q] - value / k)
            if not gap <= worst:  # NaN included
                worst = gap
        residual[p] = worst
        misses[p] = missed


def certify(
    solution: PointsSolution,
    *,
    workers: int | None = None,
    progress: bool = True,
    bases: str | os.PathLike | None = None,
) -> Certificate:
    """The exact exploitability of ``solution``'s equilibrium agent and the fixed-point
    residual of its values; see the module docstring. ``workers``: threads running the
    compiled kernel (default: every core). ``bases``: the directory a solve wrote its
    optimal bases to (:mod:`~hiddenhand.solvers.goofspiel.bases`); levels it holds are certified
    without the simplex, the others by re-solving every game. Point-difference solutions
    only: a win/loss one is measured by the dynamic programme over histories."""
    if solution.scoring != PointsSolution.scoring:
        raise ValueError(
            f"certify covers point-difference solutions, not {solution.scoring}: measure that equilibrium with "
            "hiddenhand.solvers.goofspiel.histories.exploitability_report"
        )
    workers = check_workers(workers)
    folder = Path(bases) if bases is not None else None
    if folder is not None and not folder.is_dir():
        raise ValueError(f"bases directory {folder} does not exist: give the --bases directory of the solve")
    n, indexer = solution.num_cards, solution.indexer
    best = np.zeros((1, 1))  # level 0: nothing left to win
    residual = 0.0
    seconds: dict[int, float] = {}
    from_bases: list[int] = []
    re_solved = 0
    total = sum(indexer.lps(k) for k in range(1, n + 1))
    bar = tqdm(total=total, unit="LP", unit_scale=True, disable=not progress, desc=f"certify Goofspiel {n}")
    with bar, ThreadPoolExecutor(max_workers=workers) as pool:
        for k in range(1, n + 1):
            started = time.perf_counter()
            bar.set_description(f"certify Goofspiel {n} level {k}/{n}")
            level = indexer.level(k)
            values = np.ascontiguousarray(solution.levels[k])
            below = np.ascontiguousarray(solution.levels[k - 1])
            masks = None if folder is None else load_level(folder, k, below, n, (*values.shape, k))
            if masks is None:
                masks = np.empty((0, 0, 0), dtype=np.uint32)
            else:
                from_bases.append(k)
            best_below, best = best, np.empty(indexer.shape(k))
            gaps = np.empty(len(level.patterns))
            misses = np.zeros(len(level.patterns), dtype=np.int64)

            def run(start: int, stop: int) -> int:
                _certify_level(
                    level.win,
                    level.child,
                    level.prize_values,
                    level.prize_child,
                    values,
                    below,
                    best_below,
                    best,
                    gaps,
                    masks,
                    misses,
                    start,
                    stop,
                )
                return (stop - start) * values.shape[1] * k

            run_level(pool, workers, len(level.patterns), run, bar)
            residual = float(np.maximum(residual, gaps.max()))  # NaN propagates
            re_solved += int(misses.sum())
            seconds[k] = time.perf_counter() - started
    return Certificate(n, -float(best[0, 0]), residual, seconds, tuple(from_bases), re_solved)
