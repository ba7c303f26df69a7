"""The rules protocol every game implements once, and every face builds on.

A game is a :class:`Rules` object (immutable configuration, validated on construction)
that makes :class:`State` objects. States are sequential with explicit chance: a
simultaneous move (a Goofspiel bid) is a run of consecutive turns whose actions stay
hidden from the other players until the reveal, which is what the information states
encode. The PettingZoo environments, the OpenSpiel adapter, the Gymnasium face and the
terminal game are written once over this protocol, so a new game gets all of them by
implementing it. What every game would otherwise repeat has a default here: the returns
before the end, no chance outcomes, and the sizes read off the declared layouts.

Player ids follow OpenSpiel's conventions, so the adapter passes them through unchanged.
"""

from __future__ import annotations

import abc
import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar

import numpy as np

from hiddenhand.layout import ActionCodec, Layout
from hiddenhand.picture import Table
from hiddenhand.validation import configuration, integer_text, shown

CHANCE = -1
"""``State.current_player()`` at a chance node (OpenSpiel's ``PlayerId.CHANCE``)."""

TERMINAL = -4
"""``State.current_player()`` once the game is over (OpenSpiel's ``PlayerId.TERMINAL``)."""


class IllegalActionError(ValueError):
    """An action that is not legal in the state it was applied to."""


