"""Seconds per iteration of OpenSpiel's C++ CFR+ on our adapter against the same solver on
OpenSpiel's native goofspiel, same size and variant, in one run.

Ours runs on ``pyspiel.convert_to_cached_tree`` of ``hiddenhand_goofspiel``: the first
iteration walks the Python game once to fill the tree (reported as the build time), and
every later one runs in C++. (The walk happens when the solver is set up, which is
included in the build time.) The peer is OpenSpiel's C++ goofspiel (turn-based,
``points_order=random``), run directly (C++ end to end) and, for reference, on its own
cached tree. Per-iteration times are medians over repeats of ``--iterations`` iterations.

Run: ``python benchmarks/bench_cfr.py [--cards 3 4] [--iterations 20] [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import pyspiel

import hiddenhand.openspiel  # noqa: F401  (registers hiddenhand_goofspiel)


def per_iteration(game, iterations: int, repeats: int) -> tuple[float, float]:
    """(seconds to set up the solver and run its first iteration, median seconds per
    later iteration). The setup walks the whole game: on a fresh cached tree of our
    Python game, that walk is what fills the tree."""
    start = time.perf_counter()
    solver = pyspiel.CFRPlusSolver(game)
    solver.evaluate_and_update_policy()
    first = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(iterations):
            solver.evaluate_and_update_policy()
        times.append((time.perf_counter() - start) / iterations)
    return first, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cards", type=int, nargs="+", default=[3, 4], help="sizes to run (default 3 4)")
    parser.add_argument("--iterations", type=int, default=20, help="iterations per timed repeat (default 20)")
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats; medians are reported (default 5)")
    args = parser.parse_args()

    header = (
        f"{'cards':>5} {'bids':>8} {'build s':>8} {'native setup s':>15} {'ours s/it':>10} "
        f"{'native s/it':>12} {'native cached':>14} {'ratio':>6}"
    )
    print("C++ CFR+ seconds per iteration; ratio = ours (cached tree) / native C++ goofspiel")
    print(header)
    for n in args.cards:
        for reveal in (True, False):
            ours = pyspiel.convert_to_cached_tree(
                pyspiel.load_game(f"hiddenhand_goofspiel(num_cards={n},reveal_bids={str(reveal).lower()})")
            )
            native = pyspiel.load_game(
                f"turn_based_simultaneous_game(game=goofspiel(num_cards={n},points_order=random,"
                f"returns_type=point_difference,imp_info={str(not reveal).lower()}))"
            )
            first, mine = per_iteration(ours, args.iterations, args.repeats)
            native_first, theirs = per_iteration(native, args.iterations, args.repeats)
            _, theirs_cached = per_iteration(pyspiel.convert_to_cached_tree(native), args.iterations, args.repeats)
            build = max(first - mine, 0.0)
            label = "revealed" if reveal else "hidden"
            setup = max(native_first - theirs, 0.0)
            print(
                f"{n:>5} {label:>8} {build:>8.2f} {setup:>15.2f} {mine:>10.5f} "
                f"{theirs:>12.5f} {theirs_cached:>14.5f} {mine / theirs:>6.2f}"
            )


if __name__ == "__main__":
    main()
