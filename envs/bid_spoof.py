"""Bid Spoof (Milan rules) engine: configuration, states, observation layout.

The environment documentation (rules, the choices where the seed leaves a case open,
actions, observation, arguments) is the docstring of :mod:`hiddenhand.envs.bid_spoof_v0`.
Every round ends with all hands shown, which is what lets
:mod:`hiddenhand.solvers.bid_spoof` solve the two-player game round by round.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from hiddenhand.core import TERMINAL, Rules, State
from hiddenhand.validation import check_choice, check_int

ZERO_CALLS = ("round_start", "before_own_bid")
OBJECTIVES = ("game", "round")
CALLS = ("call", "cliff", "spoof", "zero")
DIRECTIONS = ("clockwise", "anticlockwise")
MAX_PLAYERS, MAX_COINS = 8, 5


@dataclass(frozen=True)
class ActionLayout:
    """Action numbers: holds 0..C, bids 1..N*C, the four calls, the two directions."""

    num_players: int
    coins: int

    def hold(self, k: int) -> int:
        return k

    def bid(self, b: int) -> int:
        return self.coins + b

    def call(self, name: str) -> int:
        return self.coins + 1 + self.num_players * self.coins + CALLS.index(name)

    def direction(self, name: str) -> int:
        return self.call("zero") + 1 + DIRECTIONS.index(name)

    @property
    def size(self) -> int:
        return self.direction("anticlockwise") + 1

    def decode(self, action: int) -> tuple[str, int | str]:
        """("hold", k), ("bid", b), ("call", name) or ("direction", name)."""
        if action <= self.coins:
            return ("hold", action)
        if action < self.call("call"):
            return ("bid", action - self.coins)
        if action < self.direction("clockwise"):
            return ("call", CALLS[action - self.call("call")])
        return ("direction", DIRECTIONS[action - self.direction("clockwise")])


@dataclass(frozen=True)
class RoundLayout:
    """Offsets inside the block of one finished round (seats relative to the observer): first
    what the observation shows of the last round (each seat's hand or "out", the call, who
    called), then what only the information state keeps (starter, direction, bid table)."""

    num_players: int
    coins: int

    @property
    def hands(self) -> int:
        return 0

    @property
    def call(self) -> int:
        return self.num_players * (self.coins + 2)

    @property
    def caller(self) -> int:
        return self.call + len(CALLS)

    @property
    def shown(self) -> int:
        """Length of the part the observation shows (its ``last_round`` block)."""
        return self.caller + self.num_players

    @property
    def starter(self) -> int:
        return self.shown

    @property
    def direction(self) -> int:
        return self.starter + self.num_players

    @property
    def bids(self) -> int:
        return self.direction + 2

    @property
    def size(self) -> int:
        return self.bids + self.num_players * self.coins * self.num_players


@dataclass(frozen=True)
class ObservationLayout:
    """Offsets of a Bid Spoof observation (seats relative to the observer; see ``bid_spoof_v0``)."""

    num_players: int
    coins: int

    @property
    def coin_counts(self) -> int:
        return self.num_players  # after the own-seat one-hot

    @property
    def starter(self) -> int:
        return self.coin_counts + self.num_players * (self.coins + 1)

    @property
    def direction(self) -> int:
        return self.starter + self.num_players

    @property
    def own_hold(self) -> int:
        return self.direction + 2

    @property
    def bids(self) -> int:
        """Bid table: for each bid 1..N*C, one-hot of the seat that made it."""
        return self.own_hold + self.coins + 1

    @property
    def last_round(self) -> int:
        """The previous round, shown: each seat's hand, the call and who made it."""
        return self.bids + self.num_players * self.coins * self.num_players

    @property
    def round(self) -> RoundLayout:
        return RoundLayout(self.num_players, self.coins)

    @property
    def size(self) -> int:
        return self.last_round + self.round.shown


