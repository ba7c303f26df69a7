"""The self-play targets of the learner study: a learner from sampled play (sampled regret
matching, :mod:`hiddenhand.training.sampled_regret`, by default; self-play MMD or tuned PPO,
:mod:`hiddenhand.training.policy_gradient`, with ``--learner``) on each configuration the study
measures, several seeds, each run for a fixed budget of training seconds, against the exact
exploitability.

Targets (exploitability, NashConv / 2, the median of the seeds' last measures), on the Markov
observation: Goofspiel with 4 cards at most 0.025 (1% of uniform play's 2.5), 6 cards at most
0.29 (5%), 8 cards at most 1.05 (10%); whole 3-match Spoof at most 0.050 and whole two-player
3-coin Bid Spoof at most 0.097 (10% of random play's). Uniform play's figure is the first
point of every curve (the learners start uniform; a network, nearly).

Writes, into ``--out``: one run directory per configuration and seed (``curve.csv``,
``curve.png``, ``run.json``, the agent), one PNG per configuration (every seed's curve
against decisions and against seconds, with the target and uniform play as lines) and
``targets.json``; prints the table.

Run: ``python benchmarks/bench_targets.py [--learner regret|mmd|ppo] [--seconds 420 | --steps N] [--seeds 3]
[--workers 2] [--only goofspiel-6 ...] [--out targets]``. Runs go ``--workers`` at a time, one
process each (numba and torch on one thread each): on two cores the whole table takes about
``5 * seeds * seconds / 2`` plus the measures.
"""

from __future__ import annotations

import os

if __name__ == "__main__":  # a script's setting: a test that imports this leaves numba as it was
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # before numba is imported; the pool's workers inherit it

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

from hiddenhand.registry import get  # noqa: E402
from hiddenhand.training import plots  # noqa: E402
from hiddenhand.training.learners import learner as declared  # noqa: E402

LEARNERS = {
    "regret": "sampled regret matching",
    "mmd": "self-play MMD",
    "ppo": "self-play tuned PPO",
    "mmd-critic": "self-play MMD with a critic",
}
DECLARED = {"regret": "regret", "mmd": "mmd", "ppo": "ppo-selfplay", "mmd-critic": "mmd-critic"}
"""This script's names of the learners, and their declared names (training/learners.py)."""
NETWORK_SLOWER = 50
"""A network learner makes about this many times fewer decisions a second than sampled regret
matching, so it is measured this many times more often (per decision) for a curve as dense."""


def suffix(learner: str) -> str:
    """What a learner's run directories, plot and record add to their names (none for the default)."""
    return "" if learner == "regret" else f"-{learner}"


CONFIGS = {
    "goofspiel-4": ("goofspiel", {"num_cards": 4, "observation": "markov"}, 0.025, 10_000_000),
    "goofspiel-6": ("goofspiel", {"num_cards": 6, "observation": "markov"}, 0.29, 50_000_000),
    "goofspiel-8": ("goofspiel", {"num_cards": 8, "observation": "markov"}, 1.05, 50_000_000),
    "spoof": ("spoof", {"matches": 3, "observation": "markov"}, 0.050, 10_000_000),
    "bid_spoof": ("bid_spoof", {"num_players": 2, "coins": 3, "observation": "markov"}, 0.097, 10_000_000),
}
"""Name: (game, parameters, target, decisions between measures of sampled regret matching).
Each runs the learner's settings for the game
(:func:`~hiddenhand.training.sampled_regret.regret_settings_for`: Spoof and Bid Spoof
bootstrapped from their round values, with smaller collections;
:func:`~hiddenhand.training.policy_gradient.settings_for`)."""


def one_run(learner: str, name: str, seed: int, seconds: float | None, out: str, steps: int | None = None) -> dict:
    """One seed of one configuration for ``seconds`` of training or, with ``steps``, for that
    many decisions (the budget a learner anneals over is then the same on any machine)."""
    game, params, _, every = CONFIGS[name]
    where = Path(out) / f"{name}{suffix(learner)}" / f"seed{seed}"
    if learner != "regret":
        every //= NETWORK_SLOWER
    budget = {"steps": steps, "seconds": None} if steps else {"steps": 10**12, "seconds": seconds}
    curve = declared(DECLARED[learner]).run(
        get(game).rules(**params), out=where, seed=seed, eval_every=every, progress=False, **budget
    )
    return {"name": name, "seed": seed, "curve": [(p.steps, p.seconds, p.exploitability) for p in curve]}


