"""Multi-agent PPO self-play on Ray RLlib: ``hiddenhand train rllib``.

RLlib's PPO (new API stack) with :class:`hiddenhand.rllib.MaskedPPOModule`, every seat mapped
to one shared module (or one per seat), on a local Ray instance (127.0.0.1, usage statistics
off, the CPUs given) or on an existing cluster (``address``). Each iteration collects
``batch`` decisions from ``env_runners`` runners of ``envs_per_runner`` games each. The
shared module is measured exactly every ``eval_every`` iterations where the game declares a
measure that covers it (the Markov observation makes it exact), and the curve, the plot and
the agent are written as ``hiddenhand train ppo`` writes them; the agent reloads with
:meth:`hiddenhand.rllib.RLlibAgent.load` (``hiddenhand play --opponent DIR`` and
``hiddenhand exploitability --agent DIR`` read it).

MMD is not offered here: RLlib's PPO learner has no hook for a KL term towards a second
(magnet) module without a custom learner class per algorithm version, which is glue we would
have to keep in step with Ray; MMD runs in :mod:`.selfplay`.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from hiddenhand.files import atomic_write
from hiddenhand.interrupt import Interrupted, held_ctrl_c
from hiddenhand.ray_cluster import start_ray
from hiddenhand.registry import get
from hiddenhand.training.plots import describe
from hiddenhand.training.ppo import PPOPoint, exact_measure, write_curve
from hiddenhand.validation import check_int


def train_rllib(
    game: str,
    game_kwargs: dict[str, Any],
    iterations: int,
    out_dir: str | Path,
    *,
    env_runners: int = 1,
    envs_per_runner: int = 8,
    batch: int = 4000,
    policy: str = "shared",
    eval_every: int = 5,
    address: str | None = None,
    num_cpus: int | None = None,
    seed: int = 0,
    progress: bool = True,
) -> list[PPOPoint]:
    """Train for ``iterations`` RLlib iterations; see the module docstring. Returns the curve
    (decisions sampled, training seconds without measures, exploitability or None)."""
    declared = get(game)
    game = declared.name
    iterations = check_int("iterations", iterations, 1, 10**7)
    eval_every = check_int("eval_every", eval_every, 1, 10**7)
    env_runners = check_int("env_runners", env_runners, 0, 10_000)
    envs_per_runner = check_int("envs_per_runner", envs_per_runner, 1, 10_000)
    batch = check_int("batch", batch, 1, 10**8)
    rules = declared.rules(**game_kwargs)
    start_ray(address, num_cpus)
    from hiddenhand.rllib import RLlibAgent, ppo_config

    config = ppo_config(
        game, rules.params, policy=policy, env_runners=env_runners, envs_per_runner=envs_per_runner, seed=seed
    ).training(train_batch_size_per_learner=batch, minibatch_size=min(batch, 512), num_epochs=4)
    algo = config.build_algo()
    out = Path(out_dir)
    curve: list[PPOPoint] = []
    clock = {"seconds": 0.0, "since": time.perf_counter(), "steps": 0}
    module = algo.get_module("shared" if policy == "shared" else "player_0")

    def evaluate() -> None:
        clock["seconds"] += time.perf_counter() - clock["since"]
        agent = RLlibAgent(module, game, rules.params, seed=seed)
        curve.append(PPOPoint(clock["steps"], clock["seconds"], exact_measure(declared, rules, agent), {}))
        write_curve(out, curve, f"RLlib PPO self-play on {describe(rules)}")
        clock["since"] = time.perf_counter()

    interrupted = False
    try:
        with tqdm(total=iterations, desc=f"RLlib PPO on {rules.name}", unit="it", disable=not progress) as bar:
            try:
                for i in range(iterations):
                    result = algo.train()
                    clock["steps"] = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
                    if (i + 1) % eval_every == 0 and i + 1 < iterations:
                        evaluate()
                        bar.set_postfix(exploitability=curve[-1].exploitability)
                    bar.update(1)
            except KeyboardInterrupt:
                interrupted = True
                bar.write("interrupted: saving the module, then measuring it (Ctrl-C skips that)")
        with held_ctrl_c() as ctrl_c:  # a Ctrl-C from here on skips the final measure only
            agent = RLlibAgent(module, game, rules.params)
            agent.save(out)
            _, skipped = ctrl_c.unless_interrupted(evaluate)
            interrupted |= skipped
            with atomic_write(out / "run.json", "w") as handle:
                record = {"game": game, "params": rules.params, "iterations": iterations, "policy": policy}
                record |= {"seed": seed, "env_runners": env_runners, "envs_per_runner": envs_per_runner, "batch": batch}
                json.dump({**record, "interrupted": interrupted, "curve": [asdict(p) for p in curve]}, handle, indent=2)
            if interrupted:
                raise Interrupted(f"RLlib training stopped by Ctrl-C; results in {out}", curve)
    finally:
        algo.stop()
    return curve


__all__ = ["train_rllib"]
