"""The benchmark's training runs: every method the budget names, trained once per
configuration and seed (the learners in a process pool when the budget runs several side by
side), or read back with ``resume`` from a run that already finished in its directory; and
:class:`TrainedRun`, the record of one run that the measures and the report read.

The learners themselves and the run lifecycle (curve, ``run.json``, Ctrl-C) live in
:mod:`hiddenhand.training.learners` and :mod:`hiddenhand.training.run`; this module only says
which runs the benchmark makes, with what, and where.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from tqdm.auto import tqdm

from hiddenhand.agent import Agent
from hiddenhand.registry import Benchmark, Game
from hiddenhand.training.benchmark.budgets import Budget, learner_settings
from hiddenhand.training.learners import learner
from hiddenhand.training.run import Point, finished


def train_learner(method: str, rules, steps: int, out: Path, seed: int, eval_every: int, progress: bool):
    """Train the declared learner ``method`` with :func:`~.budgets.learner_settings`; the curve
    of :class:`~hiddenhand.training.run.Point`, the agent saved in ``out``. Module-level, so
    that a process pool can run it."""
    settings = learner_settings(method, rules)
    return learner(method).run(
        rules, steps=steps, out=out, seed=seed, eval_every=eval_every, settings=settings, progress=progress
    )


@dataclass
class TrainedRun:
    """One training run: its curve ``(steps, seconds, exploitability)`` and its saved agent."""

    method: str
    seed: int
    path: Path
    curve: list[tuple[int, float, float | None]]
    reused: bool = False
    """Read back from a finished run in ``path`` (``resume``) rather than trained."""

    @classmethod
    def of(cls, method: str, seed: int, path: Path, curve: list[Point], reused: bool) -> TrainedRun:
        return cls(method, seed, path, [(p.steps, p.seconds, p.exploitability) for p in curve], reused)

    def record(self, game: str, config) -> dict:
        """The run's record in ``summary.json``: where it ended, and where its agent is."""
        steps, seconds, exploitability = self.curve[-1]
        return {
            "game": game,
            "config": config,
            "method": self.method,
            "seed": self.seed,
            "steps": steps,
            "seconds": seconds,
            "exploitability": exploitability,
            "exact": exploitability is not None,
            "path": str(self.path),
            "reused": self.reused,
        }


def read_back(path: Path, rules, seed: int, total: int, resume: bool, settings=None) -> list[Point] | None:
    """With ``resume``, the curve of a finished run of at least ``total`` steps (and these
    ``settings``, where given) already in ``path`` (:func:`~hiddenhand.training.run.finished`)."""
    return finished(path, rules, seed, total, settings) if resume else None


def trained(path: Path, rules, seed: int, total: int, resume: bool, train: Callable[[], list[Point]], settings=None):
    """``(curve, reused)``: the curve :func:`read_back` finds, else ``train()``'s."""
    curve = read_back(path, rules, seed, total, resume, settings)
    return (train(), False) if curve is None else (curve, True)


def cfr(rules, algorithm: str, iterations: int, every: int, out: Path, seed: int, progress: bool) -> list[Point]:
    """The declared CFR learner with ``algorithm``."""
    solver = learner("cfr")
    settings = replace(solver.settings_for(rules), algorithm=algorithm)
    return solver.run(
        rules, steps=iterations, out=out, seed=seed, eval_every=every, settings=settings, progress=progress
    )


