"""The benchmark's report: ``REPORT.md`` (how to read it and what produced it, then a section
per configuration), one figure per two-player configuration (:func:`figure`, drawn with
:mod:`hiddenhand.training.plots`) and ``summary.json`` (every run's record and the
leaderboards), written atomically.

Each function adds its section to the report's lines and to the summary, in the order the
benchmark plays the configurations; :class:`SectionReport` is what a game's own section
(:class:`~hiddenhand.registry.BenchmarkSection`) hands back to be added the same way.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import platform
import time
from dataclasses import dataclass
from pathlib import Path

from hiddenhand.devices import machine
from hiddenhand.files import atomic_write
from hiddenhand.training import plots
from hiddenhand.training.benchmark.budgets import Budget
from hiddenhand.training.benchmark.leaderboards import Row
from hiddenhand.training.benchmark.runs import TrainedRun
from hiddenhand.training.evaluation import MatchResult
from hiddenhand.training.plots import describe

TABULAR = ("cfr+", "mccfr-external")
"""Methods whose curve counts iterations, not decisions (environment steps)."""


@dataclass
class SectionReport:
    """A game's own section of the benchmark, as the report adds it: its Markdown ``lines``,
    the ``summary.json`` records of its training runs (:meth:`~.runs.TrainedRun.record`), and
    its results by title (``summary.json``'s ``games``)."""

    lines: list[str]
    runs: list[dict]
    results: dict[str, object]


def command(
    budget: str | Budget, spec: Budget, out: Path, seed: int, files: dict[str, str], resume: bool, only=()
) -> str:
    """The command that runs this benchmark again (a budget of one's own: the Python call)."""
    if isinstance(budget, Budget):
        return (
            f"run_benchmark({spec!r}, out_dir={str(out)!r}, seed={seed}"
            + (f", only={list(only)!r}" if only else "")
            + (", resume=True)" if resume else ")")
        )
    return (
        f"hiddenhand benchmark --budget {spec.name} --out {out} --seed {seed}"
        + "".join(f" --{option} {file}" for option, file in files.items())
        + "".join(f" --only {name}" for name in only)
        + (" --resume" if resume else "")
    )


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def header(spec: Budget, seed: int, command: str, configurations: list) -> list[str]:
    """The report's opening: how to read it, the payoff scale of each configuration, and the
    run's metadata (enough to say what produced the numbers and to run it again)."""
    versions = [f"python {platform.python_version()}"]
    versions += [f"{name} {_version(name)}" for name in ("numpy", "torch", "open_spiel", "hiddenhand")]
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# hiddenhand benchmark ({spec.name} budget, seed {seed})",
        "",
        f"- command: `{command}`",
        f"- started: {started}; seed {seed} (a learner's further seeds count up from it)",
        f"- versions: {', '.join(versions)}",
        f"- machine: {machine(torch_kernels=True)}; {platform.platform()}",
        "",
        "## How to read this",
        "",
        "**Exploitability** is what a best response gains against an agent that plays every seat, averaged "
        "over the seats, beyond what each seat is worth at an equilibrium: 0 for an exact equilibrium, in the "
        "game's payoff units per game, lower is better. NashConv, the sum over the seats, is twice it with two "
        "players. Every figure is exact (computed against the game's exact solution), not estimated.",
        "",
        "- **last**: the agent's exploitability at the end of training, the one saved; for a learner with "
        "several seeds the median over its seeds, with their range.",
        "- **best measured**: the lowest exploitability measured during training by any seed, and the "
        "iteration or decision it was measured at. It is picked after the fact, so it is optimistic: "
        "training does not stop there, and the saved agent is the last.",
        "- **iterations** (CFR+, MCCFR: passes over the game tree, sampled for MCCFR) and **decisions** (the "
        "learners: environment steps they trained on) are different units, hence separate columns.",
        "- **vs X**: the row agent's mean return per game against reference X, ± a 95% interval, seats "
        "alternating (the first seed's agent).",
        "- **plots**: exploitability against wall-clock seconds of training (every method) and against "
        "decisions (the learners), log scales; every measured point of every seed, joined by straight lines; "
        "dashed lines are the references.",
        "",
        "What a game pays, per configuration (the scale of every exploitability and return below):",
        "",
    ]
    for rules in configurations:
        low, high = rules.utility_range
        even = "" if rules.utility_sum is None else f"; even play gets {rules.utility_sum / rules.num_players:g}"
        lines.append(f"- {describe(rules)}: each player gets {low:g} to {high:g} a game{even}")
    return [*lines, ""]


