"""The benchmark's training runs: every method the budget names, trained once per
configuration and seed (the learners of every configuration in one process pool when the
budget runs several side by side: :class:`LearnerRuns`), or read back with ``resume`` from
a run that already finished in its directory; and :class:`TrainedRun`, the record of one
run that the measures and the report read.

The learners themselves and the run lifecycle (curve, ``run.json``, Ctrl-C) live in
:mod:`hiddenhand.training.learners` and :mod:`hiddenhand.training.run`; this module only says
which runs the benchmark makes, with what, and where.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from hiddenhand.agent import Agent
from hiddenhand.interrupt import Interrupted
from hiddenhand.registry import Benchmark, Game
from hiddenhand.training.benchmark.budgets import Budget, learner_settings
from hiddenhand.training.learners import learner
from hiddenhand.training.run import NotResumable, Point, finished


def train_learner(
    method: str, rules, steps: int, out: Path, seed: int, eval_every: int, progress: bool, resume: bool = False
):
    """Train the declared learner ``method`` with :func:`~.budgets.learner_settings`; the curve
    of :class:`~hiddenhand.training.run.Point`, the agent saved in ``out``. With ``resume``,
    a learner that resumes goes on with the run cut in ``out`` where it is this run (else it
    trains from the start). Module-level, so that a process pool can run it."""
    declared = learner(method)
    run = dict(steps=steps, out=out, seed=seed, eval_every=eval_every, settings=learner_settings(method, rules))
    if resume and declared.resumes:
        try:
            return declared.run(rules, progress=progress, resume=True, **run)
        except NotResumable:  # another run's state (other settings or code): this run starts afresh
            pass
    return declared.run(rules, progress=progress, **run)


_stopped: Any = None
"""In a pool process: the benchmark's stop event (see :func:`_pool_run`)."""
_heard_ctrl_c = False
"""In a pool process: a Ctrl-C came while no run held it."""


def _pool_process(stopped) -> None:
    """A pool process's start: the stop event, and Ctrl-C heard rather than raised between
    runs. Raised there it would end the process, the pool would count itself broken and stop
    the runs in its other processes with SIGTERM, which skips their last measure; a run
    holds Ctrl-C with its own handler, which gives this one back when the run ends. A
    benchmark started ignoring Ctrl-C (``nohup``) leaves it ignored in its processes too."""
    global _stopped
    _stopped = stopped
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, _hear_ctrl_c)


def _hear_ctrl_c(signum, frame) -> None:
    global _heard_ctrl_c
    _heard_ctrl_c = True  # not the event's set(): its lock may be held where the signal came


def _pool_run(method: str, rules, steps: int, out: Path, seed: int, eval_every: int, progress: bool, resume: bool):
    """:func:`train_learner` in a pool process, unless the benchmark has stopped: the pool
    hands a process its next run before the present one ends, where cancelling the futures
    cannot reach it, so a process would otherwise train a whole run after a Ctrl-C while the
    benchmark waits for it. A run that Ctrl-C (or SIGTERM) stops stops the benchmark, so it
    sets the event too: the other processes need not wait for the benchmark's own process to
    hear of it."""
    if _heard_ctrl_c:
        _stopped.set()
    if _stopped.is_set():
        raise Interrupted(f"{method} into {out}: not started, the benchmark stopped")
    try:
        return train_learner(method, rules, steps, out, seed, eval_every, progress, resume)
    except Interrupted:
        _stopped.set()
        raise


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


@dataclass(frozen=True)
class LearnerJob:
    """One learner run of the benchmark: :func:`train_learner`'s arguments (``progress``
    apart), and ``scale``, how many times its learner's share of the budget the run gets
    (the configuration's ``steps_scale`` times the budget's ``configuration_share``)."""

    method: str
    rules: Any
    steps: int
    path: Path
    seed: int
    eval_every: int
    scale: float

    def arguments(self) -> tuple:
        return self.method, self.rules, self.steps, self.path, self.seed, self.eval_every