class Rules(abc.ABC):
    """Immutable configuration of one game; a factory of initial states.

    Subclasses set the class attributes below and validate their keyword arguments in
    ``__init__`` (raising ``ValueError`` that names the bad value and what is allowed).
    ``params`` holds the keyword arguments exactly as the environments take them, so
    every face can rebuild the same game from them.
    """

    name: ClassVar[str]
    """Short name: the env id is ``hiddenhand/<name>-v0`` and the OpenSpiel id ``hiddenhand_<name>``."""

    utility_sum: float | None = 0.0
    """What the players' returns add up to in every outcome: 0 for a zero-sum game, another
    constant for a constant-sum one (Spoof's single round pays 1 in all), ``None`` when the
    sum varies (general-sum). Instances may set it from their configuration."""

    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 2
    """The range of ``num_players`` the game accepts (OpenSpiel's game type records it)."""

    def __init__(self, **params: Any) -> None:
        self.params: dict[str, Any] = dict(params)

    @classmethod
    def param_defaults(cls) -> dict[str, Any]:
        """The game's keyword arguments and their defaults, read off ``__init__``: the
        parameters every face (env, OpenSpiel, command line) exposes under these names."""
        return {
            name: p.default
            for name, p in inspect.signature(cls.__init__).parameters.items()
            if p.default is not inspect.Parameter.empty
        }

    @classmethod
    def openspiel_parameters(cls) -> dict[str, Any]:
        """The parameters (and defaults) of the game's OpenSpiel registration. OpenSpiel
        takes only ints, floats, strings and bools, so a game with an argument of another
        kind (Spoof's pair of match counts) overrides this and the two methods below."""
        return cls.param_defaults()

    def to_openspiel(self) -> dict[str, Any]:
        """This configuration as OpenSpiel parameters (see :meth:`openspiel_parameters`)."""
        return dict(self.params)

    @classmethod
    def from_openspiel(cls, params: dict[str, Any]) -> Rules:
        """The rules that OpenSpiel parameters describe (see :meth:`openspiel_parameters`)."""
        return cls(**params)

    @property
    @abc.abstractmethod
    def num_players(self) -> int: ...

    actions: ActionCodec | None = None
    """The player actions, declared once (:class:`~hiddenhand.layout.ActionCodec`): the
    default :attr:`num_actions` is its size."""

    layout: Layout | None = None
    """The observation vector, declared once (:class:`~hiddenhand.layout.Layout`): the
    default :attr:`observation_size` is its size."""

    information_layout: Layout | None = None
    """The perfect-recall information-state vector, where it is not the observation: the
    default :attr:`information_state_size` is its size (the observation's without one)."""

    @property
    def num_actions(self) -> int:
        """Number of distinct player actions; actions are ``0 .. num_actions - 1``. By default
        the size of the declared :attr:`actions`; a game without a codec sets this instead."""
        return self._declared("actions", "num_actions").size

    @property
    def observation_size(self) -> int:
        """Length of the flat float32 observation vector of every player: by default the size
        of the declared :attr:`layout`."""
        return self._declared("layout", "observation_size").size

    observation_is_information_state: ClassVar[bool] = True
    """Whether the observation vector is the perfect-recall information state. Games whose
    PettingZoo observation is a bounded window (the last round, the last events) set it to
    False and implement :meth:`State.information_state_tensor`; everything that needs
    perfect recall (OpenSpiel's information-state tensor, tabular policies) reads that."""

    @property
    def information_state_size(self) -> int:
        """Length of :meth:`State.information_state_tensor`: the size of the declared
        :attr:`information_layout`, or the observation's when there is none."""
        return self.observation_size if self.information_layout is None else self.information_layout.size

    def _declared(self, name: str, size: str) -> Any:
        """The declaration ``name`` that the default of the property ``size`` reads, or an
        error saying what to declare."""
        declared = getattr(self, name)
        if declared is None:
            raise NotImplementedError(f"{type(self).__name__} declares no {name}: set {name} or define {size}")
        return declared

    @property
    def max_chance_outcomes(self) -> int:
        return 0

    @property
    @abc.abstractmethod
    def max_game_length(self) -> int:
        """Most player decisions in one game (chance and automatic moves excluded)."""

    @property
    @abc.abstractmethod
    def utility_range(self) -> tuple[float, float]:
        """Smallest and largest return any player can get."""

    @property
    def largest_payoff(self) -> float:
        """The largest return any player can get or lose: the unit in which the learners
        measure values and temperatures, so that one setting serves every size of a game."""
        return max(abs(u) for u in self.utility_range)

    @abc.abstractmethod
    def new_initial_state(self) -> State: ...

    def canonical(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, ...] | None:
        """Observations that are the same decision up to renaming the actions, as one: for
        rows of ``observations`` (each the ``observation`` of a decision) and their action
        masks, ``(canonical, canonical_masks, order)``, where canonical action ``j`` of row
        ``i`` is action ``order[i, j]`` (-1 where it stands for none). Two observations with
        the same canonical one must be the same game from there on with the actions renamed
        by ``order``, so that a table keyed by it (sampled regret matching,
        ``PolicyAgent(keyed_by="canonical_observation")``) learns each once; and at a
        round's start (``State.round_state``) the mover's canonical observation must tell
        the round-state's value (up to the same renaming). ``None`` (the default) where a
        game declares no such reduction; Goofspiel's Markov observation declares its
        interleaving patterns (:func:`hiddenhand.envs.goofspiel_observation.canonical_markov`)."""
        return None

    def parse_action(self, text: str, state: State, player: int) -> int:
        """The action a person typed, for the terminal face.

        The default accepts an action's own label (``State.action_to_string``) or its
        number; games with a friendlier notation override it. Raises ``ValueError`` with
        a message fit to show the person.
        """
        text = text.strip()
        legal = state.legal_actions(player)
        for action in legal:
            if state.action_to_string(player, action).lower() == text.lower():
                return action
        number = integer_text(text)
        if number in legal:
            return number
        choices = ", ".join(state.action_to_string(player, a) for a in legal)
        raise ValueError(f"{text!r} is not a legal move; choose one of: {choices}")

    def prompt(self, state: State, player: int) -> str:
        """What the terminal face asks a person whose move it is."""
        labels = ", ".join(state.action_to_string(player, a) for a in state.legal_actions(player))
        return f"Your move ({labels}):"

    def __str__(self) -> str:
        """This configuration as messages name it (:func:`~hiddenhand.validation.configuration`):
        the game, its number of players (a default one too: what a refusal most often turns
        on) and the parameters that differ from the defaults; ``goofspiel with num_cards=3,
        num_players=2``, or in a command's message ``goofspiel --cards 3 --players 2``."""
        defaults = self.param_defaults()
        told = {k: v for k, v in self.params.items() if k == "num_players" or k not in defaults or defaults[k] != v}
        return configuration(self.name, told)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"


