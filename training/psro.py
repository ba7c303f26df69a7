"""OpenSpiel's PSRO as a baseline on our games, through the OpenSpiel adapter
(:mod:`.openspiel_rl`: the environment, the Markov observation, one policy for every seat).

:func:`train_psro` runs ``psro_v2.PSROSolver`` with ``symmetric_game=True`` (one
population). Its oracle is psro_v2's ``RLOracle`` with the learner's seat drawn at random
each episode (the symmetrised game: psro_v2's own symmetric oracle only ever trains seat 0,
which leaves a seat such as Spoof's second bidder untrained), and its meta-game entry
``(i, j)`` is the mean return of policy ``i`` against ``j`` over ``sims_per_entry`` sampled
games, half with ``i`` in each seat (``PSROSolver``'s symmetric update halves the
off-diagonal entries, which leaves a zero-sum meta-game merely scaled but breaks a
constant-sum one such as a Spoof round). Everything else is psro_v2's: the meta-solver
(projected replicator dynamics, ``"prd"``, the PSRO paper's; ``"nash"`` would need cvxpy),
the training-strategy selector and the oracle's loop. (psro_v2 imports OpenSpiel's LP
solver, hence cvxpy, whichever meta-solver runs: :func:`train_psro` needs cvxpy installed.)
Steps are environment decisions (every seat's, the oracle's games and the meta-game's); the
run's files and Ctrl-C are :class:`~hiddenhand.training.run.Run`'s.

**What PSRO's figure means.** PSRO's result is a *mixture* of its population: draw one
policy per game with the meta-probabilities and play it throughout. The behaviour policy
equivalent to it weights each member, at an information state, by its meta-probability
times the member's probability of the player's own past actions (Kuhn's theorem); on a
Markov observation, which forgets those actions, that is not a function of the observation.
So:

- the saved agent, and the curve's ``exploitability``, is the *per-observation average*
  ``sum_k sigma_k pi_k(observation)``: a Markov policy that mixes the members afresh at every
  decision. It is measured exactly (what ``hiddenhand exploitability --agent DIR`` says of
  the saved agent), but it is not the mixture, and may be more or less exploitable;
- where the game tree is small (at most :attr:`PSROSettings.mixture_max_histories`
  decision histories: 4-card Goofspiel, a Spoof round), ``run.json`` also records, per
  point, ``mixture_exploitability``: the mixture's own exact exploitability, from
  OpenSpiel's ``policy_aggregator`` (the realization-equivalent policy over perfect-recall
  information states) and ``pyspiel.nash_conv`` on the cached tree.

**Hyperparameters** (:data:`PSRO_OPENSPIEL`, :data:`PSRO_OURS`). The starting point is
OpenSpiel's ``examples/psro_v2_example.py`` with psro_v2's DQN oracle. The tuned values of
"Reevaluating Policy Gradient Methods for Imperfect-Information Games" (Rudolph et al.;
github.com/nathanlct/IIG-RL-Benchmark, ``best_hyperparameters/min_final_expl_hparams/psro/
liars_dice``) informed the changes; the values we run, and why, are documented on each, and
the runs that chose them in ``docs/training.md``.
"""

from __future__ import annotations

import contextlib
import io
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from hiddenhand.agents.network import NetworkAgent
from hiddenhand.core import Rules
from hiddenhand.global_rngs import keeping_global_rngs
from hiddenhand.interrupt import STOPPED_BY, Interrupted
from hiddenhand.registry import get
from hiddenhand.training import psro_population as population
from hiddenhand.training.openspiel_rl import check_learn_every, environment, prepare
from hiddenhand.training.run import Point, Run, exact_measure
from hiddenhand.validation import check_choice

META_SOLVERS = ("prd", "rm", "uniform")
"""psro_v2's meta-strategy methods that need no LP solver (``"nash"`` needs cvxpy)."""


@dataclass(frozen=True)
class PSROSettings:
    """PSRO (psro_v2) with a DQN oracle (OpenSpiel's ``pytorch.dqn.DQN``)."""

    episodes_per_oracle: int = 1000
    """Games each new best response trains for (psro_v2's ``number_training_episodes``)."""
    sims_per_entry: int = 250
    """Sampled games per meta-game entry (half with each policy in each seat)."""
    meta_solver: str = "prd"
    prd_iterations: int = 50_000
    prd_gamma: float = 1e-10
    training_strategy_selector: str = "probabilistic"
    hidden: tuple[int, ...] = (128,)
    batch_size: int = 32
    learning_rate: float = 1e-2
    optimizer: str = "adam"
    loss: str = "mse"
    learn_every: int = 10
    min_buffer_size_to_learn: int = 1000
    replay_buffer_capacity: int = 10_000
    update_target_network_every: int = 1000
    epsilon_start: float = 1.0
    epsilon_end: float = 0.1
    epsilon_decay: float = 1.0
    """Share of each oracle's games over which exploration decays linearly (OpenSpiel's
    ``"linear"`` schedule, counted in the learner's decisions, estimated from the game's
    longest length)."""
    mixture_max_histories: int = 200_000
    """Measure the mixture itself (``mixture_exploitability``) where the game has at most
    this many decision histories."""


