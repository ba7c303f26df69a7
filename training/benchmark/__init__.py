"""The main job: train every kind of agent and measure it against the exact equilibria.

(One module over 450 lines: the budget, the runs and the report are one job whose sections
share the report's state; the learners and the measures it calls live in their own modules.)

For each two-player configuration with an exact exploitability that a game declares
(``Game.benchmark``) it trains, within the budget:

- where the tree is small (``tabular``): CFR+ and external-sampling MCCFR (OpenSpiel's C++
  solvers through the adapter) and PPO against a pool of snapshots and heuristics;
- where the declaration says ``learn``: the self-play learners the budget lists (sampled
  regret matching, :mod:`.sampled_regret`; MMD and tuned PPO, :mod:`.policy_gradient`; NFSP
  and PSRO from OpenSpiel; RLlib's PPO, :mod:`.rllib_train`), on the Markov observation so
  that the exact measure applies, with several seeds in the full budget.

The declared configurations are Goofspiel with 4 and 6 cards (8 in the full budget), the whole game of Spoof
with 3 matches, whole two-player Bid Spoof with 3 coins (full budget), and single rounds
of Spoof and Bid Spoof. It reports, for every trained agent, and for the equilibrium and
the heuristics as references:

- exploitability against the exact equilibrium (what a best response gains on average over
  the two seats, over the game's value: the value the agent concedes), and NashConv
  (twice that); a learner's figure is the median over its seeds, with their range;
- head-to-head results against the equilibrium agent and each heuristic, with 95%
  intervals, seats alternating (the first seed's agent).

Configurations without an exact measure are played as every-seating tournaments of their
declared line-up: one round of three-player Bid Spoof (with CFR+) and EggHead (a
behavioural analyst against two naive deducers, the env's public model told where the
analyst sits).

Ctrl-C stops the whole benchmark: the report is written with the sections that finished
and a line saying where it was cut, and :class:`~hiddenhand.interrupt.Interrupted` is raised.
Run again with ``resume``, it reads back the training runs that finished (the full budget
takes hours, and a machine may not stay that long) and trains the rest.

Writes ``REPORT.md`` (a header on how to read it and the run's command, seed, versions and
machine; then a leaderboard per configuration, titled in words), one PNG per configuration
(exploitability against wall-clock seconds and against decisions, log scales, every measured
point of every seed: :mod:`.plots`) and ``summary.json`` into ``out``: one record per training run (``game``,
``config``, ``method``, ``seed``, ``steps``, ``seconds``, ``exploitability``, ``exact``, and
``path``, the saved agent, which ``hiddenhand.agents.load_agent`` reads back, and
``reused``, read back by ``resume`` rather than trained), and the
leaderboards. It prints the report.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import importlib.util
import json
import multiprocessing
import os
import platform
import statistics
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from tqdm.auto import tqdm

from hiddenhand.agents.base import Agent
from hiddenhand.agents.policy_agent import PolicyAgent
from hiddenhand.files import atomic_write
from hiddenhand.interrupt import Interrupted, held_ctrl_c
from hiddenhand.registry import Benchmark, Game, games
from hiddenhand.training import plots
from hiddenhand.training.evaluation import MatchResult, can_play, head_to_head, tournament
from hiddenhand.training.learners import learner, learners
from hiddenhand.training.plots import describe
from hiddenhand.training.run import Point, finished
from hiddenhand.validation import check_choice

LEARNERS = ("regret", "mmd", "ppo-selfplay", "nfsp", "psro", "rllib")
"""The learners the full study trains, by their declared names (:mod:`.learners`; any
declared learner may be named in a :class:`Budget`): sampled regret matching, self-play MMD
and tuned PPO, OpenSpiel's NFSP and PSRO, RLlib's PPO with our settings and credit (the
``[ray]`` extra)."""


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
    learner_steps: int = 0
    """Self-play decisions per learned run, times the configuration's ``steps_scale``."""
    learners: tuple[str, ...] = ()
    """Which self-play learners run (:data:`LEARNERS`)."""
    learner_share: Mapping[str, float] = field(default_factory=dict)
    """Per learner, the share of ``learner_steps`` it trains for (1 when absent): learners
    differ by orders of magnitude in decisions a second (docs/training.md), and the budget
    gives each a comparable share of wall-clock."""
    seeds: int = 1
    """Seeds per self-play learner."""
    workers: int = 1
    """Learner runs side by side, one process each."""
    big_steps: int = 0
    """Decisions of ``big_learner`` on the full Goofspiel game (``big_cards``), Markov
    observation; 0 leaves that section out."""
    big_cards: int = 13
    big_learner: str = "mmd"
    """The learner trained on the full game: a network, which generalises across positions;
    sampled regret matching's table, keyed by the observation, would meet mostly rows it has
    never seen at 13 cards (they play uniformly)."""
    name: str = "custom"


