"""The study's experiment (``hiddenhand simulate egghead``) on EggHead's engine against the
same experiment on the bit-set engine as it was before its tables were updated in place
(frozen in ``egghead_engine_bitset.py``): the same seeds, so the same game, which the
script checks (both sides must score the same points in the same rounds).

Each run is a fresh process on one numba thread (pinned to the first core with
``--pin`` where ``taskset`` exists), the two sides alternating. Per run: set-up (imports,
loading the compiled kernels, the engine's first tables: CPU from the process's start to
the first answer), CPU per round over the first rounds (where each question is still
evaluated the first time it is asked) and over all of them, wall clock, system CPU,
minor page faults and peak resident memory of the whole process. CPU is what other jobs
on a shared machine inflate least; the medians of the repeats are printed, and the ratio
before / after.

    NUMBA_NUM_THREADS=1 python benchmarks/bench_egghead_experiment.py [--players 5] [--analysts 5]
        [--rounds 1000] [--first 41] [--repeats 1] [--short-repeats 3] [--pin]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # before numba is imported

START = time.process_time()  # (the interpreter's own start-up is not counted; imports are)


def _child(side: str, players: int, analysts: int, rounds: int, seed: int, first: int) -> None:
    """One experiment in this process; prints JSON."""
    from hiddenhand.training import egghead_experiment

    if side == "before":
        from egghead_engine_bitset import Knowledge as Engine
    else:
        from hiddenhand.envs.egghead_knowledge import Knowledge as Engine

    marks: list[float] = []

    class Timed(Engine):
        def announce_answer(self, *args, **kwargs):
            marks.append(time.process_time())
            return super().announce_answer(*args, **kwargs)

    egghead_experiment.Knowledge = Timed
    wall = time.perf_counter()
    result = egghead_experiment.simulate(players, analysts, rounds, seed, progress=False)
    wall = time.perf_counter() - wall
    end = time.process_time()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    first = min(first, rounds)
    print(
        json.dumps(
            {
                "setup": marks[0] - START,
                "first": (marks[first] if first < rounds else end) - marks[0],
                "rounds": end - marks[0],
                "wall": wall,
                "user": usage.ru_utime,
                "system": usage.ru_stime,
                "faults": usage.ru_minflt,
                "peak_gib": usage.ru_maxrss / 2**20,
                "needed": result.rounds_needed,
            }
        )
    )


def run(side: str, args: argparse.Namespace, rounds: int, seed: int) -> dict:
    pin = ["taskset", "-c", "0"] if args.pin and shutil.which("taskset") else []
    child = [sys.executable, __file__, "--child", side, str(args.players), str(args.analysts), str(rounds), str(seed)]
    out = subprocess.run(pin + child + [str(args.first)], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def report(title: str, rounds: int, first: int, results: dict[str, list[dict]]) -> None:
    def med(side: str, key: str) -> float:
        return statistics.median(r[key] for r in results[side])

    rows = [
        ("set-up, CPU s", "setup", 1, 2),
        (f"first {first} rounds, CPU s a round", "first", min(first, rounds), 3),
        (f"all {rounds} rounds, CPU s a round", "rounds", rounds, 3),
        ("wall clock s (the experiment)", "wall", 1, 1),
        ("system CPU s", "system", 1, 1),
        ("minor page faults, thousands", "faults", 1000, 0),
        ("peak resident GiB", "peak_gib", 1, 2),
    ]
    print(f"{title} (medians of {len(results['before'])} runs)")
    print(f"{'':<38}{'before':>10}{'after':>10}{'before / after':>16}")
    for label, key, per, digits in rows:
        before, after = med("before", key) / per, med("after", key) / per
        ratio = f"{before / after:.1f}" if after else "-"
        print(f"{label:<38}{before:>10.{digits}f}{after:>10.{digits}f}{ratio:>16}")
    same = all(r["needed"] == results["before"][0]["needed"] for side in results.values() for r in side)
    print(f"the same points in the same rounds on both sides: {'yes' if same else 'NO'}", flush=True)
    if not same:
        raise SystemExit("the engines played different games")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=5, help="players, 3 to 5 (default 5)")
    parser.add_argument("--analysts", type=int, default=5, help="players analysing behaviour (default 5)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the game (default 1)")
    parser.add_argument("--rounds", type=int, default=1000, help="rounds of the long runs (default 1000; 0: none)")
    parser.add_argument("--first", type=int, default=41, help="the first rounds, timed apart (default 41)")
    parser.add_argument("--repeats", type=int, default=1, help="long runs per side (default 1)")
    parser.add_argument(
        "--short-repeats", type=int, default=3, help="runs of the first rounds alone per side (default 3)"
    )
    parser.add_argument("--pin", action="store_true", help="run the children on the first core (taskset -c 0)")
    parser.add_argument("--child", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        side, players, analysts, rounds, seed, first = args.child
        _child(side, int(players), int(analysts), int(rounds), int(seed), int(first))
        return
    print(
        f"the study's experiment: {args.players} players, {args.analysts} analysing, seed {args.seed}, "
        f"NUMBA_NUM_THREADS={os.environ['NUMBA_NUM_THREADS']}{', pinned to core 0' if args.pin else ''}",
        flush=True,
    )
    plans = [(args.first, args.short_repeats), (args.rounds, args.repeats)]
    for rounds, repeats in plans:
        if not rounds or not repeats:
            continue
        results: dict[str, list[dict]] = {"before": [], "after": []}
        for _ in range(repeats):
            for side in results:
                results[side].append(run(side, args, rounds, args.seed))
        report(f"{rounds} rounds", rounds, args.first, results)


if __name__ == "__main__":
    main()
