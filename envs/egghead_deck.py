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
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np


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
            [math.factorial(cards_per_player) / math.prod(math.factorial(int(c)) for c in row) / draws for row in self.counts]
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


@dataclass(frozen=True)
class Question:
    """One question card: ``answer(counts)`` maps value counts ``(..., seen, values)`` to
    the moderator's answers ``(...)`` (non-negative integers; yes/no questions answer 1/0)."""

    id: str
    text: str
    answer: Callable[[np.ndarray], np.ndarray]


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


def standard_deck(cards_per_player: int = 3, num_values: int = 6) -> list[Question]:
    """The project's deck: 24 questions plus one "how many cards show a k?" per value
    (30 for six values). It includes the study's "how many values are missing?"."""
    n, v = cards_per_player, num_values
    high = v // 2 + 1
    big = n * (v + 1) // 2
    deck = [
        Question("missing_values", f"How many of the values 1 to {v} are on no card?", lambda c: (_table(c) == 0).sum(-1)),
        Question("distinct_values", "How many different values are on the cards?", lambda c: (_table(c) > 0).sum(-1)),
        Question("total", "What do all the cards add up to?", lambda c: _hand_sums(c).sum(-1)),
        Question("odd_cards", "How many cards show an odd value?", lambda c: _table(c)[..., 0::2].sum(-1)),
        Question("even_total", "Do all the cards add up to an even number?", lambda c: (_hand_sums(c).sum(-1) % 2 == 0)),
        Question("high_cards", f"How many cards show {high} or more?", lambda c: _table(c)[..., high - 1 :].sum(-1)),
        Question("extremes", f"How many cards show a 1 or a {v}?", lambda c: _table(c)[..., 0] + _table(c)[..., -1]),
        Question("highest", "What is the highest value on any card?", lambda c: _highest(_table(c))),
        Question("lowest", "What is the lowest value on any card?", lambda c: _lowest(_table(c))),
        Question("most_common", "How many cards show the most common value?", lambda c: _table(c).max(-1)),
        Question("value_pairs", "How many values are on exactly two cards?", lambda c: (_table(c) == 2).sum(-1)),
        Question("single_values", "How many values are on exactly one card?", lambda c: (_table(c) == 1).sum(-1)),
        Question("pair_hands", "How many players hold exactly two cards of the same value?", lambda c: (c.max(-1) == 2).sum(-1)),
        Question("triple_hands", "How many players hold three cards of the same value?", lambda c: (c.max(-1) >= 3).sum(-1)),
        Question("mixed_hands", "How many players hold cards that are all different?", lambda c: (c.max(-1) == 1).sum(-1)),
        Question(
            "run_hands",
            "How many players hold a run of consecutive values (such as 2-3-4)?",
            lambda c: ((c.max(-1) == 1) & (_highest(c) - _lowest(c) == n - 1)).sum(-1),
        ),
        Question("largest_hand", "What is the largest sum of one player's cards?", lambda c: _hand_sums(c).max(-1)),
        Question("smallest_hand", "What is the smallest sum of one player's cards?", lambda c: _hand_sums(c).min(-1)),
        Question("big_hands", f"How many players' cards add up to more than {big}?", lambda c: (_hand_sums(c) > big).sum(-1)),
        Question("odd_hands", "How many players' cards add up to an odd number?", lambda c: (_hand_sums(c) % 2).sum(-1)),
        Question("top_holders", f"How many players hold at least one {v}?", lambda c: (c[..., -1] > 0).sum(-1)),
        Question("one_holders", "How many players hold at least one 1?", lambda c: (c[..., 0] > 0).sum(-1)),
        Question(
            "complement_hands",
            f"How many players hold two cards that add up to {v + 1}?",
            lambda c: _complement_pair(c).sum(-1),
        ),
        Question("twin_hands", "How many players hold exactly the same cards as another player?", _twins),
    ]
    for value in range(1, v + 1):
        deck.append(
            Question(f"count_{value}", f"How many cards show a {value}?", lambda c, i=value - 1: _table(c)[..., i])
        )
    return deck


def deck_from(spec: str, cards_per_player: int, num_values: int) -> list[Question]:
    """``"standard"`` for the whole deck, or comma-separated question ids for a subset."""
    deck = standard_deck(cards_per_player, num_values)
    if spec == "standard":
        return deck
    by_id = {q.id: q for q in deck}
    ids = [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [i for i in ids if i not in by_id]
    if unknown or not ids:
        raise ValueError(f"deck={spec!r}: unknown question ids {unknown}; use 'standard' or ids from: {', '.join(by_id)}")
    return [by_id[i] for i in dict.fromkeys(ids)]
