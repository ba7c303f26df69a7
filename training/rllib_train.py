"""Multi-agent PPO self-play on Ray RLlib: ``hiddenhand train rllib``.

RLlib's PPO (new API stack) with :class:`hiddenhand.rllib.MaskedPPOModule`, every seat mapped
to one shared module (or one per seat), on a local Ray instance (127.0.0.1, usage statistics
off, the CPUs given) or on an existing cluster (``address``). Each iteration collects
``batch`` decisions from ``env_runners`` runners of ``envs_per_runner`` games each. The
shared module is measured exactly every ``eval_every`` iterations where the game declares a
measure that covers it (the Markov observation makes it exact), off the training clock; the
curve, the plot, ``run.json`` and Ctrl-C are :class:`~hiddenhand.training.run.Run`'s (its
steps are the decisions sampled, its bar's total ``iterations * batch``). The agent reloads with
:meth:`hiddenhand.rllib.RLlibAgent.load` (``hiddenhand play --opponent DIR`` and
``hiddenhand exploitability --agent DIR`` read it).

MMD is not offered here: RLlib's PPO learner has no hook for a KL term towards a second
(magnet) module without a custom learner class per algorithm version, which is glue we would
have to keep in step with Ray; MMD runs in :mod:`.selfplay`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hiddenhand.ray_cluster import start_ray
from hiddenhand.registry import get
from hiddenhand.training.run import Point, Run, exact_measure
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
) -> list[Point]:
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
    module = algo.get_module("shared" if policy == "shared" else "player_0")

    def measure() -> tuple[float | None, dict]:
        return exact_measure(declared, rules, RLlibAgent(module, game, rules.params, seed=seed)), {}

    try:
        run = Run("RLlib PPO self-play", rules, out_dir, total=iterations * batch, progress=progress)
        with run.training():
            for i in range(iterations):
                result = algo.train()
                run.advance(int(result["env_runners"]["num_env_steps_sampled_lifetime"]) - run.steps)
                if (i + 1) % eval_every == 0 and i + 1 < iterations:  # the last measure is the final one, in finish
                    run.measure(measure)
        record = {"iterations": iterations, "policy": policy, "seed": seed, "env_runners": env_runners}
        record |= {"envs_per_runner": envs_per_runner, "batch": batch}
        return run.finish(lambda: RLlibAgent(module, game, rules.params).save(run.out), measure, record)
    finally:
        algo.stop()


__all__ = ["train_rllib"]
