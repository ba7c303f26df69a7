"""The OpenSpiel face: one generic adapter from any game's :class:`~hiddenhand.core.Rules`
to a ``pyspiel.Game``.

``import hiddenhand`` subscribes :func:`register_game` to the registry, so every game (ours,
and any registered with :func:`hiddenhand.register`, before or after) is registered as
``hiddenhand_<game>``, with the env's keyword arguments as its parameters (same names, same
defaults)::

    import hiddenhand, pyspiel
    game = pyspiel.load_game("hiddenhand_goofspiel(num_cards=4,reveal_bids=false)")

The game is SEQUENTIAL with explicit chance: a simultaneous round is a run of consecutive
turns whose actions stay hidden in the other players' information states, so OpenSpiel's
CFR, best response, exploitability and sequence-form LP run on it directly. Its C++
solvers run on ``pyspiel.convert_to_cached_tree(game)``, which walks the Python game once
and then runs at C++ speed (:func:`cached_tree`).

Parameters are declared with the types of their defaults (int, bool, str). OpenSpiel reads
a game string's values by their look (digits are an int, ``true`` a bool, anything else a
string) and refuses a value of another type than declared before the game is made, so no
message of ours can reach that case: a string value that looks like a number is written so
that it does not (EggHead's one analyst, ``analysts=0;``, as ``str(game)`` writes it); every
other string parameter takes words.

Information-state strings and tensors are perfect recall (``State.information_state_*``);
observation tensors are the PettingZoo observations, which for Bid Spoof and EggHead are a
bounded window of the history (``Rules.observation_is_information_state``). Games, states
and their observers follow OpenSpiel's contracts: they pickle, ``load_game(str(game))``
gives the game back, and ``make_py_observer`` returns ``None`` for observation types no
game here provides (public-only, all players).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib

from hiddenhand.core import Rules, State, decision_states, depth_first
from hiddenhand.exploitability import Exploitability
from hiddenhand.pettingzoo_env import RulesAECEnv
from hiddenhand.registry import Game, get

if TYPE_CHECKING:
    from hiddenhand.agent import Agent

_PREFIX = "hiddenhand_"


def _utility_kind(utility_sum: float | None) -> pyspiel.GameType.Utility:
    U = pyspiel.GameType.Utility
    if utility_sum is None:
        return U.GENERAL_SUM
    return U.ZERO_SUM if utility_sum == 0 else U.CONSTANT_SUM


def _game_type(rules: Rules, rules_class: type[Rules]) -> pyspiel.GameType:
    T = pyspiel.GameType
    return T(
        short_name=_PREFIX + rules.name,
        long_name=f"hiddenhand {rules.name}",
        dynamics=T.Dynamics.SEQUENTIAL,
        chance_mode=T.ChanceMode.EXPLICIT_STOCHASTIC if rules.max_chance_outcomes else T.ChanceMode.DETERMINISTIC,
        information=T.Information.IMPERFECT_INFORMATION,
        utility=_utility_kind(rules.utility_sum),
        reward_model=T.RewardModel.TERMINAL,
        max_num_players=rules_class.max_players,
        min_num_players=rules_class.min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=rules_class.openspiel_parameters(),
    )


def _game_info(rules: Rules) -> pyspiel.GameInfo:
    low, high = rules.utility_range
    return pyspiel.GameInfo(
        num_distinct_actions=rules.num_actions,
        max_chance_outcomes=rules.max_chance_outcomes,
        num_players=rules.num_players,
        min_utility=float(low),
        max_utility=float(high),
        utility_sum=rules.utility_sum,
        max_game_length=rules.max_game_length,
    )


class HiddenhandGame(pyspiel.Game):
    """A ``pyspiel.Game`` over one configured :class:`Rules`."""

    def __init__(self, rules: Rules) -> None:
        super().__init__(_game_type(rules, type(rules)), _game_info(rules), rules.to_openspiel())
        self.rules = rules

    def new_initial_state(self) -> HiddenhandState:
        return HiddenhandState(self, self.rules.new_initial_state())

    def make_py_observer(self, iig_obs_type=None, params=None) -> _Observer | None:
        """OpenSpiel's observer contract: the perfect-recall information state for
        ``perfect_recall=True``, the (possibly windowed) observation for the default type,
        and ``None`` for the kinds no game here provides (public-only, all players)."""
        if params:
            raise ValueError(f"observer parameters are not supported; got {params}")
        if iig_obs_type is None:
            return _Observer(self.rules, perfect_recall=False)
        if not iig_obs_type.public_info or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER:
            return None
        return _Observer(self.rules, perfect_recall=iig_obs_type.perfect_recall)

    def __reduce__(self):
        # pickle (multiprocessing, Ray, OpenSpiel's own simulation tests) rebuilds the game
        # from its rules; the registered per-game subclasses are not needed for that.
        return (HiddenhandGame, (self.rules,))


class HiddenhandState(pyspiel.State):
    """A ``pyspiel.State`` wrapping one of our states; every call is passed through."""

    def __init__(self, game: HiddenhandGame, state: State) -> None:
        super().__init__(game)
        self.inner = state

    def current_player(self) -> int:
        return self.inner.current_player()

    def _legal_actions(self, player: int) -> list[int]:
        # OpenSpiel's sequential view: only the player to move has actions.
        return self.inner.legal_actions(player) if player == self.inner.current_player() else []

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self.inner.chance_outcomes()

    def _apply_action(self, action: int) -> None:
        self.inner.apply(action)

    def _action_to_string(self, player: int, action: int) -> str:
        return self.inner.action_to_string(player, action)

    def is_terminal(self) -> bool:
        return self.inner.is_terminal()

    def returns(self) -> list[float]:
        return self.inner.returns()

    def __str__(self) -> str:
        return self.inner.render()

    def __reduce__(self):
        # Replaying the history (chance outcomes included) restores OpenSpiel's own record
        # of it too, which copying the inner state alone would lose.
        return (_replay, (self.get_game(), self.history()))


def _replay(game: HiddenhandGame, history: list[int]) -> HiddenhandState:
    """The state reached from the root of ``game`` by ``history`` (how states unpickle)."""
    state = game.new_initial_state()
    for action in history:
        state.apply_action(action)
    return state


class _Observer:
    """OpenSpiel's observer protocol over one player's view: the perfect-recall information
    state (``perfect_recall=True``), or the observation, which in some games is a bounded
    window; its string is then the player's rendering of the table."""

    def __init__(self, rules: Rules, perfect_recall: bool) -> None:
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(rules.information_state_size if perfect_recall else rules.observation_size, np.float32)
        self.dict = {"info_state" if perfect_recall else "observation": self.tensor}
        self._string_is_information_state = perfect_recall or rules.observation_is_information_state

    def set_from(self, state: HiddenhandState, player: int) -> None:
        inner = state.inner
        self.tensor[:] = (
            inner.information_state_tensor(player) if self.perfect_recall else inner.observation_tensor(player)
        )

    def string_from(self, state: HiddenhandState, player: int) -> str:
        if self._string_is_information_state:
            return state.inner.information_state_string(player)
        return state.inner.render(player)


