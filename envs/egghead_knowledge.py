"""EggHead's deduction engine: public knowledge as the set of deals still possible.

One concept, the table of deals still possible kept as a bit set, in one module over 450
lines: its word layout, the compiled kernels that filter it and the copy-on-write bookkeeping
that shares it between states change together, and split, each part would need the others'
private layout.

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
  hands the moderator sees (cached; most questions, by their form, on far fewer cases:
  :mod:`.egghead_deck`), and the table is filtered row by row: the first players' hands
  name a multiset, and the last player's bits that complete it to the answer are one word,
  computed the first time that multiset is met (lazily: a row with no deal left costs
  nothing);
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
that, and the behavioural table models their reactions from it. The naive table catches up
on the answers and revealed hands only when it is read: where everyone analyses, as in the
study's main experiment, nothing reads it, and keeping it would double the cost of a round.

After a few answers most deals are gone, and they stay gone until a hand is revealed: each
table keeps the list of its live blocks (the ``h`` rows that share the first ``n - 2``
hands, and hold a deal), and every pass walks that list, so a round costs in proportion to
the deals left rather than to the 551 million there are at five players. Updates write into
the table in place (unless a copy holds it) and the kernels' masks and memos are buffers
kept from one call to the next: a round allocates nothing the size of a table.

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


_totals_cache: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray]] = {}


def _totals(hands: Hands, seen: int) -> tuple[np.ndarray, np.ndarray]:
    """The value counts summed over ``seen`` hands: every possible sum (as counts, one row
    each, numbered as the multisets of ``seen x cards`` card values are), and for every
    multiset of ``seen`` hands (:func:`_multiset_list`) the number of its sum. Every sum
    occurs: the sorted cards of any sum, cut into hands, are a multiset of hands."""
    key = (hands.cards_per_player, hands.num_values, seen)
    if key not in _totals_cache:
        v, cards = hands.num_values, seen * hands.cards_per_player
        binom = _binomials(v, cards)
        values = _multiset_list(v, cards)  # each sum as its cards, sorted, in rank order
        sums = (values[:, :, None] == np.arange(v)).sum(axis=1, dtype=np.int8)
        ranks = _totals_ranks(_multiset_list(len(hands), seen), hands.counts, binom)
        _totals_cache[key] = (sums, ranks.astype(np.uint16) if len(sums) <= 1 << 16 else ranks)
    return _totals_cache[key]


def _checked(question: Question, found) -> np.ndarray:
    """Answers as uint8, or the error that names the question and its answers' range."""
    found = np.asarray(found)
    if found.size and (found.min() < 0 or found.max() > 255):
        raise ValueError(f"question {question.id!r} answers outside 0..255: {found.min()}..{found.max()}")
    return found.astype(np.uint8)


def _evaluate(hands: Hands, question: Question, seen: int) -> np.ndarray:
    """``question``'s answer for every multiset of ``seen`` hands, evaluated where its form
    allows (:data:`~hiddenhand.envs.egghead_deck.FORMS`) on the few cases that decide it."""
    sets = _multiset_list(len(hands), seen)
    if question.form == "totals":
        sums, ranks = _totals(hands, seen)
        return _checked(question, question.answer(sums[:, None, :]))[ranks]
    if question.form in ("hand_sum", "hand_max", "hand_min"):
        alone = np.asarray(question.answer(hands.counts[:, None, :])).astype(np.int64)
        answers = np.empty(len(sets), dtype=np.uint8)
        low, high = _combine_hands(sets, alone, ("hand_sum", "hand_max", "hand_min").index(question.form), answers)
        _checked(question, [low, high])
        return answers
    if question.form == "matches":
        codes = np.arange(1 << max(seen - 1, 0))  # bit j: hands j and j + 1 of the sorted multiset differ
        steps = (codes[:, None] >> np.arange(seen - 1)) & 1
        examples = np.concatenate([np.zeros((len(codes), 1), dtype=np.int64), np.cumsum(steps, axis=1)], axis=1)
        possible = examples[:, -1] < len(hands)  # (more different hands than there are: no multiset)
        by_code = np.zeros(len(codes), dtype=np.uint8)
        by_code[possible] = _checked(question, question.answer(hands.counts[examples[possible]]))
        return by_code[_match_codes(sets)]
    answers = np.empty(len(sets), dtype=np.uint8)
    for start in range(0, len(sets), _CHUNK):
        answers[start : start + _CHUNK] = _checked(
            question, question.answer(hands.counts[sets[start : start + _CHUNK]])
        )
    return answers


