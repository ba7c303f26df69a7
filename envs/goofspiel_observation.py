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
    rules,
    hand: np.ndarray,
    other: np.ndarray,
    prizes: np.ndarray,
    upcard: np.ndarray,
    seat: int,
    markov=None,
    out: dict[str, np.ndarray] | None = None,
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
    position when prizes come in random order, so an agent that reads neither the score
    nor the history (which it declares) answers as it would after any other. Returns
    ``{"observation": (N, size), "action_mask": (N, num_cards)}`` in the engine's own
    encoding (float32 and int8; the tests compare them with the engine's), written into
    ``out`` when it is given (arrays of those shapes and dtypes): a caller that builds
    batch after batch then reuses one buffer instead of having fresh memory zeroed for
    every batch.

    The rows are written by compiled loops (:func:`_full_rows`, :func:`_markov_rows`),
    one position at a time, so one batch may mix positions of different sizes; a row
    that is not a position (hands of different sizes, prizes to come that do not match
    them, the upcard among them or no card) is refused by its number.
    """
    if rules.num_players != 2:
        raise ValueError(f"positions are two-player; {rules} has {rules.num_players} players")
    n = rules.num_cards
    columns = [np.ascontiguousarray(x, dtype=np.int64) for x in (hand, other, prizes, upcard)]
    if any(c.ndim != 1 or len(c) != len(columns[0]) for c in columns):
        raise ValueError(
            f"hand, other, prizes and upcard need one entry per position each, not shapes {[c.shape for c in columns]}"
        )
    markov = rules.markov if markov is None else markov
    layout = rules.markov_layout if markov else rules.information_layout
    rows = len(columns[0])
    if out is None:
        out = {
            "observation": np.empty((rows, layout.size), dtype=np.float32),
            "action_mask": np.empty((rows, n), dtype=np.int8),
        }
    elif out["observation"].shape != (rows, layout.size) or out["action_mask"].shape != (rows, n):
        raise ValueError(
            f"out holds arrays of shapes {out['observation'].shape} and {out['action_mask'].shape}, not "
            f"{(rows, layout.size)} and {(rows, n)}"
        )
    if markov:
        where = np.array([layout.offset(name) for name in ("prize", "hand", "others", "prizes_to_come")])
        bad = _markov_rows(*columns, n, where, out["observation"], out["action_mask"])
    else:
        block = layout.round
        where = np.array(
            [layout.offset(name) for name in ("reveal", "seat", "prize", "hand", "prizes_to_come", "points", "history")]
            + [block.offset(name) for name in ("prize", "own_bid", "winner", "others")]
            + [block.size]
        )
        bad = _full_rows(
            *columns, int(seat), n, float(rules.reveal_bids), rules.total_prize, where, out["observation"],
            out["action_mask"],
        )  # fmt: skip
    if bad >= 0:
        cells = ", ".join(f"{name} {int(c[bad]):#b}" for name, c in zip(("hand", "other", "prizes"), columns))
        raise ValueError(
            f"row {bad} is not a position of {n} cards: {cells}, upcard index {int(columns[3][bad])} (both hands "
            "the same size, one prize to come fewer, the upcard not among them)"
        )
    return out


_LOWEST = np.array([0, 1, 28, 2, 29, 14, 24, 3, 30, 22, 20, 15, 25, 17, 4, 8, 31, 27, 13, 23, 21, 19, 16, 7, 26, 12,
                    18, 6, 11, 5, 10, 9])  # fmt: skip
"""The index of a 32-bit power of two ``x``: ``_LOWEST[(x * 0x077CB531) >> 27 & 31]`` (a de Bruijn sequence)."""


@njit(inline="always")
def _lowest(bits):  # pragma: no cover - compiled
    """The index of the lowest set bit of ``bits`` (at least one, below bit 32)."""
    return _LOWEST[((bits & -bits) * 0x077CB531) >> 27 & 31]


@njit(inline="always")
def _count(bits):  # pragma: no cover - compiled
    """How many bits of ``bits`` (below bit 32) are set."""
    bits = bits - (bits >> 1 & 0x55555555)
    bits = (bits & 0x33333333) + (bits >> 2 & 0x33333333)
    return ((bits + (bits >> 4)) & 0x0F0F0F0F) * 0x01010101 >> 24 & 0xFF


@njit(inline="always")
def _is_position(hand, other, prizes, upcard, n):  # pragma: no cover - compiled
    """Whether the bitmasks and upcard index describe a position of an ``n``-card game."""
    full = (1 << n) - 1
    if hand & ~full or other & ~full or prizes & ~full or upcard < 0 or upcard >= n or prizes >> upcard & 1:
        return False
    held = _count(hand)
    return held == _count(other) and held == _count(prizes) + 1


@njit(cache=True)
def _markov_rows(hand, other, prizes, upcard, n, where, obs, mask):  # pragma: no cover - compiled
    """:func:`position_observations`' Markov rows; ``where`` holds the offsets of the
    pieces ``prize``, ``hand``, ``others`` and ``prizes_to_come``. Returns the first row
    that is not a position, or -1."""
    for i in range(len(hand)):
        if not _is_position(hand[i], other[i], prizes[i], upcard[i], n):
            return i
        row = obs[i]
        row[:] = 0.0
        row[where[0] + upcard[i]] = 1.0
        for c in range(n):
            mask[i, c] = hand[i] >> c & 1
            row[where[1] + c] = hand[i] >> c & 1
            row[where[2] + c] = other[i] >> c & 1
            row[where[3] + c] = prizes[i] >> c & 1
    return -1


@njit(cache=True)
def _full_rows(hand, other, prizes, upcard, seat, n, reveal, total, where, obs, mask):  # pragma: no cover - compiled
    """:func:`position_observations`' full rows, each with its history written round by
    round as the engine writes it (``GoofspielState._resolve_round``): in round ``r`` the
    ``r``-th lowest spent prize, own card and opponent's card, who won it, and the points
    so far; then the prize on the table in the next round's block. ``where`` holds the
    offsets of the pieces ``reveal``, ``seat``, ``prize``, ``hand``, ``prizes_to_come``,
    ``points`` and ``history``, then those of a round's ``prize``, ``own_bid``, ``winner``
    and ``others`` within its block, then the block's size. Returns the first row that is
    not a position, or -1. One thread: batches are small enough to stay in the cache, and
    a pool of threads woken for each costs more than it saves on two busy cores."""
    full = (1 << n) - 1
    for i in range(len(hand)):
        u = upcard[i]
        if not _is_position(hand[i], other[i], prizes[i], u, n):
            return i
        row = obs[i]
        row[:] = 0.0
        row[where[0]] = reveal
        row[where[1] + seat] = 1.0
        row[where[2] + u] = 1.0
        for c in range(n):
            mask[i, c] = hand[i] >> c & 1
            row[where[3] + c] = hand[i] >> c & 1
            row[where[4] + c] = prizes[i] >> c & 1
        spent = full & ~(prizes[i] | 1 << u)
        mine_spent, theirs_spent = full & ~hand[i], full & ~other[i]
        block, won, lost = where[6], 0, 0
        while spent:  # one round a pass, each side's lowest spent card on the lowest spent prize
            prize, mine, theirs = _lowest(spent), _lowest(mine_spent), _lowest(theirs_spent)
            spent &= spent - 1
            mine_spent &= mine_spent - 1
            theirs_spent &= theirs_spent - 1
            row[block + where[7] + prize] = 1.0
            row[block + where[8] + mine] = 1.0
            if reveal:
                row[block + where[10] + theirs] = 1.0
            if mine > theirs:
                won += prize + 1
                row[block + where[9]] = 1.0
            elif mine < theirs:
                lost += prize + 1
                row[block + where[9] + 1] = 1.0
            else:
                row[block + where[9] + 2] = 1.0
            block += where[11]
        row[block + where[7] + u] = 1.0  # the round being bid on
        row[where[5]] = won / total
        row[where[5] + 1] = lost / total
    return -1


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