def to_pyspiel(env_or_rules: RulesAECEnv | Rules | Any) -> HiddenhandGame:
    """The ``pyspiel.Game`` of one of our envs (wrapped or not) or rules objects."""
    if isinstance(env_or_rules, Rules):
        return HiddenhandGame(env_or_rules)
    unwrapped = getattr(env_or_rules, "unwrapped", None)
    if isinstance(unwrapped, RulesAECEnv):
        return HiddenhandGame(unwrapped.rules)
    aec = getattr(env_or_rules, "aec_env", None)  # a Parallel env made from an AEC one
    if aec is not None:
        return to_pyspiel(aec)
    raise TypeError(f"to_pyspiel takes a hiddenhand env or Rules object, not {type(env_or_rules).__name__}")


def cached_tree(game: HiddenhandGame) -> pyspiel.Game:
    """The game as OpenSpiel's cached tree, on which its C++ solvers run at C++ speed.

    The tree is filled in lazily, one Python call per node the first time a solver visits
    it, so it is kept on the game and shared by every later call.
    """
    if getattr(game, "_cached_tree", None) is None:
        game._cached_tree = pyspiel.convert_to_cached_tree(game)
    return game._cached_tree


class AgentPolicy(policy_lib.Policy):
    """A hiddenhand agent as an OpenSpiel policy: the agent's distribution for the mover's
    observation. Works on the adapter's states (Python algorithms); for the C++ ones use
    :func:`tabular_policy`."""

    def __init__(self, game: HiddenhandGame, agent: Agent) -> None:
        super().__init__(game, list(range(game.num_players())))
        self.agent = agent

    def action_probabilities(self, state: HiddenhandState, player_id: int | None = None) -> dict[int, float]:
        player = state.current_player() if player_id is None else player_id
        probs = self.agent.policy(state.inner.agent_observation(player))
        return {a: float(probs[a]) for a in state.inner.legal_actions(player)}