class State(abc.ABC):
    """One position of a game; mutated in place by :meth:`apply`, copied by :meth:`clone`."""

    rules: Rules

    _over = False
    """Whether the game has ended (:meth:`_finish` sets it): the engines answer
    :meth:`current_player` with :data:`TERMINAL` from it."""

    _truncated = False
    """Whether a limit ended the game (:meth:`_finish`); :meth:`is_truncated` reads it."""

    @abc.abstractmethod
    def current_player(self) -> int:
        """The player to move, :data:`CHANCE` or :data:`TERMINAL`."""

    @abc.abstractmethod
    def legal_actions(self, player: int | None = None) -> list[int]:
        """Sorted legal actions of ``player`` (default: the player to move).

        In a simultaneous round a player who still has to move this round has legal
        actions before their turn comes; anyone else has none. At a chance node with
        ``player=None`` these are the chance outcomes' actions.
        """

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """``(action, probability)`` pairs at a chance node; empty elsewhere. A game with
        chance overrides it; one without has no chance node, so the default is empty."""
        return []

    @abc.abstractmethod
    def apply(self, action: int) -> None:
        """Play ``action`` for the player to move (or chance); raises :class:`IllegalActionError`."""

    def returns(self) -> list[float]:
        """Each player's total return: what :meth:`_finish` recorded, zeros before the end."""
        return list(self._returns) if self._over else [0.0] * self.rules.num_players

    def banked(self) -> list[float]:
        """The part of each player's return that the game has already settled, which no
        later move can change (Goofspiel's points won so far, where the scoring adds them
        up): a decision's return still to come is the return minus it. Zeros by default, for
        games that settle nothing before their end. The batched envs give the same as
        ``info["banked"]``; the RLlib env pays its changes as they happen."""
        return [0.0] * self.rules.num_players

    def round_state(self) -> int:
        """A key (>= 0) of the public round-state when this state starts a round of a game
        played as a chain of rounds whose future depends on nothing else (Spoof's match
        counts and first bidder, Bid Spoof's coins and starter: the round-states of
        :mod:`hiddenhand.solvers.stochastic`), the same for every history that reaches it;
        -1 elsewhere. A learner can then learn each round-state's value and credit a
        round's decisions with the value of the round-state it leads to, rather than with
        the rest of the game as sampled (``bootstrap`` in
        :mod:`hiddenhand.training.sampled_regret`). -1 everywhere by default, for games
        that are not such a chain. The batched envs give the same as ``info["round_state"]``."""
        return -1

    @abc.abstractmethod
    def clone(self) -> State: ...

    @abc.abstractmethod
    def information_state_string(self, player: int) -> str:
        """Everything ``player`` knows, with perfect recall, as text (equal iff indistinguishable)."""

    @abc.abstractmethod
    def observation_tensor(self, player: int) -> np.ndarray:
        """What ``player`` sees as a flat float32 vector of length ``rules.observation_size``:
        the PettingZoo observation. It is the perfect-recall information state unless the
        rules say otherwise (``Rules.observation_is_information_state``)."""

    def information_state_tensor(self, player: int) -> np.ndarray:
        """Everything ``player`` knows, with perfect recall, as a flat float32 vector of
        length ``rules.information_state_size``: two states give equal vectors exactly when
        they give equal :meth:`information_state_string`. The observation by default; games
        whose observation is a bounded window override it."""
        if not self.rules.observation_is_information_state:
            raise NotImplementedError(f"{type(self).__name__} must implement information_state_tensor")
        return self.observation_tensor(player)

    @abc.abstractmethod
    def action_to_string(self, player: int, action: int) -> str: ...

    @abc.abstractmethod
    def render(self, viewer: int | None = None) -> str:
        """Text picture of the state: what ``viewer`` sees, or everything when ``None``."""

    def table(self, viewer: int | None = None) -> Table:
        """The table as ``viewer`` sees it (everything when ``None``), for the faces'
        ``render_mode="rgb_array"`` (:func:`hiddenhand.picture.draw`): rows of cards, face
        down where ``viewer`` may not see them, and caption lines. The default is the text
        of :meth:`render` as the caption, so every game has a picture; games override it to
        lay out their hands as cards."""
        return Table(self.rules.name.replace("_", " ").capitalize(), caption=tuple(self.render(viewer).splitlines()))

    def is_terminal(self) -> bool:
        return self.current_player() == TERMINAL

    def _copy(self, *lists: str) -> State:
        """A copy for :meth:`clone`: shares every attribute (rules, immutable records) but
        the named list attributes, which it copies. Far cheaper than a deep copy."""
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        for name in lists:
            setattr(other, name, list(getattr(self, name)))
        return other

    def __deepcopy__(self, memo: dict) -> State:
        # OpenSpiel clones a Python state by deep-copying its attributes (our adapter's
        # ``inner``): :meth:`clone` is far cheaper than a generic deep copy, which would
        # also copy the rules and every shared table.
        return self.clone()

    def is_truncated(self) -> bool:
        """Whether the game was cut short by a limit (such as ``max_rounds``) rather than
        ended by its rules; the PettingZoo face reports it as a truncation."""
        return self._truncated

    def _finish(self, returns: Sequence[float], truncated: bool = False) -> None:
        """End the game: every engine ends it here, so the end is recorded one way (the
        returns in ``_returns``, which :meth:`returns` reports; ``truncated`` when a limit
        such as ``max_rounds`` stopped it rather than the rules)."""
        self._over = True
        self._returns = list(returns)
        self._truncated = truncated

    @staticmethod
    def _namer(viewer: int | None) -> Callable[[int], str]:
        """How the table names each player to ``viewer`` in renders: "you", or ``player_k``,
        the name of the player's agent in the PettingZoo faces."""
        return lambda player: "you" if player == viewer else f"player_{player}"

    def is_chance_node(self) -> bool:
        return self.current_player() == CHANCE

    def observation(self, player: int) -> dict[str, np.ndarray]:
        """``{"observation", "action_mask"}`` of ``player``: what the PettingZoo env gives."""
        return {"observation": self.observation_tensor(player), "action_mask": self.action_mask(player)}

    def agent_observation(self, player: int) -> AgentObservation:
        """What our own loops (tournaments, the Gymnasium face, OpenSpiel policies, the
        terminal) hand an agent: :meth:`observation`, whose ``"information_state"`` item
        is the perfect-recall tensor that tabular policies are keyed by."""
        return AgentObservation(self, player)

    def action_mask(self, player: int) -> np.ndarray:
        """int8 mask over ``rules.num_actions``: 1 on ``legal_actions(player)``."""
        mask = np.zeros(self.rules.num_actions, dtype=np.int8)
        mask[self.legal_actions(player)] = 1
        return mask

    def check_action(self, action: Any) -> int:
        """``action`` as a Python int, if it is an integer: Python's or numpy's, or a 0-d
        integer array. Anything else (a float, a string, a bool, a longer array) raises
        ``TypeError`` naming it and the legal actions, rather than being rounded or parsed
        into a move. Whether the integer is legal is :meth:`apply`'s business."""
        if isinstance(action, np.ndarray) and action.ndim == 0:
            action = action[()]
        if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
            return int(action)
        raise TypeError(f"action {shown(action)} is not an integer; {self._legal_text(self.legal_actions())}")

    def _legal_text(self, legal: Sequence[int]) -> str:
        player = self.current_player()
        labels = ", ".join(f"{a} ({self.action_to_string(player, a)})" for a in legal)
        return f"legal actions: {labels}"

    def _illegal(self, action: Any, legal: Sequence[int]) -> IllegalActionError:
        """The error for ``action`` not among ``legal``, naming both."""
        player = self.current_player()
        who = "chance" if player == CHANCE else f"player {player}"
        named = shown(action)
        if player >= 0 and isinstance(action, (int, np.integer)) and 0 <= action < self.rules.num_actions:
            named += f" ({self.action_to_string(player, int(action))})"
        return IllegalActionError(f"action {named} is illegal for {who} in {self.rules}; {self._legal_text(legal)}")


