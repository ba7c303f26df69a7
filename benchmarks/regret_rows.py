"""How many rows sampled regret matching's table meets, against decisions and seconds, as
far as one run goes: what a table would need at sizes where its exact measure is out of
reach (docs/training.md, "Sampled regret matching at 10 cards").

It runs ``hiddenhand.training.sampled_regret.SampledRegret`` with the game's own settings on
Markov Goofspiel, unmeasured, and prints the decisions played and the rows met every
``--every`` seconds. Run: ``NUMBA_NUM_THREADS=1 python benchmarks/regret_rows.py --cards 10
--seconds 420``.
"""

from __future__ import annotations

import argparse
import time

from hiddenhand.registry import get
from hiddenhand.training.sampled_regret import SampledRegret, regret_settings_for


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cards", type=int, default=10, help="Goofspiel cards (default 10)")
    parser.add_argument("--seconds", type=float, default=420.0, help="how long to run (default 420)")
    parser.add_argument("--every", type=float, default=30.0, help="seconds between lines (default 30)")
    parser.add_argument("--seed", type=int, default=0, help="the learner's seed (default 0)")
    args = parser.parse_args(argv)
    rules = get("goofspiel").rules(num_cards=args.cards, observation="markov")
    settings = regret_settings_for("goofspiel")
    learner = SampledRegret(rules, settings, args.seed)
    print(f"{args.cards}-card Markov Goofspiel, sampled regret matching, seed {args.seed}")
    print("| seconds | decisions | rows met |\n|---:|---:|---:|")
    start, decisions, last = time.perf_counter(), 0, 0.0
    while (now := time.perf_counter() - start) < args.seconds:
        decisions += learner.iterate()[0] * settings.games  # env steps of every game
        if now - last >= args.every:
            print(f"| {now:.0f} | {decisions:,} | {learner.size:,} |", flush=True)
            last = now
    print(f"| {time.perf_counter() - start:.0f} | {decisions:,} | {learner.size:,} |")


if __name__ == "__main__":
    main()
