"""The Goofspiel tables of docs/goofspiel.md: exact exploitability of each agent by size, and the
equilibrium player's head-to-head results against each of the others.

Run: ``python examples/gops_report.py [--sizes 4 5 6] [--markov-sizes 7] [--match-sizes 8 10]
[--games 2000] [--solution gops13.npz]``. ``--markov-sizes`` adds sizes for the agents whose
policy reads only the position (random, equilibrium), which the exact best response
handles much faster than the score-reading heuristics.
"""

from __future__ import annotations

import argparse
import time

from hiddenhand.agents import GoofspielHeuristic, RandomAgent
from hiddenhand.agents.gops_equilibrium import GopsEquilibriumAgent
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.solvers.gops import GopsSolution, exploitability
from hiddenhand.training import head_to_head

NAMES = ("random", "easy", "medium", "hard", "equilibrium")


def make(name: str, n: int, solution=None):
    if name == "random":
        return RandomAgent()
    if name == "equilibrium":
        return GopsEquilibriumAgent(n, solution)
    return GoofspielHeuristic(name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[4, 5, 6], help="sizes for every agent")
    parser.add_argument(
        "--markov-sizes", type=int, nargs="*", default=[7], help="extra sizes for random and equilibrium"
    )
    parser.add_argument("--match-sizes", type=int, nargs="*", default=[8, 10], help="sizes of the head-to-head table")
    parser.add_argument("--games", type=int, default=2000, help="games per match (default 2000)")
    parser.add_argument("--solution", help="a saved solution (hiddenhand solve --out) to add its size to the matches")
    args = parser.parse_args()

    print("Exploitability (points a best response gains, mean of the two seats; seconds in brackets)")
    print("cards " + "".join(f"{name:>20}" for name in NAMES))
    for n in sorted(set(args.sizes) | set(args.markov_sizes)):
        cells = []
        for name in NAMES:
            if n not in args.sizes and name not in ("random", "equilibrium"):
                cells.append(f"{'—':>20}")
                continue
            start = time.perf_counter()
            value = exploitability(make(name, n), n)
            cells.append(f"{value:>11.4g} ({time.perf_counter() - start:>5.1f} s)")
        print(f"{n:>5} " + "".join(cells), flush=True)

    solutions = {}
    if args.solution:
        loaded = GopsSolution.load(args.solution)
        solutions[loaded.num_cards] = loaded
    print(
        "\nEquilibrium against each agent: its mean point difference ± 95% interval, wins-draws-losses, "
        f"{args.games} games"
    )
    for n in sorted(set(args.match_sizes) | set(solutions)):
        rules = GoofspielRules(num_cards=n)
        eq = make("equilibrium", n, solutions.get(n))
        for name in NAMES[:-1]:
            r = head_to_head(rules, eq, make(name, n), games=args.games, seed=n)
            print(
                f"  {n:>2} cards vs {name:<7} {r.mean:+6.2f} ± {r.ci95:.2f}   {r.wins}-{r.draws}-{r.losses}", flush=True
            )


if __name__ == "__main__":
    main()
