"""RLlib's PPO beside our in-process PPO self-play (or, with ``--update mmd-critic``, self-play
MMD with a critic as an RLlib Learner beside ``hiddenhand train mmd-critic``): the same
settings, the same credit, the same decisions, on one game; exact exploitability curves and
throughput side by side.

``hiddenhand train rllib`` runs RLlib's PPO with our settings for the game (the learning
rate and its annealing, GAE lambda 0.7, gamma 1, the batch and epochs; the study's clip and
entropy, which suit RLlib's standardised advantages: ``--rllib-settings`` changes any) and
our credit (the env pays each seat what a round settles as it settles it), so what differs
from ``hiddenhand train selfplay --learner ppo`` is RLlib itself: its sampling machinery, its
advantages standardised per minibatch, its value and policy networks. This trains both for
``--decisions`` decisions (RLlib in whole updates of the batch, so a little more), measures
each exactly ``--measures`` times off the clock, prints every measured point, decisions a
second and the ratio to the in-process learner, and plots the curves against decisions and
against seconds (``--plot``). RLlib runs on a local Ray instance on 127.0.0.1 with
``--cpus`` CPUs, sampling in the driver (``--env-runners 0``, as the benchmark runs it: Ray
starts its runners niced, and on a busy machine a starved runner returns no samples within
RLlib's timeout, so iterations pass without training), once per ``--envs-per-runner``
value given. With ``--update mmd-critic`` RLlib trains with the settings of the learner
``rllib-mmd-critic`` (those of ``hiddenhand train mmd-critic`` for the game) and the
in-process learner is ``mmd-critic`` with its own.

Run: ``python benchmarks/bench_rllib.py [--update ppo|mmd-critic] [--game goofspiel]
[--params '{"num_cards": 4, "observation": "markov"}'] [--decisions 50000] [--measures 5]
[--envs-per-runner 8] [--rllib-settings '{}'] [--env-runners 0] [--cpus 2] [--plot rllib.png]``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import replace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--update",
        choices=("ppo", "mmd-critic"),
        default="ppo",
        help="the update both learners take: PPO (default) or MMD with a critic",
    )
    parser.add_argument("--game", default="goofspiel", help="a game with a batched env (default goofspiel)")
    parser.add_argument(
        "--params",
        type=json.loads,
        default={"num_cards": 4, "observation": "markov"},
        help='the game\'s parameters as JSON (default {"num_cards": 4, "observation": "markov"})',
    )
    parser.add_argument("--decisions", type=int, default=50_000, help="decisions per learner (default 50000)")
    parser.add_argument("--measures", type=int, default=5, help="exact measures per run (default 5)")
    parser.add_argument(
        "--envs-per-runner", type=int, nargs="+", default=[8], help="RLlib runs, games per env runner (default 8)"
    )
    parser.add_argument(
        "--rllib-settings",
        type=json.loads,
        default={},
        help="RLlib's settings changed from its defaults, as JSON (e.g. '{\"anneal_entropy\": false}')",
    )
    parser.add_argument(
        "--env-runners", type=int, default=0, help="RLlib's remote env runners (default 0: sampling in the driver)"
    )
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray instance (default 2)")
    parser.add_argument("--plot", help="write the curves to this PNG")
    args = parser.parse_args()

    from hiddenhand.ray_cluster import start_ray

    start_ray(num_cpus=args.cpus)
    import torch

    from hiddenhand.registry import get
    from hiddenhand.training import plots
    from hiddenhand.training.learners import learner
    from hiddenhand.training.rllib_train import train_rllib

    torch.set_num_threads(1)
    rules = get(args.game).rules(**args.params)
    ours, theirs = {"ppo": ("ppo-selfplay", "rllib"), "mmd-critic": ("mmd-critic", "rllib-mmd-critic")}[args.update]
    method = {"ppo": "PPO", "mmd-critic": "MMD with a critic"}[args.update]
    settings = replace(learner(theirs).settings_for(rules), **args.rllib_settings)
    runs = []
    for envs in args.envs_per_runner:
        with tempfile.TemporaryDirectory() as out:
            curve = train_rllib(
                rules,
                steps=args.decisions,
                out=out,
                eval_every=max(1, args.decisions // args.measures),
                progress=False,
                settings=replace(settings, env_runners=args.env_runners, envs_per_runner=envs),
            )
        where = "in the driver" if args.env_runners == 0 else f"on each of {args.env_runners} runners"
        runs.append((f"RLlib {method}, {envs} games {where}", curve))
    every = max(1, args.decisions // args.measures)
    with tempfile.TemporaryDirectory() as out:
        curve = learner(ours).run(rules, steps=args.decisions, out=out, eval_every=every, progress=False)
    runs.append((f"hiddenhand {ours} (one process)", curve))
    base = curve[-1].steps / curve[-1].seconds
    print(f"{plots.describe(rules)}; exploitability measured exactly, training seconds without the measures")
    print("| learner | decisions | seconds | decisions/s | exploitability | speed vs ours |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, curve in runs:
        last = curve[-1]
        rate = last.steps / last.seconds
        print(
            f"| {name} | {last.steps:,} | {last.seconds:.1f} | {rate:,.0f} | {last.exploitability:.4f} | "
            f"{rate / base:.2f}x |"
        )
    for name, curve in runs:
        print(f"{name}: " + ", ".join(f"{p.steps:,}: {p.exploitability:.4f}" for p in curve))
    if args.plot:
        fig, axes = plots.figure(2, f"RLlib {method} and ours, self-play on {plots.describe(rules)}")
        for ax, column, xlabel in ((axes[0], "steps", plots.DECISIONS), (axes[1], "seconds", "training seconds")):
            plots.labels(ax, xlabel, plots.EXPLOITABILITY, xlog=True, ylog=True)
            for k, (name, curve) in enumerate(runs):
                points = [(getattr(p, column), p.exploitability) for p in curve if p.exploitability is not None]
                plots.measured(ax, [x for x, _ in points], [y for _, y in points], name, f"C{k}")
            ax.legend(fontsize="small")
        plots.save(fig, args.plot)


if __name__ == "__main__":
    main()