def learner_jobs(rules, entry: Benchmark, budget: Budget, out: Path, seed: int) -> list[LearnerJob]:
    """Every learner of the budget with each of its seeds on one configuration, whose runs
    go under ``out`` (named as :attr:`Budget.configuration_share` keys it), in the budget's
    order of learners."""
    extra = budget.configuration_share.get(out.name, {})
    jobs = []
    for method in budget.learners:
        scale = entry.steps_scale * extra.get(method, 1.0)
        steps = max(1, round(budget.learner_steps * budget.learner_share.get(method, 1.0) * scale))
        for s in range(seed, seed + budget.seeds):
            every = max(1, steps // budget.evaluations)
            jobs.append(LearnerJob(method, rules, steps, out / method / f"seed{s}", s, every, scale))
    return jobs


class LearnerRuns:
    """The benchmark's learner runs over all its configurations: :meth:`start` takes them all
    (with ``resume``, a run that already finished in its directory is read back instead, and
    one that was cut goes on from its saved state where its learner resumes),
    :meth:`of` returns one configuration's.

    Why all at once. With ``budget.workers`` above 1 every run goes to one pool of that many
    processes (torch on one thread: two runs side by side use two cores) when the benchmark
    starts, and trains while the benchmark's own process runs the tabular methods and
    measures the configurations whose runs are done. Each configuration waiting for its own
    runs instead left a core idle whenever one of them was much longer than the others (the
    network learner on 6-card Goofspiel ran minutes alone). The runs given most beyond their
    learner's share (:attr:`LearnerJob.scale`: the longest of their learner's) start first,
    the others in the order of the configurations and the budget's learners, so that no long
    run starts last. With one worker the runs train in the benchmark's process, each
    configuration's when :meth:`of` asks for them, with their progress bars. :meth:`close`
    cancels the runs not yet started when the benchmark stops, those a process already holds
    included (a Ctrl-C reaches the pool's processes too, and stops the runs in them as it
    stops any run)."""

    def __init__(self, budget: Budget, progress: bool, resume: bool) -> None:
        self.budget, self.progress, self.resume = budget, progress, resume
        self.pool: ProcessPoolExecutor | None = None
        self.stopped = None
        self.bar = None
        self.jobs: dict[Path, list[list]] = {}
        """Per configuration's ``out``, its runs as ``[job, result]``: the curve read back, the
        pool's future, or ``None`` (to train in :meth:`of`)."""

    def close(self) -> None:
        """Cancel the runs not yet started, wait for those running, and close the pool."""
        if self.pool is not None:
            self.stopped.set()
            self.pool.shutdown(wait=True, cancel_futures=True)
        if self.bar is not None:
            self.bar.close()

    def start(self, configurations: list[tuple[Any, Benchmark, Path]], seed: int) -> None:
        """Read back or start the runs of every ``(rules, entry, out)`` configuration."""
        for rules, entry, out in configurations:
            jobs = learner_jobs(rules, entry, self.budget, out, seed)
            self.jobs[out] = [
                [job, read_back(job.path, rules, job.seed, job.steps, self.resume, learner_settings(job.method, rules))]
                for job in jobs
            ]
        todo = [pair for pairs in self.jobs.values() for pair in pairs if pair[1] is None]
        if self.budget.workers == 1 or not todo:
            return
        for job, _ in todo:  # made here: runs side by side would race to make (and tidy) them
            job.path.parent.mkdir(parents=True, exist_ok=True)
        # Spawned, not forked: a fork of a process holding torch's and numba's threads can die.
        spawn = multiprocessing.get_context("spawn")
        self.stopped = spawn.Event()
        self.pool = ProcessPoolExecutor(
            self.budget.workers, mp_context=spawn, initializer=_pool_process, initargs=(self.stopped,)
        )
        self.bar = tqdm(total=len(todo), desc="learner runs", unit="run", disable=not self.progress)
        for pair in sorted(todo, key=lambda pair: -pair[0].scale):  # a stable sort: ties keep their order
            pair[1] = self.pool.submit(_pool_run, *pair[0].arguments(), False, self.resume)
            pair[1].add_done_callback(lambda _: self.bar.update(1))

    def of(self, out: Path) -> list[TrainedRun]:
        """The runs of the configuration under ``out``: waited for, or trained now with one worker."""
        runs = []
        for job, result in self.jobs.pop(out):
            if result is None:
                curve = train_learner(*job.arguments(), self.progress, self.resume)
            else:
                curve = result.result() if isinstance(result, Future) else result
            runs.append(TrainedRun.of(job.method, job.seed, job.path, curve, isinstance(result, list)))
        return runs


def two_player_runs(
    entry: Benchmark, rules, budget: Budget, out: Path, seed: int, progress: bool, resume: bool, learning: LearnerRuns
) -> list[TrainedRun]:
    """The runs of a two-player configuration with an exact measure: the tabular methods where
    it declares ``tabular``, the budget's learners (``learning``'s) where it declares ``learn``."""
    runs = tabular_runs(rules, budget, out, seed, progress, resume) if entry.tabular else []
    if entry.learn:
        runs += learning.of(out)
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
