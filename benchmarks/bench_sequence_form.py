"""Our sequence-form LP (sparse, HiGHS) against OpenSpiel's ``sequence_form_lp`` (cvxpy,
its default solver) on the same games in one run: seconds per solve, medians of REPEATS,
the values they find and the ratio of times.

    python benchmarks/bench_sequence_form.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import pyspiel
from open_spiel.python.algorithms import sequence_form_lp

import hiddenhand.openspiel  # noqa: F401  (registers the hiddenhand games)
from hiddenhand.solvers.sequence_form import solve

GAMES = [
    "kuhn_poker",
    "leduc_poker",
    "hiddenhand_goofspiel(num_cards=3)",
    "hiddenhand_spoof(matches=1,matches_p1=2,max_rounds=2)",
    "hiddenhand_spoof(matches=2,max_rounds=2)",
]


def _median_seconds(fn, repeats: int) -> tuple[float, float]:
    times, value = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="solves per game and solver (default 5)")
    args = parser.parse_args()
    print(f"{'game':<55}{'ours s':>10}{'OpenSpiel s':>13}{'ratio':>8}{'value ours':>13}{'value OS':>11}")
    for name in GAMES:
        game = pyspiel.load_game(name)
        ours, v_ours = _median_seconds(lambda: solve(game).value, args.repeats)
        theirs, v_theirs = _median_seconds(lambda: sequence_form_lp.solve_zero_sum_game(game)[0], args.repeats)
        print(f"{name:<55}{ours:>10.3f}{theirs:>13.3f}{ours / theirs:>8.2f}{v_ours:>13.6f}{v_theirs:>11.6f}")


if __name__ == "__main__":
    main()
