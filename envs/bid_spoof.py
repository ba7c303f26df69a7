"""Bid Spoof (Milan rules) rules engine: configuration, action numbers and states.

The environment documentation (rules, the choices where the Milan rules leave a case open,
actions, observation, arguments) is the docstring of :mod:`hiddenhand.envs.bid_spoof_v0`;
this module plays the game: a round's holds, bids and calls, the zero-call variants and the
settling of a round, with the text and pictures of a position. Every round ends with all
hands shown, which is what lets :mod:`hiddenhand.solvers.bid_spoof` solve the two-player
game round by round. The observation codec (the layouts and encoders of the observation
and the information state) is :mod:`.bid_spoof_observation`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from hiddenhand.core import TERMINAL, Rules, State
from hiddenhand.envs import bid_spoof_observation
from hiddenhand.envs.bid_spoof_observation import (
    CALLS,
    DIRECTIONS,
    InformationStateLayout,
    ObservationLayout,
)
from hiddenhand.layout import ActionCodec
from hiddenhand.moved import moved
from hiddenhand.picture import Card, Row, Table
from hiddenhand.validation import check_choice, check_int

__getattr__ = moved(__name__, {"RoundLayout": "hiddenhand.envs.bid_spoof_observation"})

ZERO_CALLS = ("round_start", "before_own_bid")
OBJECTIVES = ("game", "round")
OBSERVATIONS = ("full", "markov")
MAX_PLAYERS, MAX_COINS = 8, 5


class ActionLayout(ActionCodec):
    """Action numbers: holds 0..C, bids 1..N*C, the four calls, the two directions; with
    Bid Spoof's names for encoding each kind (``decode`` gives ``(kind, value)``)."""

    def __init__(self, num_players: int, coins: int) -> None:
        super().__init__(
            [
                ("hold", coins + 1),
                ("bid", range(1, num_players * coins + 1)),
                ("call", CALLS),
                ("direction", DIRECTIONS),
            ]
        )

    def hold(self, k: int) -> int:
        return self.encode("hold", k)

    def bid(self, b: int) -> int:
        return self.encode("bid", b)

    def call(self, name: str) -> int:
        return self.encode("call", name)

    def direction(self, name: str) -> int:
        return self.encode("direction", name)


@dataclass(frozen=True)
class BidSpoofRound:
    """One finished round, by player id: who started, the direction (+1 clockwise), the
    hands (None for a player out), the bids in order, the call that ended it, who made
    it, and each player's change of coins."""

    starter: int
    direction: int
    holds: tuple[int | None, ...]
    bids: tuple[tuple[int, int], ...]
    call: str
    caller: int
    change: tuple[int, ...]