PSRO_OPENSPIEL = PSROSettings()
"""OpenSpiel's ``examples/psro_v2_example.py`` with its DQN oracle (learning rate 0.01,
batches of 32 every 10 steps, target network every 1000 steps, Adam, one hidden layer here
rather than its 4 of 256), psro_v2's 1000 episodes per oracle, the study's 250 games per
meta-game entry, PRD with the example's 50,000 iterations and gamma 1e-10, and DQN's own
exploration (1.0 to 0.1), decayed over each oracle's games."""

PSRO_OURS = replace(
    PSRO_OPENSPIEL,
    learning_rate=1e-3,
    learn_every=4,
    min_buffer_size_to_learn=500,
    epsilon_start=0.5,
    epsilon_end=0.02,
    sims_per_entry=100,
)
"""What we run: OpenSpiel's oracle with Adam at 1e-3, an update every 4 of the learner's
decisions (more updates from each oracle's few thousand), exploration from 0.5 (the study's
0.48) to 0.02, and 100 games per meta-game entry, which leaves more of a budget to the
oracles (the meta-game's games grow with the population: at 250 they were most of the
decisions after 10 iterations).
``docs/training.md`` has the runs that chose them."""

PSRO_SETTINGS: dict[str, PSROSettings] = {"default": PSRO_OURS}
"""Per game; a game absent here uses ``"default"``."""


def settings_for_rules(rules: Rules):
    """The learner's settings for ``rules`` (its declaration, training/learners.py)."""
    return psro_settings_for(rules.name)


def psro_settings_for(game: str) -> PSROSettings:
    return PSRO_SETTINGS.get(get(game).name, PSRO_SETTINGS["default"])


def train_psro(
    rules: Rules,
    *,
    steps: int,
    out: str | Path,
    seed: int = 0,
    eval_every: int = 20_000,
    settings: PSROSettings | None = None,
    progress: bool = True,
    seconds: float | None = None,
    device: str = "auto",
) -> list[Point]:
    """Train PSRO (``open_spiel.python.algorithms.psro_v2``, one symmetrised population, a
    PyTorch DQN oracle; see the module docstring) on two-player ``rules`` until ``steps``
    decisions have been made (every seat's, in the oracle's games and in the meta-game's
    sampled games; PSRO iterations are whole, so the last one may run past ``steps``).
    After the first iteration that reaches each multiple of ``eval_every`` (and at the
    start, the uniform policy) the per-observation average of the population under its
    meta-strategy is measured exactly; that is the agent saved to ``out``
    (``NetworkAgent.load(out)``, kind ``"psro"``), and ``run.json`` adds the mixture's own
    exact exploitability where the game is small enough. ``settings`` default to
    :func:`psro_settings_for`. Ctrl-C stops the oracle between two of its games: the
    iteration it cuts is dropped, and the last whole one saved. Returns the curve."""
    import torch

    declared, steps, eval_every = prepare(rules, steps, eval_every, device, "train_psro")
    _require_psro_v2()
    if rules.num_players != 2:
        raise ValueError(f"PSRO here is for two-player games; {rules} has {rules.num_players} players")
    s = settings or psro_settings_for(declared.name)
    check_choice("meta_solver", s.meta_solver, META_SOLVERS)
    check_choice("optimizer", s.optimizer, ("sgd", "adam", "rmsprop"))
    check_learn_every(s.learn_every)
    with keeping_global_rngs():  # OpenSpiel's PSRO draws from, and reseeds, the global generators
        random.seed(seed)  # psro_v2's sampled games draw from Python's own (utils.random_choice)
        np.random.seed(seed)
        torch.manual_seed(seed)
        env = environment(rules, seed)
        counter = population.Counter()
        UniformMember, DQNResponder = population.member_classes()
        oracle = population.make_oracle(
            env, DQNResponder, counter, _dqn_maker(env, rules, s, seed), s.episodes_per_oracle
        )
        last = _Snapshot(declared.name, rules, env, s, seed)
        mixture = population.mixture_measure(env.game, rules, s.mixture_max_histories)

        def measure() -> tuple[float | None, dict]:
            return exact_measure(declared, rules, last.agent()), {}

        def advance() -> None:
            run.advance(counter.steps - run.steps, counter.games - run.games)

        run = Run(
            "PSRO", rules, out, total=steps, progress=progress, details=lambda: last.details(mixture), seconds=seconds
        )
        counter.pressed = run.pressed
        with run.training():
            with contextlib.redirect_stdout(io.StringIO()):  # psro_v2 prints its configuration
                solver = population.symmetric_solver_class(counter)(
                    env.game,
                    oracle,
                    sims_per_entry=int(s.sims_per_entry),
                    initial_policies=[UniformMember(env.game, counter)],
                    training_strategy_selector=s.training_strategy_selector,
                    meta_strategy_method=s.meta_solver,
                    symmetric_game=True,
                    sample_from_marginals=True,  # the opponent drawn from the meta-strategy (this
                    # version's joint sampler flattens the joint tensor and draws one seat only)
                    number_policies_selected=1,
                    prd_iterations=int(s.prd_iterations),
                    prd_gamma=float(s.prd_gamma),
                )
            last.take(solver)
            advance()
            while run.going():
                if run.due(eval_every):  # first the uniform policy PSRO starts from
                    run.measure(measure)
                solver.iteration()
                last.take(solver)
                advance()
        advance()  # the decisions of an iteration a Ctrl-C cut short
        if last.members is None:  # stopped before the first meta-game was built: nothing to save
            by = STOPPED_BY[run.stopped_by]
            raise Interrupted(
                f"PSRO stopped by {by} before its first iteration; nothing written to {run.out}", [], run.stopped_by
            )
        record = {"settings": asdict(s), "seed": seed, "iterations": len(last.members) - 1}
        return run.finish(lambda: last.agent().save(run.out), measure, record)


