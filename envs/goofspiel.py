"""Goofspiel rules engine: configuration and states.

The environment documentation (rules, observation layout, arguments) is the docstring of
:mod:`hiddenhand.envs.goofspiel_v0`; this module holds the logic it documents.

Observations are kept up to date incrementally as the game is played (a few element
writes per move) instead of being rebuilt from the history on every request: the AEC env
asks for one on every decision, and rebuilding a 13-card observation from scratch would
cost more than the rest of a step. The observation vectors' layouts, their decoding and
the encoders of many positions at once are the codec's (:mod:`hiddenhand.envs.goofspiel_observation`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hiddenhand.core import CHANCE, TERMINAL, Rules, State
from hiddenhand.envs import goofspiel_observation
from hiddenhand.envs.goofspiel_observation import PLAYERS, MarkovLayout, ObservationLayout
from hiddenhand.layout import ActionCodec
from hiddenhand.picture import Card, Row, Table
from hiddenhand.validation import check_bool, check_choice, check_int, integer_text, named

PRIZE_ORDERS = ("random", "ascending", "descending")
SCORINGS = ("point_difference", "win_loss", "total_points")
OBSERVATIONS = ("full", "markov")
FACE_NAMES = {"a": 1, "j": 11, "q": 12, "k": 13}


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
    max_players = PLAYERS[-1]

    def __init__(
        self,
        num_cards: int = 13,
        num_players: int = 2,
        prize_order: str = "random",
        scoring: str = "point_difference",
        reveal_bids: bool = True,
        observation: str = "full",
    ) -> None:
        super().__init__(
            num_cards=check_int("num_cards", num_cards, 2, 13),
            num_players=check_int("num_players", num_players, 2, 6),
            prize_order=check_choice("prize_order", prize_order, PRIZE_ORDERS),
            scoring=check_choice("scoring", scoring, SCORINGS),
            reveal_bids=check_bool("reveal_bids", reveal_bids),
            observation=check_choice("observation", observation, OBSERVATIONS),
        )
        self.markov = self.params["observation"] == "markov"
        if self.markov and (not self.params["reveal_bids"] or self.params["scoring"] == "win_loss"):
            raise ValueError(
                f"{named('observation', 'markov')} needs {named('reveal_bids', True)} and point_difference or "
                f"total_points {named('scoring')} (the position is then all that matters); got "
                f"{named('reveal_bids', self.params['reveal_bids'])}, {named('scoring', self.params['scoring'])}"
            )
        # The Markov observation forgets the past: the information state is the full vector.
        self.observation_is_information_state = not self.markov
        self.num_cards: int = self.params["num_cards"]
        self.prize_order: str = self.params["prize_order"]
        self.scoring: str = self.params["scoring"]
        self.reveal_bids: bool = self.params["reveal_bids"]
        self._num_players: int = self.params["num_players"]
        self.utility_sum = None if self.scoring == "total_points" else 0.0
        self.information_layout = ObservationLayout(self.num_cards, self._num_players)  # the full observation
        self.markov_layout = MarkovLayout(self.num_cards, self._num_players)
        self.layout = self.markov_layout if self.markov else self.information_layout
        self.actions = ActionCodec([("bid", range(1, self.num_cards + 1))])
        self.total_prize = self.num_cards * (self.num_cards + 1) // 2
        # Where the rest of a game depends on the position alone (bids shown, points added up),
        # the bits of a round-state key below the prize: every hand, then the prizes to come
        # (``GoofspielState.round_state``); 0 where no round-state is marked (hidden bids,
        # win/loss, or a key that would pass 62 bits: 4 players with 13 cards).
        bits = self.num_cards * (self._num_players + 1)
        marked = self.reveal_bids and self.scoring != "win_loss" and bits + 4 <= 62
        self.round_state_bits = bits if marked else 0

    @property
    def num_players(self) -> int:
        return self._num_players

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

    def new_initial_state(self) -> GoofspielState:
        return GoofspielState(self)

    def markov_observations(self, observations: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """:func:`~hiddenhand.envs.goofspiel_observation.markov_observations` of these rules:
        full observations as the Markov observation shows the same positions (a method, so
        that ``Translated(agent, rules.markov_observations)`` seats a Markov agent here)."""
        return goofspiel_observation.markov_observations(self, observations)

    def canonical(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, ...] | None:
        """The Markov observation's interleaving patterns (see :meth:`Rules.canonical`); the
        full observation shows the history, whose cards cannot be renamed, and declares none."""
        if not self.markov:
            return None
        return goofspiel_observation.canonical_markov(observations, masks, self.num_cards)

    def prompt(self, state: State, player: int) -> str:
        return "Make a bid! Enter a card from your hand (A = 1, J = 11, Q = 12, K = 13):"

    def parse_action(self, text: str, state: State, player: int) -> int:
        """A card typed as its number or as A, J, Q, K."""
        word = text.strip().lower()
        card = FACE_NAMES.get(word) or integer_text(word)
        hand = [self.actions.decode(a)[1] for a in state.legal_actions(player)]
        if card is None:
            raise ValueError(f"{text.strip()!r} is not a card; type a number from your hand: {hand}")
        if card not in hand:
            raise ValueError(f"{card} is not in your hand; your hand: {hand}")
        return self.actions.encode("bid", card)


class GoofspielState(State):
    """A Goofspiel position. Bids of one round are consecutive turns (player 0 first)
    whose cards stay hidden until everyone has bid. ``hands[p]`` is player ``p``'s
    action mask: card ``c`` is action ``c - 1``."""

    def __init__(self, rules: GoofspielRules) -> None:
        self.rules = rules
        n, players = rules.num_cards, rules.num_players
        self.hands = np.ones((players, n), dtype=np.int8)
        self.prizes_left: list[int] = list(range(1, n + 1))
        self.prize: int | None = None
        self.bids: list[int] = []
        self.points = [0] * players
        self.history: list[RoundRecord] = []
        self._obs, views = rules.information_layout.zeros(players)  # row p: player p's observation
        views["reveal"][:] = float(rules.reveal_bids)
        views["seat"][:] = np.eye(players)
        views["hand"][:] = 1.0
        views["prizes_to_come"][:] = 1.0
        self._player = CHANCE
        self._next_prize()

    # ----------------------------------------------------------------- protocol
    def current_player(self) -> int:
        return TERMINAL if self._over else self._player

    def legal_actions(self, player: int | None = None) -> list[int]:
        mover = self.current_player()
        if player is None:
            player = mover
        if mover == CHANCE:
            return [p - 1 for p in self.prizes_left] if player == CHANCE else []
        if mover == TERMINAL or player < 0 or player < len(self.bids):
            return []
        return np.flatnonzero(self.hands[player]).tolist()

    def action_mask(self, player: int) -> np.ndarray:
        if self.current_player() < 0 or player < len(self.bids):
            return np.zeros(self.rules.num_cards, dtype=np.int8)
        return self.hands[player].copy()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self._player != CHANCE:
            return []
        p = 1.0 / len(self.prizes_left)
        return [(prize - 1, p) for prize in self.prizes_left]

    def apply(self, action: int) -> None:
        player = self.current_player()
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
        self._obs[player, self.rules.information_layout.offset("hand") + action] = (
            0.0  # by offset: views would cost more than a bid
        )
        self.bids.append(self.rules.actions.decode(int(action))[1])
        if len(self.bids) < self.rules.num_players:
            self._player = player + 1
        else:
            self._resolve_round()

    def round_state(self) -> int:
        """At a round's start (the prize turned, nobody has bid), where the bids are shown
        and the scoring adds points up (the return still to come then depends on nothing
        but the position): every hand's cards, then the prizes to come, as bits (card ``c``
        of player ``p`` is bit ``p * num_cards + c - 1``), and above them the prize on the
        table minus one. -1 elsewhere, and where the key would pass 62 bits (4 players
        with 13 cards)."""
        bits = self.rules.round_state_bits
        if not bits or self.current_player() != 0 or self.bids:
            return -1
        prizes = (int(c in self.prizes_left) for c in range(1, self.rules.num_cards + 1))
        cards = [*self.hands.ravel().tolist(), *prizes]
        return sum(b << k for k, b in enumerate(cards)) | (self.prize - 1) << bits

    def banked(self) -> list[float]:
        """The points won so far as the return counts them, where the scoring adds them up
        (``point_difference``, ``total_points``); ``win_loss`` settles nothing before the end."""
        if self.rules.scoring == "win_loss":
            return super().banked()
        return scores_to_returns(self.points, self.rules.scoring)

    def clone(self) -> GoofspielState:
        other = object.__new__(GoofspielState)
        other.__dict__.update(self.__dict__)
        other.hands = self.hands.copy()
        other.prizes_left = list(self.prizes_left)
        other.bids = list(self.bids)
        other.points = list(self.points)
        other.history = list(self.history)
        other._obs = self._obs.copy()
        return other

    def observation_tensor(self, player: int) -> np.ndarray:
        if self.rules.markov:
            return self._markov_observation(player)
        return self._obs[player].copy()

    def information_state_tensor(self, player: int) -> np.ndarray:
        return self._obs[player].copy()

    def _markov_observation(self, player: int) -> np.ndarray:
        """The position as ``player`` sees it (:class:`MarkovLayout`): the others' hands as
        they were when the round began, so that a bid made this round stays hidden."""
        players = self.rules.num_players
        obs, views = self.rules.markov_layout.zeros()
        hands = self.hands.astype(np.float32)
        for seat, card in enumerate(self.bids):  # bids already made this round, seat order
            if seat != player:
                hands[seat, card - 1] = 1.0
        views["hand"][:] = hands[player]
        views["others"][:] = hands[[(player + k) % players for k in range(1, players)]]
        if self.prize is not None:
            views["prize"][self.prize - 1] = 1.0
        views["prizes_to_come"][[p - 1 for p in self.prizes_left]] = 1.0
        return obs

    def information_state_string(self, player: int) -> str:
        hand = " ".join(str(a + 1) for a in np.flatnonzero(self.hands[player]))
        parts = [f"p{player} hand:{hand}"]
        for record in self.history:
            parts.append(self._round_text(record, player))
        if self.prize is not None:
            parts.append(f"prize:{self.prize}")
        return " | ".join(parts)

    def action_to_string(self, player: int, action: int) -> str:
        if player == CHANCE:
            return f"Prize {action + 1}"
        kind, card = self.rules.actions.decode(action)
        return f"{kind.capitalize()} {card}"

    def render(self, viewer: int | None = None) -> str:
        rules = self.rules
        name = self._namer(viewer)
        lines = []
        done = len(self.history)
        if self.prize is not None:
            lines.append(f"Round {done + 1} of {rules.num_cards} · prize {self.prize}♦")
        scores = ", ".join(f"{name(p)} {pts}" for p, pts in enumerate(self.points))
        lines.append(f"Scores: {scores}")
        if self._over:
            lines += [f"Round {k}: " + self._round_text(r, viewer, words=True) for k, r in enumerate(self.history, 1)]
        elif self.history:
            lines.append("Last round: " + self._round_text(self.history[-1], viewer, words=True))
        for p in range(rules.num_players):
            cards = [str(a + 1) for a in np.flatnonzero(self.hands[p])]
            if viewer is None or p == viewer:
                owner = "Your" if p == viewer else name(p)
                lines.append(f"{owner} hand: " + (" | ".join(c + "♣" for c in cards) or "empty"))
            else:
                lines.append(f"{name(p)}: {len(cards)} cards remaining")
        if self.prizes_left:
            order = sorted(self.prizes_left) if rules.prize_order == "random" else self._prize_queue()
            lines.append("Prizes to come: " + " ".join(f"{p}♦" for p in order))
        if self._over:
            lines.append("Final returns: " + ", ".join(f"{name(p)} {r:+g}" for p, r in enumerate(self._returns)))
        return "\n".join(lines)

    def table(self, viewer: int | None = None) -> Table:
        """The prize, then every player: their hand (face down to another viewer, as the text
        gives only its size), the card bid this round (face down until the reveal, to anyone
        but the bidder) and their points; the last round and the prizes to come below."""
        rules, name = self.rules, self._namer(viewer)
        mover = self.current_player()
        title = f"Goofspiel · round {len(self.history) + 1} of {rules.num_cards}" if not self._over else "Goofspiel"
        prize = (Card(f"{self.prize}♦"),) if self.prize is not None and not self._over else ()
        rows = [Row("Prize", prize)]
        for p in range(rules.num_players):
            seen = viewer is None or p == viewer
            hand = tuple(Card(f"{a + 1}♣", seen) for a in np.flatnonzero(self.hands[p]))
            bid = (Card(f"{self.bids[p]}♣", seen),) if p < len(self.bids) else ()
            rows.append(Row(name(p), hand, bid, f"{self.points[p]} points", to_move=p == mover))
        caption = []
        if self.history:
            caption.append("Last round: " + self._round_text(self.history[-1], viewer, words=True))
        if self.prizes_left:
            order = sorted(self.prizes_left) if rules.prize_order == "random" else self._prize_queue()
            caption.append("Prizes to come: " + " ".join(f"{p}♦" for p in order))
        if self._over:
            caption.append("Final returns: " + ", ".join(f"{name(p)} {r:+g}" for p, r in enumerate(self._returns)))
        return Table(title, tuple(rows), tuple(caption), slots=rules.num_cards, headings=("hand", "bid this round"))

    # ----------------------------------------------------------------- mechanics
    def _prize_queue(self) -> list[int]:
        if self.rules.prize_order == "descending":
            return sorted(self.prizes_left, reverse=True)
        return sorted(self.prizes_left)

    def _next_prize(self) -> None:
        """Turn the next prize if it is determined, else hand the move to chance."""
        if not self.prizes_left:
            self._finish(scores_to_returns(self.points, self.rules.scoring))
        elif self.rules.prize_order == "random" and len(self.prizes_left) > 1:
            self._player = CHANCE
        else:
            self._turn_prize(self._prize_queue()[0])

    def _turn_prize(self, prize: int) -> None:
        layout = self.rules.information_layout
        self.prizes_left.remove(prize)
        self.prize = prize
        views = layout.views(self._obs)
        views["prize"][:, prize - 1] = 1.0
        views["prizes_to_come"][:, prize - 1] = 0.0
        layout.round.views(views["history"][:, len(self.history)])["prize"][:, prize - 1] = 1.0  # this round's block
        if not self.prizes_left:
            # One card left in every hand: the last round plays itself.
            self.bids = [int(np.flatnonzero(h)[0]) + 1 for h in self.hands]
            self.hands[:] = 0
            views["hand"][:] = 0.0
            self._resolve_round()
        else:
            self._player = 0

    def _resolve_round(self) -> None:
        rules, layout = self.rules, self.rules.information_layout
        players = rules.num_players
        bids, prize = self.bids, self.prize
        top = max(bids)
        winner = bids.index(top) if bids.count(top) == 1 else None
        if winner is not None:
            self.points[winner] += prize
        views = layout.views(self._obs)
        views["prize"][:, prize - 1] = 0.0
        block = layout.round.views(views["history"][:, len(self.history)])  # this round's block, every player's
        for q in range(players):
            block["own_bid"][q, bids[q] - 1] = 1.0
            block["winner"][q, players if winner is None else (winner - q) % players] = 1.0
            for p in range(players):
                rel = (p - q) % players
                views["points"][q, rel] = self.points[p] / rules.total_prize
                if rules.reveal_bids and rel:
                    block["others"][q, rel - 1, bids[p] - 1] = 1.0
        self.history.append(RoundRecord(prize, tuple(bids), winner))
        self.bids = []
        self.prize = None
        self._next_prize()

    def _round_text(self, record: RoundRecord, viewer: int | None, words: bool = False) -> str:
        """One finished round as ``viewer`` knows it (all bids, or only their own when hidden)."""
        name = self._namer(viewer)
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
