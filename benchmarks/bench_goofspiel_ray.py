"""Goofspiel's exact solve on Ray against the thread pool, side by side: where does Ray break even?

For each size, the same solve runs with threads (``hiddenhand.solvers.goofspiel.solve``) and as
Ray tasks (``ray=True``) on a local instance of ``--cpus`` CPUs (127.0.0.1, usage
statistics off), after one small Ray solve that starts the workers and compiles their
kernels; the values are checked equal bit for bit. Seconds are medians of ``--repeats``
runs; the ratio is Ray / threads, which falls towards 1 as the levels grow and Ray's fixed
cost per task (scheduling, the object store) becomes small beside the work. On one machine
it cannot go below 1: Ray pays across machines, each adding its cores. Then the bytes a
``--plan`` solve would move per level (:func:`hiddenhand.solvers.goofspiel.ray_runner.transfer`).

Ray's workers run at niceness 15 (Ray's default): measure on an otherwise quiet machine.

Run: ``python benchmarks/bench_goofspiel_ray.py [SIZES ...] [--repeats 3] [--cpus 2] [--plan 13]``
(sizes default to 7 8 9 10).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from hiddenhand.ray_cluster import start_ray


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[7, 8, 9, 10], help="numbers of cards (2 to 13)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per size; medians are reported (default 3)")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray instance and threads (default 2)")
    parser.add_argument("--plan", type=int, default=13, help="print what a solve of this size moves (default 13)")
    args = parser.parse_args()
    if args.repeats < 1 or any(not 2 <= n <= 13 for n in [*args.sizes, args.plan]):
        parser.error(f"sizes must be 2 to 13 and --repeats at least 1; got {args.sizes}, {args.plan}, {args.repeats}")
    start_ray(num_cpus=args.cpus)  # before anything imports Ray
    from hiddenhand.solvers.goofspiel import solve
    from hiddenhand.solvers.goofspiel.ray_runner import transfer

    solve(5, ray=True, progress=False)  # start the workers and compile their kernels
    solve(5, workers=args.cpus, progress=False)
    print(f"{'cards':>5} {'threads s':>9} {'ray s':>8} {'ray / threads':>13}")
    for n in args.sizes:
        seconds = {"threads": [], "ray": []}
        for _ in range(args.repeats):
            started = time.perf_counter()
            threads = solve(n, workers=args.cpus, progress=False)
            seconds["threads"].append(time.perf_counter() - started)
            started = time.perf_counter()
            on_ray = solve(n, ray=True, progress=False)
            seconds["ray"].append(time.perf_counter() - started)
            assert all(np.array_equal(a, b) for a, b in zip(threads.levels, on_ray.levels))
        t, r = statistics.median(seconds["threads"]), statistics.median(seconds["ray"])
        print(f"{n:>5} {t:>9.2f} {r:>8.2f} {r / t:>13.2f}", flush=True)
    print(f"\nwhat a {args.plan}-card solve on Ray moves per level (GB): values below to each node, values back, bases")
    for k, below, values, bases in transfer(args.plan):
        print(f"{k:>3} {below / 1e9:>8.3f} {values / 1e9:>8.3f} {bases / 1e9:>8.3f}")


if __name__ == "__main__":
    main()