_EACH_ITS_OWN = np.zeros(0, dtype=np.uint16)


def _classes(hands: Hands, question: Question, k: int) -> np.ndarray:
    """For every multiset of ``k`` hands (rank order), a class such that the question's
    answer on that multiset and one hand more depends only on the class and that hand:
    the summed counts for ``"totals"`` (one array for all such questions), the sum, largest
    or smallest of the hands' own answers for ``"hand_*"``. Empty for other forms: each
    multiset is its own class. The answer filter computes one memo per class met instead
    of one per multiset (6,188 sums of four hands, a few dozen hand answers at most,
    against 455,126 multisets)."""
    if question.form not in ("totals", "hand_sum", "hand_max", "hand_min"):
        return _EACH_ITS_OWN
    key = (
        hands.cards_per_player,
        hands.num_values,
        "totals" if question.form == "totals" else question.id,
        "classes",
        k,
    )
    if key not in _answer_cache:
        if question.form == "totals":
            sums, found = _totals(hands, k)
        else:
            alone = np.asarray(question.answer(hands.counts[:, None, :])).astype(np.int64)
            sets = _multiset_list(len(hands), k)
            combined = np.empty(len(sets), dtype=np.int64)
            _combine_hands(sets, alone, ("hand_sum", "hand_max", "hand_min").index(question.form), combined)
            combined -= combined.min()  # numbered densely, in order (few values: a bincount, no sort)
            present = np.bincount(combined) > 0
            found = (np.cumsum(present) - 1)[combined]
        _answer_cache[key] = found.astype(np.uint16 if found.max() < 1 << 16 else np.int64)
    _answer_cache.move_to_end(key)
    return _answer_cache[key]


def multiset_answers(hands: Hands, question: Question, seen: int) -> np.ndarray:
    """``question``'s answer for every multiset of ``seen`` hands, in rank order
    (:func:`_multiset_list`): uint8 (every answer of the standard deck is 0..255)."""
    key = (hands.cards_per_player, hands.num_values, question.id, seen)
    if key in _answer_cache:
        _answer_cache.move_to_end(key)
        return _answer_cache[key]
    answers = _evaluate(hands, question, seen)
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


class _Memo:
    """The answer filter's memo (:func:`_filter_answer`): for each multiset of the seen
    first hands, the last player's hands that complete it to the answer, as words, stamped
    with the filter that computed them. Kept from call to call, so that no call allocates
    or clears it: an entry counts only if its stamp is the caller's, and a call for the
    same answer to the same question (the naive table's, after the behavioural one's)
    keeps the stamp and with it what was computed."""

    def __init__(self, count: int, words: int) -> None:
        self.words = np.zeros((count, words), dtype=np.uint64)
        self.stamps = np.zeros(count, dtype=np.int64)
        self.stamp = 0
        self.key: tuple | None = None

    def stamp_for(self, key: tuple) -> int:
        if key != self.key:
            self.key, self.stamp = key, self.stamp + 1
        return self.stamp


_memos: dict[tuple[int, int, int], _Memo] = {}
_masks: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray]] = {}
"""The reaction filter's ``once`` and ``twice`` masks (:func:`_react`) by shape, kept from
call to call: each call clears what it wrote before it returns."""


def _memo(h: int, k: int, words: int) -> _Memo:
    if (h, k, words) not in _memos:
        _memos[(h, k, words)] = _Memo(comb(h + k - 1, k), words)
    return _memos[(h, k, words)]


def _reaction_masks(m: int, blocks: int, words: int) -> tuple[np.ndarray, np.ndarray]:
    if (m, blocks, words) not in _masks:
        _masks[(m, blocks, words)] = tuple(np.zeros((m, blocks, words), dtype=np.uint64) for _ in range(2))
    return _masks[(m, blocks, words)]


