"""Time per round of EggHead's deduction engine (everyone analysing behaviour), for 3, 4
and 5 players, against the study's conditional tables implemented literally
(``tests/egghead_reference.py``) where that is affordable, and the study's whole
experiment at four players.

Each measurement runs in a fresh process, so that set-up costs (each question's answers
on every deal, the map from deals to multisets) and peak memory are its own.

    python benchmarks/bench_egghead.py [--players 3 4 5] [--rounds 200] [--repeats 3]
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


def _child(kind: str, players: int, rounds: int, seed: int) -> None:
    """One measurement in this process; prints JSON."""
    import numpy as np

    from hiddenhand.training.egghead_experiment import simulate

    start = time.perf_counter()
    if kind == "experiment":
        simulate(players, players, rounds, seed, progress=False)
        print(json.dumps({"seconds": time.perf_counter() - start, "peak_gib": _peak()}))
        return
    if kind == "ours":
        simulate(players, players, 1, seed, progress=False)  # allocate, build the multiset map
        from hiddenhand.envs.egghead_knowledge import Knowledge, answer_grid

        knowledge = Knowledge(players)
        for question in knowledge.deck.values():  # every question's answers on every deal
            answer_grid(knowledge.hands, question, players, tuple(range(players)))
        setup = time.perf_counter() - start
        start = time.perf_counter()
        simulate(players, players, rounds, seed, progress=False)
        per_round = (time.perf_counter() - start) / rounds
        print(json.dumps({"setup": setup, "per_round": per_round, "peak_gib": _peak()}))
        return
    sys.path.insert(0, str(ROOT / "tests"))
    from egghead_reference import ConditionalTables

    from hiddenhand.envs.egghead import Knowledge

    knowledge = Knowledge(players)  # for the hands and the deck only
    literal = ConditionalTables(players, knowledge.hands, knowledge.deck)
    rng = np.random.default_rng(seed)
    deal = [int(x) for x in rng.integers(len(knowledge.hands), size=players)]
    ids = list(knowledge.deck)
    setup = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(rounds):
        question = ids[rng.integers(len(ids))]
        literal.eq2(question, literal.answer(question, deal))
        while True:
            reactions = {p: len(literal.valids(p, deal)) == 1 for p in range(players)}
            before = [dict(t) for t in literal.tables]
            literal.eq3_eq4(reactions)
            callers = [p for p, c in reactions.items() if c]
            for p in callers:
                literal.eq5(p, deal[p])
                deal[p] = int(rng.integers(len(knowledge.hands)))
            if not callers and before == literal.tables:
                break
    per_round = (time.perf_counter() - start) / rounds
    print(json.dumps({"setup": setup, "per_round": per_round, "peak_gib": _peak()}))


def _peak() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB


def run(kind: str, players: int, rounds: int, seed: int) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(players), str(rounds), str(seed)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[3, 4, 5], help="player counts (default 3 4 5)")
    parser.add_argument("--rounds", type=int, default=200, help="rounds timed per run at 3 and 4 players (default 200)")
    parser.add_argument("--rounds-5", type=int, default=10, help="rounds timed per run at 5 players (default 10)")
    parser.add_argument(
        "--literal-rounds", type=int, default=3, help="rounds of the literal tables at 3 players (default 3)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement; medians reported (default 3)")
    parser.add_argument("--no-experiment", action="store_true", help="skip the 4-player 1000-round experiment")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, players, rounds, seed = args.child
        _child(kind, int(players), int(rounds), int(seed))
        return
    print(f"{'players':>7} {'set-up s':>9} {'ms/round':>9} {'peak GiB':>9} {'literal ms/round':>17} {'ratio':>7}")
    for players in args.players:
        rounds = args.rounds_5 if players == 5 else args.rounds
        ours = [run("ours", players, rounds, seed) for seed in range(args.repeats)]
        per_round = statistics.median(r["per_round"] for r in ours)
        row = (
            f"{players:>7} {statistics.median(r['setup'] for r in ours):>9.2f} {1000 * per_round:>9.2f} "
            f"{max(r['peak_gib'] for r in ours):>9.2f}"
        )
        if players == 3:
            literal = statistics.median(
                run("literal", 3, args.literal_rounds, s)["per_round"] for s in range(args.repeats)
            )
            row += f" {1000 * literal:>17.0f} {per_round / literal:>7.4f}"
        print(row, flush=True)
    if not args.no_experiment:
        times = [run("experiment", 4, 1000, seed)["seconds"] for seed in range(args.repeats)]
        print(
            f"the study's experiment, 4 players all analysing, 1000 rounds: median {statistics.median(times):.1f} s "
            f"over {args.repeats} runs (target: under 120 s)"
        )


if __name__ == "__main__":
    main()