def agent_policy(game: HiddenhandGame, agent: Agent) -> AgentPolicy:
    """Any hiddenhand agent as an OpenSpiel policy on ``game`` (a ``hiddenhand_<game>``)."""
    return AgentPolicy(game, agent)


def tabular_policy(game: HiddenhandGame, agent: Agent) -> pyspiel.TabularPolicy:
    """The agent's policy at every information state of ``game``, as a C++ tabular policy
    (what ``pyspiel.nash_conv`` and the C++ best response take). Walks the whole game."""
    table: dict[str, list[tuple[int, float]]] = {}
    for state in decision_states(game.rules):
        player = state.current_player()
        key = state.information_state_string(player)
        if key not in table:
            probs = agent.policy(state.agent_observation(player))
            table[key] = [(a, float(probs[a])) for a in state.legal_actions(player)]
    return pyspiel.TabularPolicy(table)


def information_states(game: pyspiel.Game) -> Iterator[pyspiel.State]:
    """One decision state per information state of any ``pyspiel`` game (ours, its cached
    tree, or a native one), depth first."""
    seen: set[str] = set()
    children = lambda state: [] if state.is_terminal() else [state.child(a) for a in state.legal_actions()]  # noqa: E731
    for state in depth_first(game.new_initial_state(), children):
        if not state.is_terminal() and not state.is_chance_node():
            key = state.information_state_string()
            if key not in seen:
                seen.add(key)
                yield state


def state_policy(policy: Any, state: pyspiel.State) -> list[tuple[int, float]]:
    """``(action, probability)`` pairs of any OpenSpiel policy at ``state``: a Python
    ``Policy``, or a C++ ``pyspiel.Policy`` (including the MCCFR solvers' average
    policies, which answer only for states of the game they were trained on)."""
    if isinstance(policy, pyspiel.Policy):
        return list(policy.get_state_policy(state))
    return sorted(policy.action_probabilities(state).items())


def to_tabular(game: pyspiel.Game, policy: Any) -> pyspiel.TabularPolicy:
    """Any OpenSpiel policy on ``game`` as a C++ tabular policy (which ``pyspiel.nash_conv``
    takes whatever solver produced it)."""
    return pyspiel.TabularPolicy(
        {s.information_state_string(): state_policy(policy, s) for s in information_states(game)}
    )


def nash_conv(game: HiddenhandGame, agent: Agent) -> float:
    """NashConv of ``agent`` playing every seat of ``game``, by OpenSpiel's exact best
    response (C++, on the cached tree). Exploitability is this divided by the number of
    players."""
    return pyspiel.nash_conv(cached_tree(game), tabular_policy(game, agent))


def _game_class(name: str) -> type[HiddenhandGame]:
    """The class OpenSpiel instantiates with a parameter dict for the game ``name``. It reads
    the rules class from the registry when called, so a declaration registered again (a
    script re-run) is what OpenSpiel loads.

    It is registered as a class, as OpenSpiel's own Python games are: a registered closure
    crashed the interpreter at exit (pybind11 released it after Python had shut down).
    """

    def __init__(self, params: dict | None = None) -> None:
        HiddenhandGame.__init__(self, get(name).rules_class.from_openspiel(params or {}))

    return type(f"{get(name).rules_class.__name__}Game", (HiddenhandGame,), {"__init__": __init__})


def exploitability(rules: Rules, agent: Agent) -> Exploitability:
    """Exploitability of ``agent`` in every seat of ``rules``' game by OpenSpiel's exact best
    response (C++, on the cached tree; the game's tree must fit in memory): per seat, what a
    best responder there gains over the agent's own play (OpenSpiel's player improvements)."""
    game = HiddenhandGame(rules)
    tree, policy = cached_tree(game), tabular_policy(game, agent)
    root = tree.new_initial_state()
    on_policy = pyspiel.expected_returns(root, policy, -1, True)
    per_seat = tuple(
        pyspiel.TabularBestResponse(tree, p, policy).value(root.history_str()) - on_policy[p]
        for p in range(rules.num_players)
    )
    return Exploitability(per_seat, exact=True, method="OpenSpiel's best response on the whole game tree")


def register_game(game: Game) -> None:
    """Register a declared game with OpenSpiel as ``hiddenhand_<name>`` (once): the listener
    ``import hiddenhand`` subscribes to the registry (:func:`hiddenhand.registry.subscribe`),
    so that every game, registered before or after, is loadable by OpenSpiel."""
    if game.openspiel_name not in pyspiel.registered_names():
        rules_class = game.rules_class
        pyspiel.register_game(_game_type(rules_class(), rules_class), _game_class(game.name))
