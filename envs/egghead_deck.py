"""EggHead's cards and questions, as data.

A hand is a multiset of ``cards_per_player`` values from 1..``num_values`` (cards come from
an unlimited supply); :class:`Hands` numbers them in lexicographic order of their sorted
values, (1, 1, 1), (1, 1, 2), ..., (6, 6, 6): 56 hands for 3 cards of 6 values.

A question's answer is a function of the hands the moderator sees, given as value
*counts*: an integer array of shape ``(..., seen_players, num_values)`` whose last axis
counts each value in one hand. Every answer is computed for a whole batch of deals at
once (the leading axes), which is how the deduction engine evaluates a question on every
deal still possible. Questions depend on the counts only, never on which seat holds
which hand, so the moderator's answer is the same whoever asks.

Most questions depend on still less, and say so in their ``form`` (:data:`FORMS`): on the
value counts summed over the seen hands (``"totals"``: 15,504 sums of 15 cards against 5.5
million multisets of five hands), on each hand alone, summed or maximised over the hands
(``"hand_sum"``, ``"hand_max"``, ``"hand_min"``: 56 hands), or on which seen hands are
equal (``"matches"``). The deduction engine evaluates a question once per multiset of seen
hands; its form lets it evaluate the answer function on those few cases instead and spread
the results, which gives the same answers in a fraction of the time. The answer function
stays the definition: a form only says where it may be evaluated.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from hiddenhand.validation import named, split_items


class Hands:
    """The hands of ``cards_per_player`` cards with values 1..``num_values``, numbered."""

    def __init__(self, cards_per_player: int, num_values: int) -> None:
        self.cards_per_player = cards_per_player
        self.num_values = num_values
        self.tuples: list[tuple[int, ...]] = list(
            itertools.combinations_with_replacement(range(1, num_values + 1), cards_per_player)
        )
        self.index = {hand: i for i, hand in enumerate(self.tuples)}
        self.counts = np.zeros((len(self.tuples), num_values), dtype=np.int8)
        for i, hand in enumerate(self.tuples):
            for value in hand:
                self.counts[i, value - 1] += 1
        # Chance of each hand when every card is drawn uniformly and independently.
        draws = num_values**cards_per_player
        self.probabilities = np.array(
            [
                math.factorial(cards_per_player) / math.prod(math.factorial(int(c)) for c in row) / draws
                for row in self.counts
            ]
        )

    def __len__(self) -> int:
        return len(self.tuples)

    def of(self, hand) -> int:
        """The number of ``hand`` (any order of its values); ``ValueError`` if it is not one."""
        key = tuple(sorted(int(v) for v in hand))
        if key not in self.index:
            raise ValueError(
                f"{tuple(hand)!r} is not a hand: {self.cards_per_player} values from 1 to {self.num_values}"
            )
        return self.index[key]


FORMS = {
    "deal": "any function of the seen hands' value counts",
    "totals": "a function of the value counts summed over the seen hands: evaluated on the sums, passed as one hand",
    "hand_sum": "the sum over the seen hands of the answer for that hand alone",
    "hand_max": "the largest over the seen hands of the answer for that hand alone",
    "hand_min": "the smallest over the seen hands of the answer for that hand alone",
    "matches": "a function of which seen hands are equal, not of what they hold",
}
"""How a question's answer depends on the seen hands (:attr:`Question.form`), by name."""


@dataclass(frozen=True)
class Question:
    """One question card: ``answer(counts)`` maps value counts ``(..., seen, values)`` to
    the moderator's answers ``(...)`` (non-negative integers; yes/no questions answer 1/0).
    ``form`` (a key of :data:`FORMS`) says what the answer depends on, so that the
    deduction engine can evaluate it on fewer cases; ``"deal"`` claims nothing."""

    id: str
    text: str
    answer: Callable[[np.ndarray], np.ndarray]
    form: str = "deal"

    def __post_init__(self) -> None:
        if self.form not in FORMS:
            raise ValueError(f"question {self.id!r}: form={self.form!r} is not one of {', '.join(FORMS)}")


def _values(c: np.ndarray) -> np.ndarray:
    return np.arange(1, c.shape[-1] + 1, dtype=np.int16)


def _table(c: np.ndarray) -> np.ndarray:
    """Counts of each value over every hand seen: ``(..., values)``."""
    return c.sum(axis=-2, dtype=np.int16)


def _hand_sums(c: np.ndarray) -> np.ndarray:
    """Each hand's sum: ``(..., seen)``."""
    return (c * _values(c)).sum(axis=-1, dtype=np.int16)


