"""The deduction engine as it was before its bit-set rewrite, frozen: the reference that
``tests/test_egghead_engine.py`` compares today's bit-set engine with, state by state, and
that ``benchmarks/bench_egghead.py`` times beside it. It is a verbatim copy of
``envs/egghead_knowledge.py`` at commit c66ab8b (one byte per deal in dense boolean tables,
answers spread through a deal-to-multiset map); only this docstring is new. Do not edit it:
it is the "before" side of those comparisons, not code the package uses.

Its original docstring follows.

EggHead's deduction engine: public knowledge as the set of deals still possible.

The study keeps one *conditional information table* per player: for every combination of
the other players' hands, the hands this player would still consider possible. Those
tables are projections of one *master table*, the set of whole deals that are still
possible from everyone's point of view (the study's appendix A.1); we keep the master
table itself, as a boolean array with one axis per player (56 hands each for 3 cards of 6
values: 56^4 = 9.8 million deals for four players, one byte each). Every update is a
vectorised operation on it:

- an answer (eq. 2) keeps the deals on which the question has that answer, evaluated on
  every deal at once (:mod:`.egghead_deck`);
- reactions (eq. 3 and 4) keep the deals in which every player would have reacted as they
  did: player p knows their hand in deal d when exactly one hand v leaves
  (d without p's hand, v) in the table. The study's row-emptying (eq. 3) followed by its
  cross-referencing (eq. 4) is exactly this filter of the master table;
- a revealed hand (eq. 5) conditions the table on it and then lets that player's axis take
  every value again (they are dealt a new hand).

A second table holds what answers and revealed hands alone leave (eq. 1, the naive
deduction). Players who do not analyse behaviour (the study's partial analysis) know only
that, and the behavioural table models their reactions from it.

Two tables of one byte per deal take 1.1 GB at five players (56^5 = 551 million deals);
the map from deals to multisets of hands that answers are spread through takes 2.2 GB
more, and an answer grid 0.55 GB. Five players fit in this machine's 24 GiB; six would
need 56^6 = 31 billion bytes per table, and are refused.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from math import comb

import numpy as np

from hiddenhand.envs.egghead_deck import Hands, Question, standard_deck

MIN_PLAYERS, MAX_PLAYERS = 3, 5
_CACHE_BYTES = 1 << 30
_answer_cache: OrderedDict[tuple, np.ndarray] = OrderedDict()
"""Answer grids by (hands, question, seen players), so that an announcement is one
comparison. Capped at 1 GiB, the least recently used dropped first: every question of the
deck fits at four players (9.8 MB a grid), one at a time at five (551 MB)."""

Hand = Sequence[int]


_multiset_cache: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}


def _multisets(h: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Every multiset of ``k`` hands out of ``h``, and for every ordered combination of
    ``k`` hands the number of its multiset.

    Answers do not depend on who holds which hand, so a question is evaluated once per
    multiset (455,126 for four players against 9.8 million deals; 5.5 million for five
    against 551 million) and spread over the deals through this map. A sorted multiset
    a_0 <= ... <= a_{k-1} is numbered by the colex rank of the k-set {a_i + i}.
    """
    if (h, k) not in _multiset_cache:
        binom = np.array([[comb(n, r) for r in range(k + 1)] for n in range(h + k)], dtype=np.int64)
        sets = np.array(list(itertools.combinations_with_replacement(range(h), k)), dtype=np.int64)
        order = np.empty(len(sets), dtype=np.int64)
        order[_rank(sets, binom)] = np.arange(len(sets))
        rank = np.empty((h,) * k, dtype=np.int32)
        rest = np.indices((h,) * (k - 1), dtype=np.int64).reshape(k - 1, -1).T
        for first in range(h):  # one slice at a time: the sort needs k times the slice's size
            deals = np.sort(np.column_stack([np.full(len(rest), first), rest]), axis=1)
            rank[first] = _rank(deals, binom).reshape((h,) * (k - 1))
        _multiset_cache[(h, k)] = (sets[order].astype(np.uint16), rank)
    return _multiset_cache[(h, k)]


def _rank(sorted_hands: np.ndarray, binom: np.ndarray) -> np.ndarray:
    return sum(binom[sorted_hands[:, i] + i, i + 1] for i in range(sorted_hands.shape[1]))


def answer_grid(hands: Hands, question: Question, num_players: int, seen: tuple[int, ...]) -> np.ndarray:
    """The answer to ``question`` for every deal, as an int8 array with one axis per player,
    of length 1 for a player the moderator does not see (broadcastable to the full table)."""
    key = (hands.cards_per_player, hands.num_values, question.id, num_players, seen)
    if key in _answer_cache:
        _answer_cache.move_to_end(key)
        return _answer_cache[key]
    sets, rank = _multisets(len(hands), len(seen))
    answers = np.asarray(question.answer(hands.counts[sets])).astype(np.int8)
    grid = answers[rank].reshape([len(hands) if p in seen else 1 for p in range(num_players)])
    _answer_cache[key] = grid
    while sum(g.nbytes for g in _answer_cache.values()) > _CACHE_BYTES and len(_answer_cache) > 1:
        _answer_cache.popitem(last=False)
    return grid