@dataclass(frozen=True)
class InformationStateLayout:
    """The perfect-recall information state: the observation, then one whole
    :class:`RoundLayout` block per finished round, in order (zeros for rounds not played)."""

    observation: ObservationLayout
    rounds: int  # the most rounds a game can have

    def round(self, k: int) -> int:
        """Offset of the block of the ``k``-th finished round (from 0)."""
        return self.observation.size + k * self.observation.round.size

    @property
    def size(self) -> int:
        return self.round(self.rounds)


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
    observation_is_information_state = False  # the observation shows only the last finished round

    def __init__(
        self,
        num_players: int = 3,
        coins: int = 3,
        zero_call: str = "round_start",
        objective: str = "game",
        max_rounds: int = 200,
    ) -> None:
        super().__init__(
            num_players=check_int("num_players", num_players, 2, MAX_PLAYERS),
            coins=check_int("coins", coins, 1, MAX_COINS),
            zero_call=check_choice("zero_call", zero_call, ZERO_CALLS),
            objective=check_choice("objective", objective, OBJECTIVES),
            max_rounds=check_int("max_rounds", max_rounds, 1, 100_000),
        )
        self.coins: int = self.params["coins"]
        self.zero_call: str = self.params["zero_call"]
        self.objective: str = self.params["objective"]
        self.max_rounds: int = self.params["max_rounds"]
        self.actions = ActionLayout(self.num_players, self.coins)
        self.layout = ObservationLayout(self.num_players, self.coins)
        self.information_layout = InformationStateLayout(self.layout, 1 if self.objective == "round" else self.max_rounds)

    @property
    def num_players(self) -> int:
        return self.params["num_players"]

    @property
    def num_actions(self) -> int:
        return self.actions.size

    @property
    def observation_size(self) -> int:
        return self.layout.size

    @property
    def information_state_size(self) -> int:
        return self.information_layout.size

    @property
    def max_game_length(self) -> int:
        per_round = 2 * self.num_players + 1 + self.num_players * self.coins + 1
        return per_round * (1 if self.objective == "round" else self.max_rounds)

    @property
    def utility_range(self) -> tuple[float, float]:
        return (-1.0, 1.0)

    def new_initial_state(self) -> "BidSpoofState":
        return BidSpoofState(self)

    def new_round_state(self, coins: tuple[int, ...], starter: int = 0) -> "BidSpoofState":
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
        options = [self.actions.decode(a)[1] for a in state.legal_actions(player) if self.actions.decode(a)[0] == "call"]
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
        raise ValueError(f"{text.strip()!r} is not allowed now; choose one of: {', '.join(k for k in labels if len(k) > 1 or k.isdigit())}")


