"""EggHead rules engine: configuration and states.

The environment documentation (rules, actions, observation, arguments) is the docstring of
:mod:`hiddenhand.envs.egghead_v0`; this module plays the game: the deal, the questions and
answers, the reaction phases and the calls, which share the state's bookkeeping. What reads
a state without changing it lives beside it: the observation codec (layouts and encoders of
the observation and the information state) in :mod:`.egghead_observation`, the text and the
pictures in :mod:`.egghead_render`. The deduction engine that keeps the public knowledge
(:class:`Knowledge`, the study's master table) lives in :mod:`.egghead_knowledge`, and the
cards and questions in :mod:`.egghead_deck`.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from hiddenhand.core import CHANCE, TERMINAL, Rules, State
from hiddenhand.envs import egghead_observation, egghead_render
from hiddenhand.envs.egghead_deck import SEPARATORS, Hands, parse_deck
from hiddenhand.envs.egghead_knowledge import MAX_PLAYERS, MIN_PLAYERS, Knowledge
from hiddenhand.envs.egghead_observation import InformationStateLayout, ObservationLayout
from hiddenhand.layout import ActionCodec
from hiddenhand.moved import moved
from hiddenhand.picture import Table
from hiddenhand.validation import check_bool, check_choice, check_int, integer_text, named, shown, split_items

__getattr__ = moved(__name__, {"EVENTS": "hiddenhand.envs.egghead_observation"})

__all__ = ["EggHeadRules", "EggHeadState", "InformationStateLayout", "Knowledge", "ObservationLayout"]

MODERATORS = ("external", "rotating")
MAX_PHASES = 10
"""Reaction phases in one round at most (a round normally settles in two or three): the
default and the largest value of ``max_phases``."""


def parse_analysts(spec: Any, num_players: int) -> tuple[str, frozenset[int]]:
    """The ``analysts`` argument as (canonical spec, player ids). ``spec`` is ``"all"``,
    ``"none"``, player ids separated by commas or semicolons (``"0,2"``, ``"0;2"``, see
    :data:`~hiddenhand.envs.egghead_deck.SEPARATORS`) or a list, tuple or set of ids
    (``[0, 2]``). A bare integer is refused: it would read as a count of analysts as well as a
    player id. The canonical spec is ``"all"``, ``"none"`` or the sorted ids joined by commas."""
    allowed = (
        f"'all', 'none', or player ids from 0 to {num_players - 1} as a list ([0, 2]) or a string separated by "
        "commas or semicolons without spaces ('0,2'; in an OpenSpiel game string 0;2, one player 0;)"
    )
    if isinstance(spec, str):
        if spec in ("all", "none"):
            ids: list[Any] = list(range(num_players)) if spec == "all" else []
        else:
            ids = split_items("analysts", spec, allowed, SEPARATORS, trailing=True)
    elif isinstance(spec, (list, tuple, set, frozenset, range)):
        ids = list(spec)
    elif isinstance(spec, (numbers.Integral, np.integer)) and not isinstance(spec, (bool, np.bool_)):
        raise ValueError(f"{named('analysts', spec)} is ambiguous (a count, or player {spec}?); allowed: {allowed}")
    else:
        raise ValueError(f"{named('analysts', spec)} is not allowed; allowed: {allowed}")
    players = set()
    for i in ids:
        player = integer_text(i) if isinstance(i, str) else i
        if (
            not isinstance(player, (numbers.Integral, np.integer))
            or isinstance(player, (bool, np.bool_))
            or not 0 <= player < num_players
        ):
            raise ValueError(f"{named('analysts', spec)}: {shown(i)} is not a player id; allowed: {allowed}")
        players.add(int(player))
    found = frozenset(players)
    if len(found) == num_players:
        return "all", found
    return (",".join(map(str, sorted(found))) or "none"), found


@dataclass(frozen=True)
class Event:
    """An answer (``question``/``answer``/``moderator``) or a reaction phase
    (``reactions[p]``: None for a player who did not react, 0 pass, 1 + hand called;
    ``shown[p]``: the hand a caller showed)."""

    question: int | None = None
    answer: int | None = None
    moderator: int | None = None
    reactions: tuple[int | None, ...] | None = None
    shown: tuple[int | None, ...] | None = None


class EggHeadRules(Rules):
    """Configuration of an EggHead game; see :mod:`hiddenhand.envs.egghead_v0`."""

    name = "egghead"
    observation_is_information_state: ClassVar[bool] = False  # the observation shows the last EVENTS events
    min_players = MIN_PLAYERS
    max_players = MAX_PLAYERS

    def __init__(
        self,
        num_players: int = 4,
        cards_per_player: int = 3,
        num_values: int = 6,
        target_score: int = 10,
        moderator: str = "external",
        deck: str | Sequence[str] = "standard",
        max_questions: int = 1000,
        valids_in_observation: bool = False,
        analysts: str | Sequence[int] = "all",
        max_phases: int = MAX_PHASES,
    ) -> None:
        num_players = check_int("num_players", num_players, MIN_PLAYERS, MAX_PLAYERS)
        cards_per_player = check_int("cards_per_player", cards_per_player, 1, 4)
        num_values = check_int("num_values", num_values, 2, 9)
        deck_spec, self.deck = parse_deck(deck, cards_per_player, num_values)
        analysts_spec, self.analysts = parse_analysts(analysts, num_players)
        super().__init__(
            num_players=num_players,
            cards_per_player=cards_per_player,
            num_values=num_values,
            target_score=check_int("target_score", target_score, 1, 1000),
            moderator=check_choice("moderator", moderator, MODERATORS),
            deck=deck_spec,
            max_questions=check_int("max_questions", max_questions, 1, 1_000_000),
            valids_in_observation=check_bool("valids_in_observation", valids_in_observation),
            analysts=analysts_spec,
            max_phases=check_int("max_phases", max_phases, 1, MAX_PHASES),
        )
        p = self.params
        self.hands = Hands(p["cards_per_player"], p["num_values"])
        if float(len(self.hands)) ** p["num_players"] > 56.0**MAX_PLAYERS:
            raise ValueError(
                f"{len(self.hands)} hands ({p['cards_per_player']} cards of {p['num_values']} values) for "
                f"{p['num_players']} players make {float(len(self.hands)) ** p['num_players']:.3g} deals; the engine "
                f"keeps every deal and allows at most 56^{MAX_PLAYERS} = {56.0**MAX_PLAYERS:.3g}"
            )
        self.layout = ObservationLayout(p["num_players"], len(self.hands), len(self.deck), p["valids_in_observation"])
        self.information_layout = InformationStateLayout(self.layout, p["max_questions"] * (1 + p["max_phases"]))
        self.actions = ActionCodec([("pass", 1), ("call", len(self.hands))])  # a call's value: the hand's index
        self.answer_scale = float(p["num_players"] * p["cards_per_player"] * p["num_values"])
        self.utility_sum = 0.0

    def to_openspiel(self) -> dict[str, Any]:
        """The env's parameters, with the lists ``deck`` and ``analysts`` separated by ';'
        (commas separate an OpenSpiel game string's parameters)."""
        params = dict(self.params)
        for key in ("deck", "analysts"):
            params[key] = params[key].replace(",", ";")
        if integer_text(params["analysts"]) is not None:
            # One player id: a bare "0" would read back as an integer, which OpenSpiel's
            # type check refuses for this string parameter; "0;" reads back as a string.
            params["analysts"] += ";"
        return params

    @property
    def num_players(self) -> int:
        return self.params["num_players"]

    @property
    def max_chance_outcomes(self) -> int:
        return max(len(self.hands), len(self.deck))

    @property
    def max_game_length(self) -> int:
        return self.params["max_questions"] * self.params["max_phases"] * self.num_players

    @property
    def utility_range(self) -> tuple[float, float]:
        return (-1.0, 1.0)

    def new_initial_state(self) -> EggHeadState:
        return EggHeadState(self)

    def call_action(self, hand) -> int:
        """The action that calls ``hand``, its values in any order."""
        return self.actions.encode("call", self.hands.of(hand))

    def called_hand(self, action: int) -> tuple[int, ...] | None:
        """The hand that ``action`` calls; ``None`` for a pass."""
        kind, index = self.actions.decode(action)
        return self.hands.tuples[index] if kind == "call" else None

    def prompt(self, state: State, player: int) -> str:
        return "Pass (0 or Enter), or call your hand, e.g. 1 2 2:"

    def parse_action(self, text: str, state: State, player: int) -> int:
        """Empty, 0 or "pass" passes; values such as "1 2 2" or "122" call that hand."""
        word = text.strip().lower()
        if word in ("", "0", "pass", "p"):
            return self.actions.encode("pass", 0)
        digits = [d for d in map(integer_text, word) if d is not None]
        try:
            return self.call_action(digits)
        except ValueError as err:
            raise ValueError(f"{err}; or press Enter to pass") from None


class EggHeadState(State):
    """An EggHead position; see the module docstring of ``egghead_v0`` for the turn order."""

    def __init__(self, rules: EggHeadRules) -> None:
        self.rules = rules
        n = rules.num_players
        self.knowledge = Knowledge(
            n, rules.params["cards_per_player"], rules.params["num_values"], rules.analysts, rules.deck
        )
        self.hands: list[int | None] = [None] * n
        self.scores = [0] * n
        self.events: list[Event] = []
        self.dealt_at = [0] * n  # index into events when each hand was dealt
        self.questions = 0
        self.moderator: int | None = None
        self.phase_in_round = 0
        self.reactions: list[int | None] = []
        self.round_changed = False
        self._to_deal = list(range(n))
        self._player = CHANCE

    # ----------------------------------------------------------------- protocol
    def current_player(self) -> int:
        return TERMINAL if self._over else self._player

    def _reactors(self) -> list[int]:
        return [p for p in range(self.rules.num_players) if p != self.moderator]

    def legal_actions(self, player: int | None = None) -> list[int]:
        mover = self.current_player()
        if player is None:
            player = mover
        if mover == CHANCE:
            return [a for a, _ in self.chance_outcomes()] if player == CHANCE else []
        if mover == TERMINAL or player < 0 or not self._still_to_react(player):
            return []
        return list(range(self.rules.num_actions))

    def _still_to_react(self, player: int) -> bool:
        return player in self._reactors() and player >= len(self.reactions) and self.current_player() >= 0

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.current_player() != CHANCE:
            return []
        if self._to_deal:
            return [(h, float(p)) for h, p in enumerate(self.rules.hands.probabilities)]
        d = len(self.rules.deck)
        return [(q, 1.0 / d) for q in range(d)]

    def apply(self, action: int) -> None:
        player = self.current_player()
        legal = self.legal_actions()
        if action not in legal:
            raise self._illegal(action, legal)
        action = int(action)
        if player == CHANCE:
            if self._to_deal:
                self._deal(action)
            else:
                self._ask(action)
            return
        self.reactions.append(action)
        while len(self.reactions) < self.rules.num_players and len(self.reactions) == self.moderator:
            self.reactions.append(None)  # the moderator does not react
        if len(self.reactions) < self.rules.num_players:
            self._player = len(self.reactions)
        else:
            self._resolve_reactions()

    def clone(self) -> EggHeadState:
        other = self._copy("hands", "scores", "events", "dealt_at", "reactions", "_to_deal")
        other.knowledge = self.knowledge.copy()
        return other

    # ----------------------------------------------------------------- views
    def hand(self, player: int) -> tuple[int, ...]:
        return self.rules.hands.tuples[self.hands[player]]

    def deal(self) -> list[tuple[int, ...]]:
        return [self.hand(p) for p in range(self.rules.num_players)]

    def valids(self, player: int) -> list[tuple[int, ...]]:
        """The hands ``player`` considers possible under behavioural analysis (falling back to
        answers alone when the others' reactions broke the model: see ``egghead_v0``)."""
        found = self.knowledge.valids(player, self.deal())
        return found or self.knowledge.naive_valids(player, self.deal())

    def awaiting_hand(self, player: int) -> bool:
        """Whether ``player``'s (new) hand is still to be dealt."""
        return player in self._to_deal

    def observation_tensor(self, player: int) -> np.ndarray:
        return egghead_observation.observation_tensor(self, player)

    def information_state_tensor(self, player: int) -> np.ndarray:
        return egghead_observation.information_state_tensor(self, player)

    def information_state_string(self, player: int) -> str:
        return egghead_observation.information_state_string(self, player)

    def action_to_string(self, player: int, action: int) -> str:
        if player == CHANCE:
            if self._to_deal:
                return f"Deal {self.rules.hands.tuples[action]}"
            return f"Ask {self.rules.deck[action].id}"
        called = self.rules.called_hand(action)
        return f"Call {called}" if called else "Pass"

    def render(self, viewer: int | None = None) -> str:
        return egghead_render.render(self, viewer)

    def table(self, viewer: int | None = None) -> Table:
        return egghead_render.table(self, viewer)

    # ----------------------------------------------------------------- mechanics
    def _deal(self, hand: int) -> None:
        player = self._to_deal.pop(0)
        self.hands[player] = hand
        self.dealt_at[player] = len(self.events)
        if self._to_deal:
            return
        if self.round_changed and self.phase_in_round < self.rules.params["max_phases"]:
            self._start_phase()
        else:
            self._next_round()

    def _next_round(self) -> None:
        if self.questions >= self.rules.params["max_questions"]:
            self._finish([0.0] * self.rules.num_players, truncated=True)
            return
        self._player = CHANCE

    def _ask(self, question: int) -> None:
        rules = self.rules
        if rules.params["moderator"] == "rotating":
            self.moderator = self.questions % rules.num_players
        q = rules.deck[question]
        answer = self.knowledge.answer(q.id, self.deal(), self.moderator)
        self.knowledge.announce_answer(q.id, answer, self.moderator)
        self.events.append(Event(question=question, answer=answer, moderator=self.moderator))
        self.questions += 1
        self.phase_in_round = 0
        self._start_phase()

    def _start_phase(self) -> None:
        self.phase_in_round += 1
        self.reactions = []
        if self.moderator == 0:
            self.reactions.append(None)
        self._player = len(self.reactions)

    def _resolve_reactions(self) -> None:
        reactions = self.reactions
        called = {p: self.rules.called_hand(r) is not None for p, r in enumerate(reactions) if r is not None}
        changed = self.knowledge.announce_reactions(called)
        callers = [p for p, c in called.items() if c]
        shown = [None] * self.rules.num_players
        for p in callers:
            shown[p] = self.hands[p]
            if self.rules.called_hand(reactions[p]) == self.hand(p):
                self.scores[p] += 1
            self.knowledge.reveal_solution(p, self.hand(p))
        self.events.append(Event(reactions=tuple(reactions), shown=tuple(shown)))
        self.reactions = []
        target = self.rules.params["target_score"]
        winners = [p for p, s in enumerate(self.scores) if s >= target]
        if winners:
            n = self.rules.num_players
            losers = n - len(winners)
            # Winners share +1 and losers -1; when everyone reaches the target at once, nobody wins.
            shares = [1.0 / len(winners) if p in winners else -1.0 / losers for p in range(n)] if losers else [0.0] * n
            self._finish(shares)
            return
        self.round_changed = changed or bool(callers)
        if callers:
            self._to_deal = callers
            self._player = CHANCE
        elif changed and self.phase_in_round < self.rules.params["max_phases"]:
            self._start_phase()
        else:
            self._next_round()
