"""Self-play PPO: sb3-contrib's MaskablePPO on one seat of a game, against a pool of frozen
snapshots of itself and the game's rule-based agents.

Each episode the learner takes a random seat, and every other seat is drawn from the pool:
a snapshot of the learner (one is added every ``snapshot_every`` steps, the oldest dropped
beyond ``pool_size``) with probability ``self_play``, otherwise one of the game's
heuristics (random included), so the learner keeps meeting fixed styles of play and does
not chase its own tail. Every ``eval_every`` steps the current policy is measured and a
row is written to ``curve.csv`` (and ``curve.png`` redrawn):

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
import csv
import io
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from hiddenhand.agents.base import Agent
from hiddenhand.agents.ppo import PPOAgent
from hiddenhand.files import atomic_write
from hiddenhand.gymnasium_env import SingleAgentEnv
from hiddenhand.interrupt import Interrupted, held_ctrl_c
from hiddenhand.registry import get
from hiddenhand.training import plots
from hiddenhand.training.evaluation import can_play, play_games
from hiddenhand.validation import check_choice, check_int

EXPLOITABILITY = ("every", "final", "never")


@dataclass
class PPOPoint:
    """One evaluation: steps, wall seconds of training, exploitability (None where no exact
    measure exists) and the mean return against each heuristic."""

    steps: int
    seconds: float
    exploitability: float | None
    against: dict[str, float]


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
) -> list[PPOPoint]:
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
    out = Path(out_dir)
    curve: list[PPOPoint] = []
    clock = {"seconds": 0.0, "since": time.perf_counter()}

    def snapshot() -> PPOAgent:
        # A frozen copy of the policy network (no model reload, which would reseed the
        # global generators the training run draws from).
        return PPOAgent(SimpleNamespace(policy=copy.deepcopy(model.policy)), game, params)

    def evaluate(steps: int, final: bool = False) -> None:
        clock["seconds"] += time.perf_counter() - clock["since"]
        agent = PPOAgent(model, game, params, seed=seed)
        against = {}
        for k, (name, opponent) in enumerate(judges.items()):
            results = play_games(rules, [agent] + [opponent] * (rules.num_players - 1), eval_games, seed=seed + k)
            against[name] = float(results[:, 0].mean())
        exact = exploitability == "every" or (exploitability == "final" and final)
        curve.append(
            PPOPoint(steps, clock["seconds"], exact_measure(declared, rules, agent) if exact else None, against)
        )
        write_curve(out, curve, f"PPO against a pool on {plots.describe(rules)}")
        clock["since"] = time.perf_counter()

    class Hooks(BaseCallback):
        def __init__(self, bar) -> None:
            super().__init__()
            self.bar = bar

        def _on_step(self) -> bool:
            steps = self.num_timesteps
            self.bar.update(1)
            if steps % snapshot_every == 0:
                pool.append(snapshot())
                del pool[:-pool_size]
            if steps % eval_every == 0:
                evaluate(steps)
                point = curve[-1]
                self.bar.set_postfix(
                    exploitability=point.exploitability, **{k: f"{v:+.2f}" for k, v in point.against.items()}
                )
            return True

    total = -(-timesteps // n_steps) * n_steps  # what learn() runs: whole rollouts
    interrupted = False
    with tqdm(total=total, desc=f"PPO on {rules.name}", disable=not progress, unit="step") as bar:
        try:
            model.learn(total_timesteps=timesteps, callback=Hooks(bar))
        except KeyboardInterrupt:
            interrupted = True
            bar.write("interrupted: saving the model, then measuring it (Ctrl-C skips that)")
    with held_ctrl_c() as ctrl_c:  # a Ctrl-C from here on skips the final measure only
        PPOAgent(model, game, params).save(out)
        steps = int(model.num_timesteps)
        if not curve or curve[-1].steps != steps or (exploitability == "final" and curve[-1].exploitability is None):
            if curve and curve[-1].steps == steps:
                curve.pop()
            _, skipped = ctrl_c.unless_interrupted(lambda: evaluate(steps, final=True))
            interrupted |= skipped
        with atomic_write(out / "run.json", "w") as handle:
            record = {"game": game, "params": params, "timesteps": steps, "seed": seed, "interrupted": interrupted}
            json.dump({**record, "curve": [asdict(p) for p in curve]}, handle, indent=2)
        if interrupted:
            raise Interrupted(f"PPO stopped by Ctrl-C after {steps} of {total} steps; results in {out}", curve)
    return curve


def exact_measure(declared, rules, agent) -> float | None:
    """``declared.exact_exploitability(rules, agent)`` with torch's thread count kept. The
    first parallel measure in a process starts numba's OpenMP threading layer, which sets
    the OpenMP thread count that torch shares to every core: the training after it then ran
    its one-thread network on two threads, and with two runs side by side on two cores a
    run's first job was 3 to 14 times slower than the next."""
    import torch

    threads = torch.get_num_threads()
    try:
        return declared.exact_exploitability(rules, agent)
    finally:
        torch.set_num_threads(threads)


def write_curve(out: Path, curve: list[PPOPoint], title: str) -> None:
    """``curve.csv`` and ``curve.png`` of a PPO-family run: exploitability, and the mean
    return against each heuristic where the run measured it (a panel only then)."""
    names = list(curve[0].against)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["steps", "seconds", "exploitability", *(f"vs_{n}" for n in names)])
    for p in curve:
        writer.writerow(
            [
                p.steps,
                f"{p.seconds:.3f}",
                "" if p.exploitability is None else f"{p.exploitability:.6g}",
                *(f"{p.against[n]:.4f}" for n in names),
            ]
        )
    with atomic_write(out / "curve.csv", "w") as handle:
        handle.write(buffer.getvalue())
    plots.save(curve_figure(curve, title), out / "curve.png")


def curve_figure(curve: list[PPOPoint], title: str):
    """A PPO-family run's curve: exploitability (log scale) against decisions (a linear axis,
    which keeps the self-play learners' first measure, at 0 decisions, before training), and
    the mean return against each heuristic where the run measured it (a second panel only then)."""
    names = list(curve[0].against)
    fig, axes = plots.figure(2 if names else 1, title)
    steps = [p.steps for p in curve]
    exact = [(p.steps, p.exploitability) for p in curve if p.exploitability is not None]
    plots.labels(axes[0], plots.DECISIONS, plots.EXPLOITABILITY, ylog=bool(exact))
    if exact:
        plots.measured(axes[0], [x for x, _ in exact], [y for _, y in exact])
    else:
        axes[0].text(
            0.5, 0.5, "no exact equilibrium for this game", ha="center", va="center", transform=axes[0].transAxes
        )
    if names:
        plots.labels(axes[1], plots.DECISIONS, "mean return against the heuristic")
        for n in names:
            plots.measured(axes[1], steps, [p.against[n] for p in curve], f"vs {n}")
    return fig
