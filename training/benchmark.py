"""The main job: train every kind of agent and measure it against the exact equilibria.

For each two-player game with an exact solution it trains CFR+, external-sampling MCCFR
(OpenSpiel's C++ solvers through the adapter) and self-play PPO within the budget, then
reports for every trained agent, and for the equilibrium and the heuristics as references:

- exploitability against the exact equilibrium (what a best response gains on average over
  the two seats, over the game's value: the value the agent concedes), and NashConv
  (twice that);
- head-to-head results against the equilibrium agent and each heuristic, with 95%
  intervals, seats alternating.

The games are the ones where CFR is affordable and an exact measure exists: Goofspiel with
4 cards (the exact dynamic programme measures exploitability), and single rounds of Spoof
(3 matches each) and two-player Bid Spoof (3 coins), where OpenSpiel's best response
measures it. The whole games of Spoof and Bid Spoof are solved exactly too
(``hiddenhand solve``), but their trees have no bound, so no CFR runs on them.

For three and more players there is no exact solution: one round of three-player Bid Spoof
(CFR+ against the heuristic and random play) and EggHead (a behavioural analyst against two
naive deducers, the env's public model told where the analyst sits) are played as
every-seating tournaments.

Writes REPORT.md (the tables), one PNG per two-player game (exploitability against
wall-clock seconds, every method on one figure) and summary.json into ``out``, and prints
the tables.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from hiddenhand.agents import HEURISTICS, make_agent
from hiddenhand.agents.base import Agent
from hiddenhand.agents.policy_agent import PolicyAgent
from hiddenhand.agents.ppo import PPOAgent
from hiddenhand.envs import ENV_MODULES
from hiddenhand.files import atomic_write, write_figure
from hiddenhand.training.cfr import train_cfr
from hiddenhand.training.evaluation import MatchResult, head_to_head, tournament
from hiddenhand.training.ppo import exact_exploitability, train_ppo
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
    egghead_target: int


BUDGETS = {
    "small": Budget(200, 5000, 30_000, 6, 400, 100, 60, 5),
    "full": Budget(2000, 100_000, 300_000, 12, 2000, 1000, 300, 10),
}
"""``small`` runs in a few minutes on two cores (what ``make run`` runs); ``full`` trains
ten times longer and plays five times more games."""

TWO_PLAYER = [
    ("goofspiel", {"num_cards": 4}),
    ("spoof", {"matches": 3, "objective": "round"}),
    ("bid_spoof", {"num_players": 2, "coins": 3, "objective": "round"}),
]


@dataclass
class Row:
    """One agent of a two-player game: how exploitable it is and how it does."""

    agent: str
    seconds: float | None
    exploitability: float
    against: dict[str, MatchResult]


def _rules(game: str, kwargs: dict):
    return ENV_MODULES[game].raw_env.rules_class(**kwargs)


def _two_player_game(game: str, kwargs: dict, budget: Budget, out: Path, seed: int, progress: bool):
    rules = _rules(game, kwargs)
    params = rules.params
    curves: dict[str, list[tuple[float, float]]] = {}
    trained: dict[str, tuple[Agent, float]] = {}
    for algorithm, iterations in (("cfr+", budget.cfr_iterations), ("mccfr-external", budget.mccfr_iterations)):
        run = out / game / algorithm
        curve = train_cfr(rules, algorithm, iterations, max(1, iterations // budget.evaluations), run, seed=seed, progress=progress)
        curves[algorithm] = [(p.seconds, p.exploitability) for p in curve]
        trained[algorithm] = (PolicyAgent.load(run, seed=seed), curve[-1].seconds)
    run = out / game / "ppo"
    curve = train_ppo(
        game, kwargs, budget.ppo_steps, run, seed=seed, eval_every=max(1, budget.ppo_steps // budget.evaluations),
        eval_games=50, progress=progress,
    )
    curves["ppo"] = [(p.seconds, p.exploitability) for p in curve]
    trained["ppo"] = (PPOAgent.load(run, seed=seed), curve[-1].seconds)
    equilibrium = make_agent(game, "equilibrium", params, seed=seed)
    opponents = {"equilibrium": equilibrium, **{name: make_agent(game, name, params, seed=seed) for name in HEURISTICS[game]}}
    rows = []
    for name, (agent, seconds) in trained.items():
        against = {o: head_to_head(rules, agent, opp, budget.games, seed=seed) for o, opp in opponents.items()}
        rows.append(Row(name, seconds, exact_exploitability(rules, agent), against))
    for name, agent in opponents.items():
        rows.append(Row(name, None, exact_exploitability(rules, agent), {}))
    _plot(rules, curves, {r.agent: r.exploitability for r in rows if r.seconds is None}, out / f"{game}.png")
    return rules, rows, list(opponents)


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


def _many_players(budget: Budget, out: Path, seed: int, progress: bool) -> list[tuple[str, dict[str, MatchResult]]]:
    tables = []
    bid = _rules("bid_spoof", {"num_players": 3, "coins": 2, "objective": "round"})
    run = out / "bid_spoof_3" / "cfr+"
    train_cfr(bid, "cfr+", budget.many_cfr_iterations, budget.many_cfr_iterations, run, seed=seed, progress=progress)
    field = [("cfr+", PolicyAgent.load(run)), ("heuristic", make_agent("bid_spoof", "heuristic", bid.params)), ("random", make_agent("bid_spoof", "random", bid.params))]
    tables.append((repr(bid), tournament(bid, field, budget.tournament_games, seed=seed, progress=progress)))
    egg = {"num_players": 3, "target_score": budget.egghead_target, "valids_in_observation": True}
    field = [(name, make_agent("egghead", name, _rules("egghead", egg).params)) for name in ("analyst", "naive", "naive")]

    def egghead_rules(seating: tuple[str, ...]):
        # The public model must know where the analyst sits to read everyone's reactions right.
        return _rules("egghead", {**egg, "analysts": str(seating.index("analyst"))})

    result = tournament(_rules("egghead", egg), field, max(1, budget.tournament_games // 3), seed=seed, progress=progress, rules_for=egghead_rules)
    tables.append((f"EggHead, 3 players, first to {budget.egghead_target} points, one analyst", result))
    return tables


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
    for game, kwargs in TWO_PLAYER:
        rules, rows, opponents = _two_player_game(game, kwargs, spec, out, seed, progress)
        lines += [f"## {rules!r}", "", f"![exploitability against time]({game}.png)", ""]
        header = "| agent | training s | exploitability | NashConv | " + " | ".join(f"vs {o}" for o in opponents) + " |"
        lines += [header, "|" + "---|" * (4 + len(opponents))]
        for r in rows:
            cells = [f"{r.against[o].mean:+.3f} ± {r.against[o].ci95:.3f}" if o in r.against else "" for o in opponents]
            secs = "" if r.seconds is None else f"{r.seconds:.1f}"
            lines.append(f"| {r.agent} | {secs} | {r.exploitability:.4f} | {2 * r.exploitability:.4f} | " + " | ".join(cells) + " |")
        lines.append("")
        summary["games"][repr(rules)] = [
            {"agent": r.agent, "seconds": r.seconds, "exploitability": r.exploitability, "against": {o: m.mean for o, m in r.against.items()}}
            for r in rows
        ]
    for title, table in _many_players(spec, out, seed, progress):
        lines += [f"## {title}: every seating", "", "| agent | mean return | best (alone or tied) |", "|---|---|---|"]
        for name, r in sorted(table.items(), key=lambda kv: -kv[1].mean):
            lines.append(f"| {name} | {r.mean:+.3f} ± {r.ci95:.3f} | {r.wins / r.games:.1%} |")
        lines.append("")
        summary["games"][title] = {name: r.mean for name, r in table.items()}
    lines.append(f"Total time: {time.perf_counter() - start:.0f} s.")
    report = "\n".join(lines) + "\n"
    with atomic_write(out / "REPORT.md", "w") as handle:
        handle.write(report)
    with atomic_write(out / "summary.json", "w") as handle:
        json.dump(summary, handle, indent=2, default=float)
    return report


__all__ = ["BUDGETS", "run_benchmark"]
