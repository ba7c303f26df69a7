"""Certifying the exact Goofspiel equilibrium against solving it: seconds, exploitability, residual.

For each size: solve (``hiddenhand.solvers.goofspiel.solve``, writing every matrix game's
optimal basis to a bases directory as ``hiddenhand solve goofspiel --bases`` does), save
the solution, load it back and certify the loaded file twice
(``hiddenhand.solvers.goofspiel.certificate.certify``: the exact exploitability of the equilibrium
agent by a best-response backward induction over the same states, and the fixed-point
residual of the stored values): from the stored bases, and by re-solving every matrix
game with the simplex (the reference, and what a file without bases gets). Seconds are
medians of ``--repeats`` runs, after one small run that compiles the kernels; the ratios
are certify / solve. The per-level seconds of the largest size show how all three scale,
for extrapolating to sizes out of reach.

Run: ``python benchmarks/bench_goofspiel_certify.py [SIZES ...] [--repeats 3] [--workers N]``
(sizes default to 6 7 8 9 10).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from hiddenhand.solvers.goofspiel import PointsSolution, solve
from hiddenhand.solvers.goofspiel.certificate import Certificate, certify


def one_run(n: int, workers: int | None, folder: Path) -> tuple[list[float], PointsSolution, list[Certificate]]:
    """([solve s, save + load s, certify-from-bases s, certify-by-simplex s], the solution,
    [both certificates])."""
    bases = folder / f"bases{n}"
    start = time.perf_counter()
    solution = solve(n, workers=workers, progress=False, bases=bases)
    solved = time.perf_counter()
    loaded = PointsSolution.load(solution.save(folder / f"gops{n}.npz"), n)
    reloaded = time.perf_counter()
    fast = certify(loaded, workers=workers, progress=False, bases=bases)
    certified = time.perf_counter()
    slow = certify(loaded, workers=workers, progress=False)
    done = time.perf_counter()
    return [solved - start, reloaded - solved, certified - reloaded, done - certified], solution, [fast, slow]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[6, 7, 8, 9, 10], help="numbers of cards (2 to 13)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per size; medians are reported (default 3)")
    parser.add_argument("--workers", type=int, default=None, help="threads (default: every core)")
    args = parser.parse_args()
    if args.repeats < 1 or any(not 2 <= n <= 13 for n in args.sizes):
        parser.error(f"sizes must be 2 to 13 and --repeats at least 1; got {args.sizes} and {args.repeats}")
    with tempfile.TemporaryDirectory() as folder:
        one_run(3, args.workers, Path(folder))  # compile the kernels outside the timings
        print(f"{'cards':>5} {'solve s':>8} {'bases MB':>9} {'certify s':>9} {'/solve':>6} {'simplex s':>9}", end=" ")
        print(f"{'/solve':>6} {'exploitability':>14} {'residual':>9} {'re-solved':>9}")
        for n in args.sizes:
            runs = [one_run(n, args.workers, Path(folder)) for _ in range(args.repeats)]
            solve_s, _, fast_s, slow_s = (statistics.median(r[0][i] for r in runs) for i in range(4))
            solution, (fast, slow) = runs[-1][1], runs[-1][2]
            megabytes = sum(f.stat().st_size for f in (Path(folder) / f"bases{n}").iterdir()) / 1e6
            print(
                f"{n:>5} {solve_s:>8.2f} {megabytes:>9.1f} {fast_s:>9.2f} {fast_s / solve_s:>6.2f} {slow_s:>9.2f} "
                f"{slow_s / solve_s:>6.2f} {fast.exploitability:>14.3g} {fast.residual:>9.3g} {fast.re_solved:>9}",
                flush=True,
            )
            assert abs(fast.exploitability - slow.exploitability) < 1e-9, (fast, slow)
    print(f"\nper level, {n} cards (last run): k, matrix games, solve s, certify s (bases), certify s (simplex)")
    for k, seconds in fast.level_seconds.items():
        print(
            f"{k:>3} {solution.indexer.lps(k):>12,} {solution.level_seconds[k]:>8.2f} {seconds:>8.2f} "
            f"{slow.level_seconds[k]:>8.2f}"
        )


if __name__ == "__main__":
    main()
