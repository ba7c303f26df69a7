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
from functools import cache

import numpy as np

from hiddenhand.core import CHANCE, TERMINAL, Rules, State
from hiddenhand.layout import ActionCodec, Layout
from hiddenhand.picture import Card, Row, Table
from hiddenhand.validation import check_bool, check_choice, check_int, integer_text, named

PRIZE_ORDERS = ("random", "ascending", "descending")
SCORINGS = ("point_difference", "win_loss", "total_points")
OBSERVATIONS = ("full", "markov")
FACE_NAMES = {"a": 1, "j": 11, "q": 12, "k": 13}


class ObservationLayout(Layout):
    """A Goofspiel observation vector (see ``goofspiel_v0``): its pieces, in order, and in
    ``round`` the pieces of one block of its history.

    Seats are relative to the observer (index 0 is the observer, index k the player k
    seats after them), so one policy serves every seat; the observer's own seat number is
    there too, so that a policy that does depend on it (a CFR policy per player) can be
    told apart.
    """

    def __init__(self, num_cards: int, num_players: int) -> None:
        n, p = num_cards, num_players
        self.num_players = p
        self.round = Layout([("prize", n), ("own_bid", n), ("winner", p + 1), ("others", (p - 1, n))])
        super().__init__(
            [
                ("reveal", ()),
                ("seat", p),
                ("prize", n),
                ("hand", n),
                ("prizes_to_come", n),
                ("points", p),
                ("history", (n, self.round.size)),
            ]
        )

    @staticmethod
    @cache
    def for_vector(length: int, num_cards: int) -> ObservationLayout:
        """The layout of an observation of ``length`` floats in a ``num_cards`` game.

        The size grows with the number of players, which is how an agent that only sees
        the observation recovers it.
        """
        for players in range(GoofspielRules.min_players, GoofspielRules.max_players + 1):
            layout = ObservationLayout(num_cards, players)
            if layout.size == length:
                return layout
        raise ValueError(f"a vector of length {length} is not a {num_cards}-card Goofspiel observation")


