"""The points solve: exact equilibria of two-player Goofspiel by LP backward induction.

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
(:func:`solve_patterns`). Together they cut the 13-card solve several-fold (the timings
before and after: docs/goofspiel.md, "Speed and scale").
Strategies are not stored: :meth:`PointsSolution.strategy` re-solves the one matrix game
of a state from the stored values of the level below, and
:meth:`PointsSolution.strategy_table` re-solves a whole level's in the same compiled kernels.
:mod:`~hiddenhand.solvers.goofspiel.certificate` certifies the solution (its exact exploitability
and how far the stored values are from a fixed point), from the optimal basis of every
matrix game when the solve wrote them (``bases``: :mod:`~hiddenhand.solvers.goofspiel.bases`),
otherwise by re-solving every level once more.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from tqdm.auto import tqdm

from hiddenhand.files import check_writable
from hiddenhand.solvers.goofspiel import bases as basis_files
from hiddenhand.solvers.goofspiel.kernels import check_workers, run_level, solve_patterns
from hiddenhand.solvers.goofspiel.patterns import Indexer
from hiddenhand.solvers.goofspiel.solution import PointsSolution
from hiddenhand.solvers.goofspiel.storage import open_checkpoint, save_level
from hiddenhand.validation import check_int, named


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


def solve(
    num_cards: int,
    *,
    workers: int | None = None,
    progress: bool = True,
    checkpoint: str | os.PathLike | None = None,
    bases: str | os.PathLike | None = None,
    ray: bool = False,
    address: str | None = None,
    shortcuts: bool = True,
) -> PointsSolution:
    """Solve ``num_cards`` Goofspiel scored by point difference exactly; see the module docstring.

    ``workers``: threads running the compiled kernel, GIL-free (default: every core).
    ``checkpoint``: a directory where each completed level is written (atomically); a later
    call with the same directory resumes after the last completed level, and finished levels
    are memory-mapped from it rather than held in memory. It is checked writable before any
    work (hours of it, at 13 cards), and a resume deletes the temporary files that killed
    writes left in it.
    ``bases``: a directory where the optimal basis of every matrix game is written, level by
    level (:mod:`~hiddenhand.solvers.goofspiel.bases`), for a certificate cheaper than the solve;
    levels resumed from ``checkpoint`` get none.
    ``ray``: run each level's patterns as Ray tasks (:mod:`~hiddenhand.solvers.goofspiel.ray_runner`) on
    the cluster at ``address`` (default: a local instance on 127.0.0.1) instead of threads;
    the values are the same bit for bit.
    ``shortcuts``: solve one pattern of each mirror pair and copy the other
    (:func:`mirror_level`), half the matrix games, and start each game from its
    neighbour's basis (:func:`solve_patterns`); ``False`` solves every pattern's every game
    by the simplex from scratch (the solver as it was, which the benchmark runs beside this
    one and the tests compare).
    """
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
        desc=f"Goofspiel {n}",
    )
    if ray:
        from hiddenhand.solvers.goofspiel.ray_runner import RayLevels  # Ray is an optional extra

        cluster = RayLevels(address)
    with bar, ThreadPoolExecutor(max_workers=workers) as pool:
        for k in range(len(levels), n + 1):
            started = time.perf_counter()
            bar.set_description(f"Goofspiel {n} level {k}/{n}")
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
                basis_files.save_level(basis_folder, k, masks, below, n)
            levels.append(save_level(folder, k, out, n) if folder is not None else out)
            seconds[k] = time.perf_counter() - started
    return PointsSolution(n, levels, seconds)