class Knowledge:
    """What is public in a game of EggHead: see the module docstring.

    ``analysts`` are the players who analyse behaviour (default: everyone); the others
    deduce from answers and revealed hands only, and react accordingly. Hands are sorted
    tuples of values, deals tuples of hands (one per player).
    """

    def __init__(
        self,
        num_players: int,
        cards_per_player: int = 3,
        num_values: int = 6,
        analysts: Iterable[int] | None = None,
        deck: Sequence[Question] | None = None,
    ) -> None:
        self.hands = Hands(cards_per_player, num_values)
        h = len(self.hands)
        if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise ValueError(
                f"num_players={num_players!r} is not supported; allowed: {MIN_PLAYERS} to {MAX_PLAYERS}. "
                f"The table holds every deal: {h}^{num_players} = {float(h) ** num_players:.3g} of them "
                f"(one byte each, twice), and {h}^{MAX_PLAYERS + 1} = {float(h) ** (MAX_PLAYERS + 1):.3g} "
                "do not fit in memory"
            )
        self.num_players = num_players
        self.analysts = frozenset(range(num_players) if analysts is None else analysts)
        if not self.analysts <= set(range(num_players)):
            raise ValueError(f"analysts={sorted(self.analysts)} names players outside 0 to {num_players - 1}")
        self.deck = {q.id: q for q in (deck or standard_deck(cards_per_player, num_values))}
        self.public = np.ones((h,) * num_players, dtype=bool)
        self.naive = np.ones((h,) * num_players, dtype=bool)

    def copy(self) -> Knowledge:
        """An independent copy that shares the tables: every update replaces a table rather
        than writing into it, so sharing is safe, and a game state clones without copying
        tens of megabytes (OpenSpiel's algorithms and tree searches clone at every step)."""
        other = object.__new__(Knowledge)
        other.__dict__.update(self.__dict__)
        return other

    # ----------------------------------------------------------------- updates
    def answer(self, question_id: str, deal: Sequence[Hand], moderator: int | None = None) -> int:
        """The true answer to a question in ``deal`` (a moderator player does not see their own hand)."""
        seen = [p for p in range(self.num_players) if p != moderator]
        counts = self.hands.counts[[self._index(deal)[p] for p in seen]]
        return int(np.asarray(self._question(question_id).answer(counts[None]))[0])

    def announce_answer(self, question_id: str, answer: int, moderator: int | None = None) -> None:
        """Eq. 2 (eq. 6 with a playing ``moderator``): keep the deals with this answer."""
        seen = tuple(p for p in range(self.num_players) if p != moderator)
        match = answer_grid(self.hands, self._question(question_id), self.num_players, seen) == answer
        self.public = self.public & match
        self.naive = self.naive & match

    def announce_reactions(self, reactions: Mapping[int, bool]) -> bool:
        """Eq. 3 and 4: ``reactions[p]`` is whether player p called. Keeps the deals in which
        each of them would have reacted so (every player's knowledge taken before any of
        this round's reactions). Returns whether the public knowledge changed."""
        before = np.count_nonzero(self.public)
        keep = [self._knows_everywhere(p) == bool(called) for p, called in reactions.items()]
        for mask in keep:
            self.public = self.public & mask
        return np.count_nonzero(self.public) != before

    def reveal_solution(self, player: int, hand: Hand) -> None:
        """Eq. 5: ``player`` showed ``hand`` and is dealt a new one."""
        i = self.hands.of(hand)
        self.public, self.naive = (
            np.ascontiguousarray(np.broadcast_to(np.take(table, [i], axis=player), table.shape))
            for table in (self.public, self.naive)
        )

    # ----------------------------------------------------------------- queries
    def valids(self, player: int, deal: Sequence[Hand]) -> list[tuple[int, ...]]:
        """The hands ``player`` considers possible in ``deal`` under behavioural analysis."""
        return self._valids(self.public, player, deal)

    def naive_valids(self, player: int, deal: Sequence[Hand]) -> list[tuple[int, ...]]:
        """Eq. 1: the hands answers (and revealed hands) leave ``player`` in ``deal``."""
        return self._valids(self.naive, player, deal)

    def knows(self, player: int, deal: Sequence[Hand]) -> bool:
        """Whether ``player`` knows their hand in ``deal``, by their own way of deducing."""
        table = self.public if player in self.analysts else self.naive
        return len(self._valids(table, player, deal)) == 1

    def settle(self, deal: Sequence[Hand], moderator: int | None = None) -> list[int]:
        """The study's reaction loop: every player but the moderator reacts truthfully (calls
        exactly when they know), the reactions are announced, and again, until someone
        calls (returns the callers, whose hands the caller of ``settle`` then reveals with
        :meth:`reveal_solution` and redeals, before settling again) or until the public
        knowledge stops changing (returns ``[]``)."""
        players = [p for p in range(self.num_players) if p != moderator]
        while True:
            reactions = {p: self.knows(p, deal) for p in players}
            changed = self.announce_reactions(reactions)
            callers = [p for p, called in reactions.items() if called]
            if callers or not changed:
                return callers

    # ----------------------------------------------------------------- helpers
    def _question(self, question_id: str) -> Question:
        if question_id not in self.deck:
            raise ValueError(f"unknown question {question_id!r}; the deck has: {', '.join(self.deck)}")
        return self.deck[question_id]

    def _index(self, deal: Sequence[Hand]) -> list[int]:
        if len(deal) != self.num_players:
            raise ValueError(f"a deal has one hand per player ({self.num_players}); got {len(deal)}")
        return [self.hands.of(hand) for hand in deal]

    def _valids(self, table: np.ndarray, player: int, deal: Sequence[Hand]) -> list[tuple[int, ...]]:
        index: list = self._index(deal)
        index[player] = slice(None)
        return [self.hands.tuples[v] for v in np.flatnonzero(table[tuple(index)])]

    def _knows_everywhere(self, player: int) -> np.ndarray:
        """For every combination of the others' hands: does ``player`` know theirs?"""
        table = self.public if player in self.analysts else self.naive
        return table.sum(axis=player, dtype=np.uint16, keepdims=True) == 1