class MarkovLayout(Layout):
    """The ``observation="markov"`` vector (see ``goofspiel_v0``): the position and nothing
    of how it was reached. With revealed bids and point-difference (or total-points)
    scoring, what is still to be won depends on the hands, the prizes left and the prize on
    the table only, so an agent that sees this vector is Markov by construction, and its
    exploitability is computed exactly over positions
    (:mod:`hiddenhand.solvers.goofspiel.histories`). Seats are relative to the observer;
    ``others`` are the hands the other seats held when the round began (a bid made this
    round stays hidden)."""

    def __init__(self, num_cards: int, num_players: int) -> None:
        n = num_cards
        self.num_players = num_players
        super().__init__([("prize", n), ("hand", n), ("others", (num_players - 1, n)), ("prizes_to_come", n)])

    @staticmethod
    @cache
    def for_vector(length: int, num_cards: int) -> MarkovLayout | None:
        """The layout of a Markov observation of ``length`` floats, or ``None`` if no number
        of players gives that length (``num_cards * (players + 2)``)."""
        players, rest = divmod(length, num_cards)
        if rest or not GoofspielRules.min_players <= players - 2 <= GoofspielRules.max_players:
            return None
        return MarkovLayout(num_cards, players - 2)


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
        self.layout = ObservationLayout(self.num_cards, self._num_players)
        self.markov_layout = MarkovLayout(self.num_cards, self._num_players)
        self.actions = ActionCodec([("bid", range(1, self.num_cards + 1))])
        self.total_prize = self.num_cards * (self.num_cards + 1) // 2

    @property
    def num_players(self) -> int:
        return self._num_players

    @property
    def num_actions(self) -> int:
        return self.actions.size

    @property
    def observation_size(self) -> int:
        return (self.markov_layout if self.markov else self.layout).size

    @property
    def information_state_size(self) -> int:
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

    def new_initial_state(self) -> GoofspielState:
        return GoofspielState(self)

    def position_observations(
        self, hand: np.ndarray, other: np.ndarray, prizes: np.ndarray, upcard: np.ndarray, seat: int
    ) -> dict[str, np.ndarray]:
        """The observations of many two-player positions at once, as a player would get
        them when bidding on ``upcard``: what exact exploitability shows a Markov agent.

        Each argument has one entry per position: ``hand`` (the player's), ``other`` (the
        opponent's hand) and ``prizes`` (the prizes still to come, without the upcard) are
        bitmasks (bit ``c - 1`` for card ``c``), ``upcard`` a card index (``c - 1``); ``seat``
        is the player's seat. A Markov observation shows exactly the position. A full one
        also shows a history, which the position does not determine: the one built here
        plays the spent cards in increasing order round by round (each side's lowest spent
        card on the lowest spent prize, and so on), which is a legal history of the
        position, so an agent that reads neither the score nor the history (which it
        declares) answers as it would after any other. Returns ``{"observation": (N, size),
        "action_mask": (N, num_cards)}`` (the engine's own encoding: the tests compare them).
        """
        if self.num_players != 2:
            raise ValueError(f"positions are two-player; {self!r} has {self.num_players} players")
        n = self.num_cards
        bits = (np.asarray(hand)[:, None] >> np.arange(n)) & 1
        others = (np.asarray(other)[:, None] >> np.arange(n)) & 1
        to_come = (np.asarray(prizes)[:, None] >> np.arange(n)) & 1
        rows = np.arange(len(bits))
        mask = bits.astype(np.int8)
        if self.markov:
            obs, views = self.markov_layout.zeros(len(bits))
            views["others"][:, 0] = others
        else:
            obs, views = self.layout.zeros(len(bits))
            views["reveal"][:] = 1.0
            views["seat"][:, seat] = 1.0
            self._canonical_history(views, bits, others, to_come, upcard)
        views["prize"][rows, upcard] = 1.0
        views["hand"][:] = bits
        views["prizes_to_come"][:] = to_come
        return {"observation": obs, "action_mask": mask}

    def markov_observations(self, observations: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Full observations of this two-player game (rows of ``observations``) as the
        Markov observation (``observation="markov"``) shows the same positions: what lets an
        agent trained on the Markov observation sit in a game whose other seat reads the
        full one (Goofspiel's hard heuristic reads the score, which the Markov one hides).
        The position is a function of the full observation, so nothing is guessed."""
        views = [GoofspielView.decode(vector, self.num_cards) for vector in np.atleast_2d(observations["observation"])]
        if any(v.points is None for v in views) or not self.reveal_bids:
            raise ValueError("markov_observations needs full observations of a game with revealed bids")

        def bits(cards) -> int:
            return sum(1 << (c - 1) for c in cards)

        twin = GoofspielRules(**{**self.params, "observation": "markov"})
        return twin.position_observations(
            np.array([bits(v.hand) for v in views]),
            np.array([bits(v.others_hands[0]) for v in views]),
            np.array([bits(v.prizes_to_come) for v in views]),
            np.array([v.prize - 1 for v in views]),
            seat=0,
        )

    def _canonical_history(self, views, hand, other, to_come, upcard) -> None:
        """Fill the history and points of full observations (see :meth:`position_observations`):
        in round ``r`` the ``r``-th lowest spent prize, own card and opponent's card."""
        n = self.num_cards
        rows = np.arange(len(hand))
        spent_prizes = 1 - to_come
        spent_prizes[rows, upcard] = 0
        played = n - hand.sum(axis=1)
        if not (played == played[0]).all():
            raise ValueError("positions of one batch must have equal hand sizes")
        rounds = int(played[0])
        order = np.argsort(1 - np.stack([spent_prizes, 1 - hand, 1 - other]), axis=2, kind="stable")[..., :rounds]
        prize, mine, theirs = order  # (N, rounds) card indices, increasing
        block = self.layout.round.views(views["history"])
        won = np.sign(mine - theirs)
        for r in range(rounds):
            block["prize"][rows, r, prize[:, r]] = 1.0
            block["own_bid"][rows, r, mine[:, r]] = 1.0
            block["others"][rows, r, 0, theirs[:, r]] = 1.0
            block["winner"][rows, r, np.where(won[:, r] > 0, 0, np.where(won[:, r] < 0, 1, 2))] = 1.0
        block["prize"][rows, rounds, upcard] = 1.0  # the round being bid on
        points = (prize + 1)[:, None] * np.stack([won > 0, won < 0], axis=1)  # (N, 2, rounds)
        views["points"][:] = points.sum(axis=2) / self.total_prize

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
        self._obs, views = rules.layout.zeros(players)  # row p: player p's observation
        views["reveal"][:] = float(rules.reveal_bids)
        views["seat"][:] = np.eye(players)
        views["hand"][:] = 1.0
        views["prizes_to_come"][:] = 1.0
        self._player = CHANCE
        self._returns = [0.0] * players
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
        self._obs[player, self.rules.layout.offset("hand") + action] = (
            0.0  # by offset: views would cost more than a bid
        )
        self.bids.append(self.rules.actions.decode(int(action))[1])
        if len(self.bids) < self.rules.num_players:
            self._player = player + 1
        else:
            self._resolve_round()

    def returns(self) -> list[float]:
        return list(self._returns)

    def clone(self) -> GoofspielState:
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
        layout = self.rules.layout
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
        rules, layout = self.rules, self.rules.layout
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


@dataclass(frozen=True)
class GoofspielView:
    """A Goofspiel observation decoded: what one player knows, seats relative to them.

    ``others_hands[k - 1]`` are the cards seat ``k`` held when the current round began (a
    bid already made this round is still hidden), or ``None`` when bids are never revealed.
    ``points`` is ``None`` for a Markov observation (:class:`MarkovLayout`), which hides the
    score.
    """

    num_cards: int
    num_players: int
    reveal_bids: bool
    prize: int | None
    hand: tuple[int, ...]
    prizes_to_come: tuple[int, ...]
    points: tuple[int, ...] | None
    rounds_played: int
    others_hands: tuple[tuple[int, ...] | None, ...]

    @property
    def cards_left(self) -> int:
        return len(self.hand)

    @staticmethod
    def decode(vector: np.ndarray, num_cards: int) -> GoofspielView:
        """What an observation vector of a ``num_cards`` game says, full or Markov (told
        apart by its length)."""
        markov = MarkovLayout.for_vector(len(vector), num_cards)
        if markov is not None:
            return GoofspielView._decode_markov(markov.decode(vector), markov, num_cards)
        layout = ObservationLayout.for_vector(len(vector), num_cards)
        obs = layout.decode(vector)
        rounds = layout.round.decode(obs["history"])  # each piece with a leading round index
        played = int(rounds["winner"].sum())
        reveal = bool(obs["reveal"])
        prize = _cards(obs["prize"])
        total = num_cards * (num_cards + 1) // 2
        return GoofspielView(
            num_cards=num_cards,
            num_players=layout.num_players,
            reveal_bids=reveal,
            prize=prize[0] if prize else None,
            hand=_cards(obs["hand"]),
            prizes_to_come=_cards(obs["prizes_to_come"]),
            points=tuple(int(round(float(x) * total)) for x in obs["points"]),
            rounds_played=played,
            # A seat's hand: the cards its revealed bids have not spent.
            others_hands=tuple(
                _cards(spent == 0) if reveal else None for spent in rounds["others"][:played].sum(axis=0)
            ),
        )

    @staticmethod
    def _decode_markov(obs: dict, layout: MarkovLayout, num_cards: int) -> GoofspielView:
        prize, hand = _cards(obs["prize"]), _cards(obs["hand"])
        return GoofspielView(
            num_cards=num_cards,
            num_players=layout.num_players,
            reveal_bids=True,
            prize=prize[0] if prize else None,
            hand=hand,
            prizes_to_come=_cards(obs["prizes_to_come"]),
            points=None,
            rounds_played=num_cards - len(hand),
            others_hands=tuple(_cards(cards) for cards in obs["others"]),
        )


def position_keys(vectors: np.ndarray, num_cards: int, score: bool = True) -> np.ndarray:
    """What many observations (rows of ``vectors``, full or Markov) say about the position,
    as integer rows: the prize on the table (-1 if none), the observer's hand and each other
    seat's hand as bitmasks (-1 when bids are hidden), and with ``score`` the points of
    every seat and the rounds played. Two observations with equal rows are the same
    decision to an agent that reads only these (the heuristics), which is how it answers a
    batch once per distinct position."""
    vectors = np.asarray(vectors)
    n = num_cards
    weights = 1 << np.arange(n)
    markov = MarkovLayout.for_vector(vectors.shape[1], n)
    layout = markov or ObservationLayout.for_vector(vectors.shape[1], n)
    views = layout.views(vectors)
    prize = np.where(views["prize"].any(axis=1), views["prize"].argmax(axis=1), -1)
    hand = (views["hand"] > 0.5) @ weights
    if markov is not None:
        others = (views["others"] > 0.5) @ weights
        columns = [prize[:, None], hand[:, None], others]
        if score:
            columns.append(np.full((len(vectors), markov.num_players + 1), -1))
        return np.concatenate(columns, axis=1).astype(np.int64)
    rounds = layout.round.views(views["history"])
    spent = rounds["others"].sum(axis=1) > 0.5  # (N, P - 1, n): each other seat's revealed bids
    others = np.where(views["reveal"][:, None] > 0.5, (~spent) @ weights, -1)
    columns = [prize[:, None], hand[:, None], others]
    if score:
        total = n * (n + 1) // 2
        columns += [np.rint(views["points"] * total), rounds["winner"].sum(axis=(1, 2))[:, None]]
    return np.concatenate(columns, axis=1).astype(np.int64)


def _cards(one_hot: np.ndarray) -> tuple[int, ...]:
    """The cards (1-based) marked in a vector over the cards."""
    return tuple(int(i) + 1 for i in np.flatnonzero(one_hot))