class BidSpoofRules(Rules):
    """Configuration of a Bid Spoof game; see :mod:`hiddenhand.envs.bid_spoof_v0`."""

    name = "bid_spoof"
    max_players = MAX_PLAYERS
    observation_is_information_state = False  # the observation shows the last finished round at most

    def __init__(
        self,
        num_players: int = 3,
        coins: int = 3,
        zero_call: str = "round_start",
        objective: str = "game",
        max_rounds: int = 200,
        observation: str = "full",
    ) -> None:
        super().__init__(
            num_players=check_int("num_players", num_players, 2, MAX_PLAYERS),
            coins=check_int("coins", coins, 1, MAX_COINS),
            zero_call=check_choice("zero_call", zero_call, ZERO_CALLS),
            objective=check_choice("objective", objective, OBJECTIVES),
            max_rounds=check_int("max_rounds", max_rounds, 1, 100_000),
            observation=check_choice("observation", observation, OBSERVATIONS),
        )
        self.coins: int = self.params["coins"]
        self.zero_call: str = self.params["zero_call"]
        self.objective: str = self.params["objective"]
        self.max_rounds: int = self.params["max_rounds"]
        self.markov = self.params["observation"] == "markov"
        self.actions = ActionLayout(self.num_players, self.coins)
        full = ObservationLayout(self.num_players, self.coins)
        self.layout = ObservationLayout(self.num_players, self.coins, last_round=False) if self.markov else full
        # The information state is the same under either observation: the full one and every round.
        self.information_layout = InformationStateLayout(full, 1 if self.objective == "round" else self.max_rounds)

    @property
    def num_players(self) -> int:
        return self.params["num_players"]

    @property
    def max_game_length(self) -> int:
        per_round = 2 * self.num_players + 1 + self.num_players * self.coins + 1
        return per_round * (1 if self.objective == "round" else self.max_rounds)

    @property
    def utility_range(self) -> tuple[float, float]:
        return (-1.0, 1.0)

    def new_initial_state(self) -> BidSpoofState:
        return BidSpoofState(self)

    def new_round_state(self, coins: tuple[int, ...], starter: int = 0) -> BidSpoofState:
        """A state at the start of a round with these ``coins`` per player (0: out) and
        ``starter`` opening: how the exact solver reaches every round-state."""
        valid = (
            len(coins) == self.num_players
            and all(0 <= c <= self.coins for c in coins)
            and sum(c > 0 for c in coins) >= 2
            and 0 <= starter < self.num_players
            and coins[starter] > 0
        )
        if not valid:
            raise ValueError(
                f"coins={coins!r}, starter={starter!r} is not a round-state of {self!r}: one count of 0 to "
                f"{self.coins} per player, at least two players in, a starter who is in"
            )
        state = BidSpoofState(self)
        state.coins = list(coins)
        state.starter = starter
        state._start_round()
        return state

    def prompt(self, state: State, player: int) -> str:
        kinds = {self.actions.decode(a)[0] for a in state.legal_actions(player)}
        if kinds == {"hold"}:
            return f"How many of your {state.coins[player]} coins do you hold? (0 to {state.coins[player]})"
        if kinds == {"direction"}:
            return "Which way does the bidding go? (clockwise / anticlockwise)"
        options = [
            self.actions.decode(a)[1] for a in state.legal_actions(player) if self.actions.decode(a)[0] == "call"
        ]
        bids = [self.actions.decode(a)[1] for a in state.legal_actions(player) if self.actions.decode(a)[0] == "bid"]
        raise_text = f"a bid from {bids[0]} to {bids[-1]}" if bids else "no higher bid is possible"
        return f"Your turn: {raise_text}, or {', '.join(options)}:"

    def parse_action(self, text: str, state: State, player: int) -> int:
        """A number (a hand, or a bid), a call's name, or a direction."""
        word = text.strip().lower()
        legal = state.legal_actions(player)
        labels = {}
        for a in legal:
            kind, value = self.actions.decode(a)
            labels[str(value)] = a
            if kind == "direction":
                labels[str(value)[0]] = a  # c / a
        if word in labels:
            return labels[word]
        allowed = ", ".join(k for k in labels if len(k) > 1 or k.isdigit())
        raise ValueError(f"{text.strip()!r} is not allowed now; choose one of: {allowed}")


