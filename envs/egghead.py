"""EggHead rules engine: configuration, states, observation layout.

The environment documentation (rules, actions, observation, arguments) is the docstring of
:mod:`hiddenhand.envs.egghead_v0`. The deduction engine that keeps the public knowledge
(:class:`Knowledge`, the study's master table) lives in :mod:`.egghead_knowledge` and the
cards and questions in :mod:`.egghead_deck`; this module plays the game over them. It is
the longest engine and stays one module: the phases of a hand (deal, questions, answers,
reactions, calls) share the state's bookkeeping, which the encoders and the pictures read
whole; what stands apart (the deck, the deduction tables) already lives apart.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from hiddenhand.core import CHANCE, TERMINAL, Rules, State
from hiddenhand.envs.egghead_deck import SEPARATORS, Hands, parse_deck
from hiddenhand.envs.egghead_knowledge import MAX_PLAYERS, MIN_PLAYERS, Knowledge
from hiddenhand.layout import ActionCodec, Layout, Views
from hiddenhand.picture import Card, Row, Table
from hiddenhand.validation import check_bool, check_choice, check_int, integer_text, named, shown, split_items

__all__ = ["EggHeadRules", "EggHeadState", "InformationStateLayout", "Knowledge", "ObservationLayout"]

MODERATORS = ("external", "rotating")
MAX_PHASES = 10
"""Reaction phases in one round at most (a round normally settles in two or three): the
default and the largest value of ``max_phases``."""
EVENTS = 32
"""Events (answers and reaction phases) since a player's hand was dealt that their
observation shows, the most recent last; the valids masks keep what older ones taught."""


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


class ObservationLayout(Layout):
    """An EggHead observation (see ``egghead_v0``), with the layouts of one event of its
    window (``event``) and of one seat's part of a reaction phase (``seat_block``).

    An event: its kind (answer, reaction phase), the question, the answer, the moderator,
    then per seat the reaction (none, pass, call) and the hand a caller showed. The valids
    masks are there only when ``valids``.
    """

    def __init__(self, num_players: int, num_hands: int, deck_size: int, valids: bool) -> None:
        p, h = num_players, num_hands
        self.num_players, self.valids = p, valids
        self.seat_block = Layout([("reaction", 3), ("shown", h)])
        self.event = Layout(
            [
                ("kind", 2),
                ("question", deck_size),
                ("answer", ()),
                ("moderator", p + 1),
                ("seats", (p, self.seat_block.size)),
            ]
        )
        super().__init__(
            [
                ("seat", p),
                ("moderator", p + 1),
                ("scores", p),
                ("hands", (p - 1, h)),
                *([("naive_valids", h), ("valids_mask", h)] if valids else []),
                ("events", (EVENTS, self.event.size)),
            ]
        )


class InformationStateLayout(Layout):
    """The perfect-recall information state (``information_state_tensor``): the
    observation, then one slot per event of the whole game in order (zeros past the last),
    then the state of the current phase. Seats are relative to the player, as in the
    observation. Small integers are scaled into [0, 1] by a fixed divisor, so distinct
    values stay distinct floats.

    An event slot holds ``num_players + 2`` floats, read through ``answer`` (its first four)
    or ``phase`` (all of them) by its kind:

    - ``kind``: 0 no event (yet), 0.5 an answer, 1 a reaction phase;
    - an answer: ``question`` (question + 1) / D, ``answer`` answer / (P x cards x values),
      ``moderator``: 0 external, else (seat + 1) / P;
    - a reaction phase: ``reactions[seat]`` that seat's reaction, 0 none (the moderator),
      1 pass, 2 + i a call that showed hand i, over H + 1; ``own_call`` the hand the
      player called themselves, (1 + i) / H (0 if they did not call).

    The tail: how many seats have reacted in the current phase (over P), the player's own
    reaction in it (coded as a seat's reaction above, with the hand they called rather than
    the one they hold, over H + 1), and 1 while the player waits for a new hand.
    """

    def __init__(self, observation: ObservationLayout, slots: int) -> None:
        self.answer = Layout([("kind", ()), ("question", ()), ("answer", ()), ("moderator", ())])
        self.phase = Layout([("kind", ()), ("reactions", observation.num_players), ("own_call", ())])
        super().__init__(
            [
                ("observation", observation.size),
                ("events", (slots, self.phase.size)),  # slots: the most events a game can have
                ("reacted", ()),
                ("own_reaction", ()),
                ("awaiting_hand", ()),
            ]
        )


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


def _reaction_code(reaction: int | None, shown: int | None) -> int:
    """A seat's reaction in a finished phase: 0 none, 1 pass, 2 + ``shown`` a call that showed that hand."""
    return 0 if reaction is None else 1 if reaction == 0 else 2 + shown


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

    def observation_tensor(self, player: int) -> np.ndarray:
        rules, layout = self.rules, self.rules.layout
        n = rules.num_players
        obs, views = layout.zeros()
        views["seat"][player] = 1.0
        views["moderator"][n if self.moderator is None else (self.moderator - player) % n] = 1.0
        for rel in range(n):
            p = (player + rel) % n
            views["scores"][rel] = self.scores[p] / rules.params["target_score"]
            if rel and self.hands[p] is not None:
                views["hands"][rel - 1, self.hands[p]] = 1.0
        if layout.valids and None not in self.hands:
            deal = self.deal()
            masks = {"naive_valids": self.knowledge.naive_valids(player, deal), "valids_mask": self.valids(player)}
            for name, found in masks.items():
                views[name][np.array([rules.hands.index[v] for v in found], dtype=np.intp)] = 1.0
        events = layout.event.views(views["events"])  # each piece with a leading event index
        seats = layout.seat_block.views(events["seats"])  # and a seat index
        for k, event in enumerate(self.events[self.dealt_at[player] :][-EVENTS:]):
            self._encode_event(events, seats, k, event, player)
        return obs

    def _encode_event(self, events: Views, seats: Views, k: int, event: Event, player: int) -> None:
        """Event ``k`` of the observation's window, into the views of every event and of their seats."""
        n = self.rules.num_players
        if event.question is not None:
            events["kind"][k, 0] = 1.0
            events["question"][k, event.question] = 1.0
            events["answer"][k] = event.answer / self.rules.answer_scale
            events["moderator"][k, n if event.moderator is None else (event.moderator - player) % n] = 1.0
            return
        events["kind"][k, 1] = 1.0
        for rel in range(n):
            p = (player + rel) % n
            reaction = event.reactions[p]
            seats["reaction"][k, rel, 0 if reaction is None else 1 if reaction == 0 else 2] = 1.0
            if event.shown[p] is not None:
                seats["shown"][k, rel, event.shown[p]] = 1.0

    def information_state_tensor(self, player: int) -> np.ndarray:
        """The observation, then every event of the game and the current phase
        (:class:`InformationStateLayout`): exactly what :meth:`information_state_string` says."""
        rules, layout = self.rules, self.rules.information_layout
        n, h = rules.num_players, len(rules.hands)
        tensor, views = layout.zeros()
        views["observation"][:] = self.observation_tensor(player)
        answers = layout.answer.views(views["events"][:, : layout.answer.size])  # by event index, as below
        phases = layout.phase.views(views["events"])
        seat_scale, deck_size = float(h + 1), float(len(rules.deck))
        for k, event in enumerate(self.events):
            if event.question is not None:
                answers["kind"][k] = 0.5
                answers["question"][k] = (event.question + 1) / deck_size
                answers["answer"][k] = event.answer / rules.answer_scale
                answers["moderator"][k] = 0.0 if event.moderator is None else ((event.moderator - player) % n + 1) / n
                continue
            phases["kind"][k] = 1.0
            for rel in range(n):
                p = (player + rel) % n
                phases["reactions"][k, rel] = _reaction_code(event.reactions[p], event.shown[p]) / seat_scale
            if event.reactions[player]:
                phases["own_call"][k] = event.reactions[player] / float(h)  # the action: 1 + the hand called
        if self.reactions:
            views["reacted"][...] = len(self.reactions) / n
            own = self.reactions[player] if player < len(self.reactions) else None
            # 1 + own: 1 pass, 2 + i called i
            views["own_reaction"][...] = (0 if own is None else 1 + own) / seat_scale
        views["awaiting_hand"][...] = float(player in self._to_deal)
        return tensor

    def information_state_string(self, player: int) -> str:
        """Scores, every answer and reaction phase (the player's own calls with the hand they
        named), the others' hands, who has reacted in the current phase (and how the player
        did: the others' reactions stay hidden until all are in), and whether the player
        waits for a new hand (at a chance node: the others' hands shown are their last)."""
        hands = self.rules.hands.tuples
        parts = [f"p{player} scores {self.scores}"]
        for event in self.events:
            parts.append(self._event_text(event, hands, player))
        others = ", ".join(f"p{p}={hands[h]}" for p, h in enumerate(self.hands) if p != player and h is not None)
        parts.append(f"now {others}")
        if self.reactions:
            reacted = f"reacted {len(self.reactions)}"
            if player < len(self.reactions) and self.reactions[player] is not None:
                own = self.reactions[player]
                called = self.rules.called_hand(own)
                reacted += f", you {f'called {called}' if called else 'passed'}"
            parts.append(reacted)
        if player in self._to_deal:
            parts.append("your hand is being dealt")  # (the observation's event window restarts)
        return " | ".join(parts)

    def _event_text(self, event: Event, hands, player: int) -> str:
        if event.question is not None:
            return f"{self.rules.deck[event.question].id}={event.answer}"
        said = []
        for p, s in enumerate(event.shown):
            r = event.reactions[p]
            if r is None:
                continue
            text = f"p{p}:{'call ' + str(hands[s]) if s is not None else 'pass'}"
            if p == player and r:
                text += f" named {self.rules.called_hand(r)}"  # the others do not learn what a caller named
            said.append(text)
        return f"react {','.join(said)}"

    def action_to_string(self, player: int, action: int) -> str:
        if player == CHANCE:
            if self._to_deal:
                return f"Deal {self.rules.hands.tuples[action]}"
            return f"Ask {self.rules.deck[action].id}"
        called = self.rules.called_hand(action)
        return f"Call {called}" if called else "Pass"

    def render(self, viewer: int | None = None) -> str:
        rules, hands = self.rules, self.rules.hands.tuples
        name = self._namer(viewer)
        lines = [
            f"Question {self.questions} · scores: " + ", ".join(f"{name(p)} {s}" for p, s in enumerate(self.scores))
        ]
        lines += self._recent_events(name, 3)
        for p in range(rules.num_players):
            if self.hands[p] is None:
                continue
            shown = "??? (hidden from you)" if p == viewer else str(hands[self.hands[p]])
            lines.append(f"{name(p)}: {shown}")
        return "\n".join(lines + self._closing_lines(viewer))

    def table(self, viewer: int | None = None) -> Table:
        """Every player's hand, facing the others (the viewer's own face down), their score
        and their reaction this phase (hidden from the others until everyone has reacted);
        the latest questions, answers and reactions below."""
        rules, name = self.rules, self._namer(viewer)
        mover = self.current_player()
        rows = []
        for p in range(rules.num_players):
            hand = () if self.hands[p] is None else rules.hands.tuples[self.hands[p]]
            note = [f"{self.scores[p]} points"]
            if p == self.moderator:
                note.append("moderates")
            elif p < len(self.reactions) and not self._over:
                reaction = self.reactions[p]
                called = rules.called_hand(reaction)
                seen = viewer in (None, p)
                note.append(("passes" if not called else f"calls {''.join(map(str, called))}") if seen else "reacted")
            cards = tuple(Card(str(v), p != viewer) for v in hand)
            rows.append(Row(name(p), cards, note=" · ".join(note), to_move=p == mover))
        title = f"EggHead · question {self.questions} · first to {rules.params['target_score']}"
        caption = tuple(self._recent_events(name, 2) + self._closing_lines(viewer))
        return Table(title, tuple(rows), caption, slots=rules.params["cards_per_player"], headings=("hand", ""))

    def _recent_events(self, name: Callable[[int], str], count: int) -> list[str]:
        """The last ``count`` events (questions with their answers, reaction phases) in words."""
        rules, hands = self.rules, self.rules.hands.tuples
        lines = []
        for event in self.events[-count:]:
            if event.question is not None:
                who = "the moderator" if event.moderator is None else name(event.moderator)
                lines.append(f"{who} asked: {rules.deck[event.question].text} Answer: {event.answer}")
            else:
                said = []
                for p, r in enumerate(event.reactions):
                    if r is not None:
                        called = rules.called_hand(r)
                        held = f" (held {hands[event.shown[p]]})" if called else ""
                        said.append(f"{name(p)} {f'called {called}' if called else 'passed'}{held}")
                lines.append("Reactions: " + "; ".join(said))
        return lines

    def _closing_lines(self, viewer: int | None) -> list[str]:
        """What ``viewer`` still considers possible for their own hand, or the final returns."""
        if self._over:
            name = self._namer(viewer)
            return ["Final returns: " + ", ".join(f"{name(p)} {r:+g}" for p, r in enumerate(self._returns))]
        if viewer is not None and None not in self.hands:
            valids = self.valids(viewer)
            listed = ": " + " ".join("".join(map(str, v)) for v in valids) if len(valids) <= 10 else ""
            return [f"Hands you still consider possible: {len(valids)}{listed}"]
        return []

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
