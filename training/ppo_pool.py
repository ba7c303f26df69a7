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

The model is saved to ``out`` (``PPOAgent.load(out)``). Ctrl-C saves the model,
measures it (a second Ctrl-C skips that), writes the curve and raises
:class:`~hiddenhand.interrupt.Interrupted`. Torch runs on one thread: on two cores more threads made PPO far slower.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from hiddenhand.agent import Agent
from hiddenhand.agents.ppo import PPOAgent
from hiddenhand.core import Rules, check_rules
from hiddenhand.devices import torch_device
from hiddenhand.gymnasium_env import SingleAgentEnv
from hiddenhand.registry import game_of
from hiddenhand.training.evaluation import can_play, play_games
from hiddenhand.training.run import Point, Run, exact_measure
from hiddenhand.training.sb3_logger import without_log_folder
from hiddenhand.validation import check_choice, check_int, named

EXPLOITABILITY = ("every", "final", "never")


@dataclass(frozen=True)
class PoolSettings:
    """The learner's settings; see the module docstring for the pool."""

    snapshot_every: int = 2048
    """Learner moves between snapshots of it added to the pool."""
    pool_size: int = 5
    """Snapshots kept in the pool (the oldest dropped beyond it)."""
    self_play: float = 0.5
    """Chance that an opponent seat is a snapshot rather than one of the game's heuristics."""
    n_steps: int = 512
    """Moves PPO collects per update (the run is rounded up to whole updates)."""
    eval_games: int = 200
    """Games against each heuristic per evaluation, seats rotated."""
    exploitability: str = "every"
    """When to measure exploitability exactly: at every evaluation, only the final one, or
    never (Goofspiel on the full observation: about two minutes a measure at 5 cards;
    seconds up to 8 cards on the Markov observation)."""

    def check(self) -> None:
        """Refuse a setting out of its range, naming it and what is allowed."""
        for name in ("snapshot_every", "pool_size", "n_steps", "eval_games"):
            check_int(name, getattr(self, name), 1, 10**9)
        if isinstance(self.self_play, bool) or not isinstance(self.self_play, (int, float)):
            raise ValueError(f"{named('self_play', self.self_play)} is not allowed; allowed: a number from 0 to 1")
        if not 0.0 <= self.self_play <= 1.0:
            raise ValueError(f"{named('self_play', self.self_play)} is out of range; allowed: 0 to 1")
        check_choice("exploitability", self.exploitability, EXPLOITABILITY)


def settings_for_rules(rules: Rules) -> PoolSettings:
    """The learner's settings for ``rules`` (its declaration, training/learners.py): the
    same on every game."""
    return PoolSettings()


def train_ppo(
    rules: Rules,
    *,
    steps: int,
    out: str | Path,
    seed: int = 0,
    eval_every: int = 4096,
    settings: PoolSettings | None = None,
    progress: bool = True,
    seconds: float | None = None,
    device: str = "auto",
) -> list[Point]:
    """Train and save; see the module docstring. Returns the evaluation curve.

    ``steps`` are the learner's moves; PPO collects ``settings.n_steps`` moves per update,
    so they are rounded up to a multiple of it. On the full observation the network may read
    the history, so Goofspiel's measure is the dynamic programme over histories, one query
    at a time (minutes per evaluation at 5 cards); on ``observation="markov"`` it is the
    induction over positions with batched queries (seconds up to 8 cards). The network runs
    on ``device`` (:func:`~hiddenhand.devices.torch_device`).
    """
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    torch.set_num_threads(1)
    declared = game_of(check_rules(rules, "train_ppo"))
    game = declared.name
    device = torch_device(device)
    timesteps = check_int("steps", steps, 1, 10**9)
    check_int("eval_every", eval_every, 1, 10**9)
    s = settings or settings_for_rules(rules)
    s.check()
    snapshot_every, pool_size, n_steps = s.snapshot_every, s.pool_size, s.n_steps
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
            if pool and rng.random() < s.self_play:
                picks.append(pool[int(rng.integers(len(pool)))])
            else:
                picks.append(list(heuristics.values())[int(rng.integers(len(heuristics)))])
        return picks

    env = SingleAgentEnv(game, draw, seat="random", **params)
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=n_steps, batch_size=min(n_steps, 256), seed=seed, device=device, verbose=0
    )
    without_log_folder(model)
    total = -(-timesteps // n_steps) * n_steps  # what learn() runs: whole rollouts
    run = Run(f"PPO against a pool on {device}", rules, out, total=total, progress=progress, seconds=seconds)

    def snapshot() -> PPOAgent:
        # A frozen copy of the policy network (no model reload, which would reseed the
        # global generators the training run draws from).
        return PPOAgent(SimpleNamespace(policy=copy.deepcopy(model.policy)), game, params)

    def measure(final: bool = False) -> tuple[float | None, dict[str, float]]:
        agent = PPOAgent(model, game, params, seed=seed)
        against = {}
        for k, (name, opponent) in enumerate(judges.items()):
            results = play_games(rules, [agent] + [opponent] * (rules.num_players - 1), s.eval_games, seed=seed + k)
            against[name] = float(results[:, 0].mean())
        exact = s.exploitability == "every" or (s.exploitability == "final" and final)
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
            return run.going()  # False ends learn(): a budget of seconds spent, or Ctrl-C

    with run.training():
        model.learn(total_timesteps=timesteps, callback=Hooks())
    record = {"settings": asdict(s), "seed": seed, "device": device}
    return run.finish(lambda: PPOAgent(model, game, params).save(run.out), lambda: measure(final=True), record)


__all__ = ["EXPLOITABILITY", "PoolSettings", "settings_for_rules", "train_ppo"]