class BidSpoofState(State):
    """A Bid Spoof position: coins per player, the round's starter, direction, hands and bids."""

    def __init__(self, rules: BidSpoofRules) -> None:
        self.rules = rules
        n = rules.num_players
        self.coins = [rules.coins] * n
        self.starter = 0
        self.history: list[BidSpoofRound] = []
        self._start_round()

    # ----------------------------------------------------------------- protocol
    def active(self) -> list[int]:
        return [p for p, c in enumerate(self.coins) if c > 0]

    def current_player(self) -> int:
        return TERMINAL if self._over else self._mover

    def round_state(self) -> int:
        """At a round's start (no hand held yet): the starter and every seat's coins as the
        digits of one number in base ``coins + 1``, the starter first."""
        if self._over or any(h is not None for h in self.holds):
            return -1
        key = self.starter
        for c in self.coins:
            key = key * (self.rules.coins + 1) + c
        return key

    def legal_actions(self, player: int | None = None) -> list[int]:
        mover = self.current_player()
        if player is None:
            player = mover
        if self._over or player < 0:
            return []
        acts = self.rules.actions
        if self.holds[player] is None and player in self.active():  # hands are still being chosen
            return [acts.hold(k) for k in range(self.coins[player] + 1)]
        if player != mover:
            return []
        if self.direction is None:
            return [acts.direction(d) for d in DIRECTIONS]
        last = self.bids[-1][1] if self.bids else 0
        total = sum(self.coins)
        legal = [acts.bid(b) for b in range(last + 1, total + 1)]
        if self.bids:
            legal += [acts.call("call"), acts.call("cliff"), acts.call("spoof")]
        if self._may_zero(player):
            legal.append(acts.call("zero"))
        return sorted(legal)

    def _may_zero(self, player: int) -> bool:
        if self.rules.zero_call == "round_start":
            return not self.bids and player == self.starter
        return all(p != player for p, _ in self.bids)

    def apply(self, action: int) -> None:
        player = self.current_player()
        legal = self.legal_actions(player)
        if action not in legal:
            raise self._illegal(action, legal)
        kind, value = self.rules.actions.decode(int(action))
        if kind == "hold":
            self.holds[player] = value
            pending = [p for p in self._seat_order(self.starter, 1) if self.holds[p] is None]
            if pending:
                self._mover = pending[0]
            elif len(self.active()) > 2:
                self._mover = self.starter
            else:
                self.direction = 1
                self._mover = self.starter
        elif kind == "direction":
            self.direction = 1 if value == "clockwise" else -1
        elif kind == "bid":
            self.bids.append((player, value))
            self._mover = self._next_active(player)
        else:
            self._settle(value, player)

    def clone(self) -> BidSpoofState:
        return self._copy("coins", "holds", "bids", "history")

    def observation_tensor(self, player: int) -> np.ndarray:
        return bid_spoof_observation.observation_tensor(self, player)

    def information_state_tensor(self, player: int) -> np.ndarray:
        return bid_spoof_observation.information_state_tensor(self, player)

    def information_state_string(self, player: int) -> str:
        return bid_spoof_observation.information_state_string(self, player)

    def action_to_string(self, player: int, action: int) -> str:
        kind, value = self.rules.actions.decode(action)
        return {"hold": f"Hold {value}", "bid": f"Bid {value}"}.get(kind, str(value).capitalize())

    def render(self, viewer: int | None = None) -> str:
        name = self._namer(viewer)
        lines = ["Coins: " + ", ".join(f"{name(p)} {c}" + ("" if c else " (out)") for p, c in enumerate(self.coins))]
        shown = self.history if self._over else self.history[-1:]
        lines += [f"{'Round' if self._over else 'Last round'}: {self._round_text(r, name)}" for r in shown]
        if self._over:
            return "\n".join(lines + self._ending(name))
        lines.append(self._round_heading(viewer))
        if viewer is not None and self.holds[viewer] is not None:
            lines.append(f"You hold {self.holds[viewer]}")
        if self.bids:
            lines.append("Bids: " + ", ".join(f"{name(p)} {b}" for p, b in self.bids))
        return "\n".join(lines)

    def table(self, viewer: int | None = None) -> Table:
        """Each player's hand this round (the coins held, face down to the others until the
        reveal), their coins, their last bid; the round's starter, the bids and the last
        round below."""
        name = self._namer(viewer)
        mover = self.current_player()
        last_bid = {p: b for p, b in self.bids}
        rows = []
        for p, coins in enumerate(self.coins):
            held = () if self._over or self.holds[p] is None else (Card(str(self.holds[p]), viewer in (None, p)),)
            note = [f"{coins} coins" if coins else "out"]
            if p in last_bid:
                note.append(f"bid {last_bid[p]}")
            rows.append(Row(name(p), held, note=" · ".join(note), to_move=p == mover))
        caption = [] if self._over else [self._round_heading(viewer)]
        if self.bids:
            caption.append("Bids: " + ", ".join(f"{name(p)} {b}" for p, b in self.bids))
        if self.history:
            caption.append("Last round: " + self._round_text(self.history[-1], name))
        if self._over:
            caption += self._ending(name)
        title = "Bid Spoof" if self._over else f"Bid Spoof · round {len(self.history) + 1}"
        return Table(title, tuple(rows), tuple(caption), slots=1, headings=("coins held", ""))

    def _round_heading(self, viewer: int | None) -> str:
        """Who starts the round in play, and which way it goes (with more than two players)."""
        way = {None: "", 1: ", clockwise", -1: ", anticlockwise"}[self.direction if len(self.active()) > 2 else None]
        verb = "start" if self.starter == viewer else "starts"
        return f"Round {len(self.history) + 1}: {self._namer(viewer)(self.starter)} {verb}{way}"

    @staticmethod
    def _round_text(record: BidSpoofRound, name: Callable[[int], str]) -> str:
        """A finished round: the bids, the call that ended it and the hands shown."""
        hands = ", ".join(f"{name(p)} {h}" for p, h in enumerate(record.holds) if h is not None)
        bids = ", ".join(f"{name(p)} {b}" for p, b in record.bids) or "none"
        total = sum(h for h in record.holds if h is not None)
        return f"bids {bids}; {name(record.caller)} said {record.call}; hands {hands} (total {total})"

    def _ending(self, name: Callable[[int], str]) -> list[str]:
        """How the game ended, and the returns."""
        lines = [f"Stopped after max_rounds={self.rules.max_rounds} rounds: a draw."] if self._truncated else []
        return lines + ["Final returns: " + ", ".join(f"{name(p)} {r:+.3g}" for p, r in enumerate(self._returns))]

    # ----------------------------------------------------------------- mechanics
    def _seat_order(self, start: int, step: int) -> list[int]:
        n = self.rules.num_players
        return [(start + step * k) % n for k in range(n) if self.coins[(start + step * k) % n] > 0]

    def _next_active(self, player: int) -> int:
        order = self._seat_order(player, self.direction or 1)
        return order[1]

    def _start_round(self) -> None:
        n = self.rules.num_players
        self.holds: list[int | None] = [None] * n
        self.bids: list[tuple[int, int]] = []
        self.direction: int | None = None
        self._mover = self.starter

    def _settle(self, call: str, caller: int) -> None:
        count = sum(h for h in self.holds if h is not None)
        cap = self.rules.coins
        change = [0] * self.rules.num_players
        starter = caller
        if call == "call":
            bidder, bid = self.bids[-1]
            loser = caller if count >= bid else bidder
            change[loser] = -1
            starter = loser
        elif call == "cliff":
            right = count == self.bids[-1][1]
            change[caller] = (1 if self.coins[caller] < cap else 0) if right else -1
        elif call == "spoof":
            change[caller] = 0 if count == sum(self.coins) else -1
        else:  # zero
            if count == 0:
                for p in self.active():
                    change[p] = -1 if p != caller else 0
            else:
                change[caller] = -1
        self.history.append(
            BidSpoofRound(
                self.starter, self.direction or 1, tuple(self.holds), tuple(self.bids), call, caller, tuple(change)
            )
        )
        self.coins = [c + d for c, d in zip(self.coins, change)]
        n = self.rules.num_players
        if self.rules.objective == "round":
            # Each player in the round: own change minus the mean change of the others in it.
            playing = [h is not None for h in self.holds]
            k = sum(playing)
            self._finish([d - (sum(change) - d) / (k - 1) if p else 0.0 for d, p in zip(change, playing)])
            return
        active = self.active()
        if len(active) == 1:
            self._finish([1.0 if p == active[0] else -1.0 / (n - 1) for p in range(n)])
            return
        # The designated starter opens or, if they are out, the next player still in (clockwise).
        # Set even when max_rounds stops the game here: the stopped state still says which
        # round-state it stopped in (what the unlimited game, solved exactly, goes on from).
        self.starter = next(p for p in [(starter + k) % n for k in range(n)] if self.coins[p] > 0)
        if len(self.history) >= self.rules.max_rounds:
            self._finish([0.0] * n, truncated=True)
            return
        self._start_round()
