"""Two Goofspiel solution files of the same size, compared state by state.

For each level: the largest difference between the two files' values and how many states
differ by more than ``--tolerance`` (default 1e-12). This is how the 13-card file of the
solve with its shortcuts (antisymmetry, warm starts) was held against the earlier one;
format-1 and format-2 files compare alike (both are read whole).

Run: ``python benchmarks/compare_goofspiel_files.py A.npz B.npz [--tolerance 1e-12]``.
"""

from __future__ import annotations

import argparse

import numpy as np

from hiddenhand.solvers.goofspiel import load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("first", help="a solution file (hiddenhand solve goofspiel --out)")
    parser.add_argument("second", help="another solution file of the same size")
    parser.add_argument("--tolerance", type=float, default=1e-12, help="count states further apart (default 1e-12)")
    args = parser.parse_args()
    first = load(args.first)
    second = load(args.second, first.num_cards)
    print(f"{'level':>5} {'states':>12} {'largest difference':>19} {'states beyond':>14}")
    beyond = 0
    for k, (a, b) in enumerate(zip(first.levels, second.levels)):
        gap = np.abs(np.asarray(a) - np.asarray(b))
        over = int((gap > args.tolerance).sum())
        beyond += over
        print(f"{k:>5} {gap.size:>12,} {float(gap.max()):>19.3g} {over:>14,}")
    total = sum(level.size for level in first.levels)
    print(f"{beyond:,} of {total:,} states differ by more than {args.tolerance:g}")


if __name__ == "__main__":
    main()
