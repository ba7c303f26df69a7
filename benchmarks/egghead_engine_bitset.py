"""The bit-set deduction engine as it was before its tables were updated in place over a
list of live rows, frozen: the reference that ``tests/test_egghead_engine.py`` compares
today's engine with, state by state, and that ``benchmarks/bench_egghead.py`` times beside
it. It is a verbatim copy of ``envs/egghead_knowledge.py`` at commit 6822573 (every pass
scans the whole table and allocates its masks afresh; every question is evaluated on every
multiset of seen hands, through its answer function); only this docstring is new. Do not
edit it: it is the "before" side of those comparisons, not code the package uses.

Its original docstring follows.

EggHead's deduction engine: public knowledge as the set of deals still possible.

(One module over 450 lines: the bit-set tables, their compiled kernels and the copy-on-write
bookkeeping change together; split, each part would need the others' private layout.)

The study keeps one *conditional information table* per player: for every combination of
the other players' hands, the hands this player would still consider possible. Those
tables are projections of one *master table*, the set of whole deals that are still
possible from everyone's point of view (the study's appendix A.1); we keep the master
table itself, as a bit set with one bit per deal: an array of 64-bit words with one axis
per player but the last, whose hand is the bit (56 hands fit one word; more take several).
The last player's row of a deal is then one word, and what a player can tell apart is a
word operation:

- an answer (eq. 2) keeps the deals on which the question has that answer. Answers do not
  depend on who holds which hand, so a question is evaluated once per multiset of the
  hands the moderator sees (cached), and the table is filtered row by row: the first
  players' hands name a multiset, and the last player's bits that complete it to the
  answer are one word, computed the first time that multiset is met (lazily: a row with
  no deal left costs nothing);
- reactions (eq. 3 and 4) keep the deals in which every player would have reacted as they
  did: player p knows their hand in deal d when exactly one hand v leaves (d without p's
  hand, v) in the table. For the last player that is a row holding one bit; for the
  others, one pass over the table keeps per player and word the bits seen once and the
  bits seen twice, so "exactly one" is ``once & ~twice``. The study's row-emptying
  (eq. 3) followed by its cross-referencing (eq. 4) is exactly this filter of the master
  table;
- a revealed hand (eq. 5) conditions the table on it and then lets that player's axis take
  every value again (they are dealt a new hand).

A second table holds what answers and revealed hands alone leave (eq. 1, the naive
deduction). Players who do not analyse behaviour (the study's partial analysis) know only
that, and the behavioural table models their reactions from it.

The hot loops are compiled (numba). A table takes one bit per deal (69 MB at five players:
56^5 = 551 million deals); six players would take 3.9 GB per table, and are refused.
"""

from __future__ import annotations

import functools
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from math import comb

import numpy as np
from numba import njit

from hiddenhand.envs.egghead_deck import Hands, Question, standard_deck

MIN_PLAYERS, MAX_PLAYERS = 3, 5
_CACHE_BYTES = 1 << 28
_answer_cache: OrderedDict[tuple, np.ndarray] = OrderedDict()
"""Each question's answers per multiset of seen hands, by (hands, question, hands seen).
Capped at 256 MiB, the least recently used dropped first: the whole standard deck fits at
five players (5.5 MB a question)."""
_CHUNK = 1 << 16  # multisets evaluated at once: bounds the question's temporary arrays

Hand = Sequence[int]


@functools.cache
def _hands(cards_per_player: int, num_values: int) -> Hands:
    """One :class:`Hands` per size, shared (it is never modified): a game state replayed
    from its history, as unpickling and OpenSpiel's deserialisation do, makes a new
    :class:`Knowledge` at every replay."""
    return Hands(cards_per_player, num_values)


def _binomials(h: int, k: int) -> np.ndarray:
    """``C(n, r)`` for ``n < h + k`` and ``r <= k``: the terms of a multiset's rank."""
    return np.array([[comb(n, r) for r in range(k + 1)] for n in range(h + k)], dtype=np.int64)


_list_cache: dict[tuple[int, int], np.ndarray] = {}


