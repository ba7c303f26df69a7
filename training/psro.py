"""OpenSpiel's PSRO as a baseline on our games, through the OpenSpiel adapter
(:mod:`.openspiel_rl`: the environment, the Markov observation, one policy for every seat).

(One module over 450 lines: PSRO's population, its meta-game measure and the playing-out loop
that replaces psro_v2's recursion are used by nothing else, and each needs the others.)

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

from hiddenhand.agents.network import Member, NetworkAgent
from hiddenhand.core import Rules
from hiddenhand.global_rngs import keeping_global_rngs
from hiddenhand.interrupt import Interrupted
from hiddenhand.registry import get
from hiddenhand.training.openspiel_rl import check_learn_every, copy_state, environment, prepare
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


class _Counter:
    """Decisions and games PSRO has played (the oracle's games and the meta-game's)."""

    steps = 0
    games = 0


def _policy_base():
    from open_spiel.python import policy as policy_lib

    return policy_lib.Policy


class _Member:
    """Mixin for PSRO's population members: psro_v2's policy protocol (``step`` for the
    oracle's games, ``action_probabilities`` for the meta-game's, ``freeze``), acting for
    whichever seat is to move; counts the decisions it makes."""

    def _init(self, game, counter: _Counter) -> None:
        _policy_base().__init__(self, game, list(range(game.num_players())))
        self._frozen, self._counter = True, counter
        self._num_actions = game.num_distinct_actions()

    def freeze(self) -> None:
        self._frozen = True

    def unfreeze(self) -> None:
        self._frozen = False

    def is_frozen(self) -> bool:
        return self._frozen

    def probs(self, vectors: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return masks / masks.sum(axis=1, keepdims=True)

    def _one(self, vector, legal) -> np.ndarray:
        mask = np.zeros((1, self._num_actions), dtype=bool)
        mask[0, legal] = True
        return self.probs(np.asarray(vector, dtype=np.float32)[None], mask)[0]

    def step(self, time_step, is_evaluation: bool = False):
        from open_spiel.python import rl_agent

        if time_step.last():
            return None
        self._counter.steps += 1
        player = time_step.observations["current_player"]
        probs = self._one(time_step.observations["info_state"][player], time_step.observations["legal_actions"][player])
        action = int(np.random.choice(self._num_actions, p=probs))
        return rl_agent.StepOutput(action=action, probs=probs)

    def action_probabilities(self, state, player_id=None) -> dict[int, float]:
        player = state.current_player() if player_id is None else player_id
        legal = state.legal_actions(player)
        self._counter.steps += 1
        probs = self._one(state.observation_tensor(player), legal)
        return {a: float(probs[a]) for a in legal}

    def member(self, weight: float) -> Member:
        return Member("uniform", weight)


def _member_classes():
    """The population's classes, built on OpenSpiel's ``policy.Policy`` when first needed
    (OpenSpiel's own ``psro_v2.rl_policy`` imports JAX, which we do not install)."""
    Policy = _policy_base()

    class UniformMember(_Member, Policy):
        """PSRO's starting policy: uniform over the legal actions."""

        def __init__(self, game, counter: _Counter) -> None:
            self._init(game, counter)

    class DQNResponder(_Member, Policy):
        """A best response trained by OpenSpiel's PyTorch DQN (psro_v2's ``DQNPolicy``): while
        training it plays the seat ``self.seat`` through the DQN (exploring, learning); frozen,
        it plays greedily on its Q-values in any seat."""

        def __init__(self, env, player_id: int, counter: _Counter, make_dqn: Callable, **unused) -> None:
            self._init(env.game, counter)
            self._env, self._make_dqn, self.seat = env, make_dqn, player_id
            self.dqn = make_dqn()

        def probs(self, vectors: np.ndarray, masks: np.ndarray) -> np.ndarray:
            import torch

            with torch.no_grad():
                values = self.dqn._q_network(torch.as_tensor(vectors)).double()
            values = values.masked_fill(~torch.as_tensor(masks), -torch.inf)
            return torch.nn.functional.one_hot(values.argmax(dim=1), self._num_actions).double().numpy()

        def step(self, time_step, is_evaluation: bool = False):
            if self._frozen or is_evaluation:
                return super().step(time_step, is_evaluation)
            if not time_step.last():
                self._counter.steps += 1
            self.dqn.player_id = self.seat
            return self.dqn.step(time_step)

        def copy_with_noise(self, sigma: float = 0.0):
            # What psro_v2's rl_policy does for an agent without copy_with_noise (PyTorch's
            # DQN has none): a fresh learner with the same arguments.
            fresh = DQNResponder(self._env, self.seat, self._counter, self._make_dqn)
            fresh.unfreeze()
            return fresh

        def member(self, weight: float) -> Member:
            return Member("q_greedy", weight, copy_state(self.dqn._q_network.model))

    return UniformMember, DQNResponder


def _make_oracle(env, responder_class, counter: _Counter, make_dqn, episodes: int):
    """psro_v2's ``RLOracle`` with the learner's seat drawn at random for every game."""
    from open_spiel.python.algorithms.psro_v2 import rl_oracle

    class SeatSwappingOracle(rl_oracle.RLOracle):
        def sample_policies_for_episode(self, new_policies, training_parameters, episodes_per_oracle, sampler):
            agents, live = super().sample_policies_for_episode(
                new_policies, training_parameters, episodes_per_oracle, sampler
            )
            learner = agents[0]  # symmetric: the one population trains in seat 0's slot
            if np.random.random() < 0.5:
                agents = [agents[1], agents[0]]
            learner.seat = 1 if agents[1] is learner else 0
            return agents, live

        def _rollout(self, game, agents, **unused):
            self.sample_episode(None, agents, is_evaluation=False)
            counter.games += 1

    return SeatSwappingOracle(
        env,
        responder_class,
        {"counter": counter, "make_dqn": make_dqn},
        number_training_episodes=episodes,
        self_play_proportion=0.0,
    )


def _symmetric_solver_class(counter: _Counter):
    from open_spiel.python.algorithms.psro_v2 import psro_v2

    class SymmetrisedPSRO(psro_v2.PSROSolver):
        """``PSROSolver`` with one population whose meta-game entry ``(i, j)`` is the mean
        return of policy ``i`` against ``j``, half the games with ``i`` in each seat."""

        def update_empirical_gamestate(self, seed=None):
            if seed is not None:
                np.random.seed(seed=seed)
            old, new = self._policies[0], self._new_policies[0]
            population = old + new
            table = np.full((len(population),) * 2, np.nan)
            if old:
                table[: len(old), : len(old)] = self._meta_games[0]
            for i in range(len(old), len(population)):
                for j in range(len(population)):
                    if np.isnan(table[i, j]):
                        mine, theirs = self._symmetrised(population[i], population[j])
                        table[i, j], table[j, i] = (mine + theirs) / 2 if i == j else mine, theirs
            self._meta_games = [table, table.T.copy()]
            self._policies = [population]
            return self._meta_games

        def _symmetrised(self, a, b) -> tuple[float, float]:
            totals = np.zeros(2)
            half = max(1, self._sims_per_entry // 2)
            for seats in ((a, b), (b, a)):
                for _ in range(half):
                    returns = _play_out(self._game.new_initial_state(), list(seats))
                    totals += returns if seats[0] is a else returns[::-1]
                    counter.games += 1
            return tuple(totals / (2 * half))

    return SymmetrisedPSRO


def _play_out(state, policies) -> np.ndarray:
    """The returns of one game of ``policies`` from ``state``, drawn as psro_v2's
    ``sample_episode`` draws them (``utils.random_choice``), in a loop: that function
    recurses once per move, and a whole game of Bid Spoof outgrows Python's 1,000 frames."""
    from open_spiel.python.algorithms.psro_v2 import utils

    while not state.is_terminal():
        if state.is_simultaneous_node():
            actions = []
            for player in range(state.num_players()):
                outcomes, probs = zip(*policies[player](state, player).items())
                actions.append(utils.random_choice(outcomes, probs))
            state.apply_actions(actions)
            continue
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
        else:
            outcomes, probs = zip(*policies[state.current_player()](state).items())
        state.apply_action(utils.random_choice(outcomes, probs))
    return np.array(state.returns(), dtype=np.float32)


def _mixture_measure(game, rules, limit: int):
    """A function of (population, weights) giving the exact exploitability of PSRO's
    mixture (OpenSpiel's ``policy_aggregator``, then ``pyspiel.nash_conv``), or ``None``
    where the game has more than ``limit`` decision histories."""
    import pyspiel
    from open_spiel.python.algorithms import policy_aggregator

    from hiddenhand.core import decision_states
    from hiddenhand.openspiel import cached_tree

    keys, vectors, masks, count = {}, [], [], 0
    for state in decision_states(rules):
        count += 1
        if count > limit:
            return None
        player = state.current_player()
        key = state.information_state_string(player)
        if key not in keys:
            keys[key] = len(keys)
            vectors.append(state.observation_tensor(player))
            masks.append(state.action_mask(player).astype(bool))
    vectors, masks = np.array(vectors, dtype=np.float32), np.array(masks)
    tree = cached_tree(game)

    class Table:
        def __init__(self, probs: np.ndarray) -> None:
            self.probs = probs

        def action_probabilities(self, state, player_id=None):
            player = state.current_player() if player_id is None else player_id
            row = self.probs[keys[state.information_state_string(player)]]
            return {a: float(row[a]) for a in state.legal_actions(player)}

    def measure(population, weights) -> float:
        tables = [Table(member.probs(vectors, masks)) for member in population]
        players = list(range(game.num_players()))
        mixed = policy_aggregator.PolicyAggregator(tree).aggregate(
            players, [tables] * len(players), [list(map(float, weights))] * len(players)
        )
        table = {key: sorted(probs.items()) for per_player in mixed.policy for key, probs in per_player.items()}
        return float(pyspiel.nash_conv(tree, pyspiel.TabularPolicy(table))) / game.num_players()

    return measure


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
    PyTorch DQN oracle; see the module docstring) on two-player
    ``rules`` until ``steps`` decisions have been made (every seat's, in the oracle's
    games and in the meta-game's sampled games; PSRO iterations are whole, so the last one
    may run past ``steps``). After the first iteration that reaches each multiple of
    ``eval_every`` (and at the start, the uniform policy) the per-observation average of the
    population under its meta-strategy is measured exactly; that is the agent saved to
    ``out`` (``NetworkAgent.load(out)``, kind ``"psro"``), and ``run.json`` adds the
    mixture's own exact exploitability where the game is small enough. ``settings`` default
    to :func:`psro_settings_for`. Returns the curve."""
    import torch
    from open_spiel.python.pytorch import dqn

    declared, steps, eval_every = prepare(rules, steps, eval_every, device, "train_psro")
    try:
        from open_spiel.python.algorithms.psro_v2 import psro_v2  # noqa: F401
    except ModuleNotFoundError as err:
        if err.name != "cvxpy":
            raise
        raise ImportError(
            "OpenSpiel's psro_v2 imports its LP solver, hence cvxpy, even for meta-solvers that do not use it: "
            "pip install cvxpy (hiddenhand[all] has it)"
        ) from err
    if rules.num_players != 2:
        raise ValueError(f"PSRO here is for two-player games; {rules!r} has {rules.num_players} players")
    s = settings or psro_settings_for(declared.name)
    check_choice("meta_solver", s.meta_solver, META_SOLVERS)
    check_choice("optimizer", s.optimizer, ("sgd", "adam", "rmsprop"))
    check_learn_every(s.learn_every)
    params = rules.params
    with keeping_global_rngs():  # OpenSpiel's PSRO draws from, and reseeds, the global generators
        random.seed(seed)  # psro_v2's sampled games draw from Python's own (utils.random_choice)
        np.random.seed(seed)
        torch.manual_seed(seed)
        env = environment(rules, seed)
        size, actions = env.observation_spec()["info_state"][0], env.action_spec()["num_actions"]
        per_game = max(1, -(-rules.max_game_length // rules.num_players))  # the learner's decisions per game
        made = {"responders": 0}

        def make_dqn():
            made["responders"] += 1
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
                seed=seed * 1000 + made["responders"],
            )

        counter = _Counter()
        UniformMember, DQNResponder = _member_classes()
        oracle = _make_oracle(env, DQNResponder, counter, make_dqn, s.episodes_per_oracle)
        mixture = _mixture_measure(env.game, rules, s.mixture_max_histories)
        last: dict[str, Any] = {}

        def snapshot(solver) -> None:
            """The population and meta-strategy after a whole iteration (what the agent is)."""
            members, weights = solver.get_policies()[0], solver.get_meta_strategies()[0]
            last["members"], last["weights"] = list(members), np.asarray(weights, dtype=np.float64)

        def agent() -> NetworkAgent:
            members, weights = last["members"], last["weights"]
            return NetworkAgent(
                declared.name,
                params,
                "psro",
                size,
                s.hidden,
                actions,
                [m.member(float(w)) for m, w in zip(members, weights)],
                info={
                    "policy": "per-observation average of PSRO's population under its meta-strategy "
                    "(not the mixture itself; see hiddenhand.training.psro)",
                    "iterations": len(members) - 1,
                    "seed": seed,
                },
            )

        def extra() -> dict:
            members, weights = last["members"], last["weights"]
            return {
                "mixture_exploitability": None if mixture is None else mixture(members, weights),
                "population": len(members),
                "meta_strategy": weights.tolist(),
            }

        def measure() -> tuple[float | None, dict]:
            return exact_measure(declared, rules, agent()), {}

        def advance() -> None:
            run.advance(counter.steps - run.steps, counter.games - run.games)

        run = Run("PSRO", rules, out, total=steps, progress=progress, details=extra, seconds=seconds)
        with run.training():
            with contextlib.redirect_stdout(io.StringIO()):  # psro_v2 prints its configuration
                solver = _symmetric_solver_class(counter)(
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
            snapshot(solver)
            advance()
            while run.going():
                if run.due(eval_every):  # first the uniform policy PSRO starts from
                    run.measure(measure)
                solver.iteration()
                snapshot(solver)
                advance()
        advance()  # the decisions of an iteration a Ctrl-C cut short
        if not last:  # stopped before the first meta-game was built: nothing to save
            raise Interrupted(f"PSRO stopped by Ctrl-C before its first iteration; nothing written to {run.out}", [])
        record = {"settings": asdict(s), "seed": seed, "iterations": len(last["members"]) - 1}
        return run.finish(lambda: agent().save(run.out), measure, record)


__all__ = [
    "META_SOLVERS",
    "PSROSettings",
    "PSRO_OPENSPIEL",
    "PSRO_OURS",
    "PSRO_SETTINGS",
    "psro_settings_for",
    "train_psro",
]