class AgentObservation(dict):
    """A player's observation dict with an ``"information_state"`` item. Where the
    observation is the information state it is the same array; elsewhere (Bid Spoof,
    EggHead: the whole history, tens of thousands of floats, which only tabular policies
    read) it is computed on first access, from a copy of the state taken when the
    observation was made, so it stays right after the game moves on."""

    def __init__(self, state: State, player: int) -> None:
        super().__init__(state.observation(player))
        if state.rules.observation_is_information_state:
            self["information_state"] = self["observation"]
        else:
            self._state, self._player = state.clone(), player

    def __missing__(self, key: str) -> np.ndarray:
        if key != "information_state":
            raise KeyError(key)
        self[key] = value = self._state.information_state_tensor(self._player)
        return value

    def __contains__(self, key: object) -> bool:
        return key == "information_state" or super().__contains__(key)

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default


def check_rules(rules: Any, who: str = "a trainer") -> Rules:
    """``rules`` if it is a game's Rules; else a ``TypeError`` that shows the call to write:
    trainers took a game's name and its keyword arguments before they took its Rules."""
    if isinstance(rules, Rules):
        return rules
    hint = ""
    if isinstance(rules, str):
        hint = f"; make them with hiddenhand.registry.get({rules!r}).rules(**parameters)"
    raise TypeError(f"{who} takes a game's Rules, not {type(rules).__name__} {rules!r}{hint}")


