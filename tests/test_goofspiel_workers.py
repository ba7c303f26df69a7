"""The exact Goofspiel solves give the same values bit for bit with any number of threads.

``workers`` sets the threads of the pool that runs a level's chunks of patterns
(:func:`hiddenhand.solvers.goofspiel.kernels.run_level`), and the chunks are cut by the
worker count (about 50 per worker), so 1, 2 and 3 workers cut every level differently. A
value may depend on the chunking only through state carried from one pattern to the next
(the points solve's warm-start bases restart with each pattern) or through the order the
chunks finish in, and neither may change a bit: a 13-card solve on 16 cores must write the
file a 2-core one writes, and the scaling benchmark compares the two machines' times on
the same work. More workers than cores is fine here: only the chunking matters.

Values are compared as their 64-bit patterns (``view(np.uint64)``) with ``np.array_equal``,
so that even a sign of zero or a NaN's payload (the win/loss solve's unreachable
differences) would show; no tolerance.
"""

import numpy as np
import pytest

from hiddenhand.solvers.goofspiel import solve

WORKERS = (1, 2, 3)


def bits(level) -> np.ndarray:
    return np.ascontiguousarray(level, dtype=np.float64).view(np.uint64)


@pytest.mark.parametrize("scoring", ["point_difference", "win_loss"])
def test_every_worker_count_gives_the_same_values_bit_for_bit(scoring):
    solutions = {w: solve(7, workers=w, progress=False, scoring=scoring) for w in WORKERS}
    first = solutions[1]
    for w in WORKERS[1:]:
        assert len(solutions[w].levels) == len(first.levels) == 8
        for k, (mine, theirs) in enumerate(zip(solutions[w].levels, first.levels)):
            assert np.array_equal(bits(mine), bits(theirs)), f"level {k} with {w} workers differs from 1 worker"
    if scoring == "win_loss":  # the games solved, too: the walk over differences stops at the same games
        assert all(solutions[w].level_games == first.level_games for w in WORKERS)


def test_bases_and_plain_solve_the_same_with_any_worker_count(tmp_path):
    """The other two paths of the points kernel: recording every game's optimal basis (no
    warm start), and the plain solve (every pattern, the simplex from scratch)."""
    for options in ({"bases": True}, {"shortcuts": False}):
        runs = {}
        for w in WORKERS:
            folder = tmp_path / f"bases-{w}" if options.get("bases") else None
            extra = {"bases": folder} if folder else options
            runs[w] = (solve(6, workers=w, progress=False, **extra), folder)
        first, first_folder = runs[1]
        for w in WORKERS[1:]:
            solution, folder = runs[w]
            for mine, theirs in zip(solution.levels, first.levels):
                assert np.array_equal(bits(mine), bits(theirs))
            if folder is not None:
                for k in range(1, 7):
                    name = f"bases_{k:02d}.npy"
                    assert np.array_equal(np.load(folder / name), np.load(first_folder / name))


def test_strategy_tables_the_same_with_any_worker_count():
    solution = solve(6, progress=False)
    for k in (3, 5):
        tables = [solution.strategy_table(k, workers=w) for w in WORKERS]
        assert all(np.array_equal(bits(t), bits(tables[0])) for t in tables[1:])
