"""Spoof rules engine: configuration, states, observation layout.

The environment documentation (rules, actions, observation layout, arguments) is the
docstring of :mod:`hiddenhand.envs.spoof_v0`; this module holds the logic it documents.
A round's two hand choices are consecutive hidden turns (the round's first bidder, then
the other), its two bids consecutive public turns; everything is revealed when the round
ends, which is what lets :mod:`hiddenhand.solvers.spoof` solve the game round by round.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hiddenhand.core import TERMINAL, Rules, State
from hiddenhand.layout import ActionCodec, Layout, one_hot_index
from hiddenhand.picture import Card, Row, Table
from hiddenhand.validation import check_choice, check_int, integer_text, named

OBJECTIVES = ("game", "round")
OBSERVATIONS = ("full", "markov")
MAX_MATCHES = 9
"""Most matches a player may start with (the round game grows as the square of it)."""

ROUND_UTILITY = {"right": 1.0, "opponent_right": 0.0, "neither": 0.5}
"""The one-round objective's payoffs, those of the Hugin Spoof models' influence diagrams."""


def parse_matches(value: Any) -> tuple[int, int]:
    """``matches`` as (player 0's, player 1's): one int for both, or a pair."""
    if isinstance(value, (tuple, list)) and len(value) == 2:
        try:
            return tuple(check_int(f"player_{i}'s count", v, 1, MAX_MATCHES) for i, v in enumerate(value))
        except ValueError as err:  # named as the whole pair, which is what was given
            raise ValueError(f"{named('matches', tuple(value))}: {err}") from None
    if isinstance(value, (tuple, list, str)):
        raise ValueError(
            f"{named('matches', value)} is not one count or a pair of counts; allowed: 1 to {MAX_MATCHES}, or two "
            "such counts (player_0's, player_1's)"
        )
    m = check_int("matches", value, 1, MAX_MATCHES)
    return (m, m)


class ObservationLayout(Layout):
    """A Spoof observation vector (see ``spoof_v0``): its pieces in order, and in ``round``
    those of one block of its history (a finished round).

    ``max_hold`` is the larger starting count (the most matches anyone can hold),
    ``max_total`` the starting total (the largest bid), ``rounds`` the number of round
    blocks in the history: 0 for the Markov observation, which is the present round alone
    (the same pieces, so one decoder reads both).
    """

    def __init__(self, max_hold: int, max_total: int, rounds: int) -> None:
        holds, bids = (2, max_hold + 1), (2, max_total + 1)
        self.rounds = rounds
        self.round = Layout([("first", 2), ("holds", holds), ("bids", bids)])
        super().__init__(
            [
                ("seat", 2),
                ("matches", holds),
                ("first", 2),
                ("hold", max_hold + 1),
                ("bids", bids),
                ("history", (rounds, self.round.size)),
            ]
        )


@dataclass(frozen=True)
class SpoofRound:
    """One finished round, by player id: who bid first, the holds, the bids, and the player
    whose bid was the total (``None`` when neither was)."""

    first: int
    holds: tuple[int, int]
    bids: tuple[int, int]
    winner: int | None


class SpoofRules(Rules):
    """Configuration of a Spoof game; see :mod:`hiddenhand.envs.spoof_v0`."""

    name = "spoof"

    def __init__(
        self,
        matches: int | tuple[int, int] = 3,
        objective: str = "game",
        max_rounds: int = 50,
        observation: str = "full",
    ) -> None:
        pair = parse_matches(matches)
        super().__init__(
            matches=pair[0] if pair[0] == pair[1] else pair,
            objective=check_choice("objective", objective, OBJECTIVES),
            max_rounds=check_int("max_rounds", max_rounds, 1, 10_000),
            observation=check_choice("observation", observation, OBSERVATIONS),
        )
        self.matches: tuple[int, int] = pair
        self.objective: str = self.params["objective"]
        self.max_rounds: int = self.params["max_rounds"]
        self.max_hold = max(pair)
        self.max_total = sum(pair)
        self.utility_sum = 1.0 if self.objective == "round" else 0.0
        rounds = 1 if self.objective == "round" else self.max_rounds
        # The perfect-recall vector; the Markov observation is its present-round part and
        # forgets the past, so it is no longer the information state.
        self.information_layout = ObservationLayout(self.max_hold, self.max_total, rounds)
        self.markov = self.params["observation"] == "markov"
        self.observation_is_information_state = not self.markov
        self.layout = ObservationLayout(self.max_hold, self.max_total, 0) if self.markov else self.information_layout
        self.actions = ActionCodec([("hold", self.max_hold + 1), ("bid", self.max_total + 1)])

    @classmethod
    def openspiel_parameters(cls) -> dict[str, Any]:
        """OpenSpiel takes no pairs: player 1's count is ``matches_p1`` there (0: as player 0)."""
        return {**cls.param_defaults(), "matches_p1": 0}

    def to_openspiel(self) -> dict[str, Any]:
        m0, m1 = self.matches
        return {**self.params, "matches": m0, "matches_p1": m1}

    @classmethod
    def from_openspiel(cls, params: dict[str, Any]) -> SpoofRules:
        params = dict(params)
        second = params.pop("matches_p1", 0)
        if second:
            params["matches"] = (params.get("matches", cls.param_defaults()["matches"]), second)
        return cls(**params)

    @property
    def num_players(self) -> int:
        return 2

    # Spoof's names for what ``actions`` encodes and decodes.
    def hold_action(self, hold: int) -> int:
        return self.actions.encode("hold", hold)

    def bid_action(self, bid: int) -> int:
        return self.actions.encode("bid", bid)

    def decode_action(self, action: int) -> tuple[str, int]:
        """``("hold", k)`` or ``("bid", b)``."""
        return self.actions.decode(action)

    @property
    def max_game_length(self) -> int:
        return 4 * (1 if self.objective == "round" else self.max_rounds)

    @property
    def utility_range(self) -> tuple[float, float]:
        return (0.0, 1.0) if self.objective == "round" else (-1.0, 1.0)

    def new_initial_state(self) -> SpoofState:
        return SpoofState(self)

    def new_round_state(self, matches: tuple[int, int], first: int = 0) -> SpoofState:
        """A state at the start of a round with ``matches`` per player (player 0's, player
        1's; each 1 to that player's starting count) and player ``first`` bidding first:
        how the exact solver and the whole-game best response reach every round-state."""
        valid = (
            len(matches) == 2
            and all(isinstance(m, (int, np.integer)) and 1 <= m <= start for m, start in zip(matches, self.matches))
            and first in (0, 1)
        )
        if not valid:
            raise ValueError(
                f"matches={matches!r}, first={first!r} is not a round-state of {self!r}: one count per player, "
                f"1 to {self.matches[0]} for player 0 and 1 to {self.matches[1]} for player 1, and a first "
                "bidder 0 or 1"
            )
        state = SpoofState(self)
        state.matches = [int(m) for m in matches]
        state.first = first
        return state

    def prompt(self, state: State, player: int) -> str:
        kind, _ = self.actions.decode(state.legal_actions(player)[0])
        if kind == "hold":
            mine = state.matches[player]
            return f"How many of your {mine} match{'es' if mine != 1 else ''} do you hold? (0 to {mine})"
        taken = state.bids[1 - player]
        but = f", but not {taken}" if taken is not None else ""
        return f"Your bid for the total of both hands (0 to {sum(state.matches)}{but}):"

    def parse_action(self, text: str, state: State, player: int) -> int:
        """A number: matches to hold, or the bid, whichever the round asks for."""
        word = text.strip()
        legal = state.legal_actions(player)
        kind, _ = self.actions.decode(legal[0])
        numbers = [self.actions.decode(a)[1] for a in legal]
        number = integer_text(word)
        if number is None:
            raise ValueError(f"{word!r} is not a number; type one of {numbers}")
        if number not in numbers:
            if kind == "bid" and number == state.bids[1 - player]:
                raise ValueError(f"{word} is your opponent's bid; bid a different total: one of {numbers}")
            raise ValueError(f"{word} is not allowed; type one of {numbers}")
        return self.actions.encode(kind, number)