def _require_psro_v2() -> None:
    """psro_v2 imports OpenSpiel's LP solver, hence cvxpy, even for meta-solvers that do not
    use it: say so rather than fail on an import deep inside OpenSpiel."""
    try:
        from open_spiel.python.algorithms.psro_v2 import psro_v2  # noqa: F401
    except ModuleNotFoundError as err:
        if err.name != "cvxpy":
            raise
        raise ImportError(
            "OpenSpiel's psro_v2 imports its LP solver, hence cvxpy, even for meta-solvers that do not use it: "
            "pip install cvxpy (hiddenhand[all] has it)"
        ) from err


def _dqn_maker(env, rules: Rules, s: PSROSettings, seed: int) -> Callable[[], Any]:
    """What makes each new best responder: OpenSpiel's PyTorch DQN with the settings, each
    seeded apart, its exploration decayed over its oracle's games (counted in the learner's
    decisions, estimated from the game's longest length)."""
    from open_spiel.python.pytorch import dqn

    size, actions = env.observation_spec()["info_state"][0], env.action_spec()["num_actions"]
    per_game = max(1, -(-rules.max_game_length // rules.num_players))  # the learner's decisions per game
    made = [0]

    def make_dqn():
        made[0] += 1
        return dqn.DQN(
            player_id=0,
            state_representation_size=int(size),
            num_actions=int(actions),
            hidden_layers_sizes=list(s.hidden),
            batch_size=int(s.batch_size),
            replay_buffer_capacity=int(s.replay_buffer_capacity),
            learning_rate=float(s.learning_rate),
            update_target_network_every=int(s.update_target_network_every),
            learn_every=int(s.learn_every),
            discount_factor=1.0,
            min_buffer_size_to_learn=int(s.min_buffer_size_to_learn),
            epsilon_start=float(s.epsilon_start),
            epsilon_end=float(s.epsilon_end),
            epsilon_decay_duration=max(1, int(s.epsilon_decay * s.episodes_per_oracle * per_game)),
            epsilon_decay_schedule_str="linear",
            optimizer_str=s.optimizer,
            loss_str=s.loss,
            seed=seed * 1000 + made[0],
        )

    return make_dqn


class _Snapshot:
    """The population and meta-strategy after the last whole iteration: what the agent is,
    and what each point of the curve records beside it."""

    def __init__(self, game: str, rules: Rules, env, s: PSROSettings, seed: int) -> None:
        self.game, self.params, self.settings, self.seed = game, rules.params, s, seed
        self.size, self.actions = env.observation_spec()["info_state"][0], env.action_spec()["num_actions"]
        self.members: list | None = None
        self.weights = np.zeros(0)

    def take(self, solver) -> None:
        members, weights = solver.get_policies()[0], solver.get_meta_strategies()[0]
        self.members, self.weights = list(members), np.asarray(weights, dtype=np.float64)

    def agent(self) -> NetworkAgent:
        return NetworkAgent(
            self.game,
            self.params,
            "psro",
            self.size,
            self.settings.hidden,
            self.actions,
            [m.member(float(w)) for m, w in zip(self.members, self.weights)],
            info={
                "policy": "per-observation average of PSRO's population under its meta-strategy "
                "(not the mixture itself; see hiddenhand.training.psro)",
                "iterations": len(self.members) - 1,
                "seed": self.seed,
            },
        )

    def details(self, mixture) -> dict:
        return {
            "mixture_exploitability": None if mixture is None else mixture(self.members, self.weights),
            "population": len(self.members),
            "meta_strategy": self.weights.tolist(),
        }


__all__ = [
    "META_SOLVERS",
    "PSROSettings",
    "PSRO_OPENSPIEL",
    "PSRO_OURS",
    "PSRO_SETTINGS",
    "psro_settings_for",
    "train_psro",
]
