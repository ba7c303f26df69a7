"""Goofspiel rules engine: configuration, states, observation layout.

The environment documentation (rules, observation layout, arguments) is the docstring of
:mod:`hiddenhand.envs.goofspiel_v0`; this module holds the logic it documents.

Observations are kept up to date incrementally as the game is played (a few element
writes per move) instead of being rebuilt from the history on every request: the AEC env
asks for one on every decision, and rebuilding a 13-card observation from scratch would
cost more than the rest of a step.
"""

from __future__ import annotations

from dataclasses import dataclass
import numpy as np

from hiddenhand.core import CHANCE, TERMINAL, Rules, State
from hiddenhand.validation import check_bool, check_choice, check_int

PRIZE_ORDERS = ("random", "ascending", "descending")
SCORINGS = ("point_difference", "win_loss", "total_points")
FACE_NAMES = {"a": 1, "j": 11, "q": 12, "k": 13}


@dataclass(frozen=True)
class ObservationLayout:
    """Offsets of the sections of a Goofspiel observation vector (see ``goofspiel_v0``).

    Seats are relative to the observer (index 0 is the observer, index k the player k
    seats after them), so one policy serves every seat; the observer's own seat number is
    there too, so that a policy that does depend on it (a CFR policy per player) can be
    told apart.
    """

    num_cards: int
    num_players: int

    @property
    def reveal(self) -> int:
        return 0

    @property
    def seat(self) -> int:
        return 1

    @property
    def prize(self) -> int:
        return 1 + self.num_players

    @property
    def hand(self) -> int:
        return self.prize + self.num_cards

    @property
    def remaining(self) -> int:
        return self.prize + 2 * self.num_cards

    @property
    def points(self) -> int:
        return self.prize + 3 * self.num_cards

    @property
    def history(self) -> int:
        return self.points + self.num_players

    @property
    def round_size(self) -> int:
        n, p = self.num_cards, self.num_players
        return 2 * n + (p + 1) + (p - 1) * n

    # Offsets inside one round's block.
    @property
    def round_own_bid(self) -> int:
        return self.num_cards

    @property
    def round_winner(self) -> int:
        return 2 * self.num_cards

    @property
    def round_others(self) -> int:
        return 2 * self.num_cards + self.num_players + 1

    @property
    def size(self) -> int:
        return self.history + self.num_cards * self.round_size

    @staticmethod
    def for_vector(length: int, num_cards: int) -> "ObservationLayout":
        """The layout of an observation of ``length`` floats in a ``num_cards`` game.

        The size is linear in the number of players, which is how an agent that only
        sees the observation recovers it.
        """
        n = num_cards
        per_player = 2 + n + n * n
        rest = length - (1 + 3 * n + n * (n + 1))
        players, leftover = divmod(rest, per_player)
        if leftover or not 2 <= players <= 6:
            raise ValueError(f"a vector of length {length} is not a {n}-card Goofspiel observation")
        return ObservationLayout(n, players)


@dataclass(frozen=True)
class RoundRecord:
    """One finished round as the engine saw it: prize and bids are card values (1-based);
    ``winner`` is a player id, or ``None`` when the highest bid was tied."""

    prize: int
    bids: tuple[int, ...]
    winner: int | None