def _multiset_list(h: int, k: int) -> np.ndarray:
    """Every multiset of ``k`` hands out of ``h``, as sorted hand numbers, in rank order.

    A sorted multiset a_0 <= ... <= a_{k-1} is numbered by the colex rank of the k-set
    {a_i + i}: sum of C(a_i + i, i + 1). Enumerated by a compiled loop: at five players the
    5.5 million multisets would take seconds and gigabytes as Python tuples.
    """
    if (h, k) not in _list_cache:
        _list_cache[(h, k)] = _enumerate_multisets(h, k, _binomials(h, k), comb(h + k - 1, k))
    return _list_cache[(h, k)]


_multiset_cache: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}


def _multisets(h: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Every multiset of ``k`` hands out of ``h`` (:func:`_multiset_list`), and for every
    ordered combination of ``k`` hands the number of its multiset (a dense array with ``k``
    axes, for :func:`answer_grid`; the engine ranks multisets as it goes instead)."""
    if (h, k) not in _multiset_cache:
        binom = _binomials(h, k)
        rank = np.empty((h,) * k, dtype=np.int32)
        rest = np.indices((h,) * (k - 1), dtype=np.int64).reshape(k - 1, -1).T
        for first in range(h):  # one slice at a time: the sort needs k times the slice's size
            deals = np.sort(np.column_stack([np.full(len(rest), first), rest]), axis=1)
            rank[first] = sum(binom[deals[:, i] + i, i + 1] for i in range(k)).reshape((h,) * (k - 1))
        _multiset_cache[(h, k)] = (_multiset_list(h, k), rank)
    return _multiset_cache[(h, k)]


def multiset_answers(hands: Hands, question: Question, seen: int) -> np.ndarray:
    """``question``'s answer for every multiset of ``seen`` hands, in rank order
    (:func:`_multiset_list`): uint8 (every answer of the standard deck is 0..255)."""
    key = (hands.cards_per_player, hands.num_values, question.id, seen)
    if key in _answer_cache:
        _answer_cache.move_to_end(key)
        return _answer_cache[key]
    sets = _multiset_list(len(hands), seen)
    answers = np.empty(len(sets), dtype=np.uint8)
    for start in range(0, len(sets), _CHUNK):
        found = np.asarray(question.answer(hands.counts[sets[start : start + _CHUNK]]))
        if found.size and (found.min() < 0 or found.max() > 255):
            raise ValueError(f"question {question.id!r} answers outside 0..255: {found.min()}..{found.max()}")
        answers[start : start + _CHUNK] = found
    _answer_cache[key] = answers
    while sum(a.nbytes for a in _answer_cache.values()) > _CACHE_BYTES and len(_answer_cache) > 1:
        _answer_cache.popitem(last=False)
    return answers


def answer_grid(hands: Hands, question: Question, num_players: int, seen: tuple[int, ...]) -> np.ndarray:
    """The answer to ``question`` for every deal, as a dense array with one axis per player,
    of length 1 for a player the moderator does not see (broadcastable to every deal). For
    inspection and small tables: the engine never builds it (551 MB at five players)."""
    answers = multiset_answers(hands, question, len(seen))
    grid = answers[_multisets(len(hands), len(seen))[1]]
    return grid.reshape([len(hands) if p in seen else 1 for p in range(num_players)])


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
        self.hands = _hands(cards_per_player, num_values)
        h = len(self.hands)
        if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise ValueError(
                f"num_players={num_players!r} is not supported; allowed: {MIN_PLAYERS} to {MAX_PLAYERS}. "
                f"The table holds every deal: {h}^{num_players} = {float(h) ** num_players:.3g} of them "
                f"(one bit each, twice), and {h}^{MAX_PLAYERS + 1} = {float(h) ** (MAX_PLAYERS + 1):.3g} "
                "do not fit in memory"
            )
        self.num_players = num_players
        self.analysts = frozenset(range(num_players) if analysts is None else analysts)
        if not self.analysts <= set(range(num_players)):
            raise ValueError(f"analysts={sorted(self.analysts)} names players outside 0 to {num_players - 1}")
        self.deck = {q.id: q for q in (deck or standard_deck(cards_per_player, num_values))}
        words = -(-h // 64)
        self._full = np.zeros(words, dtype=np.uint64)  # the last player's row with every hand possible
        for w in range(words):
            bits = min(64, h - 64 * w)
            self._full[w] = np.uint64((1 << bits) - 1)
        self._binom = _binomials(h, num_players)
        self._public = np.ascontiguousarray(np.broadcast_to(self._full, (h ** (num_players - 1), words)))
        self._naive = self._public  # the same object until reactions teach something
        self._shown: dict[int, int] = {}  # hands shown since the last update, by player: see reveal_solution
        self._holders: dict[int, weakref.WeakSet] = {}  # by table (its id): the live copies that hold it
        self._keep_holders()

    def copy(self) -> Knowledge:
        """An independent copy that shares the tables, copy on write: an update replaces a
        table that a live copy also holds rather than writing into it, so a game state
        clones without copying tens of megabytes (OpenSpiel's algorithms and tree searches
        clone at every step; every observation an agent gets holds a clone), and an update
        of a table no live copy holds writes into it, without allocating (and faulting in)
        a fresh one. Who holds a table is kept in weak sets, so a copy that was dropped (an
        observation, once the agent has acted) no longer counts."""
        self._reveal_shown()
        other = object.__new__(Knowledge)
        other.__dict__.update(self.__dict__)
        other._shown = {}  # (none pending after the reveal above; a dict of its own)
        other._holders = dict(self._holders)
        for holders in other._holders.values():
            holders.add(other)
        return other

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        del state["_holders"]  # (weak sets do not pickle; an unpickled object holds its tables alone)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._holders = {}
        self._keep_holders()

    @property
    def public(self) -> np.ndarray:
        """The behavioural table as a dense boolean array, one axis per player (for
        inspection and tests: one byte per deal)."""
        self._reveal_shown()
        return self._dense(self._public)

    @property
    def naive(self) -> np.ndarray:
        """The table of answers and revealed hands alone, dense as :attr:`public`."""
        self._reveal_shown()
        return self._dense(self._naive)

    # ----------------------------------------------------------------- updates
    def answer(self, question_id: str, deal: Sequence[Hand], moderator: int | None = None) -> int:
        """The true answer to a question in ``deal`` (a moderator player does not see their own hand)."""
        seen = [p for p in range(self.num_players) if p != moderator]
        counts = self.hands.counts[[self._index(deal)[p] for p in seen]]
        return int(np.asarray(self._question(question_id).answer(counts[None]))[0])

    def announce_answer(self, question_id: str, answer: int, moderator: int | None = None) -> None:
        """Eq. 2 (eq. 6 with a playing ``moderator``): keep the deals with this answer."""
        self._reveal_shown()
        n = self.num_players
        seen = [p for p in range(n) if p != moderator]
        answers = multiset_answers(self.hands, self._question(question_id), len(seen))
        prefix = np.array([p for p in seen if p < n - 1], dtype=np.int64)
        k, words = len(prefix), len(self._full)
        memo = np.zeros((comb(len(self.hands) + k - 1, k), words), dtype=np.uint64)
        done = np.zeros(len(memo), dtype=np.bool_)
        args = (len(self.hands), n - 1, prefix, moderator != n - 1, answers, int(answer), self._binom, memo, done)
        shared = self._naive is self._public
        self._public = _filter_answer(self._public, self._target(self._public, shared), *args)
        self._naive = self._public if shared else _filter_answer(self._naive, self._target(self._naive), *args)
        self._keep_holders()

    def announce_reactions(self, reactions: Mapping[int, bool]) -> bool:
        """Eq. 3 and 4: ``reactions[p]`` is whether player p called. Keeps the deals in which
        each of them would have reacted so (every player's knowledge taken before any of
        this round's reactions). Returns whether the public knowledge changed."""
        self._reveal_shown()
        n, h = self.num_players, len(self.hands)
        called = np.full(n, -1, dtype=np.int64)
        naive = np.zeros(n, dtype=np.bool_)
        for p, c in reactions.items():
            called[p] = bool(c)
            naive[p] = p not in self.analysts
        knows, last_knows = _knows_everywhere(self._public, self._naive, called, naive, h, n - 1)
        kept, changed = _filter_reactions(self._public, self._target(self._public), knows, last_knows, called, h, n - 1)
        if changed:  # (else keep the table, and the naive one's sharing it)
            self._public = kept
        self._keep_holders()
        return changed

    def reveal_solution(self, player: int, hand: Hand) -> None:
        """Eq. 5: ``player`` showed ``hand`` and is dealt a new one. Applied when the
        tables are next read, with every hand shown since (callers show theirs together):
        one pass over each table for them all."""
        i = self.hands.of(hand)
        # A second showing by the same player before then changes nothing: their axis is
        # already free, and conditioning a free axis on one value and freeing it again is
        # the identity.
        self._shown.setdefault(player, i)

    def _reveal_shown(self) -> None:
        if not self._shown:
            return
        shown, self._shown = self._shown, {}
        shared = self._naive is self._public
        self._public = self._reveal(self._public, self._target(self._public, shared), shown)
        self._naive = self._public if shared else self._reveal(self._naive, self._target(self._naive), shown)
        self._keep_holders()

    # ----------------------------------------------------------------- queries
    def valids(self, player: int, deal: Sequence[Hand]) -> list[tuple[int, ...]]:
        """The hands ``player`` considers possible in ``deal`` under behavioural analysis."""
        return self._valids(True, player, deal)

    def naive_valids(self, player: int, deal: Sequence[Hand]) -> list[tuple[int, ...]]:
        """Eq. 1: the hands answers (and revealed hands) leave ``player`` in ``deal``."""
        return self._valids(False, player, deal)

    def knows(self, player: int, deal: Sequence[Hand]) -> bool:
        """Whether ``player`` knows their hand in ``deal``, by their own way of deducing."""
        return len(self._valids(player in self.analysts, player, deal)) == 1

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

    def _shaped(self, table: np.ndarray) -> np.ndarray:
        """``table`` with one axis per player but the last, then the words of the last one's row."""
        return table.reshape((len(self.hands),) * (self.num_players - 1) + (len(self._full),))

    def _valids(self, behavioural: bool, player: int, deal: Sequence[Hand]) -> list[tuple[int, ...]]:
        """``player``'s hands left in the behavioural table (else the naive one), the others' as in ``deal``."""
        index = self._index(deal)
        self._reveal_shown()
        table = self._public if behavioural else self._naive
        last = index.pop()
        if player == self.num_players - 1:
            row = self._shaped(table)[tuple(index)]
            found = np.flatnonzero(_unpack(row)[: len(self.hands)])
        else:
            index[player] = slice(None)
            found = np.flatnonzero((self._shaped(table)[tuple(index)][:, last // 64] >> np.uint64(last % 64)) & 1)
        return [self.hands.tuples[v] for v in found]

    def _target(self, table: np.ndarray, for_both: bool = False) -> np.ndarray:
        """Where an update of ``table`` writes: into it if no live copy holds it (and, while
        the naive table is the same object, the update is ``for_both``), else a fresh table."""
        if len(self._holders[id(table)]) == 1 and (for_both or self._naive is not self._public):
            return table
        return np.zeros_like(table)  # zeroed lazily by the system: rows never written cost nothing

    def _keep_holders(self) -> None:
        """After an update: the holders of the tables this object now holds (itself alone for
        a fresh table), and this object no longer among the holders of the tables it let go."""
        holders = {}
        for table in (self._public, self._naive):
            holders[id(table)] = self._holders.get(id(table)) or weakref.WeakSet([self])
        for key, old in self._holders.items():
            if key not in holders:
                old.discard(self)
        self._holders = holders

    def _reveal(self, table: np.ndarray, out: np.ndarray, shown: dict[int, int]) -> np.ndarray:
        """``table`` conditioned on the ``shown`` hands, those players' axes then free."""
        last = self.num_players - 1
        kept = self._shaped(table)[
            tuple(slice(shown[p], shown[p] + 1) if p in shown else slice(None) for p in range(last))
        ]
        if last in shown:
            i = shown[last]
            kept = ((kept[..., i // 64] >> np.uint64(i % 64)) & np.uint64(1))[..., None] * self._full
        np.copyto(self._shaped(out), kept)  # (numpy copies the kept slice first where it overlaps ``out``)
        return out

    def _dense(self, table: np.ndarray) -> np.ndarray:
        h = len(self.hands)
        return _unpack(table)[..., :h].reshape((h,) * self.num_players).astype(bool)


def _unpack(words: np.ndarray) -> np.ndarray:
    """The bits of 64-bit words along the last axis, lowest first."""
    little = words.astype("<u8", copy=False)
    return np.unpackbits(little.view(np.uint8), axis=-1, bitorder="little")


# --------------------------------------------------------------------- compiled loops
# A table is a 2-d array (rows, words): row r holds the deals whose first m = n - 1 hands
# are r's digits in base h (player 0 the most significant), word w the last player's hands
# 64 w to 64 w + 63. The loops walk rows as (hi, a): hi the first m - 1 digits, a the last.


@njit(cache=True)
def _enumerate_multisets(h, k, binom, count):
    sets = np.empty((count, k), dtype=np.uint16)
    a = np.zeros(k, dtype=np.int64)
    while True:
        r = 0
        for i in range(k):
            r += binom[a[i] + i, i + 1]
        sets[r, :] = a
        i = 0  # the next non-decreasing tuple: raise the lowest value that can rise, zero those below
        while i < k and a[i] == (a[i + 1] if i + 1 < k else h - 1):
            i += 1
        if i == k:
            return sets
        a[i] += 1
        a[:i] = 0


@njit(cache=True)
def _digits(hi, h, m, out):
    """The first m - 1 digits of a row (hi = row // h) into ``out``, most significant first."""
    for j in range(m - 2, -1, -1):
        out[j] = hi % h
        hi //= h


@njit(cache=True)
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(cache=True)
def _live(table, start, count):
    """Whether the ``count`` rows from ``start * count`` on hold a deal (most do not, once a
    few answers are in)."""
    for row in range(start * count, start * count + count):
        for w in range(table.shape[1]):
            if table[row, w] != 0:
                return True
    return False


@njit(cache=True)
def _rank(values, count, binom):
    """The rank of the multiset ``values[:count]`` (sorted)."""
    r = 0
    for i in range(count):
        r += binom[values[i] + i, i + 1]
    return r


@njit(cache=True)
def _insertion_ranks(values, count, binom, h, scratch, ranks):
    """Into ``ranks[b]``, for every hand b, the rank of the multiset ``values[:count]``
    (sorted) plus b. Inserting b at position j leaves the terms of the values before j,
    adds b's term and moves each later term up one place, so each rank is two prefix sums
    and one term (``scratch``: 2 x (count + 1) integers, passed in, as allocating them
    at every call would cost more than the call)."""
    before, after = scratch[0], scratch[1]  # the terms of values[:j]; of values[j:], moved up one
    before[0] = 0
    after[count] = 0
    for i in range(count):
        before[i + 1] = before[i] + binom[values[i] + i, i + 1]
    for i in range(count - 1, -1, -1):
        after[i] = after[i + 1] + binom[values[i] + i + 1, i + 2]
    b = 0
    for j in range(count + 1):
        stop = values[j] if j < count else h
        while b < stop:
            ranks[b] = before[j] + binom[b + j, j + 1] + after[j]
            b += 1


@njit(cache=True)
def _filter_answer(table, out, h, m, prefix, last_seen, answers, answer, binom, memo, done):
    """The deals of ``table`` on which the answer is ``answer``. ``prefix``: the seen players
    among the first m (sorted); ``last_seen``: whether the last player is seen; ``answers``
    by multiset of the seen hands. For each multiset of the seen first hands, the last
    player's hands that answer so are one row of words (``memo``, by the multiset's rank),
    computed the first time a row with a deal left meets it (``done``); the naive table's
    filter reuses what the public one's computed. Writes into ``out``: ``table`` itself, or
    zeros (rows without a deal are not written)."""
    rows, words = table.shape
    k = len(prefix)
    digits = np.zeros(max(m, 1), dtype=np.int64)
    inner_seen = k > 0 and prefix[k - 1] == m - 1  # the row's last digit (a below) is seen
    outer = k - 1 if inner_seen else k
    base = np.zeros(k + 1, dtype=np.int64)  # the seen hands among the row's first m - 1 digits, sorted
    merged = np.zeros(k + 1, dtype=np.int64)  # and the row's last digit, if seen
    scratch = np.zeros((2, k + 2), dtype=np.int64)
    row_ranks = np.zeros(h, dtype=np.int64)  # by last digit: the multiset of the row's seen hands
    last_ranks = np.zeros(h, dtype=np.int64)  # by last player's hand: the multiset of every seen hand
    for hi in range(rows // h):
        if not _live(table, hi, h):
            continue
        _digits(hi, h, m, digits)
        for j in range(outer):  # insertion sort
            v = digits[prefix[j]]
            i = j
            while i > 0 and base[i - 1] > v:
                base[i] = base[i - 1]
                i -= 1
            base[i] = v
        if inner_seen:
            _insertion_ranks(base, outer, binom, h, scratch, row_ranks)
        else:
            row_ranks[:] = _rank(base, outer, binom)
        for a in range(h):
            row = hi * h + a
            live = False
            for w in range(words):
                live |= table[row, w] != 0
            if not live:
                continue
            r = row_ranks[a]
            if not last_seen:
                keep = answers[r] == answer
                for w in range(words):
                    out[row, w] = table[row, w] if keep else np.uint64(0)  # (a bare 0 would make it a float)
                continue
            if not done[r]:
                n = 0  # merged = base plus a, if seen
                for j in range(outer):
                    if inner_seen and n == j and a <= base[j]:
                        merged[n] = a
                        n += 1
                    merged[n] = base[j]
                    n += 1
                if n == outer and inner_seen:
                    merged[n] = a
                    n += 1
                _insertion_ranks(merged, n, binom, h, scratch, last_ranks)
                for w in range(words):
                    word = np.uint64(0)
                    for b in range(64 * w, min(h, 64 * w + 64)):  # branch-free: a hit is unpredictable
                        word |= np.uint64(answers[last_ranks[b]] == answer) << np.uint64(b - 64 * w)
                    memo[r, w] = word
                done[r] = True
            for w in range(words):
                out[row, w] = table[row, w] & memo[r, w]
    return out


@njit(cache=True)
def _reduced(digits, p, m, h):
    """The row's first m - 1 digits without digit p, as a number (then times h, plus the last digit)."""
    r = 0
    for j in range(m - 1):
        if j != p:
            r = r * h + digits[j]
    return r


@njit(cache=True)
def _knows_everywhere(public, naive, called, use_naive, h, m):
    """For every reacting player (``called[p] >= 0``) and every combination of the others'
    hands, whether that player knows theirs (in their own table: naive if ``use_naive[p]``).
    Returns the masks of the first m players, by the others' hands (the row without digit
    p, then the words of the last player), and per row whether the last player knows."""
    rows, words = public.shape
    once = np.zeros((m, rows // h, words), dtype=np.uint64)
    twice = np.zeros((m, rows // h, words), dtype=np.uint64)
    last = np.zeros(rows, dtype=np.bool_)
    digits = np.zeros(max(m, 1), dtype=np.int64)
    bases = np.zeros(m, dtype=np.int64)
    for source in range(2):  # each table once, for the players who read it
        table = naive if source else public
        readers = np.array([p for p in range(m + 1) if called[p] >= 0 and use_naive[p] == (source == 1)])
        if len(readers) == 0:
            continue
        for hi in range(rows // h):
            if not _live(table, hi, h):
                continue
            _digits(hi, h, m, digits)
            for p in range(m - 1):
                bases[p] = _reduced(digits, p, m, h) * h
            for a in range(h):
                row = hi * h + a
                if not _live(table, row, 1):
                    continue
                for p in readers:
                    if p == m:
                        bits = np.uint64(0)
                        for w in range(words):
                            bits += _popcount(table[row, w])
                        last[row] = bits == 1
                        continue
                    k = hi if p == m - 1 else bases[p] + a
                    for w in range(words):
                        x = table[row, w]
                        twice[p, k, w] |= once[p, k, w] & x
                        once[p, k, w] |= x
    return once & ~twice, last


@njit(cache=True)
def _filter_reactions(table, out, knows, last_knows, called, h, m):
    """The deals of ``table`` in which every reacting player knows exactly when they called
    (``knows``, ``last_knows`` from :func:`_knows_everywhere`); and whether any deal went."""
    rows, words = table.shape
    changed = False
    digits = np.zeros(max(m, 1), dtype=np.int64)
    bases = np.zeros(m, dtype=np.int64)
    for hi in range(rows // h):
        if not _live(table, hi, h):  # (``out`` is ``table`` or zeros)
            continue
        _digits(hi, h, m, digits)
        for p in range(m - 1):
            bases[p] = _reduced(digits, p, m, h) * h
        for a in range(h):
            row = hi * h + a
            keep_row = called[m] < 0 or last_knows[row] == (called[m] == 1)
            for w in range(words):
                x = table[row, w] if keep_row else np.uint64(0)
                if x != 0:
                    for p in range(m):
                        if called[p] < 0:
                            continue
                        k = hi if p == m - 1 else bases[p] + a
                        x &= knows[p, k, w] if called[p] == 1 else ~knows[p, k, w]
                changed |= x != table[row, w]  # (before writing: ``out`` may be ``table``)
                out[row, w] = x
    return out, changed
