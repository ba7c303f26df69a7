"""CFR through the OpenSpiel adapter: OpenSpiel's C++ solvers on the game's cached tree,
with NashConv measured exactly (OpenSpiel's best response) as they run.

A run writes into its output directory:

- ``curve.csv``: iteration, solver seconds (evaluation excluded), NashConv and
  exploitability (NashConv / number of players) at every evaluation, rewritten
  atomically at each one, so an interrupted run leaves a consistent curve;
- ``curve.png``: NashConv against iterations and against solver seconds, log scales;
- ``policy.npz``: the average policy as a :class:`~hiddenhand.agents.PolicyAgent`, which
  ``hiddenhand play goofspiel --opponent DIR`` plays against;
- ``run.json``: the game, its parameters, the algorithm and the final figures.

Ctrl-C stops the run after the current iteration and still writes all four.
"""

from __future__ import annotations

import csv
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import pyspiel
from tqdm.auto import tqdm

from hiddenhand.agents.policy_agent import PolicyAgent
from hiddenhand.core import Rules
from hiddenhand.files import atomic_write, write_figure
from hiddenhand.openspiel import HiddenhandGame, cached_tree, to_tabular

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
            bar.write(f"interrupted after {done} iterations; writing what was reached")
    if not curve or curve[-1].iteration != done:
        evaluate()
    PolicyAgent.from_openspiel(tree, solver.solver.average_policy()).save(out)
    plot_curves({algorithm: curve}, out / "curve.png", title=f"{algorithm} on {_describe(rules)}")
    with atomic_write(out / "run.json", "w") as handle:
        json.dump(
            {"game": rules.name, "params": rules.params, "algorithm": algorithm, "seed": seed, "final": asdict(curve[-1])},
            handle,
            indent=2,
        )
    return curve


def _describe(rules: Rules) -> str:
    return f"{rules.name}(" + ", ".join(f"{k}={v}" for k, v in rules.params.items()) + ")"


def _write_curve(path: Path, curve: list[CurvePoint]) -> None:
    with atomic_write(path, "w") as handle:
        writer = csv.writer(handle)
        writer.writerow(["iteration", "seconds", "nash_conv", "exploitability"])
        for p in curve:
            writer.writerow([p.iteration, f"{p.seconds:.6f}", f"{p.nash_conv:.10g}", f"{p.exploitability:.10g}"])


def plot_curves(curves: dict[str, list[CurvePoint]], path: Path, title: str) -> None:
    """NashConv against iterations (left) and solver seconds (right), one line per run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    for name, curve in curves.items():
        left.plot([p.iteration for p in curve], [p.nash_conv for p in curve], marker=".", label=name)
        right.plot([max(p.seconds, 1e-6) for p in curve], [p.nash_conv for p in curve], marker=".", label=name)
    for ax, xlabel in ((left, "iterations"), (right, "solver seconds")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("NashConv (sum of best-response gains)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(title, fontsize=10)
    write_figure(fig, path)
