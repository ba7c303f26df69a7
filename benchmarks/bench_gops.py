"""Exact Goofspiel solve: time and peak memory per size, against a plain recursion.

For each size, ``hiddenhand.solvers.gops.solve`` runs in a fresh process (so that its
peak memory is its own), and, for the sizes it can do, so does the plain reference of the
tests (``tests/gops_reference.py``: HiGHS on every matrix game of a recursion over
unreduced states). Times are medians of ``--repeats`` runs; the ratio is plain / ours.
The per-level table of the largest size gives the scaling used to extrapolate to 13.

Run: ``python benchmarks/bench_gops.py [--max-cards 10] [--plain-max 5] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _child(kind: str, n: int) -> None:
    """Run one solve in this (fresh) process and print its figures as JSON."""
    start = time.perf_counter()
    if kind == "ours":
        from hiddenhand.solvers.gops import solve

        solution = solve(n, progress=False)
        levels = {k: (solution.indexer.lps(k), s) for k, s in solution.level_seconds.items()}
    else:
        sys.path.insert(0, str(ROOT / "tests"))
        from gops_reference import plain_values

        plain_values(n)
        levels = {}
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
    print(json.dumps({"seconds": seconds, "peak_gib": peak, "levels": levels}))


def run(kind: str, n: int) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(n)], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--min-cards", type=int, default=4, help="first size (default 4)")
    parser.add_argument("--max-cards", type=int, default=10, help="last size (default 10)")
    parser.add_argument("--plain-max", type=int, default=5, help="largest size for the plain recursion (default 5)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per size; medians are reported (default 3)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], int(args.child[1]))
        return

    print(f"{'cards':>5} {'ours s':>9} {'ours GiB':>9} {'plain s':>9} {'plain GiB':>9} {'ratio':>7}")
    last = None
    for n in range(args.min_cards, args.max_cards + 1):
        ours = [run("ours", n) for _ in range(args.repeats)]
        mine = statistics.median(r["seconds"] for r in ours)
        row = f"{n:>5} {mine:>9.3f} {max(r['peak_gib'] for r in ours):>9.3f}"
        if n <= args.plain_max:
            plain = [run("plain", n) for _ in range(args.repeats)]
            theirs = statistics.median(r["seconds"] for r in plain)
            row += f" {theirs:>9.3f} {max(r['peak_gib'] for r in plain):>9.3f} {theirs / mine:>7.0f}"
        print(row, flush=True)
        last = (n, ours)
    n, ours = last
    print(f"\nPer level at {n} cards (median of {len(ours)} runs): matrix games, seconds, microseconds per game")
    for k in sorted(ours[0]["levels"], key=int):
        lps = ours[0]["levels"][k][0]
        secs = statistics.median(r["levels"][k][1] for r in ours)
        print(f"  level {int(k):>2}: {lps:>12,} games {secs:>9.3f} s {1e6 * secs / lps:>8.3f} us/game")


if __name__ == "__main__":
    main()