class BidSpoofState(State):
    """A Bid Spoof position: coins per player, the round's starter, direction, hands and bids."""

    def __init__(self, rules: BidSpoofRules) -> None:
        self.rules = rules
        n = rules.num_players
        self.coins = [rules.coins] * n
        self.starter = 0
        self.history: list[BidSpoofRound] = []
        self._returns = [0.0] * n
        self._over = False
        self._truncated = False
        self._start_round()

    # ----------------------------------------------------------------- protocol
    def active(self) -> list[int]:
        return [p for p, c in enumerate(self.coins) if c > 0]

    def current_player(self) -> int:
        return TERMINAL if self._over else self._mover

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

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return []

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

    def returns(self) -> list[float]:
        return list(self._returns)

    def is_truncated(self) -> bool:
        return self._truncated

    def clone(self) -> "BidSpoofState":
        return self._copy("coins", "holds", "bids", "history", "_returns")

    def observation_tensor(self, player: int) -> np.ndarray:
        rules, layout = self.rules, self.rules.layout
        n, c = rules.num_players, rules.coins
        rel = lambda p: (p - player) % n  # noqa: E731
        obs = np.zeros(layout.size, dtype=np.float32)
        obs[player] = 1.0
        for p in range(n):
            obs[layout.coin_counts + rel(p) * (c + 1) + self.coins[p]] = 1.0
        if not self._over:
            obs[layout.starter + rel(self.starter)] = 1.0
            if self.direction is not None:
                obs[layout.direction + (0 if self.direction == 1 else 1)] = 1.0
            if self.holds[player] is not None:
                obs[layout.own_hold + self.holds[player]] = 1.0
            _write_bids(obs, layout.bids, self.bids, rel, n)
        if self.history:
            _write_round(obs, layout.last_round, self.history[-1], rel, layout.round, whole=False)
        return obs

    def information_state_tensor(self, player: int) -> np.ndarray:
        """The observation, then every finished round in full (:class:`InformationStateLayout`)."""
        layout = self.rules.information_layout
        rel = lambda p: (p - player) % self.rules.num_players  # noqa: E731
        tensor = np.zeros(layout.size, dtype=np.float32)
        tensor[: layout.observation.size] = self.observation_tensor(player)
        for k, record in enumerate(self.history):
            _write_round(tensor, layout.round(k), record, rel, layout.observation.round, whole=True)
        return tensor

    def information_state_string(self, player: int) -> str:
        parts = [f"p{player}"]
        for r in self.history:
            bids = ",".join(f"p{p}:{b}" for p, b in r.bids)
            parts.append(f"start p{r.starter} dir {r.direction} holds {r.holds} bids {bids} {r.call} p{r.caller}")
        if not self._over:
            parts.append(f"coins {self.coins} start p{self.starter}")
            if self.holds[player] is not None:
                parts.append(f"hold {self.holds[player]}")
            # With two players in, the direction is set (clockwise) as the last hand goes in;
            # the observation shows that, so the string does too.
            if self.direction is not None:
                parts.append(f"dir {self.direction}")
            parts.append("bids " + ",".join(f"p{p}:{b}" for p, b in self.bids))
        return " | ".join(parts)

    def action_to_string(self, player: int, action: int) -> str:
        kind, value = self.rules.actions.decode(action)
        return {"hold": f"Hold {value}", "bid": f"Bid {value}"}.get(kind, str(value).capitalize())

    def render(self, viewer: int | None = None) -> str:
        name = (lambda p: "you" if p == viewer else f"player_{p}")  # noqa: E731
        lines = ["Coins: " + ", ".join(f"{name(p)} {c}" + ("" if c else " (out)") for p, c in enumerate(self.coins))]
        shown = self.history if self._over else self.history[-1:]
        for r in shown:
            hands = ", ".join(f"{name(p)} {h}" for p, h in enumerate(r.holds) if h is not None)
            bids = ", ".join(f"{name(p)} {b}" for p, b in r.bids) or "none"
            lines.append(f"{'Round' if self._over else 'Last round'}: bids {bids}; {name(r.caller)} said {r.call}; hands {hands} (total {sum(h for h in r.holds if h is not None)})")
        if self._over:
            if self._truncated:
                lines.append(f"Stopped after max_rounds={self.rules.max_rounds} rounds: a draw.")
            lines.append("Final returns: " + ", ".join(f"{name(p)} {r:+.3g}" for p, r in enumerate(self._returns)))
            return "\n".join(lines)
        way = {None: "", 1: ", clockwise", -1: ", anticlockwise"}[self.direction if len(self.active()) > 2 else None]
        lines.append(f"Round {len(self.history) + 1}: {name(self.starter)} {'start' if self.starter == viewer else 'starts'}{way}")
        if viewer is not None and self.holds[viewer] is not None:
            lines.append(f"You hold {self.holds[viewer]}")
        if self.bids:
            lines.append("Bids: " + ", ".join(f"{name(p)} {b}" for p, b in self.bids))
        return "\n".join(lines)

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
            BidSpoofRound(self.starter, self.direction or 1, tuple(self.holds), tuple(self.bids), call, caller, tuple(change))
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
        if len(self.history) >= self.rules.max_rounds:
            self._truncated = True
            self._finish([0.0] * n)
            return
        # The designated starter opens or, if they are out, the next player still in (clockwise).
        self.starter = next(p for p in [(starter + k) % n for k in range(n)] if self.coins[p] > 0)
        self._start_round()

    def _finish(self, returns: list[float]) -> None:
        self._over = True
        self._returns = returns


def _write_bids(buf: np.ndarray, at: int, bids: Sequence[tuple[int, int]], rel: Callable[[int], int], n: int) -> None:
    """The bid table at ``at``: for each bid value, one-hot of the (relative) seat that bid it."""
    for bidder, bid in bids:
        buf[at + (bid - 1) * n + rel(bidder)] = 1.0


def _write_round(buf: np.ndarray, at: int, record: BidSpoofRound, rel: Callable[[int], int], layout: RoundLayout, whole: bool) -> None:
    """One finished round at ``at``: the part the observation shows, and with ``whole`` the rest."""
    c = layout.coins
    for p, hold in enumerate(record.holds):
        buf[at + layout.hands + rel(p) * (c + 2) + (c + 1 if hold is None else hold)] = 1.0
    buf[at + layout.call + CALLS.index(record.call)] = 1.0
    buf[at + layout.caller + rel(record.caller)] = 1.0
    if whole:
        buf[at + layout.starter + rel(record.starter)] = 1.0
        buf[at + layout.direction + (0 if record.direction == 1 else 1)] = 1.0
        _write_bids(buf, at + layout.bids, record.bids, rel, layout.num_players)