BUDGETS = {
    "small": Budget(
        cfr_iterations=200,
        mccfr_iterations=5000,
        ppo_steps=30_000,
        evaluations=6,
        games=400,
        many_cfr_iterations=100,
        tournament_games=60,
        small=True,
        learner_steps=300_000,
        learners=("regret", "mmd", "ppo-selfplay"),
        learner_share={"regret": 300},
        name="small",
    ),
    "full": Budget(
        cfr_iterations=2000,
        mccfr_iterations=100_000,
        ppo_steps=300_000,
        evaluations=12,
        games=2000,
        many_cfr_iterations=1000,
        tournament_games=300,
        small=False,
        learner_steps=250_000,
        learners=LEARNERS,
        learner_share={"regret": 1000, "nfsp": 0.5, "psro": 0.5, "rllib": 0.2},
        seeds=3,
        workers=2,
        big_steps=1_000_000,
        name="full",
    ),
}
"""``small`` runs within 15 minutes on two cores (what ``make run`` runs), one seed each of sampled regret
matching, MMD and tuned PPO; ``full`` trains every learner with three seeds and plays five times more games
(docs/benchmark_full.md has its report and its time)."""


LEARNER_SETTINGS: Mapping[str, Mapping[str, object]] = {"rllib": {"env_runners": 0, "num_cpus": 1}}
"""Where the benchmark departs from a learner's own settings: RLlib plays its games in the
driver, one CPU a run, so that runs side by side share the machine as the others do."""


def learner_settings(method: str, rules):
    """The settings the declared learner ``method`` trains with on ``rules`` here: its own
    (:meth:`~hiddenhand.training.learners.Learner.settings_for`) with
    :data:`LEARNER_SETTINGS`; what :func:`train_learner` gives it, and what ``resume``
    compares with a finished run's recorded settings, so that a run made with others trains
    again."""
    return replace(learner(method).settings_for(rules), **LEARNER_SETTINGS.get(method, {}))


def train_learner(method: str, rules, steps: int, out: Path, seed: int, eval_every: int, progress: bool):
    """Train the declared learner ``method`` with :func:`learner_settings`; the curve of
    :class:`~hiddenhand.training.run.Point`, the agent saved in ``out``. Module-level, so
    that a process pool can run it."""
    settings = learner_settings(method, rules)
    return learner(method).run(
        rules, steps=steps, out=out, seed=seed, eval_every=eval_every, settings=settings, progress=progress
    )


@dataclass
class Run:
    """One training run: its curve ``(steps, seconds, exploitability)`` and its saved agent."""

    method: str
    seed: int
    path: Path
    curve: list[tuple[int, float, float | None]]
    reused: bool = False
    """Read back from a finished run in ``path`` (``resume``) rather than trained."""

    @classmethod
    def of(cls, method: str, seed: int, path: Path, curve: list[Point], reused: bool) -> Run:
        return cls(method, seed, path, [(p.steps, p.seconds, p.exploitability) for p in curve], reused)


