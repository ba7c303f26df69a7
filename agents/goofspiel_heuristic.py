"""The three computer players of a terminal Goofspiel, as exact mixed strategies.

The game is the Bash script of Jerod Michel and Gao Yucheng's "GOOFSPIEL: Determinist's
Bane" (docs/references.md). The script draws ``$RANDOM`` inside its bidding functions; here every random
branch is enumerated with its probability, so :meth:`GoofspielHeuristic.policy` returns
the player's true distribution over bids and ``act`` samples from it.

The three levels (the script's names in brackets):

- ``easy`` (``AI_to_bid_easy``), "value bidding": aim at the prize's value plus -1, 0 or
  +1 (equally likely), clamped to the cards of the game, and bid the card in hand closest
  to that target (the lower one on a tie, as the script's scan of its sorted hand does).
- ``medium`` (``AI_to_bid_medium``): on a high prize (above 9), while the opponent still
  holds high cards (above 9), bluff with the lowest card of at most 3 or fight with the
  lowest card of at least 11, each with probability 1/2, falling back to value bidding
  when it has no such card; otherwise value bidding.
- ``hard`` (``AI_to_bid_hard_adaptive``, the function the script's main loop calls): reads
  the opponent's style from their score after more than 3 rounds (above 7 points a round
  "aggressive", below 5 "conservative"), counts both sides' high cards, and then: on high
  prizes (above 10) bluffs 1/3 and fights 2/3 against an aggressive opponent with two or
  more high cards, fights when behind with more high cards, else bids value; on low
  prizes (below 6) bids its lowest card against a conservative opponent or one without
  high cards, bids value when ahead after round 8, else bids its 1 with probability 1/4
  (when it has it) and value otherwise; on middle prizes it aims one above the prize
  against an aggressive opponent who is short of high cards, else bids value.

Faithful to the script except for these fixes:

- Medium's count of the opponent's high cards (``PLAYER_HIGH_CARD_COUNT``) starts at 4 and
  only goes down when a high card is spent on a low prize, so a person who spends their
  high cards on high prizes is never seen to run out. Here it is the number of high cards
  the opponent still holds, read from the revealed bids.
- Hard's ``game_phase`` is computed after the current prize has left the deck, so it counts
  the current round as played (1 in the first round, not 0 as its comment says). Here it
  is the number of finished rounds.
- The script's thresholds (9, 10, 11, 3, 6, the 7 and 5 points a round, round 8) are for 13
  cards. For ``n`` cards a card threshold ``t`` becomes ``round(t * n / 13)`` and a points
  rate ``r`` becomes ``r * (n + 1) / 14`` (the mean prize is ``(n + 1) / 2``), so 13 cards
  behave exactly as the script and smaller games keep the same shape.
- The unused ``AI_to_bid_hard_proper`` (whose low-prize bluff is inverted: it overwrites
  the bluff card whenever it found one) is not ported.

What the script cannot know it does not use: with hidden bids (``reveal_bids=False``) the
opponent's high cards are unknown, and are assumed all still held, as many as they have
cards left. With more than two players "the opponent" is the strongest other seat: the
most points and the most high cards among them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import numpy as np

from hiddenhand.agent import Agent, Observation, legal_mask
from hiddenhand.envs.goofspiel_observation import GoofspielView, position_keys
from hiddenhand.validation import check_choice

Dist = dict[int, float]


def _mix(*parts: tuple[float, Dist]) -> Dist:
    """The mixture ``sum(weight * dist)`` of card distributions."""
    out: dict[int, float] = defaultdict(float)
    for weight, dist in parts:
        for card, prob in dist.items():
            out[card] += weight * prob
    return dict(out)


def _closest(target: int, hand: Iterable[int]) -> int:
    """The card nearest ``target``; the lower one on a tie."""
    return min(hand, key=lambda card: (abs(card - target), card))


class _Position:
    """What a heuristic reads off one observation, with the script's thresholds scaled."""

    def __init__(self, view: GoofspielView) -> None:
        n = view.num_cards
        self.view = view
        self.n = n
        self.hand = view.hand
        self.prize = view.prize
        self.scale = lambda t: round(t * n / 13)
        high = self.scale(9)
        self.is_high = lambda card: card > high
        others = [
            sum(map(self.is_high, cards))
            if cards is not None
            else min(view.cards_left, sum(1 for c in range(1, n + 1) if c > high))
            for cards in view.others_hands
        ]
        self.own_high = sum(map(self.is_high, view.hand))
        self.opponent_high = max(others)
        self.own_score = None if view.points is None else view.points[0]
        self.opponent_score = None if view.points is None else max(view.points[1:])
        self.rate = lambda r: r * (n + 1) / 14

    def value_bid(self, prize: int) -> Dist:
        dist: dict[int, float] = defaultdict(float)
        for delta in (-1, 0, 1):
            target = min(max(prize + delta, 1), self.n)
            dist[_closest(target, self.hand)] += 1.0 / 3.0
        return dict(dist)

    def lowest(self, where) -> Dist | None:
        """The lowest card in hand satisfying ``where``, as a point mass, or ``None``."""
        cards = [c for c in self.hand if where(c)]
        return {cards[0]: 1.0} if cards else None

    def low_or_value(self, limit: int) -> Dist:
        """Bluff: the lowest card of at most ``limit`` (scaled), else a value bid."""
        return self.lowest(lambda c: c <= self.scale(limit)) or self.value_bid(self.prize)

    def high_or_value(self) -> Dist:
        """Fight: the lowest card of at least 11 (scaled), else a value bid."""
        return self.lowest(lambda c: c >= self.scale(11)) or self.value_bid(self.prize)