def _highest(c: np.ndarray) -> np.ndarray:
    return np.where(c > 0, _values(c), 0).max(axis=-1)


def _lowest(c: np.ndarray) -> np.ndarray:
    return np.where(c > 0, _values(c), c.shape[-1] + 1).min(axis=-1)


def _complement_pair(c: np.ndarray) -> np.ndarray:
    """Per hand: two of its cards add up to ``num_values + 1`` (7 for six values)."""
    v = c.shape[-1]
    found = np.zeros(c.shape[:-1], dtype=bool)
    for low in range(1, v // 2 + 1):
        high = v + 1 - low
        found |= (c[..., low - 1] >= 2) if low == high else (c[..., low - 1] > 0) & (c[..., high - 1] > 0)
    return found


def _twins(c: np.ndarray) -> np.ndarray:
    """Players whose hand equals another player's."""
    same = (c[..., :, None, :] == c[..., None, :, :]).all(axis=-1)
    return (same.sum(axis=-1) > 1).sum(axis=-1)


# Answers of the standard deck: module-level functions (and ``functools.partial`` of them
# for the ones with a parameter) rather than lambdas, so that decks, rules and states pickle.
def _missing_values(c: np.ndarray) -> np.ndarray:
    return (_table(c) == 0).sum(-1)


def _distinct_values(c: np.ndarray) -> np.ndarray:
    return (_table(c) > 0).sum(-1)


def _total(c: np.ndarray) -> np.ndarray:
    return _hand_sums(c).sum(-1)


def _odd_cards(c: np.ndarray) -> np.ndarray:
    return _table(c)[..., 0::2].sum(-1)


def _even_total(c: np.ndarray) -> np.ndarray:
    return _hand_sums(c).sum(-1) % 2 == 0


def _cards_from(c: np.ndarray, low: int) -> np.ndarray:
    """Cards showing ``low`` or more."""
    return _table(c)[..., low - 1 :].sum(-1)


def _extremes(c: np.ndarray) -> np.ndarray:
    return _table(c)[..., 0] + _table(c)[..., -1]


def _highest_card(c: np.ndarray) -> np.ndarray:
    return _highest(_table(c))


def _lowest_card(c: np.ndarray) -> np.ndarray:
    return _lowest(_table(c))


def _most_common(c: np.ndarray) -> np.ndarray:
    return _table(c).max(-1)


def _values_on(c: np.ndarray, cards: int) -> np.ndarray:
    """Values on exactly ``cards`` cards."""
    return (_table(c) == cards).sum(-1)


def _pair_hands(c: np.ndarray) -> np.ndarray:
    return (c.max(-1) == 2).sum(-1)


def _triple_hands(c: np.ndarray) -> np.ndarray:
    return (c.max(-1) >= 3).sum(-1)


def _mixed_hands(c: np.ndarray) -> np.ndarray:
    return (c.max(-1) == 1).sum(-1)


def _run_hands(c: np.ndarray, cards_per_player: int) -> np.ndarray:
    return ((c.max(-1) == 1) & (_highest(c) - _lowest(c) == cards_per_player - 1)).sum(-1)


def _largest_hand(c: np.ndarray) -> np.ndarray:
    return _hand_sums(c).max(-1)


def _smallest_hand(c: np.ndarray) -> np.ndarray:
    return _hand_sums(c).min(-1)


def _big_hands(c: np.ndarray, big: int) -> np.ndarray:
    return (_hand_sums(c) > big).sum(-1)


def _odd_hands(c: np.ndarray) -> np.ndarray:
    return (_hand_sums(c) % 2).sum(-1)


def _top_holders(c: np.ndarray) -> np.ndarray:
    return (c[..., -1] > 0).sum(-1)


def _one_holders(c: np.ndarray) -> np.ndarray:
    return (c[..., 0] > 0).sum(-1)


def _complement_hands(c: np.ndarray) -> np.ndarray:
    return _complement_pair(c).sum(-1)


def _count(c: np.ndarray, index: int) -> np.ndarray:
    """Cards showing value ``index + 1``."""
    return _table(c)[..., index]


def standard_deck(cards_per_player: int = 3, num_values: int = 6) -> list[Question]:
    """The project's deck: 24 questions plus one "how many cards show a k?" per value
    (30 for six values). It includes the study's "how many values are missing?"."""
    n, v = cards_per_player, num_values
    high = v // 2 + 1
    big = n * (v + 1) // 2
    deck = [
        Question("missing_values", f"How many of the values 1 to {v} are on no card?", _missing_values, "totals"),
        Question("distinct_values", "How many different values are on the cards?", _distinct_values, "totals"),
        Question("total", "What do all the cards add up to?", _total, "totals"),
        Question("odd_cards", "How many cards show an odd value?", _odd_cards, "totals"),
        Question("even_total", "Do all the cards add up to an even number?", _even_total, "totals"),
        Question("high_cards", f"How many cards show {high} or more?", partial(_cards_from, low=high), "totals"),
        Question("extremes", f"How many cards show a 1 or a {v}?", _extremes, "totals"),
        Question("highest", "What is the highest value on any card?", _highest_card, "totals"),
        Question("lowest", "What is the lowest value on any card?", _lowest_card, "totals"),
        Question("most_common", "How many cards show the most common value?", _most_common, "totals"),
        Question("value_pairs", "How many values are on exactly two cards?", partial(_values_on, cards=2), "totals"),
        Question("single_values", "How many values are on exactly one card?", partial(_values_on, cards=1), "totals"),
        Question("pair_hands", "How many players hold exactly two cards of the same value?", _pair_hands, "hand_sum"),
        Question("triple_hands", "How many players hold three cards of the same value?", _triple_hands, "hand_sum"),
        Question("mixed_hands", "How many players hold cards that are all different?", _mixed_hands, "hand_sum"),
        Question(
            "run_hands",
            "How many players hold a run of consecutive values (such as 2-3-4)?",
            partial(_run_hands, cards_per_player=n),
            "hand_sum",
        ),
        Question("largest_hand", "What is the largest sum of one player's cards?", _largest_hand, "hand_max"),
        Question("smallest_hand", "What is the smallest sum of one player's cards?", _smallest_hand, "hand_min"),
        Question(
            "big_hands", f"How many players' cards add up to more than {big}?", partial(_big_hands, big=big), "hand_sum"
        ),
        Question("odd_hands", "How many players' cards add up to an odd number?", _odd_hands, "hand_sum"),
        Question("top_holders", f"How many players hold at least one {v}?", _top_holders, "hand_sum"),
        Question("one_holders", "How many players hold at least one 1?", _one_holders, "hand_sum"),
        Question(
            "complement_hands",
            f"How many players hold two cards that add up to {v + 1}?",
            _complement_hands,
            "hand_sum",
        ),
        Question("twin_hands", "How many players hold exactly the same cards as another player?", _twins, "matches"),
    ]
    for value in range(1, v + 1):
        deck.append(
            Question(f"count_{value}", f"How many cards show a {value}?", partial(_count, index=value - 1), "totals")
        )
    return deck


SEPARATORS = ",;"
"""What separates the items of a list given as one string: commas in Python and on the
command line, semicolons in an OpenSpiel game string (where commas separate parameters).
The items are written without spaces, none empty; the list may end with one separator
(``analysts=0;``: how an OpenSpiel game string keeps a list of one number a string)."""


def parse_deck(spec: Any, cards_per_player: int, num_values: int) -> tuple[str, list[Question]]:
    """The ``deck`` argument as (canonical spec, questions). ``spec`` is ``"standard"``,
    question ids separated by commas or semicolons (``"total,missing_values"``, see
    :data:`SEPARATORS`), or a list or tuple of ids; repeated ids count once. The canonical
    spec is ``"standard"`` for the whole deck in its order, else the ids joined by commas."""
    deck = standard_deck(cards_per_player, num_values)
    by_id = {q.id: q for q in deck}
    allowed = (
        "'standard', or question ids as a list (['total', 'missing_values']) or a string separated by "
        f"commas or semicolons without spaces ('total,missing_values'); the ids: {', '.join(by_id)}"
    )
    if isinstance(spec, str):
        if spec == "standard":
            return "standard", deck
        ids = split_items("deck", spec, allowed, SEPARATORS, trailing=True)
    elif isinstance(spec, (list, tuple)) and spec and all(isinstance(i, str) for i in spec):
        ids = list(spec)
    else:
        raise ValueError(f"{named('deck', spec)} is not a deck; allowed: {allowed}")
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        raise ValueError(f"{named('deck', spec)} has unknown question ids {unknown}; allowed: {allowed}")
    questions = [by_id[i] for i in dict.fromkeys(ids)]
    if [q.id for q in questions] == list(by_id):
        return "standard", deck
    return ",".join(q.id for q in questions), questions


def deck_from(spec: Any, cards_per_player: int, num_values: int) -> list[Question]:
    """The questions of a ``deck`` argument (see :func:`parse_deck`)."""
    return parse_deck(spec, cards_per_player, num_values)[1]