def figure(learner: str, name: str, runs: list[dict]):
    game, params, target, _ = CONFIGS[name]
    rules = get(game).rules(**params)
    fig, axes = plots.figure(2, f"{LEARNERS[learner]} on {plots.describe(rules)}")
    uniform = runs[0]["curve"][0][2]
    for ax, column, xlabel in ((axes[0], 0, plots.DECISIONS), (axes[1], 1, "training seconds")):
        plots.labels(ax, xlabel, plots.EXPLOITABILITY, ylog=True)
        for run in runs:
            plots.measured(ax, [p[column] for p in run["curve"]], [p[2] for p in run["curve"]], f"seed {run['seed']}")
        plots.reference(ax, target, f"target {target}", "tab:green")
        plots.reference(ax, uniform, f"uniform play {uniform:.3g}", "tab:gray")
        ax.legend(fontsize="small")
    return fig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--learner",
        choices=list(LEARNERS),
        default="regret",
        help="sampled regret matching (default), self-play MMD or self-play tuned PPO, each with its own settings "
        "for the game",
    )
    parser.add_argument("--seconds", type=float, default=420.0, help="training seconds per run (default 420)")
    parser.add_argument(
        "--steps",
        type=int,
        help="decisions per run in place of a budget of seconds (the targets are stated in decisions; "
        "a learner that anneals over its budget then anneals the same on any machine)",
    )
    parser.add_argument("--seeds", type=int, default=3, help="seeds per configuration (default 3)")
    parser.add_argument("--workers", type=int, default=2, help="runs at a time (default 2)")
    parser.add_argument("--only", nargs="+", choices=list(CONFIGS), help="configurations to run (default all)")
    parser.add_argument("--out", default="targets", help="output directory (default targets)")
    args = parser.parse_args()
    if args.steps is not None and args.steps < 1:
        parser.error(f"--steps must be 1 or more, not {args.steps}")
    names = args.only or list(CONFIGS)
    jobs = [(name, seed) for name in names for seed in range(args.seeds)]
    with ProcessPoolExecutor(args.workers) as pool:
        futures = [
            pool.submit(one_run, args.learner, name, seed, args.seconds, args.out, args.steps) for name, seed in jobs
        ]
        runs = [future.result() for future in futures]
    rows = []
    budget = f"{args.steps:,} decisions" if args.steps else f"{args.seconds:.0f} s of training"
    print(f"{LEARNERS[args.learner]}, {args.seeds} seeds, {budget} a run (measures excluded)")
    print(f"{'configuration':14s} {'uniform':>8s} {'target':>7s} {'median':>8s} {'range':>17s} {'decisions':>12s}  met")
    for name in names:
        mine = [run for run in runs if run["name"] == name]
        finals = [run["curve"][-1][2] for run in mine]
        median, target = statistics.median(finals), CONFIGS[name][2]
        decisions = statistics.median(run["curve"][-1][0] for run in mine)
        uniform = mine[0]["curve"][0][2]
        rows.append({"name": name, "uniform": uniform, "target": target, "median": median, "finals": finals})
        rows[-1]["decisions"] = decisions
        span = f"{min(finals):.4g} to {max(finals):.4g}"
        met = "yes" if median <= target else "no"
        print(f"{name:14s} {uniform:8.4g} {target:7.3g} {median:8.4g} {span:>17s} {decisions:12,.0f}  {met}")
        plots.save(figure(args.learner, name, mine), Path(args.out) / f"{name}{suffix(args.learner)}.png")
    record = {"learner": args.learner, "rows": rows, "runs": runs}
    (Path(args.out) / f"targets{suffix(args.learner)}.json").write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
