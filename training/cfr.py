"""CFR through the OpenSpiel adapter: OpenSpiel's C++ solvers on the game's cached tree,
with NashConv measured exactly (OpenSpiel's best response) as they run.

A run writes into its output directory:

- ``curve.csv``: iteration, solver seconds (evaluation excluded), NashConv and
  exploitability (NashConv / number of players) at every evaluation, rewritten
  atomically at each one, so an interrupted run leaves a consistent curve;
- ``curve.png``: exploitability (NashConv / players, the benchmark's figure) against
  iterations and against solver seconds, log scales, every measured point (:mod:`.plots`);
- ``policy.npz``: the average policy as a :class:`~hiddenhand.agents.PolicyAgent`, which
  ``hiddenhand play goofspiel --opponent DIR`` plays against;
- ``run.json``: the game, its parameters, the algorithm and the final figures.

Ctrl-C stops the run after the current iteration, writes the policy, then measures it
(a second Ctrl-C skips that measure) and writes the rest, and raises
:class:`~hiddenhand.interrupt.Interrupted` carrying the curve.

The whole tree is enumerated, so before building it the run estimates its size (Knuth's
random-probe estimator) and refuses games that would not fit, naming the declared
configurations that do.
"""

from __future__ import annotations

import csv
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyspiel
from tqdm.auto import tqdm

from hiddenhand.agents.policy_agent import PolicyAgent
from hiddenhand.core import Rules
from hiddenhand.files import atomic_write
from hiddenhand.interrupt import Interrupted, held_ctrl_c
from hiddenhand.openspiel import HiddenhandGame, cached_tree, to_tabular
from hiddenhand.training import plots

ALGORITHMS = ("cfr", "cfr+", "mccfr-external", "mccfr-outcome")


@dataclass(frozen=True)
class CurvePoint:
    iteration: int
    seconds: float
    nash_conv: float
    exploitability: float


class _Solver:
    """One of OpenSpiel's C++ solvers behind a common face: ``step()`` and ``policy()``."""

    def __init__(self, algorithm: str, tree: pyspiel.Game, seed: int) -> None:
        self.tree = tree
        self.sampled = algorithm.startswith("mccfr")
        if algorithm == "cfr":
            self.solver = pyspiel.CFRSolver(tree)
        elif algorithm == "cfr+":
            self.solver = pyspiel.CFRPlusSolver(tree)
        elif algorithm == "mccfr-external":
            self.solver = pyspiel.ExternalSamplingMCCFRSolver(tree, seed=seed)
        else:
            self.solver = pyspiel.OutcomeSamplingMCCFRSolver(tree, seed=seed)

    def step(self) -> None:
        if self.sampled:
            self.solver.run_iteration()
        else:
            self.solver.evaluate_and_update_policy()

    def policy(self):
        """The average policy in a form ``pyspiel.nash_conv`` takes. (The solver must stay
        alive while it is used: OpenSpiel's average policies are views into the solver.)"""
        average = self.solver.average_policy()
        return to_tabular(self.tree, average) if self.sampled else average