class SpoofState(State):
    """A Spoof position: both players' match counts, who bids first, and this round's
    choices so far (``holds``/``bids`` by player id, ``None`` until made)."""

    def __init__(self, rules: SpoofRules) -> None:
        self.rules = rules
        self.matches = list(rules.matches)
        self.first = 0
        self.holds: list[int | None] = [None, None]
        self.bids: list[int | None] = [None, None]
        self.history: list[SpoofRound] = []

    # ----------------------------------------------------------------- protocol
    def current_player(self) -> int:
        if self._over:
            return TERMINAL
        first, second = self.first, 1 - self.first
        if self.holds[first] is None:
            return first
        if self.holds[second] is None:
            return second
        return first if self.bids[first] is None else second

    def round_state(self) -> int:
        """At a round's start (no hand held yet): ``(first * size + matches_0) * size +
        matches_1``, ``size`` one more than the larger starting count."""
        if self._over or self.holds != [None, None]:
            return -1
        size = max(self.rules.matches) + 1
        return (self.first * size + self.matches[0]) * size + self.matches[1]

    def legal_actions(self, player: int | None = None) -> list[int]:
        mover = self.current_player()
        if player is None:
            player = mover
        if self._over or player not in (0, 1):
            return []
        actions = self.rules.actions
        if self.holds[player] is None:  # still to choose a hand this round
            return [actions.encode("hold", k) for k in range(self.matches[player] + 1)]
        if player != mover:
            return []
        taken = self.bids[1 - player]
        return [actions.encode("bid", b) for b in range(sum(self.matches) + 1) if b != taken]

    def apply(self, action: int) -> None:
        player = self.current_player()
        legal = self.legal_actions(player)
        if action not in legal:
            raise self._illegal(action, legal)
        kind, value = self.rules.actions.decode(int(action))
        if kind == "hold":
            self.holds[player] = value
            return
        self.bids[player] = value
        if self.bids[1 - player] is not None:
            self._resolve_round()

    def clone(self) -> SpoofState:
        return self._copy("matches", "holds", "bids", "history")

    def observation_tensor(self, player: int) -> np.ndarray:
        return self._tensor(self.rules.layout, player)

    def information_state_tensor(self, player: int) -> np.ndarray:
        return self._tensor(self.rules.information_layout, player)

    def _tensor(self, layout: ObservationLayout, player: int) -> np.ndarray:
        """``player``'s view in ``layout``: the present round, then as many finished rounds
        as the layout has blocks for (all of them, or none for the Markov observation)."""
        obs, views = layout.zeros()
        views["seat"][player] = 1.0
        views["first"][(self.first - player) % 2] = 1.0
        if self.holds[player] is not None:
            views["hold"][self.holds[player]] = 1.0
        for rel in (0, 1):
            p = (player + rel) % 2
            views["matches"][rel, self.matches[p]] = 1.0
            if self.bids[p] is not None:
                views["bids"][rel, self.bids[p]] = 1.0
        rounds = layout.round.views(views["history"])  # each piece with a leading round index
        for k, record in enumerate(self.history[: layout.rounds]):
            rounds["first"][k, (record.first - player) % 2] = 1.0
            for rel in (0, 1):
                p = (player + rel) % 2
                rounds["holds"][k, rel, record.holds[p]] = 1.0
                rounds["bids"][k, rel, record.bids[p]] = 1.0
        return obs

    def information_state_string(self, player: int) -> str:
        parts = [f"p{player} start {self.rules.matches[0]}-{self.rules.matches[1]}"]
        for record in self.history:
            winner = "none" if record.winner is None else f"p{record.winner}"
            parts.append(
                f"first p{record.first} holds {record.holds[0]},{record.holds[1]} "
                f"bids {record.bids[0]},{record.bids[1]} -> {winner}"
            )
        if not self._over:
            parts.append(f"first p{self.first}")
            if self.holds[player] is not None:
                parts.append(f"hold {self.holds[player]}")
            parts += [f"p{p} bid {self.bids[p]}" for p in (self.first, 1 - self.first) if self.bids[p] is not None]
        return " | ".join(parts)

    def action_to_string(self, player: int, action: int) -> str:
        kind, value = self.rules.actions.decode(action)
        return f"{kind.capitalize()} {value}"

    def render(self, viewer: int | None = None) -> str:
        name = self._namer(viewer)
        lines = []
        if not self._over:
            lines.append(
                f"Round {len(self.history) + 1}: {name(self.first)} {'bid' if self.first == viewer else 'bids'} first"
            )
        lines.append("Matches left: " + ", ".join(f"{name(p)} {self.matches[p]}" for p in (0, 1)))
        if self._over:
            lines += [f"Round {k}: {self._round_text(r, name)}" for k, r in enumerate(self.history, 1)]
            if self._truncated:
                lines.append(f"Stopped after max_rounds={self.rules.max_rounds} rounds: a draw.")
            lines.append("Final returns: " + ", ".join(f"{name(p)} {r:+g}" for p, r in enumerate(self._returns)))
            return "\n".join(lines)
        if self.history:
            lines.append("Last round: " + self._round_text(self.history[-1], name))
        for p in (self.first, 1 - self.first):
            held = self.holds[p]
            if held is None:
                continue
            shown = viewer is None or p == viewer
            lines.append(
                f"{_sentence(name(p))} {'hold' if p == viewer else 'holds'} "
                + (f"{held}" if shown else "a hidden hand")
            )
        for p in (self.first, 1 - self.first):
            if self.bids[p] is not None:
                lines.append(f"{_sentence(name(p))} bid {self.bids[p]}")
        return "\n".join(lines)

    def table(self, viewer: int | None = None) -> Table:
        """Each player's hand this round (the matches held, face down to the other player
        until the reveal), matches left, bid and who bids first; the last round below."""
        name = self._namer(viewer)
        mover = self.current_player()
        rows = []
        for p in (0, 1):
            held = () if self.holds[p] is None else (Card(str(self.holds[p]), viewer in (None, p)),)
            note = [f"{self.matches[p]} matches left"]
            if self.bids[p] is not None:
                note.append(f"bid {self.bids[p]}")
            if p == self.first and not self._over:
                note.append("bids first")
            rows.append(Row(name(p), held, note=" · ".join(note), to_move=p == mover))
        caption = []
        if self.history:
            caption.append("Last round: " + self._round_text(self.history[-1], name))
        if self._truncated:
            caption.append(f"Stopped after max_rounds={self.rules.max_rounds} rounds: a draw.")
        if self._over:
            caption.append("Final returns: " + ", ".join(f"{name(p)} {r:+g}" for p, r in enumerate(self._returns)))
        title = "Spoof" if self._over else f"Spoof · round {len(self.history) + 1}"
        return Table(title, tuple(rows), tuple(caption), slots=1, headings=("matches held", ""))

    # ----------------------------------------------------------------- mechanics
    def _resolve_round(self) -> None:
        total = self.holds[0] + self.holds[1]
        winner = next((p for p in (0, 1) if self.bids[p] == total), None)
        self.history.append(SpoofRound(self.first, tuple(self.holds), tuple(self.bids), winner))
        self.holds, self.bids = [None, None], [None, None]
        if self.rules.objective == "round":
            u = ROUND_UTILITY
            self._finish(
                [u["neither"] if winner is None else u["right"] if winner == p else u["opponent_right"] for p in (0, 1)]
            )
            return
        if winner is not None:
            self.matches[winner] -= 1
            self.first = winner
            if self.matches[winner] == 0:
                self._finish([1.0 if p == winner else -1.0 for p in (0, 1)])
                return
        if len(self.history) >= self.rules.max_rounds:
            self._finish([0.0, 0.0], truncated=True)

    @staticmethod
    def _round_text(record: SpoofRound, name) -> str:
        f, s = record.first, 1 - record.first
        total = sum(record.holds)
        text = (
            f"{name(f)} held {record.holds[f]} and bid {record.bids[f]}, {name(s)} held {record.holds[s]} "
            f"and bid {record.bids[s]}; total {total}: "
        )
        if record.winner is None:
            return text + "nobody was right"
        return text + f"{name(record.winner)} {'were' if name(record.winner) == 'you' else 'was'} right"


def _sentence(name: str) -> str:
    """A player's name at the start of a sentence ("You", or "player_1" unchanged)."""
    return "You" if name == "you" else name


@dataclass(frozen=True)
class SpoofView:
    """What a Spoof observation (full or Markov) says about the present round, seats
    relative to the observer: enough for a Markov agent (the equilibrium, the heuristic)."""

    mine: int
    theirs: int
    first: bool
    hold: int | None
    my_bid: int | None
    their_bid: int | None

    @staticmethod
    def decode(vector: np.ndarray, layout: ObservationLayout) -> SpoofView:
        obs = layout.decode(vector)
        return SpoofView(
            mine=one_hot_index(obs["matches"][0]),
            theirs=one_hot_index(obs["matches"][1]),
            first=bool(obs["first"][0]),
            hold=one_hot_index(obs["hold"]),
            my_bid=one_hot_index(obs["bids"][0]),
            their_bid=one_hot_index(obs["bids"][1]),
        )