class GoofspielRules(Rules):
    """Configuration of a Goofspiel game; see :mod:`hiddenhand.envs.goofspiel_v0`."""

    name = "goofspiel"
    max_players = 6

    def __init__(
        self,
        num_cards: int = 13,
        num_players: int = 2,
        prize_order: str = "random",
        scoring: str = "point_difference",
        reveal_bids: bool = True,
    ) -> None:
        super().__init__(
            num_cards=check_int("num_cards", num_cards, 2, 13),
            num_players=check_int("num_players", num_players, 2, 6),
            prize_order=check_choice("prize_order", prize_order, PRIZE_ORDERS),
            scoring=check_choice("scoring", scoring, SCORINGS),
            reveal_bids=check_bool("reveal_bids", reveal_bids),
        )
        self.num_cards: int = self.params["num_cards"]
        self.prize_order: str = self.params["prize_order"]
        self.scoring: str = self.params["scoring"]
        self.reveal_bids: bool = self.params["reveal_bids"]
        self._num_players: int = self.params["num_players"]
        self.utility_sum = None if self.scoring == "total_points" else 0.0
        self.layout = ObservationLayout(self.num_cards, self._num_players)
        self.total_prize = self.num_cards * (self.num_cards + 1) // 2

    @property
    def num_players(self) -> int:
        return self._num_players

    @property
    def num_actions(self) -> int:
        return self.num_cards

    @property
    def observation_size(self) -> int:
        return self.layout.size

    @property
    def max_chance_outcomes(self) -> int:
        return self.num_cards if self.prize_order == "random" else 0

    @property
    def max_game_length(self) -> int:
        return (self.num_cards - 1) * self._num_players

    @property
    def utility_range(self) -> tuple[float, float]:
        if self.scoring == "win_loss":
            return (-1.0, 1.0)
        if self.scoring == "total_points":
            return (0.0, float(self.total_prize))
        # Own points minus the mean of the others': extreme when one player takes all.
        others = self._num_players - 1
        return (-self.total_prize / others, float(self.total_prize))

    def new_initial_state(self) -> "GoofspielState":
        return GoofspielState(self)

    def prompt(self, state: State, player: int) -> str:
        return "Make a bid! Enter a card from your hand (A = 1, J = 11, Q = 12, K = 13):"

    def parse_action(self, text: str, state: State, player: int) -> int:
        """A card typed as its number or as A, J, Q, K."""
        word = text.strip().lower()
        card = FACE_NAMES.get(word) or (int(word) if word.isdecimal() else None)
        hand = [a + 1 for a in state.legal_actions(player)]
        if card is None:
            raise ValueError(f"{text.strip()!r} is not a card; type a number from your hand: {hand}")
        if card not in hand:
            raise ValueError(f"{card} is not in your hand; your hand: {hand}")
        return card - 1


