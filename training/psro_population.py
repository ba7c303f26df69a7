"""PSRO's population over OpenSpiel's psro_v2 (:mod:`.psro` runs it): the members (the
uniform policy PSRO starts from and the DQN best responses), acting for every seat through
the OpenSpiel face and counting the decisions they play; the oracle that trains each new
best response in the symmetrised game; the solver whose meta-game entries average both
seatings; the loop that plays a meta-game's games out; and the exact measure of the mixture
itself where the game is small. Apart from the run, as what psro_v2 is made to do here is
one concern and how a run drives it another (the module docstring of :mod:`.psro` says why
each piece is what it is)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hiddenhand.agents.network import Member
from hiddenhand.training.openspiel_rl import copy_state


class Counter:
    """Decisions and games PSRO has played (the oracle's games and the meta-game's), and
    ``pressed``, which says whether Ctrl-C was pressed (the run's
    :meth:`~hiddenhand.training.run.Run.pressed`): the oracle reads it before each game."""

    steps = 0
    games = 0
    pressed: Callable[[], bool] = staticmethod(lambda: False)


def _policy_base():
    from open_spiel.python import policy as policy_lib

    return policy_lib.Policy


class _Member:
    """Mixin for PSRO's population members: psro_v2's policy protocol (``step`` for the
    oracle's games, ``action_probabilities`` for the meta-game's, ``freeze``), acting for
    whichever seat is to move; counts the decisions it makes."""

    def _init(self, game, counter: Counter) -> None:
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


def member_classes():
    """The population's classes, built on OpenSpiel's ``policy.Policy`` when first needed
    (OpenSpiel's own ``psro_v2.rl_policy`` imports JAX, which we do not install)."""
    Policy = _policy_base()

    class UniformMember(_Member, Policy):
        """PSRO's starting policy: uniform over the legal actions."""

        def __init__(self, game, counter: Counter) -> None:
            self._init(game, counter)

    class DQNResponder(_Member, Policy):
        """A best response trained by OpenSpiel's PyTorch DQN (psro_v2's ``DQNPolicy``): while
        training it plays the seat ``self.seat`` through the DQN (exploring, learning); frozen,
        it plays greedily on its Q-values in any seat."""

        def __init__(self, env, player_id: int, counter: Counter, make_dqn: Callable, **unused) -> None:
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


def make_oracle(env, responder_class, counter: Counter, make_dqn, episodes: int):
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
            if counter.pressed():  # cut the iteration between two games: the run keeps the last whole one
                raise KeyboardInterrupt
            self.sample_episode(None, agents, is_evaluation=False)
            counter.games += 1

    return SeatSwappingOracle(
        env,
        responder_class,
        {"counter": counter, "make_dqn": make_dqn},
        number_training_episodes=episodes,
        self_play_proportion=0.0,
    )


def symmetric_solver_class(counter: Counter):
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
                    returns = play_out(self._game.new_initial_state(), list(seats))
                    totals += returns if seats[0] is a else returns[::-1]
                    counter.games += 1
            return tuple(totals / (2 * half))

    return SymmetrisedPSRO


def play_out(state, policies) -> np.ndarray:
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


def mixture_measure(game, rules, limit: int):
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
