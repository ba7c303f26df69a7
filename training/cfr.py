"""CFR through the OpenSpiel adapter: OpenSpiel's C++ solvers on the game's cached tree,
with the exact exploitability (OpenSpiel's best response: NashConv divided by the number of
players) measured as they run.

The run's lifecycle is :class:`~hiddenhand.training.run.Run`'s, counted in iterations: it
writes ``curve.csv`` and ``curve.png`` (exploitability against iterations, both on log
scales) at every measure, then ``policy.npz`` (the average policy as a
:class:`~hiddenhand.agents.PolicyAgent`, which ``hiddenhand play goofspiel --opponent DIR``
plays against) and ``run.json``. Ctrl-C stops the run after the current iteration, saves
the policy, then measures it (a second Ctrl-C skips that measure) and raises
:class:`~hiddenhand.interrupt.Interrupted` carrying the curve.

The whole tree is enumerated, so before building it the run estimates its size (Knuth's
random-probe estimator) and refuses games that would not fit, naming the declared
configurations that do.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyspiel

from hiddenhand.agents.policy_agent import PolicyAgent
from hiddenhand.core import Rules, check_rules
from hiddenhand.openspiel import HiddenhandGame, cached_tree, to_tabular
from hiddenhand.training.run import Point, Run
from hiddenhand.validation import named

ALGORITHMS = ("cfr", "cfr+", "mccfr-external", "mccfr-outcome")


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


@dataclass(frozen=True)
class CFRSettings:
    """The solver's one setting."""

    algorithm: str = "cfr+"
    """cfr, cfr+ (regret matching+ and linear averaging), mccfr-external or mccfr-outcome
    (Monte Carlo CFR, external or outcome sampling, seeded by the run's seed)."""


def settings_for_rules(rules: Rules) -> CFRSettings:
    """The learner's settings for ``rules`` (its declaration, training/learners.py): CFR+ on every game."""
    return CFRSettings()


def train_cfr(
    rules: Rules,
    *,
    steps: int,
    out: str | Path,
    seed: int = 0,
    eval_every: int = 50,
    settings: CFRSettings | None = None,
    progress: bool = True,
    seconds: float | None = None,
    device: str = "auto",
) -> list[Point]:
    """Run ``settings.algorithm`` for ``steps`` iterations on ``rules``' game (or, with
    ``seconds``, until that many seconds of solving if that comes first), measuring after
    every ``eval_every`` of them and after the last; see the module docstring. Returns the
    curve (``steps`` are iterations; NashConv is ``exploitability * rules.num_players``).
    ``device`` is unused: OpenSpiel's solvers run on the CPU."""
    rules = check_rules(rules, "train_cfr")
    algorithm, iterations, out_dir = (settings or CFRSettings()).algorithm, steps, out
    if algorithm not in ALGORITHMS:
        raise ValueError(f"{named('algorithm', algorithm)} is not allowed; choose one of: {', '.join(ALGORITHMS)}")
    if iterations < 1 or eval_every < 1:
        raise ValueError(f"{named('steps', iterations)} and {named('eval_every', eval_every)} must both be at least 1")
    if rules.utility_sum is None:
        raise ValueError(f"CFR here measures NashConv of zero-sum or constant-sum games; {rules} is general-sum")
    if rules.max_game_length == 0:
        raise ValueError(f"{rules} has no decision to learn")
    check_tree_size(rules)
    tree = cached_tree(HiddenhandGame(rules))
    solver = _Solver(algorithm, tree, seed)
    run = Run(algorithm, rules, out_dir, total=iterations, unit="iteration", progress=progress, seconds=seconds)

    def measure() -> tuple[float, dict]:
        return pyspiel.nash_conv(tree, solver.policy()) / rules.num_players, {}

    with run.training():
        while run.going():
            solver.step()
            run.advance(1)
            if run.steps % eval_every == 0 and run.steps < iterations:
                run.measure(measure)

    def save() -> None:
        PolicyAgent.from_openspiel(tree, solver.solver.average_policy()).save(run.out)

    return run.finish(save, measure, {"algorithm": algorithm, "seed": seed})


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
        f"CFR enumerates the whole game tree: {rules} has about {size:.1e} histories, more than the "
        f"{limit:.0e} that fit in memory here. Configurations of {game.name} that fit: "
        + "; ".join(f"{name} ({_options(game.env.configurations[name])})" for name in fits)
    )


def _options(params: dict) -> str:
    """A configuration's parameters as messages name them (``--cards 3`` on the command line)."""
    return " ".join(named(k, v) for k, v in params.items())
