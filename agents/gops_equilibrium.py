"""The exact Goofspiel equilibrium (:mod:`hiddenhand.solvers.gops`) as an agent."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from hiddenhand.agents.base import Agent, Observation, legal_mask
from hiddenhand.envs.goofspiel import GoofspielRules, GoofspielView
from hiddenhand.envs.goofspiel_v0 import SOLVED, unsolved
from hiddenhand.files import read_npz_meta
from hiddenhand.solvers.gops import GopsSolution, solve

IN_PROCESS_SOLVE_LIMIT = 10
"""The equilibrium agent solves up to this many cards when it is created (seconds)."""


def check_solved_game(rules: GoofspielRules) -> None:
    """Refuse a Goofspiel configuration other than the one the exact solver solves."""
    differs = unsolved(rules)
    if differs:
        raise ValueError(f"the exact equilibrium is of the game {SOLVED}; this one has {differs}")


def load_solution_agent(path, rules: GoofspielRules | None, seed: int | None = None) -> GopsEquilibriumAgent | None:
    """A solution file of ``hiddenhand solve goofspiel --out`` as an agent for ``rules``, or
    ``None`` when ``path`` is not a solution file (it may be a saved policy)."""
    path = Path(path)
    if path.suffix != ".npz" or not path.is_file():
        return None
    try:
        cards = read_npz_meta(path).get("num_cards")
    except ValueError:
        return None
    if cards is None:
        return None
    rules = rules if rules is not None else GoofspielRules(num_cards=cards)
    if rules.params["num_cards"] != cards:
        raise ValueError(f"{path} solves {cards} cards; the game has {rules.params['num_cards']}")
    return GopsEquilibriumAgent(rules, GopsSolution.load(path), seed=seed)


@lru_cache(maxsize=4)
def cached_solution(num_cards: int) -> GopsSolution:
    """The solution of ``num_cards`` Goofspiel, solved once per process (seconds up to 10 cards)."""
    return solve(num_cards, progress=False)


class GopsEquilibriumAgent(Agent):
    """Plays the equilibrium mixed bid of the current position.

    It is the equilibrium of the two-player game with point-difference scoring, random
    prize order and revealed bids; it needs the opponent's hand, so it refuses other rules
    and hidden-bids observations. ``rules`` may be given as the number of cards.
    ``solution`` defaults to solving the game once per process (seconds up to
    :data:`IN_PROCESS_SOLVE_LIMIT` cards; larger games need a saved solution file).
    """

    uses_score = False
    uses_history = False

    def __init__(
        self, rules: GoofspielRules | int, solution: GopsSolution | None = None, seed: int | None = None
    ) -> None:
        super().__init__(seed)
        rules = GoofspielRules(num_cards=rules) if isinstance(rules, (int, np.integer)) else rules
        check_solved_game(rules)
        self.num_cards = rules.params["num_cards"]
        if solution is None:
            if self.num_cards > IN_PROCESS_SOLVE_LIMIT:
                raise ValueError(
                    f"solving {self.num_cards} cards takes long: run `hiddenhand solve goofspiel --cards "
                    f"{self.num_cards} --out gops{self.num_cards}.npz` once, then pass the file as the agent"
                )
            solution = cached_solution(self.num_cards)
        self.solution = solution
        if self.solution.num_cards != self.num_cards:
            raise ValueError(f"the solution is for {self.solution.num_cards} cards, not {self.num_cards}")

    def policy(self, observation: Observation) -> np.ndarray:
        mask = legal_mask(observation)
        if len(mask) != self.num_cards:
            raise ValueError(
                f"this agent plays {self.num_cards}-card Goofspiel; the observation is for {len(mask)} cards"
            )
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