def _live_blocks(table: np.ndarray, h: int) -> np.ndarray:
    """The blocks of ``table`` (``h`` rows each) that hold a deal, in order."""
    return np.flatnonzero(table.reshape(len(table) // h, -1).any(axis=1)).astype(np.int64)


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
        self._public_live = np.arange(h ** (num_players - 2), dtype=np.int64)  # every block holds deals
        self._naive = self._public  # the same object until reactions teach something
        self._naive_live = self._public_live
        self._naive_behind: list[tuple] = []  # updates the naive table has yet to apply, in order
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
        observation, once the agent has acted) no longer counts. Shown hands are applied and
        the naive table catches up first, so that the copies do not each repeat the work."""
        self._reveal_shown()
        self._catch_up()
        other = object.__new__(Knowledge)
        other.__dict__.update(self.__dict__)
        other._shown = {}  # (none pending after the catching up above; containers of its own)
        other._naive_behind = []
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
        h = len(self.hands)
        if "_public_live" not in state:  # (pickled before tables kept their live blocks)
            self._public_live = _live_blocks(self._public, h)
            self._naive_live = self._public_live if self._naive is self._public else _live_blocks(self._naive, h)
            self._naive_behind = []
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
        self._catch_up()
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
        self._question(question_id)  # (an unknown question fails here, not when the naive table catches up)
        step = ("answer", question_id, int(answer), moderator)
        shared = self._naive is self._public
        self._public, self._public_live = self._apply(self._public, self._public_live, shared, step)
        if shared:
            self._naive, self._naive_live = self._public, self._public_live
        else:
            self._naive_behind.append(step)
        self._keep_holders()

    def announce_reactions(self, reactions: Mapping[int, bool]) -> bool:
        """Eq. 3 and 4: ``reactions[p]`` is whether player p called. Keeps the deals in which
        each of them would have reacted so (every player's knowledge taken before any of
        this round's reactions). Returns whether the public knowledge changed. Hands shown
        since the last answer stay pending (:meth:`reveal_solution`): the filter walks the
        rows consistent with them."""
        n, h = self.num_players, len(self.hands)
        called = np.full(n, -1, dtype=np.int64)
        naive = np.zeros(n, dtype=np.bool_)
        for p, c in reactions.items():
            called[p] = bool(c)
            naive[p] = p not in self.analysts
        if naive.any():
            self._catch_up()
        masks = _reaction_masks(n - 1, len(self._public) // h, len(self._full))
        shown = np.array([self._shown.get(p, -1) for p in range(n - 1)], dtype=np.int64)
        out = self._target(self._public)
        changed, live = _react(
            self._public,
            out,
            out is self._public,
            self._public_live,
            self._naive,
            self._naive_live,
            called,
            naive,
            shown,
            self._shown.get(n - 1, -1),
            self._full,
            h,
            n - 1,
            *masks,
        )
        if changed:  # (else keep the table, and the naive one's sharing it)
            self._public, self._public_live = out, live
        self._keep_holders()
        return changed

    def reveal_solution(self, player: int, hand: Hand) -> None:
        """Eq. 5: ``player`` showed ``hand`` and is dealt a new one. Applied to the tables
        before the next answer (or a copy, or a dense read), with every hand shown since, in
        one pass over each table for them all. Until then the tables hold the deals as they
        were before, and reactions and queries read them through the shown hands: the
        reveal frees the shown players' axes, which makes the table ``h`` times bigger per
        player, and the reaction phases after a call would walk all of it."""
        i = self.hands.of(hand)
        # A second showing by the same player before then changes nothing: their axis is
        # already free, and conditioning a free axis on one value and freeing it again is
        # the identity.
        self._shown.setdefault(player, i)

    def _reveal_shown(self) -> None:
        if not self._shown:
            return
        step = ("shown", self._shown)
        self._shown = {}
        shared = self._naive is self._public
        self._public, self._public_live = self._apply(self._public, self._public_live, shared, step)
        if shared:
            self._naive, self._naive_live = self._public, self._public_live
        else:
            self._naive_behind.append(step)
        self._keep_holders()

    def _catch_up(self) -> None:
        """Apply to the naive table, in order, the answers and shown hands it has not seen
        (but those still pending for both tables)."""
        steps, self._naive_behind = self._naive_behind, []
        for step in steps:
            self._naive, self._naive_live = self._apply(self._naive, self._naive_live, False, step)
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
        index = [self._shown.get(p, i) for p, i in enumerate(self._index(deal))]  # (read through shown hands)
        if not behavioural:
            self._catch_up()
        table = self._public if behavioural else self._naive
        last = index.pop()
        if player in self._shown:  # a free axis: every hand or none
            held = (self._shaped(table)[tuple(index)][last // 64] >> np.uint64(last % 64)) & 1
            found = range(len(self.hands)) if held else []
        elif player == self.num_players - 1:
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

    def _apply(self, table: np.ndarray, live: np.ndarray, for_both: bool, step: tuple) -> tuple[np.ndarray, np.ndarray]:
        """``table`` (with its ``live`` blocks) after an answer or shown hands; into the table
        itself where :meth:`_target` allows. Returns the table and its live blocks."""
        out = self._target(table, for_both)
        n, h = self.num_players, len(self.hands)
        if step[0] == "shown":
            shown = np.full(n - 1, -1, dtype=np.int64)
            for p, i in step[1].items():
                if p < n - 1:
                    shown[p] = i
            last = step[1].get(n - 1, -1)
            return out, _reveal(table, out, out is table, live, shown, last, self._full, h, n - 1)
        _, question_id, answer, moderator = step
        seen = [p for p in range(n) if p != moderator]
        answers = multiset_answers(self.hands, self._question(question_id), len(seen))
        prefix = np.array([p for p in seen if p < n - 1], dtype=np.int64)
        memo = _memo(h, len(prefix), len(self._full))
        stamp = memo.stamp_for((self.hands.cards_per_player, self.hands.num_values, question_id, len(seen), answer))
        classes = (
            _classes(self.hands, self._question(question_id), len(prefix)) if moderator != n - 1 else _EACH_ITS_OWN
        )
        args = (
            h,
            n - 1,
            prefix,
            moderator != n - 1,
            answers,
            answer,
            self._binom,
            classes,
            memo.words,
            memo.stamps,
            stamp,
        )
        return out, _filter_answer(table, out, live, *args)

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
# 64 w to 64 w + 63. The loops walk the live blocks hi (the first m - 1 digits; a block is
# the h rows hi * h + a, a the last digit), in order; a block missing from the list holds
# no deal.


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
def _totals_ranks(sets, counts, binom):
    """For each multiset of hands (``sets``), the rank of the multiset of its cards' values
    (its summed counts, written out as sorted values) among all multisets of as many values."""
    v = counts.shape[1]
    ranks = np.empty(len(sets), dtype=np.int64)
    total = np.zeros(v, dtype=np.int64)
    for s in range(len(sets)):
        total[:] = 0
        for j in range(sets.shape[1]):
            for x in range(v):
                total[x] += counts[sets[s, j], x]
        r = 0
        i = 0
        for x in range(v):
            for _ in range(total[x]):
                r += binom[x + i, i + 1]
                i += 1
        ranks[s] = r
    return ranks


@njit(cache=True)
def _combine_hands(sets, alone, how, out):
    """Into ``out``, for each multiset of hands, the sum (``how`` 0), largest (1) or smallest
    (2) of its hands' ``alone`` values; returns the least and greatest of them (before
    they are cut to ``out``'s type)."""
    low, high = 1 << 62, -(1 << 62)
    for s in range(len(sets)):
        acc = alone[sets[s, 0]]
        for j in range(1, sets.shape[1]):
            x = alone[sets[s, j]]
            if how == 0:
                acc += x
            elif how == 1:
                acc = max(acc, x)
            else:
                acc = min(acc, x)
        out[s] = acc
        low, high = min(low, acc), max(high, acc)
    return low, high


@njit(cache=True)
def _match_codes(sets):
    """For each multiset of hands (sorted), which neighbours differ: bit j for hands j and j + 1."""
    out = np.empty(len(sets), dtype=np.int64)
    for s in range(len(sets)):
        code = 0
        for j in range(sets.shape[1] - 1):
            if sets[s, j + 1] != sets[s, j]:
                code |= 1 << j
        out[s] = code
    return out


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
def _empty(table, row):
    for w in range(table.shape[1]):
        if table[row, w] != 0:
            return False
    return True


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
def _filter_answer(table, out, live, h, m, prefix, last_seen, answers, answer, binom, classes, memo, stamps, stamp):
    """The deals of ``table`` on which the answer is ``answer``; returns the blocks that
    still hold one. ``prefix``: the seen players among the first m (sorted);
    ``last_seen``: whether the last player is seen; ``answers`` by multiset of the seen
    hands. For each multiset of the seen first hands, the last player's hands that answer
    so are one row of words (``memo``, by the multiset's class, ``classes[rank]``, or by
    its rank where ``classes`` is empty: :func:`_classes`), computed the first time a row
    with a deal left meets it in a call with this ``stamp`` (``stamps``); the naive
    table's filter reuses what the public one's computed. Writes into ``out``: ``table``
    itself, or zeros (rows without a deal are not written)."""
    words = table.shape[1]
    k = len(prefix)
    digits = np.zeros(max(m, 1), dtype=np.int64)
    inner_seen = k > 0 and prefix[k - 1] == m - 1  # the row's last digit (a below) is seen
    outer = k - 1 if inner_seen else k
    base = np.zeros(k + 1, dtype=np.int64)  # the seen hands among the row's first m - 1 digits, sorted
    merged = np.zeros(k + 1, dtype=np.int64)  # and the row's last digit, if seen
    scratch = np.zeros((2, k + 2), dtype=np.int64)
    row_ranks = np.zeros(h, dtype=np.int64)  # by last digit: the multiset of the row's seen hands
    last_ranks = np.zeros(h, dtype=np.int64)  # by last player's hand: the multiset of every seen hand
    kept = np.empty(len(live), dtype=np.int64)
    n_kept = 0
    for hi in live:
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
        left = False
        for a in range(h):
            row = hi * h + a
            if _empty(table, row):
                continue
            r = row_ranks[a]
            if not last_seen:
                keep = answers[r] == answer
                for w in range(words):
                    out[row, w] = table[row, w] if keep else np.uint64(0)  # (a bare 0 would make it a float)
                left |= keep
                continue
            if len(classes):
                r = classes[r]
            if stamps[r] != stamp:
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
                stamps[r] = stamp
            for w in range(words):
                x = table[row, w] & memo[r, w]
                out[row, w] = x
                left |= x != 0
        if left:
            kept[n_kept] = hi
            n_kept += 1
    return kept[:n_kept].copy()


@njit(cache=True)
def _reduced(digits, p, m, h):
    """The row's first m - 1 digits without digit p, as a number (then times h, plus the last digit)."""
    r = 0
    for j in range(m - 1):
        if j != p:
            r = r * h + digits[j]
    return r


@njit(cache=True)
def _bases(digits, m, h, out):
    """For each of the first m - 1 players, :func:`_reduced` times h."""
    for p in range(m - 1):
        out[p] = _reduced(digits, p, m, h) * h


@njit(cache=True)
def _single(t, start, words):
    """Whether the ``words`` words from ``start`` hold exactly one bit between them."""
    found = False
    for w in range(start, start + words):
        x = t[w]
        if x != 0:
            if found or (x & (x - np.uint64(1))) != 0:
                return False
            found = True
    return found


@njit(cache=True)
def _consistent(digits, shown, m):
    """Whether a block's first m - 1 digits agree with the hands shown (``shown[j] < 0``: none)."""
    for j in range(m - 1):
        if shown[j] >= 0 and digits[j] != shown[j]:
            return False
    return True


@njit(cache=True)
def _effective(table, r0, a_lo, a_hi, words, last_shown, full, out):
    """The rows ``a_lo`` to ``a_hi`` of the block at word ``r0`` as the shown hands leave
    them, into ``out`` (by word within the block): the rows themselves, or where the last
    player showed a hand, a full row where it held that hand and none elsewhere."""
    for a in range(a_lo, a_hi):
        if last_shown < 0:
            for w in range(words):
                out[a * words + w] = table[r0 + a * words + w]
        else:
            held = (table[r0 + a * words + last_shown // 64] >> np.uint64(last_shown % 64)) & np.uint64(1)
            for w in range(words):
                out[a * words + w] = full[w] * held


@njit(cache=True)
def _react(
    public, out, in_place, public_live, naive, naive_live, called, use_naive, shown, last_shown, full, h, m, once, twice
):
    """The deals in which every reacting player (``called[p] >= 0``) knows their hand
    exactly when they called, each by their own table (naive if ``use_naive[p]``). Writes
    into ``out`` (``public`` itself if ``in_place``, else zeros); returns whether any deal
    went, and the blocks of ``out`` that hold one.

    The tables may hold the deals as they were before some players showed their hands
    (``shown[p]`` for the first m players, -1 where none; ``last_shown``: the last
    player's): their axes are then free, and only the rows consistent with the shown hands
    count. A player who showed cannot know their new hand (every hand is possible alike), so
    only the others' reactions filter those rows, and the result is again free along the
    shown axes: rows elsewhere are left as they are (they count for nothing), and the
    phases after a call walk one row in ``h`` instead of the table the reveal would make.

    First, for each of the first m players and each combination of the others' hands (the
    row without digit p, then the words of the last player), the bits seen once and the
    bits seen twice in their table (``once``, ``twice``: all zeros on entry, and again on
    return); from them, who knows (``once & ~twice``, into ``once``), and whether anyone
    does; then, unless nobody called and nobody could know, the filter, the last player
    knowing where their row holds one bit."""
    rows, words = public.shape
    blocks = rows // h
    span = h * words  # the words of a block
    size = blocks * words  # the words of one player's masks
    of = once.reshape(m * size)
    tf = twice.reshape(m * size)
    digits = np.zeros(max(m, 1), dtype=np.int64)
    bases = np.zeros(m, dtype=np.int64)
    t = public.reshape(rows * words)
    last = (naive if called[m] >= 0 and use_naive[m] else public).reshape(rows * words)
    a_lo, a_hi = (shown[m - 1], shown[m - 1] + 1) if shown[m - 1] >= 0 else (0, h)  # the rows of a block that count
    lo, hi_ = a_lo * words, a_hi * words
    doomed = last_shown >= 0 and called[m] == 1  # a player who showed called: no deal is left
    for p in range(m):
        doomed |= shown[p] >= 0 and called[p] == 1
    maybe = doomed  # whether the filter may remove a deal
    for p in range(m + 1):
        maybe |= called[p] == 1
    eff = np.zeros(span, dtype=np.uint64)
    scanned = False
    for source in range(0 if doomed else 2):  # the bits each player sees once and twice, in their own table
        table = (naive if source else public).reshape(rows * words)
        live = naive_live if source else public_live
        readers = _readers(called, use_naive, shown, source, m)
        singles = source == 0 and called[m] >= 0 and last_shown < 0 and not maybe
        scanned |= singles
        if len(readers) == 0 and not singles:
            continue
        for hi in live:
            _digits(hi, h, m, digits)
            if not _consistent(digits, shown, m):
                continue
            _bases(digits, m, h, bases)
            r0 = hi * span
            if singles:
                for a in range(a_lo, a_hi):
                    maybe |= _single(last, r0 + a * words, words)
                singles = not maybe
            src, base = table, r0  # the block's rows as the shown hands leave them: src[base + j]
            if last_shown >= 0:
                _effective(table, r0, a_lo, a_hi, words, last_shown, full, eff)
                src, base = eff, 0
            for p in readers:
                at = p * size
                if p == m - 1:
                    for w in range(words):
                        o = of[at + hi * words + w]
                        tw = tf[at + hi * words + w]
                        for a in range(h):
                            x = src[base + a * words + w]
                            tw |= o & x
                            o |= x
                        of[at + hi * words + w] = o
                        tf[at + hi * words + w] = tw
                else:
                    b = at + bases[p] * words
                    for j in range(lo, hi_):
                        x = src[base + j]
                        tf[b + j] |= of[b + j] & x
                        of[b + j] |= x
    if called[m] >= 0 and last_shown < 0 and not scanned:
        maybe = True  # (the last player's rows were not looked at)
    if not doomed:
        maybe |= _masks_pass(
            public_live, naive_live, called, use_naive, shown, h, m, lo, hi_, words, size, of, tf, True
        )
    changed = False
    live_out = public_live
    if maybe:
        flips = np.zeros(m, dtype=np.uint64)
        for p in range(m):
            if called[p] == 0:
                flips[p] = ~np.uint64(0)
        reacting = np.array([p for p in range(m) if called[p] >= 0 and shown[p] < 0], dtype=np.int64)
        res = out.reshape(rows * words)
        buf = np.zeros(span, dtype=np.uint64)
        kept = np.empty(len(public_live), dtype=np.int64)
        n_kept = 0
        for hi in public_live:
            _digits(hi, h, m, digits)
            if not _consistent(digits, shown, m):
                if in_place:  # (rows the shown hands leave out: as they were)
                    kept[n_kept] = hi
                    n_kept += 1
                continue
            _bases(digits, m, h, bases)
            r0 = hi * span
            src, base = t, r0
            if last_shown >= 0:
                _effective(t, r0, a_lo, a_hi, words, last_shown, full, eff)
                src, base = eff, 0
            for j in range(lo, hi_):
                buf[j] = src[base + j]
            if doomed:
                buf[:] = 0
            if called[m] >= 0 and last_shown < 0 and not doomed:
                for a in range(a_lo, a_hi):
                    if _single(last, r0 + a * words, words) != (called[m] == 1):
                        for w in range(words):
                            buf[a * words + w] = 0
            for p in reacting:
                if doomed:
                    break
                at = p * size
                f = flips[p]
                if p == m - 1:
                    for w in range(words):
                        k = of[at + hi * words + w] ^ f
                        for a in range(h):
                            buf[a * words + w] &= k
                else:
                    b = at + bases[p] * words
                    for j in range(lo, hi_):
                        buf[j] &= of[b + j] ^ f
            diff = np.uint64(0)
            left = np.uint64(0)
            if last_shown < 0:
                for j in range(lo, hi_):
                    x = buf[j]
                    diff |= x ^ t[r0 + j]
                    left |= x
                    res[r0 + j] = x
            else:  # the last player's row is full or empty: keep or drop the shown hand's bit
                for j in range(lo, hi_):
                    diff |= buf[j] ^ eff[j]
                for a in range(a_lo, a_hi):
                    gone = buf[a * words] == 0
                    for w in range(words):
                        x = t[r0 + a * words + w]
                        if gone and w == last_shown // 64:
                            x &= ~(np.uint64(1) << np.uint64(last_shown % 64))
                        res[r0 + a * words + w] = x
                        left |= x
            if in_place:
                for j in range(0, lo):
                    left |= t[r0 + j]
                for j in range(hi_, span):
                    left |= t[r0 + j]
            changed |= diff != 0
            if left != 0:
                kept[n_kept] = hi
                n_kept += 1
        live_out = kept[:n_kept].copy()
    if not doomed:
        _masks_pass(public_live, naive_live, called, use_naive, shown, h, m, lo, hi_, words, size, of, tf, False)
    return changed, live_out


@njit(cache=True)
def _readers(called, use_naive, shown, source, m):
    """The first m players whose knowledge comes from the table ``source`` (1: the naive
    one): those who react, read it, and have not shown a hand."""
    return np.array(
        [p for p in range(m) if called[p] >= 0 and shown[p] < 0 and use_naive[p] == (source == 1)], dtype=np.int64
    )


@njit(cache=True)
def _masks_pass(public_live, naive_live, called, use_naive, shown, h, m, lo, hi_, words, size, of, tf, finish):
    """Over the mask words the first pass of :func:`_react` wrote: with ``finish``, who
    knows (``once & ~twice``, into ``once``; ``twice`` cleared) and whether anyone does;
    else ``once`` cleared."""
    digits = np.zeros(max(m, 1), dtype=np.int64)
    bases = np.zeros(m, dtype=np.int64)
    known = np.uint64(0)
    for source in range(2):
        live = naive_live if source else public_live
        readers = _readers(called, use_naive, shown, source, m)
        if len(readers) == 0:
            continue
        seen = np.full(m, -1, dtype=np.int64)  # (consecutive blocks often share a player's masks)
        for hi in live:
            _digits(hi, h, m, digits)
            if not _consistent(digits, shown, m):
                continue
            _bases(digits, m, h, bases)
            for p in readers:
                start = p * size + (hi if p == m - 1 else bases[p]) * words
                if start == seen[p]:
                    continue
                seen[p] = start
                first, stop = (start, start + words) if p == m - 1 else (start + lo, start + hi_)
                if finish:
                    for j in range(first, stop):
                        x = of[j] & ~tf[j]
                        of[j] = x
                        tf[j] = 0
                        known |= x
                else:
                    for j in range(first, stop):
                        of[j] = 0
    return known != 0


@njit(cache=True)
def _consistent_rows(table, live, shown, last, h, m, offset, sources, values, full):
    """The rows of ``table`` consistent with the shown hands (:func:`_reveal`): counts them,
    and where ``sources`` has room writes each one's number less ``offset`` and its words
    (a full row where the last player's hand was shown)."""
    words = table.shape[1]
    digits = np.zeros(max(m, 1), dtype=np.int64)
    count = 0
    for hi in live:
        _digits(hi, h, m, digits)
        consistent = True
        for j in range(m - 1):
            consistent &= shown[j] < 0 or digits[j] == shown[j]
        if not consistent:
            continue
        for a in range(h):
            row = hi * h + a
            if (shown[m - 1] >= 0 and a != shown[m - 1]) or _empty(table, row):
                continue
            if last >= 0 and (table[row, last // 64] >> np.uint64(last % 64)) & np.uint64(1) == 0:
                continue
            if count < len(sources):
                sources[count] = row - offset
                for w in range(words):
                    values[count, w] = full[w] if last >= 0 else table[row, w]
            count += 1
    return count


@njit(cache=True)
def _reveal(table, out, in_place, live, shown, last, full, h, m):
    """``table`` conditioned on the shown hands (``shown[p]`` for the first m players, -1
    where none; ``last``: the last player's, or -1), those players' axes then free: each
    row consistent with the shown hands is copied to every row that differs from it only
    in those players' digits (the last player's bit, if shown, becomes a full row or
    none). Writes into ``out`` (``table`` itself if ``in_place``, else zeros); returns the
    blocks that hold a deal."""
    words = table.shape[1]
    place = np.ones(m, dtype=np.int64)  # each digit's weight in a row's number
    for j in range(m - 2, -1, -1):
        place[j] = place[j + 1] * h
    free = np.array([j for j in range(m) if shown[j] >= 0], dtype=np.int64)
    offset = 0  # what the shown digits add to a consistent row's number
    for j in free:
        offset += shown[j] * place[j]
    none = np.empty(0, dtype=np.int64)
    count = _consistent_rows(table, live, shown, last, h, m, offset, none, np.empty((0, words), np.uint64), full)
    sources = np.empty(count, dtype=np.int64)
    values = np.empty((count, words), dtype=np.uint64)
    _consistent_rows(table, live, shown, last, h, m, offset, sources, values, full)
    if in_place:
        for hi in live:
            for row in range(hi * h, hi * h + h):
                for w in range(words):
                    out[row, w] = 0
    marked = np.zeros(len(table) // h, dtype=np.bool_)
    v = np.zeros(len(free), dtype=np.int64)
    for i in range(count):
        v[:] = 0
        while True:
            row = sources[i]
            for f in range(len(free)):
                row += v[f] * place[free[f]]
            for w in range(words):
                out[row, w] = values[i, w]
            marked[row // h] = True
            f = len(free) - 1  # the next combination of the free digits
            while f >= 0:
                v[f] += 1
                if v[f] < h:
                    break
                v[f] = 0
                f -= 1
            if f < 0:
                break
    return np.flatnonzero(marked)