def easy(pos: _Position) -> Dist:
    return pos.value_bid(pos.prize)


def medium(pos: _Position) -> Dist:
    if pos.prize > pos.scale(9) and pos.opponent_high > 0:
        return _mix((0.5, pos.low_or_value(3)), (0.5, pos.high_or_value()))
    return pos.value_bid(pos.prize)


def hard(pos: _Position) -> Dist:
    if pos.own_score is None:
        raise ValueError("the hard level reads the score, which a Markov observation (observation='markov') hides")
    phase = pos.view.rounds_played
    style = "unknown"
    if phase > 3:
        if pos.opponent_score > phase * pos.rate(7):
            style = "aggressive"
        elif pos.opponent_score < phase * pos.rate(5):
            style = "conservative"
        else:
            style = "balanced"
    prize = pos.prize
    if prize > pos.scale(10):
        if style == "aggressive" and pos.opponent_high > 1:
            return _mix((1 / 3, pos.low_or_value(3)), (2 / 3, pos.high_or_value()))
        if pos.opponent_score > pos.own_score and pos.own_high > pos.opponent_high:
            return pos.high_or_value()
        return pos.value_bid(prize)
    if prize < pos.scale(6):
        if style == "conservative" or pos.opponent_high == 0:
            return {min(pos.hand): 1.0}
        if pos.own_score > pos.opponent_score and phase > pos.scale(8):
            return pos.value_bid(prize)
        if 1 in pos.hand:
            return _mix((0.25, {1: 1.0}), (0.75, pos.value_bid(prize)))
        return pos.value_bid(prize)
    if style == "aggressive" and pos.opponent_high < 2:
        return pos.value_bid(prize + 1)
    return pos.value_bid(prize)


_STRATEGIES = {"easy": easy, "medium": medium, "hard": hard}

LEVELS = tuple(_STRATEGIES)
"""The heuristic's levels, weakest first (the game's declaration offers each as an agent)."""


class GoofspielHeuristic(Agent):
    """A computer player of the terminal game of "Determinist's Bane": ``level`` is easy, medium or hard."""

    uses_history = False  # hands, prizes and the score are all it reads

    def __init__(self, level: str = "medium", seed: int | None = None) -> None:
        super().__init__(seed)
        self.level = check_choice("level", level, LEVELS)
        # Only hard reads the score (to judge the opponent's style): easy and medium are
        # Markov, so their exploitability is computed over positions alone.
        self.uses_score = self.level == "hard"

    def policy(self, observation: Observation) -> np.ndarray:
        mask = legal_mask(observation)
        view = GoofspielView.decode(np.asarray(observation["observation"]), len(mask))
        if view.prize is None:
            raise ValueError("no prize is on the table: this observation is not a bidding decision")
        dist = _STRATEGIES[self.level](_Position(view))
        probs = np.zeros(len(mask))
        for card, prob in dist.items():
            probs[card - 1] += prob
        if (probs[~mask] > 0).any():
            raise ValueError(f"the observed hand {view.hand} disagrees with the action mask {mask.astype(int)}")
        return probs

    def policy_batch(self, observations: Observation) -> np.ndarray:
        """One :meth:`policy` per distinct position of the batch (the level reads the
        position, and the score when it is hard: :func:`position_keys`), copied to every row
        that shares it: exact exploitability asks about millions of rows, which differ
        mostly in what no level reads (the prizes to come, the order of past rounds)."""
        vectors = np.asarray(observations["observation"])
        keys = position_keys(vectors, np.asarray(observations["action_mask"]).shape[1], score=self.uses_score)
        _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        rows = np.stack([self.policy({key: value[i] for key, value in observations.items()}) for i in first])
        return rows[inverse.ravel()]

    def __repr__(self) -> str:
        return f"GoofspielHeuristic(level={self.level!r})"


def heuristic(rules=None, level: str = "medium", seed: int | None = None) -> GoofspielHeuristic:
    """A level as a factory of the game's declaration (which passes the rules; every
    configuration of Goofspiel is played alike)."""
    return GoofspielHeuristic(level, seed=seed)
