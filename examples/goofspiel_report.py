"""The Goofspiel tables of docs/goofspiel.md: exact exploitability of each agent by size, and the
equilibrium player's head-to-head results against each of the others.

Run: ``python examples/goofspiel_report.py [--sizes 4 5 6 7 8] [--history-max 7] [--match-sizes 8 10]
[--games 2000] [--solution gops13.npz]``. Every agent but ``hard`` is Markov (it reads
neither the score nor the history), so its exploitability and its value against the
equilibrium are computed exactly over positions (:mod:`hiddenhand.solvers.goofspiel.positions`);
``hard`` reads the score, so it takes the dynamic programme over histories, up to
``--history-max`` cards, and sampled games against the equilibrium.
"""

from __future__ import annotations

import argparse
import time

from hiddenhand.agents import GoofspielHeuristic, RandomAgent
from hiddenhand.agents.goofspiel_equilibrium import GoofspielEquilibriumAgent
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.solvers.goofspiel import exploitability, load, positions
from hiddenhand.training import head_to_head

NAMES = ("random", "easy", "medium", "hard", "equilibrium")


def make(name: str, n: int, solution=None):
    if name == "random":
        return RandomAgent()
    if name == "equilibrium":
        return GoofspielEquilibriumAgent(n, solution)
    return GoofspielHeuristic(name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[4, 5, 6, 7, 8], help="sizes (default 4 to 8)")
    parser.add_argument("--history-max", type=int, default=7, help="largest size for hard, over histories (default 7)")
    parser.add_argument("--match-sizes", type=int, nargs="*", default=[8, 10], help="sizes of the head-to-head table")
    parser.add_argument("--games", type=int, default=2000, help="games per sampled match (default 2000)")
    parser.add_argument("--solution", help="a saved solution (hiddenhand solve --out) to add its size to the matches")
    args = parser.parse_args()

    print("Exploitability (points a best response gains, mean of the two seats; seconds in brackets)")
    print("cards " + "".join(f"{name:>20}" for name in NAMES))
    for n in sorted(args.sizes):
        cells = []
        for name in NAMES:
            agent = make(name, n)
            if not positions.is_markov(agent) and n > args.history_max:
                cells.append(f"{'—':>20}")
                continue
            start = time.perf_counter()
            if positions.is_markov(agent):
                value = positions.exploitability(agent, n, progress=False).value
            else:
                value = exploitability(agent, n)
            cells.append(f"{value:>11.4g} ({time.perf_counter() - start:>5.1f} s)")
        print(f"{n:>5} " + "".join(cells), flush=True)

    solutions = {}
    if args.solution:
        loaded = load(args.solution)
        solutions[loaded.num_cards] = loaded
    print(
        "\nEquilibrium against each agent: its mean point difference, exact over positions for Markov agents "
        f"(up to {positions.MAX_CARDS} cards), else ± 95% interval and wins-draws-losses of {args.games} games"
    )
    for n in sorted(set(args.match_sizes) | set(solutions)):
        rules = GoofspielRules(num_cards=n)
        eq = make("equilibrium", n, solutions.get(n))
        for name in NAMES[:-1]:
            agent = make(name, n)
            if positions.is_markov(agent) and n <= positions.MAX_CARDS:
                start = time.perf_counter()
                # Both read the Markov observation too: one seat's queries, not two.
                markov = GoofspielRules(num_cards=n, observation="markov")
                exact = positions.value(eq, agent, markov, progress=False)
                print(
                    f"  {n:>2} cards vs {name:<7} {exact:+8.4f} exact ({time.perf_counter() - start:.1f} s)", flush=True
                )
                continue
            r = head_to_head(rules, eq, agent, games=args.games, seed=n)
            print(
                f"  {n:>2} cards vs {name:<7} {r.mean:+6.2f} ± {r.ci95:.2f}   {r.wins}-{r.draws}-{r.losses}", flush=True
            )


if __name__ == "__main__":
    main()
