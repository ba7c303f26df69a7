"""Certifying the exact Goofspiel equilibrium against solving it: seconds, exploitability, residual.

For each size: solve (``hiddenhand.solvers.gops.solve``), save the solution, load it back
and certify the loaded file (``hiddenhand.solvers.gops_certify.certify``: the exact
exploitability of the equilibrium agent by a best-response backward induction over the
same states, and the fixed-point residual of the stored values). Seconds are medians of
``--repeats`` runs, after one small run that compiles the kernels; the ratio is certify /
solve. The per-level seconds of the largest size show how both scale, for extrapolating
to sizes out of reach.

Run: ``python benchmarks/bench_gops_certify.py [SIZES ...] [--repeats 3] [--workers N]``
(sizes default to 6 7 8 9 10).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from hiddenhand.solvers.gops import GopsSolution, solve
from hiddenhand.solvers.gops_certify import Certificate, certify


def one_run(n: int, workers: int | None, folder: Path) -> tuple[float, float, float, GopsSolution, Certificate]:
    """(solve seconds, save + load seconds, certify seconds, the solution, its certificate)."""
    start = time.perf_counter()
    solution = solve(n, workers=workers, progress=False)
    solved = time.perf_counter()
    loaded = GopsSolution.load(solution.save(folder / f"gops{n}.npz"), n)
    reloaded = time.perf_counter()
    found = certify(loaded, workers=workers, progress=False)
    return solved - start, reloaded - solved, time.perf_counter() - reloaded, solution, found


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
        print(f"{'cards':>5} {'solve s':>9} {'certify s':>9} {'ratio':>6} {'load s':>7}", end=" ")
        print(f"{'exploitability':>14} {'residual':>9}")
        for n in args.sizes:
            runs = [one_run(n, args.workers, Path(folder)) for _ in range(args.repeats)]
            solve_s, load_s, certify_s = (statistics.median(r[i] for r in runs) for i in range(3))
            solution, found = runs[-1][3], runs[-1][4]
            print(
                f"{n:>5} {solve_s:>9.2f} {certify_s:>9.2f} {certify_s / solve_s:>6.2f} {load_s:>7.2f} "
                f"{found.exploitability:>14.3g} {found.residual:>9.3g}",
                flush=True,
            )
    print(f"\nper level, {n} cards (last run): k, matrix games, solve s, certify s")
    for k, seconds in found.level_seconds.items():
        print(f"{k:>3} {solution.indexer.lps(k):>12,} {solution.level_seconds[k]:>8.2f} {seconds:>8.2f}")


if __name__ == "__main__":
    main()