def figure(rules, runs: list[TrainedRun], references: dict[str, float]):
    """Exploitability on log scales against wall-clock seconds of training (every method) and
    against decisions (the learners; CFR's iterations are not decisions and are left out
    there): every measured point of every seed, one colour per method (:mod:`hiddenhand.training.plots`);
    the references (not the equilibrium, at 0) as dashed lines."""
    fig, axes = plots.figure(2, describe(rules))
    methods = list(dict.fromkeys(r.method for r in runs))
    for ax, x, xlabel in ((axes[0], 1, "wall-clock seconds of training"), (axes[1], 0, plots.DECISIONS)):
        plots.labels(ax, xlabel, plots.EXPLOITABILITY, xlog=True, ylog=True)
        for k, method in enumerate(methods):
            mine = [r for r in runs if r.method == method]
            if x == 0 and method in TABULAR:
                continue
            for seed, run in enumerate(mine):
                points = [(point[x], point[2]) for point in run.curve if point[2] is not None]
                label = f"{method} ({len(mine)} seed{'s' * (len(mine) > 1)})" if seed == 0 else None
                plots.measured(ax, [a for a, _ in points], [b for _, b in points], label, f"C{k}")
        others = [(name, value) for name, value in references.items() if name != "equilibrium"]
        for k, (name, value) in enumerate(others):
            plots.reference(ax, value, name, f"C{len(methods) + k}")
    return fig


def two_player(game: str, rules, where: Path, rows: list[Row], opponents: list[str], lines, summary: dict) -> None:
    """A two-player configuration: its figure (``where`` with ``.png``), its leaderboard
    ranked by exploitability, and its runs' records."""
    references = {r.agent: r.exploitability for r in rows if r.seconds is None and r.exploitability is not None}
    plots.save(figure(rules, [run for r in rows for run in r.runs], references), where.parent / f"{where.name}.png")
    lines += [f"## {describe(rules)}", "", f"![exploitability against time]({where.name}.png)", ""]
    columns = ["agent", "iterations", "decisions", "training s", "exploitability (last)", "best measured (at)"]
    columns += ["NashConv (last)", *(f"vs {o}" for o in opponents)]
    lines += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    ranked = sorted(rows, key=lambda r: (r.exploitability is None, r.exploitability or 0.0))
    for r in ranked:
        steps = "" if r.steps is None else f"{r.steps:,}"
        counts = [steps, ""] if r.agent in TABULAR else ["", steps]
        secs = "" if r.seconds is None else f"{r.seconds:.1f}"
        if r.exploitability is None:
            figures = ["no exact measure", "", ""]
        else:
            spread = "" if r.spread is None else f" ({r.spread[0]:.4f} to {r.spread[1]:.4f}, {len(r.runs)} seeds)"
            figures = [f"{r.exploitability:.4f}{spread}", "", f"{rules.num_players * r.exploitability:.4f}"]
        if r.best is not None:
            figures[1] = f"{r.best[0]:.4f} (at {r.best[1]:,})"
        cells = [f"{r.against[o].mean:+.3f} ± {r.against[o].ci95:.3f}" if o in r.against else "" for o in opponents]
        lines.append("| " + " | ".join([r.agent, *counts, secs, *figures, *cells]) + " |")
    lines.append("")
    summary["runs"] += [run.record(game, rules.params) for r in rows for run in r.runs]
    summary["games"][repr(rules)] = [
        {
            "agent": r.agent,
            "seconds": r.seconds,
            "exploitability": r.exploitability,
            "against": {o: m.mean for o, m in r.against.items()},
        }
        for r in rows
    ]


def tournament(title: str, table: dict[str, MatchResult], lines: list[str], summary: dict) -> None:
    """A tournament's table, ranked by mean return."""
    lines += [f"## {title} (every seating)", "", "| agent | mean return | best (alone or tied) |", "|---|---|---|"]
    for name, r in sorted(table.items(), key=lambda kv: -kv[1].mean):
        lines.append(f"| {name} | {r.mean:+.3f} ± {r.ci95:.3f} | {r.wins / r.games:.1%} |")
    lines.append("")
    summary["games"][title] = {name: r.mean for name, r in table.items()}


def section(part: SectionReport, lines: list[str], summary: dict) -> None:
    """A game's own section, as it handed it back."""
    lines += part.lines
    summary["runs"] += part.runs
    summary["games"] |= part.results


def reused(summary: dict, lines: list[str]) -> None:
    """A closing line on the runs ``resume`` read back, where it read any."""
    count = sum(bool(r.get("reused")) for r in summary["runs"])
    if count:
        lines += [
            f"**Resumed:** {count} of the {len(summary['runs'])} training runs above were read back from an earlier "
            "benchmark in this directory (finished, same rules, seed, length, settings and code) rather than trained "
            "again; their seconds are that run's. Every agent was measured and played again.",
            "",
        ]


def write(out: Path, lines: list[str], start: float, summary: dict) -> str:
    """``REPORT.md`` (the lines and the total time) and ``summary.json``; returns the report."""
    report = "\n".join([*lines, f"Total time: {time.perf_counter() - start:.0f} s."]) + "\n"
    with atomic_write(out / "REPORT.md", "w") as handle:
        handle.write(report)
    with atomic_write(out / "summary.json", "w") as handle:
        json.dump(summary, handle, indent=2, default=float)
    return report