def sample_chance(state: State, rng: np.random.Generator) -> int:
    """One chance outcome of ``state`` drawn with ``rng`` (one uniform draw per call)."""
    outcomes = state.chance_outcomes()
    u = rng.random()
    for action, prob in outcomes:
        u -= prob
        if u < 0.0:
            return action
    return outcomes[-1][0]


def play_chance(state: State, rng: np.random.Generator) -> None:
    """Resolve chance nodes until a player is to move or the game is over."""
    while state.current_player() == CHANCE:
        state.apply(sample_chance(state, rng))


def depth_first(root: Any, children: Any) -> Iterator[Any]:
    """Every node below ``root`` (itself included), depth first, ``children(node)`` giving
    the nodes below one: the one tree walk, over our states and over OpenSpiel's."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(children(node))


def decision_states(rules: Rules) -> Iterator[State]:
    """Every state of the game in which a player is to move, depth first.

    For exhaustive work on small games (tabulating a policy, checking an equilibrium):
    the number of states grows very fast with the game's size.
    """
    for state in depth_first(rules.new_initial_state(), _children):
        if not state.is_terminal() and state.current_player() != CHANCE:
            yield state


def _children(state: State) -> list[State]:
    if state.is_terminal():
        return []
    children = []
    for action in state.legal_actions():
        child = state.clone()
        child.apply(action)
        children.append(child)
    return children


def advance(state: State, agents: Sequence[Any], rng: np.random.Generator) -> State:
    """Play on: chance drawn from ``rng``, player ``p``'s moves by ``agents[p]``, until the game
    ends or a seat whose agent is ``None`` (a person, a learner) is to move. The one play
    loop of matches, the terminal game and the single-agent env."""
    while not state.is_terminal():
        player = state.current_player()
        if player == CHANCE:
            state.apply(sample_chance(state, rng))
        elif agents[player] is None:
            break
        else:
            state.apply(agents[player].act(state.agent_observation(player)))
    return state