class GoofspielState(State):
    """A Goofspiel position. Bids of one round are consecutive turns (player 0 first)
    whose cards stay hidden until everyone has bid."""

    def __init__(self, rules: GoofspielRules) -> None:
        self.rules = rules
        n, players = rules.num_cards, rules.num_players
        self.hands = np.ones((players, n), dtype=np.int8)
        self.prizes_left: list[int] = list(range(1, n + 1))
        self.prize: int | None = None
        self.bids: list[int] = []
        self.points = [0] * players
        self.history: list[RoundRecord] = []
        self._obs = np.zeros((players, rules.layout.size), dtype=np.float32)
        self._obs[:, rules.layout.reveal] = float(rules.reveal_bids)
        self._obs[np.arange(players), rules.layout.seat + np.arange(players)] = 1.0
        self._obs[:, rules.layout.hand : rules.layout.hand + n] = 1.0
        self._obs[:, rules.layout.remaining : rules.layout.remaining + n] = 1.0
        self._player = CHANCE
        self._returns = [0.0] * players
        self._next_prize()

    # ----------------------------------------------------------------- protocol
    def current_player(self) -> int:
        return self._player

    def legal_actions(self, player: int | None = None) -> list[int]:
        if player is None:
            player = self._player
        if self._player == CHANCE:
            return [p - 1 for p in self.prizes_left] if player == CHANCE else []
        if self._player == TERMINAL or player < 0 or player < len(self.bids):
            return []
        return np.flatnonzero(self.hands[player]).tolist()

    def action_mask(self, player: int) -> np.ndarray:
        if self._player < 0 or player < len(self.bids):
            return np.zeros(self.rules.num_cards, dtype=np.int8)
        return self.hands[player].copy()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self._player != CHANCE:
            return []
        p = 1.0 / len(self.prizes_left)
        return [(prize - 1, p) for prize in self.prizes_left]

    def apply(self, action: int) -> None:
        player = self._player
        if player == CHANCE:
            if action + 1 not in self.prizes_left:
                raise self._illegal(action, self.legal_actions())
            self._turn_prize(int(action) + 1)
            return
        if player == TERMINAL:
            raise self._illegal(action, [])
        if not (0 <= action < self.rules.num_cards) or not self.hands[player, action]:
            raise self._illegal(action, self.legal_actions())
        self.hands[player, action] = 0
        self._obs[player, self.rules.layout.hand + action] = 0.0
        self.bids.append(int(action) + 1)
        if len(self.bids) < self.rules.num_players:
            self._player = player + 1
        else:
            self._resolve_round()

    def returns(self) -> list[float]:
        return list(self._returns)

    def clone(self) -> "GoofspielState":
        other = object.__new__(GoofspielState)
        other.__dict__.update(self.__dict__)
        other.hands = self.hands.copy()
        other.prizes_left = list(self.prizes_left)
        other.bids = list(self.bids)
        other.points = list(self.points)
        other.history = list(self.history)
        other._obs = self._obs.copy()
        other._returns = list(self._returns)
        return other

    def observation_tensor(self, player: int) -> np.ndarray:
        return self._obs[player].copy()

    def information_state_string(self, player: int) -> str:
        hand = " ".join(str(a + 1) for a in np.flatnonzero(self.hands[player]))
        parts = [f"p{player} hand:{hand}"]
        for record in self.history:
            parts.append(self._round_text(record, player))
        if self.prize is not None:
            parts.append(f"prize:{self.prize}")
        return " | ".join(parts)

    def action_to_string(self, player: int, action: int) -> str:
        return f"Prize {action + 1}" if player == CHANCE else f"Bid {action + 1}"

    def render(self, viewer: int | None = None) -> str:
        rules = self.rules
        name = _namer(viewer)
        lines = []
        done = len(self.history)
        if self.prize is not None:
            lines.append(f"Round {done + 1} of {rules.num_cards} · prize {self.prize}♦")
        scores = ", ".join(f"{name(p)} {pts}" for p, pts in enumerate(self.points))
        lines.append(f"Scores: {scores}")
        if self._player == TERMINAL:
            lines += [f"Round {k}: " + self._round_text(r, viewer, words=True) for k, r in enumerate(self.history, 1)]
        elif self.history:
            lines.append("Last round: " + self._round_text(self.history[-1], viewer, words=True))
        for p in range(rules.num_players):
            cards = [str(a + 1) for a in np.flatnonzero(self.hands[p])]
            if viewer is None or p == viewer:
                owner = "Your" if p == viewer else f"player_{p}"
                lines.append(f"{owner} hand: " + (" | ".join(c + "♣" for c in cards) or "empty"))
            else:
                lines.append(f"player_{p}: {len(cards)} cards remaining")
        if self.prizes_left:
            order = sorted(self.prizes_left) if rules.prize_order == "random" else self._prize_queue()
            lines.append("Prizes to come: " + " ".join(f"{p}♦" for p in order))
        if self._player == TERMINAL:
            lines.append("Final returns: " + ", ".join(f"{name(p)} {r:+g}" for p, r in enumerate(self._returns)))
        return "\n".join(lines)

    # ----------------------------------------------------------------- mechanics
    def _prize_queue(self) -> list[int]:
        if self.rules.prize_order == "descending":
            return sorted(self.prizes_left, reverse=True)
        return sorted(self.prizes_left)

    def _next_prize(self) -> None:
        """Turn the next prize if it is determined, else hand the move to chance."""
        if not self.prizes_left:
            self._finish()
        elif self.rules.prize_order == "random" and len(self.prizes_left) > 1:
            self._player = CHANCE
        else:
            self._turn_prize(self._prize_queue()[0])

    def _turn_prize(self, prize: int) -> None:
        layout = self.rules.layout
        self.prizes_left.remove(prize)
        self.prize = prize
        idx = prize - 1
        self._obs[:, layout.prize + idx] = 1.0
        self._obs[:, layout.remaining + idx] = 0.0
        self._obs[:, layout.history + len(self.history) * layout.round_size + idx] = 1.0
        if not self.prizes_left:
            # One card left in every hand: the last round plays itself.
            self.bids = [int(np.flatnonzero(h)[0]) + 1 for h in self.hands]
            self.hands[:] = 0
            self._obs[:, layout.hand : layout.hand + self.rules.num_cards] = 0.0
            self._resolve_round()
        else:
            self._player = 0

    def _resolve_round(self) -> None:
        rules, layout = self.rules, self.rules.layout
        players = rules.num_players
        bids, prize = self.bids, self.prize
        top = max(bids)
        winner = bids.index(top) if bids.count(top) == 1 else None
        if winner is not None:
            self.points[winner] += prize
        base = layout.history + len(self.history) * layout.round_size
        obs = self._obs
        for q in range(players):
            obs[q, layout.prize + prize - 1] = 0.0
            obs[q, base + layout.round_own_bid + bids[q] - 1] = 1.0
            slot = players if winner is None else (winner - q) % players
            obs[q, base + layout.round_winner + slot] = 1.0
            for p in range(players):
                rel = (p - q) % players
                obs[q, layout.points + rel] = self.points[p] / rules.total_prize
                if rules.reveal_bids and rel:
                    obs[q, base + layout.round_others + (rel - 1) * rules.num_cards + bids[p] - 1] = 1.0
        self.history.append(RoundRecord(prize, tuple(bids), winner))
        self.bids = []
        self.prize = None
        self._next_prize()

    def _finish(self) -> None:
        self._player = TERMINAL
        self._returns = scores_to_returns(self.points, self.rules.scoring)

    def _round_text(self, record: RoundRecord, viewer: int | None, words: bool = False) -> str:
        """One finished round as ``viewer`` knows it (all bids, or only their own when hidden)."""
        name = _namer(viewer)
        if viewer is None or self.rules.reveal_bids:
            shown = range(len(record.bids))
        else:
            shown = [viewer]
        if not words:
            bids = ",".join(f"p{p}={record.bids[p]}" for p in shown)
            won = "tie" if record.winner is None else f"p{record.winner}"
            return f"prize {record.prize}: {bids} -> {won}"
        bids = ", ".join(f"{name(p)} bid {record.bids[p]}" for p in shown)
        outcome = (
            "tie, the prize is discarded"
            if record.winner is None
            else f"{name(record.winner)} {'take' if record.winner == viewer else 'takes'} {record.prize}♦"
        )
        return f"prize {record.prize}♦: {bids}; {outcome}"


