"""RLlib's throughput on our short games, beside ``hiddenhand train selfplay`` on the same game and budget.

Goofspiel episodes last 6 to 24 decisions, so RLlib's fixed cost per episode and per env
step (connectors, episode objects, the actor round trip) dominates; stepping several games
per env runner amortises it. This runs ``train_rllib`` with 1 and 8 games per runner, and
self-play PPO (:mod:`hiddenhand.training.policy_gradient`, one process, 64 games in lockstep) for
about the same number of decisions, on Markov Goofspiel, and prints decisions per second,
the exact exploitability reached, and its fall per minute of training, with the ratio to
the in-process learner. A local Ray instance on 127.0.0.1 with ``--cpus`` CPUs.

Run: ``python benchmarks/bench_rllib.py [--cards 4] [--iterations 4] [--batch 2000] [--cpus 2]``.
"""

from __future__ import annotations

import argparse
import tempfile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=4, help="Goofspiel cards (default 4)")
    parser.add_argument("--iterations", type=int, default=4, help="RLlib iterations (default 4)")
    parser.add_argument("--batch", type=int, default=2000, help="decisions per RLlib iteration (default 2000)")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray instance (default 2)")
    args = parser.parse_args()

    from hiddenhand.ray_cluster import start_ray
    from hiddenhand.training.rllib_train import train_rllib

    start_ray(num_cpus=args.cpus)
    import torch

    from hiddenhand.training.policy_gradient import train_selfplay

    torch.set_num_threads(1)
    params = {"num_cards": args.cards, "observation": "markov"}
    uniform = (args.cards**2 - 1) / 6
    rows = []
    for envs in (1, 8):
        with tempfile.TemporaryDirectory() as out:
            curve = train_rllib(
                "goofspiel",
                params,
                args.iterations,
                out,
                env_runners=1,
                envs_per_runner=envs,
                batch=args.batch,
                eval_every=args.iterations,
                progress=False,
            )
        rows.append((f"RLlib PPO, 1 runner x {envs} games", curve[-1]))
    decisions = rows[-1][1].steps
    with tempfile.TemporaryDirectory() as out:
        curve = train_selfplay("goofspiel", params, decisions, out, learner="ppo", eval_every=decisions, progress=False)
    rows.append(("hiddenhand selfplay PPO (one process)", curve[-1]))
    base = rows[-1][1]
    print(f"Markov Goofspiel, {args.cards} cards; uniform play concedes {uniform:.3f}")
    print("| learner | decisions | seconds | decisions/s | exploitability | fall per minute | speed vs selfplay |")
    print("|---|---|---|---|---|---|---|")
    for name, last in rows:
        rate = last.steps / last.seconds
        fall = (uniform - last.exploitability) / (last.seconds / 60)
        ratio = rate / (base.steps / base.seconds)
        print(
            f"| {name} | {last.steps:,} | {last.seconds:.1f} | {rate:,.0f} | {last.exploitability:.4f} | "
            f"{fall:.3f} | {ratio:.2f}x |"
        )


if __name__ == "__main__":
    main()
