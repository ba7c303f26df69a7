"""How long the benchmark trains and what: :class:`Budget`, the two named budgets
(:data:`BUDGETS`), the learners the full study trains (:data:`LEARNERS`) and the settings the
benchmark gives them (:data:`LEARNER_SETTINGS`, :func:`learner_settings`).

Kept apart from the runs and the report: a budget is what a user picks (``--budget``) or
writes (a :class:`Budget` of their own), and the settings are what ``resume`` compares a
finished run with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from hiddenhand.training.learners import learner

LEARNERS = ("regret", "mmd", "mmd-critic", "ppo-selfplay", "nfsp", "psro", "rllib", "rllib-mmd-critic")
"""The learners the full study trains, by their declared names (:mod:`hiddenhand.training.learners`;
any declared learner may be named in a :class:`Budget`): sampled regret matching, self-play
MMD (by the policy gradient, and in closed form with a critic) and tuned PPO, OpenSpiel's
NFSP and PSRO, and on RLlib (the ``[ray]`` extra) its PPO with our settings and credit and
MMD with a critic as an RLlib Learner."""


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
    configuration_share: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """Per configuration (by the directory name its runs go under, as ``--only`` names it)
    and learner, a further factor on that learner's decisions there: where the budget's
    point is one learner on one configuration (the small budget's network learner on 6-card
    Goofspiel), it gives that run the time the others leave."""
    seeds: int = 1
    """Seeds per self-play learner."""
    workers: int = 1
    """Learner runs side by side, one process each (:class:`~.runs.LearnerRuns`)."""
    big_steps: int = 0
    """Decisions of ``big_learner`` in each section a game adds to the benchmark
    (:class:`~hiddenhand.registry.BenchmarkSection`: a game too large for an exact measure
    of a learned agent); 0 leaves those sections out."""
    big_learner: str = "mmd"
    """The learner trained in those sections: a network, which generalises across positions;
    sampled regret matching's table, keyed by the observation, would meet mostly rows it has
    never seen in a game that large (they play uniformly)."""
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
        learners=("regret", "mmd", "mmd-critic", "ppo-selfplay"),
        learner_share={"regret": 300, "mmd-critic": 5},
        configuration_share={"goofspiel_num_cards=6_observation=markov": {"mmd-critic": 2}},
        workers=2,
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
        learner_share={"regret": 1000, "nfsp": 0.5, "psro": 0.5, "rllib": 0.2, "rllib-mmd-critic": 0.2},
        seeds=3,
        workers=2,
        big_steps=1_000_000,
        name="full",
    ),
}
"""``small`` runs within 15 minutes on two cores (what ``make run`` runs), one seed each of
sampled regret matching, MMD, MMD with a critic and tuned PPO, two runs at a time; MMD with a
critic, the network learner that goes furthest, trains five times the others' decisions,
and ten times at 6 cards, where it is the small run's point (it runs there from the start
on one core while the other runs take the other: :class:`~.runs.LearnerRuns`); ``full``
trains every learner with three seeds and plays five times more games
(docs/benchmark_full.md has its report and its time)."""


LEARNER_SETTINGS: Mapping[str, Mapping[str, object]] = {
    name: {"env_runners": 0, "num_cpus": 1} for name in ("rllib", "rllib-mmd-critic")
}
"""Where the benchmark departs from a learner's own settings: RLlib plays its games in the
driver, one CPU a run, so that runs side by side share the machine as the others do."""


def learner_settings(method: str, rules):
    """The settings the declared learner ``method`` trains with on ``rules`` here: its own
    (:meth:`~hiddenhand.training.learners.Learner.settings_for`) with
    :data:`LEARNER_SETTINGS`; what :func:`~.runs.train_learner` gives it, and what ``resume``
    compares with a finished run's recorded settings, so that a run made with others trains
    again."""
    return replace(learner(method).settings_for(rules), **LEARNER_SETTINGS.get(method, {}))