def _read_back(path: Path, rules, seed: int, total: int, resume: bool, settings=None) -> list[Point] | None:
    """With ``resume``, the curve of a finished run of at least ``total`` steps (and these
    ``settings``, where given) already in ``path`` (:func:`~hiddenhand.training.run.finished`)."""
    return finished(path, rules, seed, total, settings) if resume else None


def _trained(path: Path, rules, seed: int, total: int, resume: bool, train: Callable[[], list[Point]], settings=None):
    """``(curve, reused)``: the curve :func:`_read_back` finds, else ``train()``'s."""
    curve = _read_back(path, rules, seed, total, resume, settings)
    return (train(), False) if curve is None else (curve, True)


@dataclass
class Row:
    """One agent of a two-player game: how exploitable it is and how it does. A learner's
    row summarises its seeds: the median of their last exploitability and its range, and
    ``best``, the lowest measured by any seed with the iteration or decision it came at."""

    agent: str
    seconds: float | None
    exploitability: float | None
    against: dict[str, MatchResult]
    steps: int | None = None
    spread: tuple[float, float] | None = None
    runs: list[Run] = field(default_factory=list)
    best: tuple[float, int] | None = None


def _best(runs: list[Run]) -> tuple[float, int] | None:
    """The lowest exploitability any of ``runs`` measured, and its step count; ``None`` if none measured one."""
    points = [(point[2], point[0]) for run in runs for point in run.curve if point[2] is not None]
    return min(points, default=None)


def _rules(game: Game, entry: Benchmark, budget: Budget):
    return game.rules(**{**entry.params, **(entry.small if budget.small else {})})


def _slug(rules) -> str:
    """A directory name for a configuration: the game and the parameters that differ from the defaults."""
    defaults = type(rules).param_defaults()
    parts = [f"{k}={v}" for k, v in rules.params.items() if defaults.get(k) != v]
    return "_".join([rules.name, *parts]).replace(" ", "")


def _cfr(rules, algorithm: str, iterations: int, every: int, out: Path, seed: int, progress: bool) -> list[Point]:
    """The declared CFR learner with ``algorithm``."""
    cfr = learner("cfr")
    settings = replace(cfr.settings_for(rules), algorithm=algorithm)
    return cfr.run(rules, steps=iterations, out=out, seed=seed, eval_every=every, settings=settings, progress=progress)


