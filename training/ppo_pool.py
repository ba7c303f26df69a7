"""PPO against a pool: sb3-contrib's MaskablePPO on one seat of a game, against a pool of
frozen snapshots of itself and the game's rule-based agents.

Each episode the learner takes a random seat, and every other seat is drawn from the pool:
a snapshot of the learner (one is added every ``snapshot_every`` steps, the oldest dropped
beyond ``pool_size``) with probability ``self_play``, otherwise one of the game's
heuristics (random included), so the learner keeps meeting fixed styles of play and does
not chase its own tail. Every ``eval_every`` steps the current policy is measured, off the
training clock (:class:`~hiddenhand.training.run.Run`, which writes ``curve.csv``,
``curve.png`` and ``run.json``):

- exploitability against the exact equilibrium where we have one: two-player Goofspiel
  (random prizes, bids shown, point difference) by the exact dynamic programme
  (:mod:`hiddenhand.solvers.goofspiel.histories`); one round of two-player Spoof or Bid
  Spoof (``objective="round"``) by OpenSpiel's exact best response through the adapter
  (NashConv / 2). Elsewhere the column is empty;
- the mean return against each heuristic, over ``eval_games`` games with seats rotated.

The model is saved to ``out_dir`` (``PPOAgent.load(out_dir)``). Ctrl-C saves the model,
measures it (a second Ctrl-C skips that), writes the curve and raises
:class:`~hiddenhand.interrupt.Interrupted`. Torch runs on one thread: on two cores more threads made PPO far slower.
"""

from __future__ import annotations

import copy
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from hiddenhand.agent import Agent
from hiddenhand.agents.ppo import PPOAgent
from hiddenhand.gymnasium_env import SingleAgentEnv
from hiddenhand.registry import get
from hiddenhand.training.evaluation import can_play, play_games
from hiddenhand.training.run import Point, Run, exact_measure
from hiddenhand.training.sb3_logger import without_log_folder
from hiddenhand.validation import check_choice, check_int

EXPLOITABILITY = ("every", "final", "never")


def train_ppo(
    game: str,
    game_kwargs: dict[str, Any],
    timesteps: int,
    out_dir: str | Path,
    seed: int = 0,
    snapshot_every: int = 2048,
    pool_size: int = 5,
    self_play: float = 0.5,
    eval_every: int = 4096,
    eval_games: int = 200,
    n_steps: int = 512,
    exploitability: str = "every",
    progress: bool = True,
) -> list[Point]:
    """Train and save; see the module docstring. Returns the evaluation curve.

    PPO collects ``n_steps`` moves per update, so ``timesteps`` is rounded up to a multiple
    of it. ``exploitability`` says when to measure it exactly: at ``"every"`` evaluation,
    only at the ``"final"`` one, or ``"never"``. On the full observation the network may read
    the history, so Goofspiel's measure is the dynamic programme over histories, one query
    at a time (about two minutes per evaluation at 5 cards); on ``observation="markov"`` it is
    the induction over positions with batched queries (seconds up to 8 cards).
    """
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    torch.set_num_threads(1)
    declared = get(game)
    game = declared.name
    timesteps = check_int("timesteps", timesteps, 1, 10**9)
    for name, value in (("snapshot_every", snapshot_every), ("eval_every", eval_every), ("eval_games", eval_games)):
        check_int(name, value, 1, 10**9)
    if not 0.0 <= self_play <= 1.0:
        raise ValueError(f"self_play={self_play!r} is out of range; allowed: 0 to 1")
    exploitability = check_choice("exploitability", exploitability, EXPLOITABILITY)
    rules = declared.rules(**game_kwargs)
    params = rules.params
    # Sparring partners that can read this observation (not Goofspiel's hard level on the Markov one).
    heuristics = {name: declared.make_agent(name, rules) for name in declared.heuristics}
    heuristics = {name: agent for name, agent in heuristics.items() if can_play(agent, rules)}
    # Evaluation plays its own copies, so that how often and how long one evaluates never
    # changes the opponents' generators, and so the training run.
    judges = {name: declared.make_agent(name, rules) for name in heuristics}
    pool: list[Agent] = []

    def draw(rng: np.random.Generator) -> list[Agent]:
        picks = []
        for _ in range(rules.num_players - 1):
            if pool and rng.random() < self_play:
                picks.append(pool[int(rng.integers(len(pool)))])
            else:
                picks.append(list(heuristics.values())[int(rng.integers(len(heuristics)))])
        return picks

    env = SingleAgentEnv(game, draw, seat="random", **game_kwargs)
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=n_steps, batch_size=min(n_steps, 256), seed=seed, device="cpu", verbose=0
    )
    without_log_folder(model)
    total = -(-timesteps // n_steps) * n_steps  # what learn() runs: whole rollouts
    run = Run("PPO against a pool", rules, out_dir, total=total, progress=progress)

    def snapshot() -> PPOAgent:
        # A frozen copy of the policy network (no model reload, which would reseed the
        # global generators the training run draws from).
        return PPOAgent(SimpleNamespace(policy=copy.deepcopy(model.policy)), game, params)

    def measure(final: bool = False) -> tuple[float | None, dict[str, float]]:
        agent = PPOAgent(model, game, params, seed=seed)
        against = {}
        for k, (name, opponent) in enumerate(judges.items()):
            results = play_games(rules, [agent] + [opponent] * (rules.num_players - 1), eval_games, seed=seed + k)
            against[name] = float(results[:, 0].mean())
        exact = exploitability == "every" or (exploitability == "final" and final)
        return exact_measure(declared, rules, agent) if exact else None, against

    class Hooks(BaseCallback):
        def _on_step(self) -> bool:
            steps = self.num_timesteps
            run.advance(steps - run.steps)
            if steps % snapshot_every == 0:
                pool.append(snapshot())
                del pool[:-pool_size]
            if steps % eval_every == 0 and steps < total:  # the last measure is the final one, in finish
                run.measure(measure)
            return True

    with run.training():
        model.learn(total_timesteps=timesteps, callback=Hooks())
    record = {"seed": seed, "snapshot_every": snapshot_every, "pool_size": pool_size, "self_play": self_play}
    record |= {"n_steps": n_steps, "exploitability_measured": exploitability}
    return run.finish(lambda: PPOAgent(model, game, params).save(run.out), lambda: measure(final=True), record)


__all__ = ["EXPLOITABILITY", "train_ppo"]
