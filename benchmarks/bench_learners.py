"""Self-play learners' settings side by side: the study's tuned values against ours.

Trains :func:`hiddenhand.training.policy_gradient.train_selfplay` on Markov Goofspiel with
``STUDY`` (Rudolph et al.'s liar's dice settings) and with ``OURS`` (what we run), for the
same number of decisions and seeds, and prints each run's exact exploitability at the end
and at its best, with uniform play's for scale and the ratio study / ours of the medians.
This is where the departures documented in ``hiddenhand.training.policy_gradient.OURS`` were
measured.

Run: ``python benchmarks/bench_learners.py [--cards 4] [--steps 500000] [--seeds 0 1 2] [--learner mmd]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from dataclasses import replace

from hiddenhand.registry import get
from hiddenhand.training.policy_gradient import OURS, STUDY, train_selfplay


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=4, help="Goofspiel cards (default 4)")
    parser.add_argument("--steps", type=int, default=500_000, help="decisions per run (default 500000)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="seeds (default 0 1 2)")
    parser.add_argument("--learner", choices=("ppo", "mmd"), default="mmd", help="learner (default mmd)")
    args = parser.parse_args()
    kl = 0.025 if args.learner == "mmd" else 0.0
    params = {"num_cards": args.cards, "observation": "markov"}
    uniform = (args.cards**2 - 1) / 6  # uniform play's exploitability (2.5 at 4 cards, 5.833 at 6)
    print(f"Markov Goofspiel, {args.cards} cards, {args.learner}, {args.steps} decisions per run")
    print("| settings | seed | final | best | seconds |")
    print("|---|---|---|---|---|")
    finals = {}
    for name, settings in (("study", replace(STUDY, kl_coef=kl)), ("ours", replace(OURS, kl_coef=kl))):
        finals[name] = []
        for seed in args.seeds:
            with tempfile.TemporaryDirectory() as out:
                curve = train_selfplay(
                    get("goofspiel").rules(**params),
                    steps=args.steps,
                    out=out,
                    seed=seed,
                    eval_every=max(1, args.steps // 12),
                    settings=settings,
                    progress=False,
                )
            figures = [p.exploitability for p in curve]
            finals[name].append(figures[-1])
            print(f"| {name} | {seed} | {figures[-1]:.4f} | {min(figures):.4f} | {curve[-1].seconds:.0f} |")
    study, ours = statistics.median(finals["study"]), statistics.median(finals["ours"])
    print(f"\nmedian final exploitability: study {study:.4f}, ours {ours:.4f}, ratio {study / ours:.2f}")
    print(f"(uniform play concedes {uniform:.3f} at {args.cards} cards)")


if __name__ == "__main__":
    main()
