"""The main job: train every kind of agent and measure it against the exact equilibria.

For each two-player game with an exact solution it trains CFR+, external-sampling MCCFR
(OpenSpiel's C++ solvers through the adapter) and self-play PPO within the budget, then
reports for every trained agent, and for the equilibrium and the heuristics as references:

- exploitability against the exact equilibrium (what a best response gains on average over
  the two seats, over the game's value: the value the agent concedes), and NashConv
  (twice that);
- head-to-head results against the equilibrium agent and each heuristic, with 95%
  intervals, seats alternating.

What it plays is declared with each game (``Game.benchmark``): today Goofspiel with 4 cards
(the exact dynamic programme measures exploitability), and single rounds of Spoof (3
matches each) and two-player Bid Spoof (3 coins), where OpenSpiel's best response measures
it. The whole games of Spoof and Bid Spoof are solved exactly too (``hiddenhand solve``),
but their trees have no bound, so no CFR runs on them. Configurations without an exact
measure are played as every-seating tournaments of their declared line-up: one round of
three-player Bid Spoof (with CFR+) and EggHead (a behavioural analyst against two naive
deducers, the env's public model told where the analyst sits).

Ctrl-C stops the whole benchmark: the report is written with the sections that finished
and a line saying where it was cut, and :class:`~hiddenhand.interrupt.Interrupted` is raised.

Writes REPORT.md (the tables), one PNG per two-player game (exploitability against
wall-clock seconds, every method on one figure) and summary.json into ``out``, and prints
the tables.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from hiddenhand.agents.base import Agent
from hiddenhand.agents.policy_agent import PolicyAgent
from hiddenhand.agents.ppo import PPOAgent
from hiddenhand.files import atomic_write, write_figure
from hiddenhand.interrupt import Interrupted
from hiddenhand.registry import Benchmark, Game, games
from hiddenhand.training.cfr import train_cfr
from hiddenhand.training.evaluation import MatchResult, head_to_head, tournament
from hiddenhand.training.ppo import train_ppo
from hiddenhand.validation import check_choice


@dataclass(frozen=True)
class Budget:
    cfr_iterations: int
    mccfr_iterations: int
    ppo_steps: int
    evaluations: int
    games: int
    many_cfr_iterations: int
    tournament_games: int
    small: bool


BUDGETS = {
    "small": Budget(200, 5000, 30_000, 6, 400, 100, 60, True),
    "full": Budget(2000, 100_000, 300_000, 12, 2000, 1000, 300, False),
}
"""``small`` runs in a few minutes on two cores (what ``make run`` runs); ``full`` trains
ten times longer and plays five times more games."""


@dataclass
class Row:
    """One agent of a two-player game: how exploitable it is and how it does."""

    agent: str
    seconds: float | None
    exploitability: float
    against: dict[str, MatchResult]


def _rules(game: Game, entry: Benchmark, budget: Budget):
    return game.rules(**{**entry.params, **(entry.small if budget.small else {})})


def _two_player_game(game: Game, rules, budget: Budget, out: Path, seed: int, progress: bool):
    params = rules.params
    curves: dict[str, list[tuple[float, float]]] = {}
    trained: dict[str, tuple[Agent, float]] = {}
    for algorithm, iterations in (("cfr+", budget.cfr_iterations), ("mccfr-external", budget.mccfr_iterations)):
        run = out / game.name / algorithm
        curve = train_cfr(
            rules, algorithm, iterations, max(1, iterations // budget.evaluations), run, seed=seed, progress=progress
        )
        curves[algorithm] = [(p.seconds, p.exploitability) for p in curve]
        trained[algorithm] = (PolicyAgent.load(run, seed=seed), curve[-1].seconds)
    run = out / game.name / "ppo"
    curve = train_ppo(
        game.name,
        params,
        budget.ppo_steps,
        run,
        seed=seed,
        eval_every=max(1, budget.ppo_steps // budget.evaluations),
        eval_games=50,
        progress=progress,
    )
    curves["ppo"] = [(p.seconds, p.exploitability) for p in curve]
    trained["ppo"] = (PPOAgent.load(run, seed=seed), curve[-1].seconds)
    opponents = {name: game.make_agent(name, rules, seed=seed) for name in ("equilibrium", *game.heuristics)}
    rows = []
    for name, (agent, seconds) in trained.items():
        against = {o: head_to_head(rules, agent, opp, budget.games, seed=seed) for o, opp in opponents.items()}
        rows.append(Row(name, seconds, game.exact_exploitability(rules, agent), against))
    for name, agent in opponents.items():
        rows.append(Row(name, None, game.exact_exploitability(rules, agent), {}))
    _plot(rules, curves, {r.agent: r.exploitability for r in rows if r.seconds is None}, out / f"{game.name}.png")
    return rows, list(opponents)


def _plot(rules, curves, references, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), constrained_layout=True)
    for name, points in curves.items():
        xs = [max(s, 1e-3) for s, _ in points]
        ax.plot(xs, [max(e, 1e-6) for _, e in points], marker=".", label=name)
    for k, (name, value) in enumerate(references.items()):
        if name != "equilibrium":
            ax.axhline(max(value, 1e-6), linestyle="--", color=f"C{k + 3}", alpha=0.6, label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("wall-clock seconds of training")
    ax.set_ylabel("exploitability against the exact equilibrium")
    ax.set_title(repr(rules), fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    write_figure(fig, path)


def _table(game: Game, entry: Benchmark, rules, budget: Budget, out: Path, seed: int, progress: bool):
    """An every-seating tournament of the declared line-up (CFR+ first when declared)."""
    field: list[tuple[str, Agent]] = []
    if entry.cfr:
        run = out / f"{game.name}_{rules.num_players}" / "cfr+"
        iterations = budget.many_cfr_iterations
        train_cfr(rules, "cfr+", iterations, iterations, run, seed=seed, progress=progress)
        field.append(("cfr+", PolicyAgent.load(run)))
    field += [(name, game.make_agent(name, rules)) for name in entry.lineup]
    games_per_seating = max(1, round(budget.tournament_games * entry.games_scale))
    return tournament(
        rules, field, games_per_seating, seed=seed, progress=progress, rules_for=game.seating_rules(rules)
    )


def run_benchmark(
    budget: str | Budget = "small", out_dir: str | Path = "runs/benchmark", seed: int = 0, progress: bool = True
) -> str:
    """Run the whole benchmark; returns the report (Markdown), also written to REPORT.md.
    ``budget`` is ``"small"``, ``"full"`` or a :class:`Budget` of one's own."""
    spec = budget if isinstance(budget, Budget) else BUDGETS[check_choice("budget", budget, tuple(BUDGETS))]
    budget = budget if isinstance(budget, str) else "custom"
    out = Path(out_dir)
    start = time.perf_counter()
    lines = [f"# hiddenhand benchmark ({budget} budget, seed {seed})", ""]
    summary: dict = {"budget": budget, "seed": seed, "games": {}}
    entries = [(game, entry) for game in games().values() for entry in game.benchmark]
    # Exact measures first (two-player games with an exploitability), then the tournaments.
    entries.sort(key=lambda item: item[1].lineup != ())
    current = "the set-up"
    try:
        for game, entry in entries:
            rules = _rules(game, entry, spec)
            current = repr(rules)
            if not entry.lineup:
                _report_two_player(
                    game, rules, _two_player_game(game, rules, spec, out, seed, progress), lines, summary
                )
            else:
                title = entry.title or repr(rules)
                _report_table(title, _table(game, entry, rules, spec, out, seed, progress), lines, summary)
    except KeyboardInterrupt:
        lines += [f"**Cut short by Ctrl-C** while running {current}: that section and those after it are missing.", ""]
        _write(out, lines, start, summary | {"interrupted": True})
        raise Interrupted(f"benchmark stopped by Ctrl-C; the finished sections are in {out / 'REPORT.md'}") from None
    return _write(out, lines, start, summary)


