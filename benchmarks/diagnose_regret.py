"""The runs behind sampled regret matching's design (docs/training.md, "Why this learner"):
regret matching on Markov Goofspiel with exact values, and the sampled learner with its
settings changed one at a time.

- ``exact``: regret matching+ over the positions of ``markov_table``,
  with the exact Q-values of the current policy every iteration, three ways: each position's
  regrets weighted by how often self-play reaches it (``visits``), every position alike
  (``alike``), and alike with the last advantages added when the policy is read (predictive
  RM+, ``predictive``); linear averaging. Prints the average policy's exact exploitability.
- ``sampled``: :class:`hiddenhand.training.sampled_regret.SampledRegret` with the settings
  given as JSON (``--settings '{"games": 256}'``), measured every quarter of the decisions:
  the average policy (what the learner saves) and the current one (regret matching's policy
  of the last iteration). Markov Goofspiel with ``--cards``, or another game with a batched
  env and its parameters (``--game spoof --params '{"observation": "markov"}'``).

Run: ``NUMBA_NUM_THREADS=1 python benchmarks/diagnose_regret.py exact --cards 4 --iterations
300`` or ``... sampled --cards 4 --decisions 10000000 --settings '{"games": 8192}'``.
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # before numba is imported

import argparse  # noqa: E402
import json  # noqa: E402

import markov_table  # noqa: E402
import numpy as np  # noqa: E402

from hiddenhand.registry import get  # noqa: E402
from hiddenhand.training.sampled_regret import RegretSettings, SampledRegret  # noqa: E402


def _normalised(weights: np.ndarray, k: int) -> np.ndarray:
    totals = weights.sum(axis=-1, keepdims=True)
    return np.where(totals > 0, weights / np.where(totals > 0, totals, 1.0), 1.0 / k)


def exact(cards: int, iterations: int, weighting: str) -> list[tuple[int, float]]:
    """Exact-value regret matching+; the average policy's exploitability at a few iterations."""
    table = markov_table.Table(cards)
    levels = range(2, cards + 1)
    regrets = {k: np.zeros_like(table.logp[k]) for k in levels}
    average = {k: np.zeros_like(table.logp[k]) for k in levels}
    out = []
    for it in range(1, iterations + 1):
        q, _ = markov_table.exact_q(table)
        reach = markov_table.reach(table) if weighting == "visits" else None
        for k in levels:
            policy = np.exp(table.logp[k])
            advantage = q[k] - (policy * q[k]).sum(axis=-1, keepdims=True)
            weight = 1.0 if reach is None else reach[k][..., None, None] / k
            regrets[k] = np.maximum(regrets[k] + weight * advantage, 0.0)
            average[k] += it * weight * policy
            ahead = regrets[k] + advantage if weighting == "predictive" else regrets[k]
            table.logp[k] = np.log(np.maximum(_normalised(np.maximum(ahead, 0.0), k), 1e-300))
        if it in (10, 30, 100, 300, 1000, 3000):
            mean = table.copy()
            for k in levels:
                mean.logp[k] = np.log(np.maximum(_normalised(average[k], k), 1e-300))
            out.append((it, markov_table.measure(mean)))
    return out


def sampled(game: str, params: dict, decisions: int, settings: dict) -> list[tuple[int, float, float]]:
    learner = SampledRegret(get(game).rules(**params), RegretSettings(**settings), 0)
    declared, done, marks, out = get(game), 0, [decisions * q // 4 for q in (1, 2, 3, 4)], []
    while marks:
        steps, _ = learner.iterate()
        done += steps * learner.settings.games
        if done >= marks[0]:
            marks.pop(0)
            average = declared.exact_exploitability(learner.rules, learner.agent())
            out.append((done, average, declared.exact_exploitability(learner.rules, learner.agent(current=True))))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("exact", "sampled"))
    parser.add_argument("--cards", type=int, default=4, help="cards per hand (default 4)")
    parser.add_argument("--iterations", type=int, default=300, help="exact: iterations (default 300)")
    parser.add_argument("--decisions", type=int, default=10_000_000, help="sampled: decisions (default 10000000)")
    parser.add_argument("--settings", default="{}", help="sampled: RegretSettings as JSON (default {})")
    parser.add_argument("--game", default="goofspiel", help="sampled: the game (default goofspiel, with --cards)")
    parser.add_argument(
        "--params", help="sampled: the game's parameters as JSON (default: Markov, --cards for Goofspiel)"
    )
    args = parser.parse_args()
    if args.mode == "exact":
        for weighting in ("visits", "alike", "predictive"):
            figures = exact(args.cards, args.iterations, weighting)
            print(f"{weighting:10s} " + "  ".join(f"{it}: {value:.4f}" for it, value in figures))
    else:
        default = {"num_cards": args.cards, "observation": "markov"} if args.game == "goofspiel" else {}
        params = json.loads(args.params) if args.params else default
        for done, average, current in sampled(args.game, params, args.decisions, json.loads(args.settings)):
            print(f"{done:>12,d} decisions: {average:.4f} (current policy: {current:.4f})")


if __name__ == "__main__":
    main()
