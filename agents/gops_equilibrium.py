"""The exact Goofspiel equilibrium (:mod:`hiddenhand.solvers.gops`) as an agent."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from hiddenhand.agents.base import Agent, Observation, legal_mask
from hiddenhand.envs.goofspiel import GoofspielView
from hiddenhand.solvers.gops import GopsSolution, solve
from hiddenhand.validation import check_int


@lru_cache(maxsize=4)
def cached_solution(num_cards: int) -> GopsSolution:
    """The solution of ``num_cards`` Goofspiel, solved once per process (seconds up to 10 cards)."""
    return solve(num_cards, progress=False)


class GopsEquilibriumAgent(Agent):
    """Plays the equilibrium mixed bid of the current position.

    It is the equilibrium of the two-player game with point-difference scoring, random
    prize order and revealed bids; it needs the opponent's hand, so it refuses hidden-bids
    observations. ``solution`` defaults to solving ``num_cards`` in process.
    """

    uses_score = False
    uses_history = False

    def __init__(self, num_cards: int, solution: GopsSolution | None = None, seed: int | None = None) -> None:
        super().__init__(seed)
        self.num_cards = check_int("num_cards", num_cards, 1, 13)
        self.solution = solution if solution is not None else cached_solution(self.num_cards)
        if self.solution.num_cards != self.num_cards:
            raise ValueError(f"the solution is for {self.solution.num_cards} cards, not {self.num_cards}")

    def policy(self, observation: Observation) -> np.ndarray:
        mask = legal_mask(observation)
        if len(mask) != self.num_cards:
            raise ValueError(f"this agent plays {self.num_cards}-card Goofspiel; the observation is for {len(mask)} cards")
        view = GoofspielView.decode(np.asarray(observation["observation"]), self.num_cards)
        if view.num_players != 2 or not view.reveal_bids:
            raise ValueError("the equilibrium is for two players with revealed bids (reveal_bids=True)")
        prizes = view.prizes_to_come + (view.prize,)
        mine, _ = self.solution.strategy(view.hand, view.others_hands[0], prizes, view.prize)
        probs = np.zeros(self.num_cards)
        for card, prob in mine.items():
            probs[card - 1] = prob
        return probs

    def __repr__(self) -> str:
        return f"GopsEquilibriumAgent(num_cards={self.num_cards})"
