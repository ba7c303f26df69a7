"""Goofspiel's observation codec: the vectors' layouts, their decoding, and encoders in bulk.

The rules engine (:mod:`hiddenhand.envs.goofspiel`) writes each state's observation
incrementally through these layouts; everything that reads an observation without a
state (the heuristics, the equilibrium agent, the tables of the Markov learners) decodes
it here, and the exact measures over positions (:mod:`hiddenhand.solvers.goofspiel.positions`)
build the observations of millions of positions here at once, without playing to them.
The vectors are documented in :mod:`hiddenhand.envs.goofspiel_v0`. Nothing here imports
the engine: a codec function takes the rules as an argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
from numba import njit

from hiddenhand.layout import Layout

PLAYERS = range(2, 7)
"""The numbers of players Goofspiel takes: an observation's length tells them apart."""


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
        for players in PLAYERS:
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
        if rest or players - 2 not in PLAYERS:
            return None
        return MarkovLayout(num_cards, players - 2)


def position_observations(
    rules, hand: np.ndarray, other: np.ndarray, prizes: np.ndarray, upcard: np.ndarray, seat: int, markov=None
) -> dict[str, np.ndarray]:
    """The observations of many two-player positions of ``rules``' game at once, as a
    player would get them when bidding on ``upcard``: what exact exploitability shows a
    Markov agent. ``markov`` picks the Markov observation or the full one (default: the
    one ``rules`` give).

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
    if rules.num_players != 2:
        raise ValueError(f"positions are two-player; {rules} has {rules.num_players} players")
    n = rules.num_cards
    bits = (np.asarray(hand)[:, None] >> np.arange(n)) & 1
    others = (np.asarray(other)[:, None] >> np.arange(n)) & 1
    to_come = (np.asarray(prizes)[:, None] >> np.arange(n)) & 1
    rows = np.arange(len(bits))
    mask = bits.astype(np.int8)
    if rules.markov if markov is None else markov:
        obs, views = rules.markov_layout.zeros(len(bits))
        views["others"][:, 0] = others
    else:
        obs, views = rules.information_layout.zeros(len(bits))
        views["reveal"][:] = 1.0
        views["seat"][:, seat] = 1.0
        _canonical_history(rules, views, bits, others, to_come, upcard)
    views["prize"][rows, upcard] = 1.0
    views["hand"][:] = bits
    views["prizes_to_come"][:] = to_come
    return {"observation": obs, "action_mask": mask}


def markov_observations(rules, observations: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Full observations of ``rules``' two-player game (rows of ``observations``) as the
    Markov observation (``observation="markov"``) shows the same positions: what lets an
    agent trained on the Markov observation sit in a game whose other seat reads the
    full one (Goofspiel's hard heuristic reads the score, which the Markov one hides).
    The position is a function of the full observation, so nothing is guessed."""
    views = [GoofspielView.decode(vector, rules.num_cards) for vector in np.atleast_2d(observations["observation"])]
    if any(v.points is None for v in views) or not rules.reveal_bids or rules.scoring == "win_loss":
        raise ValueError(
            "markov_observations needs full observations of a game with revealed bids and point_difference or "
            f"total_points scoring (the position is then all that matters); {rules} differs"
        )

    def bits(cards) -> int:
        return sum(1 << (c - 1) for c in cards)

    return position_observations(
        rules,
        np.array([bits(v.hand) for v in views]),
        np.array([bits(v.others_hands[0]) for v in views]),
        np.array([bits(v.prizes_to_come) for v in views]),
        np.array([v.prize - 1 for v in views]),
        seat=0,
        markov=True,
    )


def _canonical_history(rules, views, hand, other, to_come, upcard) -> None:
    """Fill the history and points of full observations (see :meth:`position_observations`):
    in round ``r`` the ``r``-th lowest spent prize, own card and opponent's card."""
    n = rules.num_cards
    rows = np.arange(len(hand))
    spent_prizes = 1 - to_come
    spent_prizes[rows, upcard] = 0
    played = n - hand.sum(axis=1)
    if not (played == played[0]).all():
        raise ValueError("positions of one batch must have equal hand sizes")
    rounds = int(played[0])
    order = np.argsort(1 - np.stack([spent_prizes, 1 - hand, 1 - other]), axis=2, kind="stable")[..., :rounds]
    prize, mine, theirs = order  # (N, rounds) card indices, increasing
    block = rules.information_layout.round.views(views["history"])
    won = np.sign(mine - theirs)
    for r in range(rounds):
        block["prize"][rows, r, prize[:, r]] = 1.0
        block["own_bid"][rows, r, mine[:, r]] = 1.0
        block["others"][rows, r, 0, theirs[:, r]] = 1.0
        block["winner"][rows, r, np.where(won[:, r] > 0, 0, np.where(won[:, r] < 0, 1, 2))] = 1.0
    block["prize"][rows, rounds, upcard] = 1.0  # the round being bid on
    points = (prize + 1)[:, None] * np.stack([won > 0, won < 0], axis=1)  # (N, 2, rounds)
    views["points"][:] = points.sum(axis=2) / rules.total_prize


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


def canonical_markov(observations: np.ndarray, masks: np.ndarray, num_cards: int):
    """Markov observations (rows of ``observations``, with their action masks) as their
    interleaving pattern shows them (:mod:`hiddenhand.solvers.goofspiel.patterns`): who wins
    a bid depends only on the order of the bids, so the cards that no hand holds any longer
    are dropped and the others renumbered from the lowest, every hand alike, while the prizes
    keep their values. Two positions with the same canonical observation are the same game
    (the exact solvers index positions by the same reduction), and a learner keyed by it
    learns each once: 8-card Goofspiel has 2,956,136 Markov observations of a decision
    and 406,456 canonical ones. Returns the canonical observations, their masks and ``order``: canonical
    action ``j`` of row ``i`` is card index ``order[i, j]`` (-1 past the cards held).
    ``Rules.canonical`` of Goofspiel's Markov observation."""
    layout = MarkovLayout.for_vector(observations.shape[1], num_cards)
    if layout is None:
        raise ValueError(f"a vector of length {observations.shape[1]} is not a {num_cards}-card Markov observation")
    return _canonical_markov(
        np.ascontiguousarray(observations, dtype=np.float32),
        np.asarray(masks),
        num_cards,
        layout.offset("hand"),
        layout.offset("prizes_to_come"),
    )


@njit(cache=True)
def _canonical_markov(observations, masks, n, hand, to_come):  # pragma: no cover - compiled
    """:func:`canonical_markov`'s loop: the hands lie from offset ``hand`` to ``to_come``
    (the ``prizes_to_come`` piece), one block of ``n`` per seat."""
    seats = (to_come - hand) // n
    canonical = observations.copy()
    canonical[:, hand:to_come] = 0.0
    canonical_masks = np.zeros_like(masks)
    order = np.full((observations.shape[0], n), -1, dtype=np.int64)
    for i in range(observations.shape[0]):
        j = 0
        for c in range(n):
            held = False
            for s in range(seats):
                held = held or observations[i, hand + s * n + c] > 0.5
            if held:
                for s in range(seats):
                    canonical[i, hand + s * n + j] = observations[i, hand + s * n + c]
                canonical_masks[i, j] = masks[i, c]
                order[i, j] = c
                j += 1
    return canonical, canonical_masks, order


def _cards(one_hot: np.ndarray) -> tuple[int, ...]:
    """The cards (1-based) marked in a vector over the cards."""
    return tuple(int(i) + 1 for i in np.flatnonzero(one_hot))
