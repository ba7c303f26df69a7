"""Time per round of EggHead's deduction engine (everyone analysing behaviour) at 3, 4 and
5 players: the bit-set engine (``hiddenhand.envs.egghead_knowledge``) beside the engine it
replaced, frozen in ``egghead_engine_before.py``, playing the same games (same
seeds: both engines are exact, so they play identically), and at three players beside the
study's conditional tables implemented literally (``egghead_reference.py``). Then the
study's experiment at four and five players, and a vector of eight five-player
``SingleAgentEnv`` envs (peak memory of the whole process).

Each measurement runs in a fresh process, so that set-up costs (each question's answers on
every multiset of hands; the old engine's map from deals to multisets) and peak memory are
its own.

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


def _child(kind: str, players: int, rounds: int, seed: int) -> None:
    """One measurement in this process; prints JSON."""
    import numpy as np

    from hiddenhand.training import egghead_experiment

    start = time.perf_counter()
    if kind == "experiment":
        egghead_experiment.simulate(players, players, rounds, seed, progress=False)
        print(json.dumps({"seconds": time.perf_counter() - start, "peak_gib": _peak()}))
        return
    if kind == "vector":
        _vector(players, rounds, seed)
        return
    if kind in ("before", "after"):
        if kind == "before":
            import egghead_engine_before as engine

            def warm(k, question):
                engine.answer_grid(k.hands, question, players, tuple(range(players)))

            # The experiment plays on the engine its module imported: here, the old one.
            egghead_experiment.Knowledge = engine.Knowledge
        else:
            from hiddenhand.envs import egghead_knowledge as engine

            def warm(k, question):
                engine.multiset_answers(k.hands, question, players)

        egghead_experiment.simulate(players, players, 1, seed, progress=False)  # allocate, compile
        knowledge = engine.Knowledge(players)
        for question in knowledge.deck.values():  # every question's answers
            warm(knowledge, question)
        setup = time.perf_counter() - start
        start, cpu = time.perf_counter(), time.process_time()
        egghead_experiment.simulate(players, players, rounds, seed, progress=False)
        per_round = (time.perf_counter() - start) / rounds
        cpu_per_round = (time.process_time() - cpu) / rounds
        print(json.dumps({"setup": setup, "per_round": per_round, "cpu_per_round": cpu_per_round, "peak_gib": _peak()}))
        return
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


def _vector(players: int, steps: int, seed: int) -> None:
    """Eight ``SingleAgentEnv`` envs of ``players``-player EggHead in a Gymnasium
    ``SyncVectorEnv`` (one process), random opponents, masked random learner actions."""
    import gymnasium
    import numpy as np

    from hiddenhand.agents import RandomAgent
    from hiddenhand.gymnasium_env import SingleAgentEnv

    def make(i):
        return lambda: SingleAgentEnv("egghead", RandomAgent(seed=i), num_players=players, valids_in_observation=True)

    envs = gymnasium.vector.SyncVectorEnv([make(i) for i in range(8)])
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    envs.reset(seed=seed)
    episodes = 0
    for _ in range(steps):
        masks = np.stack(envs.call("action_masks"))
        _, _, term, trunc, _ = envs.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        episodes += int(np.sum(term | trunc))
    seconds = time.perf_counter() - start
    envs.close()
    print(json.dumps({"seconds": seconds, "steps": steps, "episodes": episodes, "peak_gib": _peak()}))


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


def _median(results: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[3, 4, 5], help="player counts (default 3 4 5)")
    parser.add_argument("--rounds", type=int, default=200, help="rounds timed per run at 3 and 4 players (default 200)")
    parser.add_argument("--rounds-5", type=int, default=10, help="rounds timed per run at 5 players (default 10)")
    parser.add_argument(
        "--literal-rounds", type=int, default=3, help="rounds of the literal tables at 3 players (default 3)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement; medians reported (default 3)")
    parser.add_argument(
        "--before-repeats-5",
        type=int,
        default=1,
        help="runs of the old engine at 5 players (default 1: each takes minutes and 5.4 GiB)",
    )
    parser.add_argument(
        "--experiment-players", type=int, nargs="*", default=[4, 5], help="the study's experiment (default 4 5)"
    )
    parser.add_argument("--experiment-repeats", type=int, default=1, help="runs of each experiment (default 1)")
    parser.add_argument("--vector-steps", type=int, default=200, help="steps of the vector of 8 envs (0: skip it)")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, players, rounds, seed = args.child
        _child(kind, int(players), int(rounds), int(seed))
        return
    print(
        "ms/round: wall-clock time of a round, and (CPU) the process's CPU time, which other jobs on a shared "
        "machine do not inflate"
    )
    print(
        f"{'players':>7} | {'before: set-up s':>16} {'ms/round':>9} {'CPU':>9} {'peak GiB':>8} | "
        f"{'after: set-up s':>15} {'ms/round':>9} {'CPU':>9} {'peak GiB':>8} | {'before/after':>12} {'CPU':>6} | "
        f"{'literal ms/round':>16}"
    )
    for players in args.players:
        rounds = args.rounds_5 if players == 5 else args.rounds
        before_repeats = args.before_repeats_5 if players == 5 else args.repeats
        before = [run("before", players, rounds, seed) for seed in range(before_repeats)]
        after = [run("after", players, rounds, seed) for seed in range(args.repeats)]
        row = f"{players:>7} |"
        for side, width in ((before, 16), (after, 15)):
            row += (
                f" {_median(side, 'setup'):>{width}.2f} {1000 * _median(side, 'per_round'):>9.2f} "
                f"{1000 * _median(side, 'cpu_per_round'):>9.2f} {max(r['peak_gib'] for r in side):>8.2f} |"
            )
        row += (
            f" {_median(before, 'per_round') / _median(after, 'per_round'):>12.1f}"
            f" {_median(before, 'cpu_per_round') / _median(after, 'cpu_per_round'):>6.1f} |"
        )
        if players == 3:
            literal = [run("literal", 3, args.literal_rounds, s) for s in range(args.repeats)]
            row += f" {1000 * _median(literal, 'per_round'):>16.0f}"
        print(row, flush=True)
    for players in args.experiment_players:
        runs = [run("experiment", players, 1000, seed) for seed in range(args.experiment_repeats)]
        print(
            f"the study's experiment, {players} players all analysing, 1000 rounds: median "
            f"{_median(runs, 'seconds'):.1f} s over {len(runs)} runs, peak {max(r['peak_gib'] for r in runs):.2f} GiB",
            flush=True,
        )
    if args.vector_steps:
        vec = run("vector", 5, args.vector_steps, 0)
        print(
            f"a SyncVectorEnv of 8 five-player SingleAgentEnv envs, random play: {vec['steps']} steps "
            f"({vec['episodes']} episodes) in {vec['seconds']:.1f} s, peak {vec['peak_gib']:.2f} GiB for the process"
        )


if __name__ == "__main__":
    main()