def tabular_runs(rules, budget: Budget, out: Path, seed: int, progress: bool, resume: bool) -> list[TrainedRun]:
    """Where the tree is small: CFR+ and external-sampling MCCFR, and PPO against a pool."""
    runs = []
    for algorithm, iterations in (("cfr+", budget.cfr_iterations), ("mccfr-external", budget.mccfr_iterations)):
        path, every = out / algorithm, max(1, iterations // budget.evaluations)
        curve, reused = trained(
            path,
            rules,
            seed,
            iterations,
            resume,
            lambda: cfr(rules, algorithm, iterations, every, path, seed, progress),
        )
        runs.append(TrainedRun.of(algorithm, seed, path, curve, reused))
    path, every = out / "ppo", max(1, budget.ppo_steps // budget.evaluations)
    curve, reused = trained(
        path,
        rules,
        seed,
        budget.ppo_steps,
        resume,
        lambda: learner("ppo").run(
            rules,
            steps=budget.ppo_steps,
            out=path,
            seed=seed,
            eval_every=every,
            settings=replace(learner("ppo").settings_for(rules), eval_games=50),
            progress=progress,
        ),
    )
    runs.append(TrainedRun.of("ppo", seed, path, curve, reused))
    return runs


def learned_runs(
    rules, entry: Benchmark, budget: Budget, out: Path, seed: int, progress: bool, resume: bool
) -> list[TrainedRun]:
    """Every learner of the budget with each of its seeds, ``budget.workers`` at a time (one
    process each, torch on one thread: two runs side by side use two cores); with ``resume``,
    a run that already finished in its directory is read back instead."""
    jobs = [(method, seed + k) for method in budget.learners for k in range(budget.seeds)]

    def args(method: str, s: int) -> tuple:
        steps = max(1, round(budget.learner_steps * entry.steps_scale * budget.learner_share.get(method, 1.0)))
        eval_every = max(1, steps // budget.evaluations)
        return method, rules, steps, out / method / f"seed{s}", s, eval_every

    def done_before(method: str, s: int) -> list[Point] | None:
        _, _, steps, path, _, _ = args(method, s)
        return read_back(path, rules, s, steps, resume, learner_settings(method, rules))

    done = {job: done_before(*job) for job in jobs}
    todo = [job for job in jobs if done[job] is None]
    if budget.workers == 1 or not todo:
        curves = [train_learner(*args(method, s), progress) for method, s in todo]
    else:
        for method in budget.learners:  # made here: runs side by side would race to make (and tidy) them
            (out / method).mkdir(parents=True, exist_ok=True)
        # Spawned, not forked: a fork of a process holding torch's and numba's threads can die.
        with ProcessPoolExecutor(budget.workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [pool.submit(train_learner, *args(method, s), False) for method, s in todo]
            bar = tqdm(total=len(futures), desc=f"learners on {rules.name}", unit="run", disable=not progress)
            with bar:
                curves = []
                for future in futures:
                    curves.append(future.result())
                    bar.update(1)
    done |= dict(zip(todo, curves))
    return [
        TrainedRun.of(method, s, out / method / f"seed{s}", done[method, s], (method, s) not in todo)
        for method, s in jobs
    ]


def two_player_runs(
    entry: Benchmark, rules, budget: Budget, out: Path, seed: int, progress: bool, resume: bool
) -> list[TrainedRun]:
    """The runs of a two-player configuration with an exact measure: the tabular methods where
    it declares ``tabular``, the budget's learners where it declares ``learn``."""
    runs = tabular_runs(rules, budget, out, seed, progress, resume) if entry.tabular else []
    if entry.learn:
        runs += learned_runs(rules, entry, budget, out, seed, progress, resume)
    return runs


def tournament_cfr(rules, budget: Budget, out: Path, seed: int, progress: bool, resume: bool) -> Path:
    """CFR+ for a tournament's line-up, measured along the way (a curve, not a single point);
    the directory of its saved policy."""
    path = out / "cfr+"
    iterations = budget.many_cfr_iterations
    every = max(1, iterations // budget.evaluations)
    trained(path, rules, seed, iterations, resume, lambda: cfr(rules, "cfr+", iterations, every, path, seed, progress))
    return path


def load(path: Path, game: Game, seed: int) -> Agent:
    """The agent a run saved in ``path``."""
    from hiddenhand.agents import load_agent

    return load_agent(game.name, str(path), seed=seed)
