"""The section Goofspiel adds to the benchmark (its declaration's
:class:`~hiddenhand.registry.BenchmarkSection`, option ``--gops13``): a learner trained on
the full game, where no exact exploitability of a learned agent exists, played instead
against the heuristics and, given a solution file of that size, the exact equilibrium.

A module of its own, named from the declaration: the benchmark's generic code
(:mod:`hiddenhand.training.benchmark`) knows of no game.
"""

from __future__ import annotations

from pathlib import Path

from hiddenhand.registry import get
from hiddenhand.training.benchmark.budgets import Budget, learner_settings
from hiddenhand.training.benchmark.report import SectionReport
from hiddenhand.training.benchmark.runs import TrainedRun, load, train_learner, trained
from hiddenhand.training.evaluation import head_to_head


def check_solution(rules, file: str) -> None:
    """Refuse a solution file of another size than ``rules`` (or a damaged or foreign file)
    before hours of work."""
    from hiddenhand.files import read_npz_meta

    cards = read_npz_meta(file).get("num_cards")
    if cards != rules.num_cards:
        raise ValueError(f"{file} solves num_cards={cards!r}; the benchmark plays {rules.num_cards} cards")


def full_game(
    rules, budget: Budget, out: Path, seed: int, solution: str | None, progress: bool, resume: bool
) -> SectionReport:
    """The budget's ``big_learner`` trained on ``rules`` (13 cards as declared) on the Markov
    observation, then played against the game's heuristics and, given a ``solution`` file of
    that size, the exact equilibrium: mean point difference with a 95% interval, seats
    alternating. No exploitability: nothing measures a learned agent exactly at 13 cards
    (positions stop at 10), and the report says so rather than estimate one. The agent plays
    on the full observation through :class:`~hiddenhand.agents.base.Translated`, so that the
    hard heuristic, which reads the score, can sit opposite it."""
    from hiddenhand.agents.base import Translated
    from hiddenhand.agents.goofspiel_equilibrium import load_solution_agent

    game = get(rules.name)
    cards = rules.num_cards
    markov = game.rules(**{**rules.params, "observation": "markov"})
    method = budget.big_learner
    path = out / f"goofspiel_num_cards={cards}" / method / f"seed{seed}"
    curve, reused = trained(
        path,
        markov,
        seed,
        budget.big_steps,
        resume,
        lambda: train_learner(method, markov, budget.big_steps, path, seed, budget.big_steps, progress, resume),
        learner_settings(method, markov),
    )
    agent = Translated(load(path, game, seed), rules.markov_observations)
    opponents = {name: game.make_agent(name, rules, seed=seed) for name in ("random", *game.heuristics)}
    if solution is not None:
        opponents = {"equilibrium": load_solution_agent(solution, rules, seed=seed), **opponents}
    results = {name: head_to_head(rules, agent, opp, budget.games, seed=seed) for name, opp in opponents.items()}
    last = curve[-1]
    lines = [
        f"## Goofspiel, {cards} cards: {method} on the Markov observation",
        "",
        f"{last.steps:,} decisions, {last.seconds:.0f} s of training. No exact exploitability exists for a learned "
        f"agent at this size (the exact measure over positions stops at 10 cards); "
        + ("" if solution else "no solution file given (`--gops13 FILE`), so no games against the equilibrium; ")
        + f"{budget.games} games against each opponent, seats alternating.",
        "",
        "| opponent | mean point difference | wins |",
        "|---|---|---|",
    ]
    lines += [f"| {n} | {r.mean:+.3f} ± {r.ci95:.3f} | {r.wins / r.games:.1%} |" for n, r in results.items()]
    lines.append("")
    run = TrainedRun.of(method, seed, path, curve, reused)
    record = run.record(game.name, markov.params) | {"exploitability": None, "exact": False}  # none pretended
    return SectionReport(lines, [record], {f"goofspiel {cards} cards": {n: r.mean for n, r in results.items()}})
