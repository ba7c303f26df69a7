"""The main job: train every kind of agent and measure it against the exact equilibria.

For each two-player configuration with an exact exploitability that a game declares
(``Game.benchmark``) it trains, within the budget (:mod:`.budgets`; the runs: :mod:`.runs`):

- where the tree is small (``tabular``): CFR+ and external-sampling MCCFR (OpenSpiel's C++
  solvers through the adapter) and PPO against a pool of snapshots and heuristics;
- where the declaration says ``learn``: the self-play learners the budget lists (sampled
  regret matching, :mod:`hiddenhand.training.sampled_regret`; MMD and tuned PPO,
  :mod:`hiddenhand.training.policy_gradient`; NFSP and PSRO from OpenSpiel; RLlib's PPO,
  :mod:`hiddenhand.training.rllib_train`), on the Markov observation so that the exact
  measure applies, with several seeds in the full budget.

It reports (:mod:`.leaderboards`), for every trained agent, and for the equilibrium and the
heuristics as references:

- exploitability against the exact equilibrium (what a best response gains on average over
  the two seats, over the game's value: the value the agent concedes), and NashConv
  (twice that); a learner's figure is the median over its seeds, with their range;
- head-to-head results against the equilibrium agent and each heuristic, with 95%
  intervals, seats alternating (the first seed's agent).

Configurations without an exact measure are played as every-seating tournaments of their
declared line-up (with CFR+ where declared). Then each section a game adds of its own
(``Game.benchmark_sections``, :class:`~hiddenhand.registry.BenchmarkSection`) runs, in a
budget that trains a learner there. Which configurations the games declare, and what the
report says of them: docs/benchmark.md.

Ctrl-C stops the whole benchmark: the report is written with the sections that finished
and a line saying where it was cut, and :class:`~hiddenhand.interrupt.Interrupted` is raised.
Run again with ``resume``, it reads back the training runs that finished (the full budget
takes hours, and a machine may not stay that long) and trains the rest, a cut run of a
learner that saves its state going on from it. ``only`` runs a part
of it (some games, or configurations by their directory names), where one cannot keep a
machine as long as the whole takes: each part's report stands alone.

Writes (:mod:`.report`) ``REPORT.md`` (a header on how to read it and the run's command,
seed, versions and machine; then a leaderboard per configuration, titled in words), one PNG
per configuration (exploitability against wall-clock seconds and against decisions, log
scales, every measured point of every seed: :mod:`hiddenhand.training.plots`) and
``summary.json`` into ``out``: one record per training run (``game``, ``config``,
``method``, ``seed``, ``steps``, ``seconds``, ``exploitability``, ``exact``, and ``path``,
the saved agent, which ``hiddenhand.agents.load_agent`` reads back, and ``reused``, read
back by ``resume`` rather than trained), and the leaderboards. It prints the report.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from hiddenhand.interrupt import Interrupted, held_ctrl_c
from hiddenhand.registry import Benchmark, Game, games, resolve
from hiddenhand.training.benchmark import report
from hiddenhand.training.benchmark.budgets import BUDGETS, LEARNER_SETTINGS, LEARNERS, Budget, learner_settings
from hiddenhand.training.benchmark.leaderboards import leaderboard, tournament_table
from hiddenhand.training.benchmark.report import SectionReport
from hiddenhand.training.benchmark.runs import LearnerRuns, TrainedRun, train_learner, two_player_runs
from hiddenhand.training.learners import learner, learners
from hiddenhand.training.plots import describe
from hiddenhand.validation import check_choice


def _rules(game: Game, entry: Benchmark, budget: Budget):
    return game.rules(**{**entry.params, **(entry.small if budget.small else {})})


def _slug(rules) -> str:
    """A directory name for a configuration: the game and the parameters that differ from the defaults."""
    defaults = type(rules).param_defaults()
    return _named(rules.name, {k: v for k, v in rules.params.items() if defaults.get(k) != v})


def _named(game: str, params: Mapping) -> str:
    """``game`` and ``params`` spelt as a directory name: ``goofspiel_num_cards=8_observation=markov``."""
    return "_".join([game, *(f"{k}={v}" for k, v in params.items())]).replace(" ", "")


def _check(spec: Budget, files: Mapping[str, str]) -> None:
    """Refuse, before any work, a budget that names no declared learner, one that needs Ray
    where it is missing, and a file given to a game's section that does not take it or that
    its check refuses."""
    unknown = sorted((set(spec.learners) | set(spec.learner_share) | {spec.big_learner}) - set(learners()))
    if unknown:
        raise ValueError(f"unknown learners {unknown}; choose from {', '.join(learners())}")
    for name in spec.learners:
        needed = learner(name).requires
        if needed and importlib.util.find_spec(needed) is None:
            raise ValueError(
                f"the {spec.name} budget trains {name}, which needs {needed}: pip install '.[{needed}]' from a clone "
                "(make install includes it)"
            )
    taking = {s.option: (game, s) for game in games().values() for s in game.benchmark_sections if s.option}
    unknown = sorted(set(files) - set(taking))
    if unknown:
        raise ValueError(f"no benchmark section takes {unknown}; the sections take {sorted(taking)}")
    for option, file in files.items():
        game, section = taking[option]
        if section.check is not None:
            resolve(section.check)(game.rules(**section.params), file)
        if not spec.big_steps:
            raise ValueError(f"the {spec.name} budget trains no learner on {section.title}; use --budget full")


def _chosen(entries: list, sections: list, only: Sequence[str], spec: Budget) -> tuple[list, list]:
    """The configurations and sections ``only`` names (all when it is empty): a game's name
    takes all of that game's, a directory name (:func:`_slug`; a section's spells out its
    parameters, as the directory it writes: 13-card Goofspiel's are the defaults) one. A name
    that matches nothing the budget runs is refused, with the names that would."""
    if not only:
        return entries, sections
    entry_names = [{game.name, _slug(_rules(game, entry, spec))} for game, entry in entries]
    section_names = [{game.name, _named(game.name, section.params)} for game, section in sections]
    known = set().union(*entry_names, *section_names)
    unknown = sorted(set(only) - known)
    if unknown:
        raise ValueError(f"--only {unknown} names nothing the {spec.name} budget runs; choose from {sorted(known)}")
    wanted = set(only)
    return (
        [part for part, names in zip(entries, entry_names) if names & wanted],
        [part for part, names in zip(sections, section_names) if names & wanted],
    )


def run_benchmark(
    budget: str | Budget = "small",
    out_dir: str | Path = "runs/benchmark",
    seed: int = 0,
    progress: bool = True,
    files: Mapping[str, str] | None = None,
    resume: bool = False,
    only: Sequence[str] = (),
) -> str:
    """Run the whole benchmark; returns the report (Markdown), also written to REPORT.md.
    ``budget`` is ``"small"``, ``"full"`` or a :class:`Budget` of one's own. ``files``: a
    file for a game's own section, by the option its declaration names
    (:class:`~hiddenhand.registry.BenchmarkSection`; ``hiddenhand benchmark --OPTION FILE``),
    such as a solution file its learner also plays. ``resume``: read back every training run
    that already finished in ``out_dir`` (same rules, seed, length, learner settings
    (:func:`learner_settings`) and code (:func:`~hiddenhand.training.run.code_version`), not cut by Ctrl-C;
    :func:`~hiddenhand.training.run.finished`) instead of training it again, and go on with
    a cut run of a learner that saves its state from that state, so that a benchmark cut
    short (Ctrl-C, a machine taken away) goes on where it stopped; the agents are measured
    and played again, and the report counts the runs read back. ``only``: run
    just these games (by name) and configurations (by the directory name each writes under
    ``out_dir``, such as ``goofspiel_num_cards=8_observation=markov``), the report saying
    which (:func:`_chosen`)."""
    spec = budget if isinstance(budget, Budget) else BUDGETS[check_choice("budget", budget, tuple(BUDGETS))]
    files = {option: str(file) for option, file in (files or {}).items() if file is not None}
    _check(spec, files)
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
    # The games' own sections, where the budget trains a learner there.
    sections = [(game, section) for game in games().values() for section in game.benchmark_sections]
    sections = sections if spec.big_steps else []
    entries, sections = _chosen(entries, sections, only, spec)
    command = report.command(budget, spec, out, seed, files, resume, only)
    lines = report.header(spec, seed, command, [_rules(game, entry, spec) for game, entry in entries])
    current = "the set-up"
    learned = [
        (rules, entry, out / _slug(rules))
        for rules, entry in ((_rules(game, entry, spec), entry) for game, entry in entries)
        if entry.learn and not entry.lineup
    ]
    learning = LearnerRuns(spec, progress, resume)
    try:
        learning.start(learned, seed)
        for game, entry in entries:
            rules = _rules(game, entry, spec)
            current = describe(rules)
            where = out / _slug(rules)
            if not entry.lineup:
                runs = two_player_runs(entry, rules, spec, where, seed, progress, resume, learning)
                rows, opponents = leaderboard(game, rules, runs, spec, seed)
                report.two_player(game.name, rules, where, rows, opponents, lines, summary)
            else:
                title = entry.title or describe(rules)
                table = tournament_table(game, entry, rules, spec, where, seed, progress, resume)
                report.tournament(title, table, lines, summary)
        for game, section in sections:
            current = section.title
            rules = game.rules(**section.params)
            part = resolve(section.function)(rules, spec, out, seed, files.get(section.option), progress, resume)
            report.section(part, lines, summary)
    except KeyboardInterrupt:
        report.reused(summary, lines)
        lines += [f"**Cut short by Ctrl-C** while running {current}: that section and those after it are missing.", ""]
        with held_ctrl_c():  # a second Ctrl-C waits for the report
            report.write(out, lines, start, summary | {"interrupted": True})
            raise Interrupted(
                f"benchmark stopped by Ctrl-C; the finished sections are in {out / 'REPORT.md'}"
            ) from None
    finally:
        learning.close()
    report.reused(summary, lines)
    return report.write(out, lines, start, summary)


__all__ = [
    "BUDGETS",
    "LEARNERS",
    "LEARNER_SETTINGS",
    "Budget",
    "SectionReport",
    "TrainedRun",
    "learner_settings",
    "run_benchmark",
    "train_learner",
]