def _namer(viewer: int | None):
    """How the table names a player to ``viewer``: "you", or ``player_k``."""
    return lambda p: "you" if p == viewer else f"player_{p}"


def scores_to_returns(points: list[int], scoring: str) -> list[float]:
    """Final returns from the points each player won, under ``scoring``."""
    players = len(points)
    if scoring == "total_points":
        return [float(p) for p in points]
    if scoring == "point_difference":
        total = sum(points)
        return [p - (total - p) / (players - 1) for p in points]
    best = max(points)
    winners = [p == best for p in points]
    num_winners = sum(winners)
    if num_winners == players:
        return [0.0] * players
    return [1.0 / num_winners if w else -1.0 / (players - num_winners) for w in winners]


@dataclass(frozen=True)
class GoofspielView:
    """A Goofspiel observation decoded: what one player knows, seats relative to them.

    ``others_hands[k - 1]`` are the cards seat ``k`` held when the current round began (a
    bid already made this round is still hidden), or ``None`` when bids are never revealed.
    """

    num_cards: int
    num_players: int
    reveal_bids: bool
    prize: int | None
    hand: tuple[int, ...]
    prizes_to_come: tuple[int, ...]
    points: tuple[int, ...]
    rounds_played: int
    others_hands: tuple[tuple[int, ...] | None, ...]

    @property
    def cards_left(self) -> int:
        return len(self.hand)

    @staticmethod
    def decode(vector: np.ndarray, num_cards: int) -> "GoofspielView":
        layout = ObservationLayout.for_vector(len(vector), num_cards)
        n, players = layout.num_cards, layout.num_players
        cards = lambda lo: tuple(int(i) + 1 for i in np.flatnonzero(vector[lo : lo + n]))  # noqa: E731
        prize = cards(layout.prize)
        total = n * (n + 1) // 2
        points = tuple(int(round(float(x) * total)) for x in vector[layout.points : layout.points + players])
        blocks = vector[layout.history :].reshape(n, layout.round_size)
        played = int(blocks[:, layout.round_winner : layout.round_winner + players + 1].sum())
        reveal = bool(vector[layout.reveal])
        others: list[tuple[int, ...] | None] = []
        for seat in range(1, players):
            if not reveal:
                others.append(None)
                continue
            lo = layout.round_others + (seat - 1) * n
            spent = blocks[:played, lo : lo + n].sum(axis=0)
            others.append(tuple(int(i) + 1 for i in np.flatnonzero(spent == 0)))
        return GoofspielView(
            num_cards=n,
            num_players=players,
            reveal_bids=reveal,
            prize=prize[0] if prize else None,
            hand=cards(layout.hand),
            prizes_to_come=cards(layout.remaining),
            points=points,
            rounds_played=played,
            others_hands=tuple(others),
        )