def _report_two_player(game: Game, rules, result, lines: list[str], summary: dict) -> None:
    rows, opponents = result
    lines += [f"## {rules!r}", "", f"![exploitability against time]({game.name}.png)", ""]
    header = "| agent | training s | exploitability | NashConv | " + " | ".join(f"vs {o}" for o in opponents) + " |"
    lines += [header, "|" + "---|" * (4 + len(opponents))]
    for r in rows:
        cells = [f"{r.against[o].mean:+.3f} ± {r.against[o].ci95:.3f}" if o in r.against else "" for o in opponents]
        secs = "" if r.seconds is None else f"{r.seconds:.1f}"
        figures = f"{r.exploitability:.4f} | {2 * r.exploitability:.4f}"
        lines.append(f"| {r.agent} | {secs} | {figures} | " + " | ".join(cells) + " |")
    lines.append("")
    summary["games"][repr(rules)] = [
        {
            "agent": r.agent,
            "seconds": r.seconds,
            "exploitability": r.exploitability,
            "against": {o: m.mean for o, m in r.against.items()},
        }
        for r in rows
    ]


def _report_table(title: str, table: dict[str, MatchResult], lines: list[str], summary: dict) -> None:
    lines += [f"## {title}: every seating", "", "| agent | mean return | best (alone or tied) |", "|---|---|---|"]
    for name, r in sorted(table.items(), key=lambda kv: -kv[1].mean):
        lines.append(f"| {name} | {r.mean:+.3f} ± {r.ci95:.3f} | {r.wins / r.games:.1%} |")
    lines.append("")
    summary["games"][title] = {name: r.mean for name, r in table.items()}


def _write(out: Path, lines: list[str], start: float, summary: dict) -> str:
    report = "\n".join([*lines, f"Total time: {time.perf_counter() - start:.0f} s."]) + "\n"
    with atomic_write(out / "REPORT.md", "w") as handle:
        handle.write(report)
    with atomic_write(out / "summary.json", "w") as handle:
        json.dump(summary, handle, indent=2, default=float)
    return report


__all__ = ["BUDGETS", "run_benchmark"]