def _tabular_runs(game: Game, rules, budget: Budget, out: Path, seed: int, progress: bool, resume: bool) -> list[Run]:
    runs = []
    for algorithm, iterations in (("cfr+", budget.cfr_iterations), ("mccfr-external", budget.mccfr_iterations)):
        path, every = out / algorithm, max(1, iterations // budget.evaluations)
        curve, reused = _trained(
            path,
            rules,
            seed,
            iterations,
            resume,
            lambda: _cfr(rules, algorithm, iterations, every, path, seed, progress),
        )
        runs.append(Run.of(algorithm, seed, path, curve, reused))
    path, every = out / "ppo", max(1, budget.ppo_steps // budget.evaluations)
    curve, reused = _trained(
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
    runs.append(Run.of("ppo", seed, path, curve, reused))
    return runs


def _learned_runs(
    game: Game, rules, entry: Benchmark, budget: Budget, out: Path, seed: int, progress: bool, resume: bool
) -> list[Run]:
    """Every learner of the budget with each of its seeds, ``budget.workers`` at a time (one
    process each, torch on one thread: two runs side by side use two cores); with ``resume``,
    a run that already finished in its directory is read back instead."""
    jobs = [(method, seed + k) for method in budget.learners for k in range(budget.seeds)]

    def args(method: str, s: int) -> tuple:
        steps = max(1, round(budget.learner_steps * entry.steps_scale * budget.learner_share.get(method, 1.0)))
        eval_every = max(1, steps // budget.evaluations)
        return method, rules, steps, out / method / f"seed{s}", s, eval_every

    def read_back(method: str, s: int) -> list[Point] | None:
        _, _, steps, path, _, _ = args(method, s)
        return _read_back(path, rules, s, steps, resume, learner_settings(method, rules))

    done = {job: read_back(*job) for job in jobs}
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
        Run.of(method, s, out / method / f"seed{s}", done[method, s], (method, s) not in todo) for method, s in jobs
    ]


def _load(path: Path, game: Game, seed: int) -> Agent:
    from hiddenhand.agents import load_agent

    return load_agent(game.name, str(path), seed=seed)


def _two_player_game(
    game: Game, entry: Benchmark, rules, budget: Budget, out: Path, seed: int, progress: bool, resume: bool
):
    runs = _tabular_runs(game, rules, budget, out, seed, progress, resume) if entry.tabular else []
    if entry.learn:
        runs += _learned_runs(game, rules, entry, budget, out, seed, progress, resume)
    # The references that can read this observation (not Goofspiel's hard level on the Markov
    # one: the README's table has its exploitability, measured on the full observation).
    opponents = {name: game.make_agent(name, rules, seed=seed) for name in ("equilibrium", *game.heuristics)}
    opponents = {name: agent for name, agent in opponents.items() if can_play(agent, rules)}
    rows = []
    for method in dict.fromkeys(r.method for r in runs):
        mine = [r for r in runs if r.method == method]
        agent = _load(mine[0].path, game, seed)
        against = {o: head_to_head(rules, agent, opp, budget.games, seed=seed) for o, opp in opponents.items()}
        finals = [r.curve[-1][2] for r in mine if r.curve[-1][2] is not None]
        median = statistics.median(finals) if finals else None
        spread = (min(finals), max(finals)) if len(finals) > 1 else None
        seconds = statistics.median(r.curve[-1][1] for r in mine)
        rows.append(Row(method, seconds, median, against, mine[0].curve[-1][0], spread, mine, _best(mine)))
    for name, agent in opponents.items():
        rows.append(Row(name, None, game.exact_exploitability(rules, agent), {}))
    lines = {r.agent: r.exploitability for r in rows if r.seconds is None and r.exploitability is not None}
    plots.save(_figure(rules, runs, lines), out.parent / f"{out.name}.png")
    return rows, list(opponents)


TABULAR = ("cfr+", "mccfr-external")
"""Methods whose curve counts iterations, not decisions (environment steps)."""


def _figure(rules, runs: list[Run], references: dict[str, float]):
    """Exploitability on log scales against wall-clock seconds of training (every method) and
    against decisions (the learners; CFR's iterations are not decisions and are left out
    there): every measured point of every seed, one colour per method (:mod:`.plots`); the
    references (not the equilibrium, at 0) as dashed lines."""
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


def _table(game: Game, entry: Benchmark, rules, budget: Budget, out: Path, seed: int, progress: bool, resume: bool):
    """An every-seating tournament of the declared line-up (CFR+ first when declared)."""
    field_: list[tuple[str, Agent]] = []
    if entry.cfr:
        run = out / "cfr+"
        iterations = budget.many_cfr_iterations
        every = max(1, iterations // budget.evaluations)  # a curve, not a single point
        _trained(
            run,
            rules,
            seed,
            iterations,
            resume,
            lambda: _cfr(rules, "cfr+", iterations, every, run, seed, progress),
        )
        field_.append(("cfr+", PolicyAgent.load(run)))
    field_ += [(name, game.make_agent(name, rules)) for name in entry.lineup]
    games_per_seating = max(1, round(budget.tournament_games * entry.games_scale))
    return tournament(
        rules, field_, games_per_seating, seed=seed, progress=progress, rules_for=game.seating_rules(rules)
    )


def _big_goofspiel(
    budget: Budget, out: Path, seed: int, solution: str | None, progress: bool, resume: bool, lines, summary
) -> None:
    """The budget's ``big_learner`` trained on the full game (``budget.big_cards``, 13 by
    default) on the Markov observation, then played against the game's heuristics and, given
    a solution file of that size, the exact equilibrium: mean point difference with a 95%
    interval, seats alternating. No exploitability: nothing measures a learned agent exactly
    at 13 cards (positions stop at 10), and the report says so rather than estimate one. The
    agent plays on the full observation through :class:`~hiddenhand.agents.base.Translated`,
    so that the hard heuristic, which reads the score, can sit opposite it."""
    from hiddenhand.agents.base import Translated
    from hiddenhand.agents.goofspiel_equilibrium import load_solution_agent

    game = games()["goofspiel"]
    full = game.rules(num_cards=budget.big_cards)
    markov = game.rules(num_cards=budget.big_cards, observation="markov")
    method = budget.big_learner
    path = out / f"goofspiel_num_cards={budget.big_cards}" / method / f"seed{seed}"
    curve, reused = _trained(
        path,
        markov,
        seed,
        budget.big_steps,
        resume,
        lambda: train_learner(method, markov, budget.big_steps, path, seed, budget.big_steps, progress),
        learner_settings(method, markov),
    )
    agent = Translated(_load(path, game, seed), full.markov_observations)
    opponents = {name: game.make_agent(name, full, seed=seed) for name in ("random", *game.heuristics)}
    if solution is not None:
        opponents = {"equilibrium": load_solution_agent(solution, full, seed=seed), **opponents}
    results = {name: head_to_head(full, agent, opp, budget.games, seed=seed) for name, opp in opponents.items()}
    last = curve[-1]
    lines += [
        f"## Goofspiel, {budget.big_cards} cards: {method} on the Markov observation",
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
    record = {"game": game.name, "config": markov.params, "method": method, "seed": seed, "steps": last.steps}
    record |= {"seconds": last.seconds, "exploitability": None, "exact": False, "path": str(path), "reused": reused}
    summary["runs"].append(record)
    summary["games"][f"goofspiel {budget.big_cards} cards"] = {n: r.mean for n, r in results.items()}


def run_benchmark(
    budget: str | Budget = "small",
    out_dir: str | Path = "runs/benchmark",
    seed: int = 0,
    progress: bool = True,
    gops13: str | None = None,
    resume: bool = False,
) -> str:
    """Run the whole benchmark; returns the report (Markdown), also written to REPORT.md.
    ``budget`` is ``"small"``, ``"full"`` or a :class:`Budget` of one's own. ``gops13``: a
    solution file of the full Goofspiel game (``hiddenhand solve goofspiel --out``), against
    which the learner trained there also plays. ``resume``: read back every training run
    that already finished in ``out_dir`` (same rules, seed, length, learner settings
    (:func:`learner_settings`) and code (:func:`~hiddenhand.training.run.code_version`), not cut by Ctrl-C;
    :func:`~hiddenhand.training.run.finished`) instead of training it again, so that a
    benchmark cut short (Ctrl-C, a machine taken away) goes on where it stopped; the agents
    are measured and played again, and the report counts the runs read back."""
    spec = budget if isinstance(budget, Budget) else BUDGETS[check_choice("budget", budget, tuple(BUDGETS))]
    unknown = sorted((set(spec.learners) | set(spec.learner_share) | {spec.big_learner}) - set(learners()))
    if unknown:
        raise ValueError(f"unknown learners {unknown}; choose from {', '.join(learners())}")
    if "rllib" in spec.learners and importlib.util.find_spec("ray") is None:
        raise ValueError(
            f"the {spec.name} budget trains RLlib, which needs Ray: pip install '.[ray]' from a clone (make install "
            "includes it)"
        )
    if gops13 is not None:
        from hiddenhand.files import read_npz_meta

        cards = read_npz_meta(gops13).get(
            "num_cards"
        )  # a damaged or foreign file is refused here, before hours of work
        if cards != spec.big_cards:
            raise ValueError(f"{gops13} solves num_cards={cards!r}; the benchmark plays {spec.big_cards} cards")
        if not spec.big_steps:
            raise ValueError(f"the {spec.name} budget trains no learner at {spec.big_cards} cards; use --budget full")
    out = Path(out_dir)
    start = time.perf_counter()
    summary: dict = {"budget": spec.name, "seed": seed, "runs": [], "games": {}}
    entries = [
        (game, entry)
        for game in games().values()
        for entry in game.benchmark
        if ("small" if spec.small else "full") in entry.budgets
    ]
    # Exact measures first (two-player games with an exploitability), then the tournaments.
    entries.sort(key=lambda item: item[1].lineup != ())
    command = _command(budget, spec, out, seed, gops13, resume)
    lines = _header(spec, seed, command, [_rules(game, entry, spec) for game, entry in entries])
    current = "the set-up"
    try:
        for game, entry in entries:
            rules = _rules(game, entry, spec)
            current = describe(rules)
            where = out / _slug(rules)
            if not entry.lineup:
                result = _two_player_game(game, entry, rules, spec, where, seed, progress, resume)
                _report_two_player(game, rules, where, result, lines, summary)
            else:
                title = entry.title or describe(rules)
                _report_table(title, _table(game, entry, rules, spec, where, seed, progress, resume), lines, summary)
        if spec.big_steps:
            current = f"Goofspiel with {spec.big_cards} cards"
            _big_goofspiel(spec, out, seed, gops13, progress, resume, lines, summary)
    except KeyboardInterrupt:
        _reused(summary, lines)
        lines += [f"**Cut short by Ctrl-C** while running {current}: that section and those after it are missing.", ""]
        with held_ctrl_c():  # a second Ctrl-C waits for the report
            _write(out, lines, start, summary | {"interrupted": True})
            raise Interrupted(
                f"benchmark stopped by Ctrl-C; the finished sections are in {out / 'REPORT.md'}"
            ) from None
    _reused(summary, lines)
    return _write(out, lines, start, summary)


def _reused(summary: dict, lines: list[str]) -> None:
    """A closing line on the runs ``resume`` read back, where it read any."""
    reused = sum(bool(r.get("reused")) for r in summary["runs"])
    if reused:
        lines += [
            f"**Resumed:** {reused} of the {len(summary['runs'])} training runs above were read back from an earlier "
            "benchmark in this directory (finished, same rules, seed, length, settings and code) rather than trained "
            "again; their seconds are that run's. Every agent was measured and played again.",
            "",
        ]


def _command(budget: str | Budget, spec: Budget, out: Path, seed: int, gops13: str | None, resume: bool) -> str:
    """The command that runs this benchmark again (a budget of one's own: the Python call)."""
    if isinstance(budget, Budget):
        return f"run_benchmark({spec!r}, out_dir={str(out)!r}, seed={seed}" + (", resume=True)" if resume else ")")
    return (
        f"hiddenhand benchmark --budget {spec.name} --out {out} --seed {seed}"
        + (f" --gops13 {gops13}" if gops13 else "")
        + (" --resume" if resume else "")
    )


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _header(spec: Budget, seed: int, command: str, configurations: list) -> list[str]:
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
        f"- machine: {os.cpu_count()} CPUs, {platform.platform()}",
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


def _report_two_player(game: Game, rules, where: Path, result, lines: list[str], summary: dict) -> None:
    rows, opponents = result
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
    for r in rows:
        for run in r.runs:
            steps, seconds, exploitability = run.curve[-1]
            summary["runs"].append(
                {
                    "game": game.name,
                    "config": rules.params,
                    "method": run.method,
                    "seed": run.seed,
                    "steps": steps,
                    "seconds": seconds,
                    "exploitability": exploitability,
                    "exact": exploitability is not None,
                    "path": str(run.path),
                    "reused": run.reused,
                }
            )
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
    lines += [f"## {title} (every seating)", "", "| agent | mean return | best (alone or tied) |", "|---|---|---|"]
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


__all__ = ["BUDGETS", "LEARNERS", "Budget", "run_benchmark"]