def train_cfr(
    rules: Rules,
    algorithm: str,
    iterations: int,
    eval_every: int,
    out_dir: str | Path,
    seed: int = 0,
    progress: bool = True,
) -> list[CurvePoint]:
    """Run ``algorithm`` for ``iterations`` iterations on ``rules``' game; see the module docstring."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm={algorithm!r} is not allowed; choose one of: {', '.join(ALGORITHMS)}")
    if iterations < 1 or eval_every < 1:
        raise ValueError(f"iterations={iterations} and eval_every={eval_every} must both be at least 1")
    if rules.utility_sum is None:
        raise ValueError(f"CFR here measures NashConv of zero-sum or constant-sum games; {rules!r} is general-sum")
    if rules.max_game_length == 0:
        raise ValueError(f"{rules!r} has no decision to learn")
    check_tree_size(rules)
    out = Path(out_dir)
    game = HiddenhandGame(rules)
    tree = cached_tree(game)
    solver = _Solver(algorithm, tree, seed)
    curve: list[CurvePoint] = []
    seconds, done = 0.0, 0

    def evaluate() -> None:
        conv = pyspiel.nash_conv(tree, solver.policy())
        curve.append(CurvePoint(done, seconds, conv, conv / rules.num_players))
        _write_curve(out / "curve.csv", curve)

    interrupted = False
    with tqdm(total=iterations, desc=f"{algorithm} on {rules.name}", disable=not progress, unit="it") as bar:
        try:
            while done < iterations:
                start = time.perf_counter()
                solver.step()
                seconds += time.perf_counter() - start
                done += 1
                bar.update()
                if done % eval_every == 0 or done == iterations:
                    evaluate()
                    bar.set_postfix(nash_conv=f"{curve[-1].nash_conv:.4g}")
        except KeyboardInterrupt:
            if done == 0:
                raise
            interrupted = True
            bar.write(f"interrupted after {done} iterations: saving the policy, then measuring it (Ctrl-C skips that)")
    with held_ctrl_c() as ctrl_c:  # a Ctrl-C from here on skips the final measure only
        PolicyAgent.from_openspiel(tree, solver.solver.average_policy()).save(out)
        if not curve or curve[-1].iteration != done:
            _, skipped = ctrl_c.unless_interrupted(evaluate)
            interrupted |= skipped
        if curve:
            plot_curves({algorithm: curve}, out / "curve.png", title=f"{algorithm} on {plots.describe(rules)}")
        final = asdict(curve[-1]) if curve else None
        with atomic_write(out / "run.json", "w") as handle:
            record = {"game": rules.name, "params": rules.params, "algorithm": algorithm, "seed": seed}
            json.dump({**record, "iterations": done, "interrupted": interrupted, "final": final}, handle, indent=2)
        if interrupted:
            raise Interrupted(
                f"{algorithm} stopped by Ctrl-C after {done} of {iterations} iterations; results in {out}", curve
            )
    return curve


TREE_LIMIT = 1_000_000
"""Histories a CFR run may enumerate: 4-card Goofspiel (about 27,000) takes seconds; 5 cards
(about 3.4 million) take minutes and gigabytes."""


def estimate_tree_size(rules: Rules, probes: int = 300, seed: int = 0, cap: float = 1e12) -> float:
    """An unbiased estimate of the number of histories (Knuth, 1975): follow a uniformly
    random path and multiply the branching factors met; the mean over probes. Paths are cut
    once their product passes ``cap`` (the answer is then "more than the limit" anyway)."""
    rng = np.random.default_rng(seed)
    total = 0.0
    for _ in range(probes):
        state, weight, size = rules.new_initial_state(), 1.0, 1.0
        while not state.is_terminal() and weight < cap:
            actions = state.legal_actions() if not state.is_chance_node() else [a for a, _ in state.chance_outcomes()]
            weight *= len(actions)
            size += weight
            state.apply(actions[int(rng.integers(len(actions)))])
        total += size
    return total / probes


def check_tree_size(rules: Rules, limit: float = TREE_LIMIT) -> None:
    """Refuse a game whose tree would not fit, before any memory is spent on it."""
    size = estimate_tree_size(rules)
    if size <= limit:
        return
    from hiddenhand.registry import game_of

    game = game_of(rules)
    fits = [
        name for name, params in game.env.configurations.items() if estimate_tree_size(game.rules(**params)) <= limit
    ]
    raise ValueError(
        f"CFR enumerates the whole game tree: {rules!r} has about {size:.1e} histories, more than the "
        f"{limit:.0e} that fit in memory here. Configurations of {game.name} that fit: "
        + "; ".join(f"{name} ({_options(game.env.configurations[name])})" for name in fits)
    )


def _options(params: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items())


def _write_curve(path: Path, curve: list[CurvePoint]) -> None:
    with atomic_write(path, "w") as handle:
        writer = csv.writer(handle)
        writer.writerow(["iteration", "seconds", "nash_conv", "exploitability"])
        for p in curve:
            writer.writerow([p.iteration, f"{p.seconds:.6f}", f"{p.nash_conv:.10g}", f"{p.exploitability:.10g}"])


def curve_figure(curves: dict[str, list[CurvePoint]], title: str):
    """Exploitability (NashConv / players, as the benchmark reports it) against iterations
    (left) and solver seconds (right), log scales, each run's measured points."""
    fig, (left, right) = plots.figure(2, title)
    for ax, xlabel in ((left, "iterations"), (right, "solver seconds")):
        plots.labels(ax, xlabel, plots.EXPLOITABILITY, xlog=True, ylog=True)
    for name, curve in curves.items():
        ys = [p.exploitability for p in curve]
        plots.measured(left, [p.iteration for p in curve], ys, name)
        plots.measured(right, [p.seconds for p in curve], ys, name)
    return fig


def plot_curves(curves: dict[str, list[CurvePoint]], path: Path, title: str) -> None:
    """:func:`curve_figure`, written to ``path`` as PNG."""
    plots.save(curve_figure(curves, title), path)
