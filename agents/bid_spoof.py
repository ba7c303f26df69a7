"""Bid Spoof's agents: a rule-of-thumb player, and the exact two-player equilibrium as a table.

It reasons from the distribution of the total: its own hand plus the others' hands, each
taken as uniformly random over 0..their coins and independent. Calls are judged by the
chance that they lose a coin (call: the total reaches the bid; cliff, spoof and zero: the
claim is wrong); raises are as low as possible, as the rules advise, while the bid stays
likely.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hiddenhand.agent import Agent, Observation, legal_mask
from hiddenhand.envs.bid_spoof import BidSpoofRules
from hiddenhand.layout import one_hot_index
from hiddenhand.solvers.bid_spoof import BidSpoofSolution, present_round, solve, solve_round
from hiddenhand.solvers.cache import solved
from hiddenhand.validation import mismatch, named


class BidSpoofHeuristic(Agent):
    """Holds a uniformly random number of coins (so its hand tells nothing), chooses the
    direction at random, and on its turn, with the last bid b and the total T:

    - opens with zero when P(T = 0) >= 1/2 and zero is allowed, else with a bid of 1;
    - says cliff when P(T = b) >= 1/2 (when it can still win a coin), spoof when
      P(T = every coin) >= 1/2, and calls when P(T >= b) < ``bluff``;
    - otherwise raises by one if P(T >= b + 1) >= ``bluff``, or else calls.
    """

    uses_score = False
    uses_history = False

    def __init__(self, rules: BidSpoofRules, bluff: float = 0.5, seed: int | None = None) -> None:
        super().__init__(seed)
        self.rules = rules
        self.bluff = bluff

    def _view(self, obs: np.ndarray) -> tuple[list[int], int | None, int]:
        """(coins by relative seat, own hand, last bid or 0)."""
        views = self.rules.layout.decode(obs)
        coins = [one_hot_index(seat) for seat in views["coins"]]
        made = np.flatnonzero(views["bids"].any(axis=1))  # bid b is row b - 1 of the table
        return coins, one_hot_index(views["hold"]), (int(made[-1]) + 1 if len(made) else 0)

    def policy(self, observation: Observation) -> np.ndarray:
        mask = legal_mask(observation)
        acts = self.rules.actions
        probs = np.zeros(len(mask))
        kinds = {acts.decode(a)[0]: a for a in np.flatnonzero(mask)}
        if "hold" in kinds or "direction" in kinds:  # uniform over hands, or over directions
            return mask / mask.sum()
        coins, hold, last = self._view(np.asarray(observation["observation"]))
        total = np.zeros(1)
        total[0] = 1.0
        for c in coins[1:]:
            total = np.convolve(total, np.full(c + 1, 1.0 / (c + 1)))
        dist = np.zeros(sum(coins) + 1)
        dist[hold : hold + len(total)] = total  # P(T = t)
        at_least = lambda b: dist[b:].sum()  # noqa: E731

        def choose(action: int) -> np.ndarray:
            probs[action] = 1.0
            return probs

        allowed = lambda name: mask[acts.call(name)]  # noqa: E731
        if last == 0:
            if allowed("zero") and dist[0] >= 0.5:
                return choose(acts.call("zero"))
            return choose(acts.bid(1))
        if allowed("cliff") and dist[last] >= 0.5 and coins[0] < self.rules.coins:
            return choose(acts.call("cliff"))
        if allowed("spoof") and dist[-1] >= 0.5:
            return choose(acts.call("spoof"))
        if at_least(last) < self.bluff or last + 1 >= len(dist) or at_least(last + 1) < self.bluff:
            return choose(acts.call("call"))
        return choose(acts.bid(last + 1))

    def __repr__(self) -> str:
        return f"BidSpoofHeuristic(bluff={self.bluff})"


def cached_solution(coins: int, zero_call: str = "round_start") -> BidSpoofSolution:
    """The whole two-player game solved once per process (seconds at 3 coins:
    :func:`hiddenhand.solvers.cache.solved`)."""
    return solved(solve, coins, zero_call)


class BidSpoofEquilibriumAgent(Agent):
    """Plays a tabulated two-player equilibrium, looked up by the present round."""

    uses_history = False

    def __init__(self, rules: BidSpoofRules, solution: Any = None, seed: int | None = None) -> None:
        """``solution``: a :class:`~hiddenhand.solvers.bid_spoof.BidSpoofSolution` covering
        ``rules`` or its table; by default the game's (or the round's) is solved once per process."""
        super().__init__(seed)
        if rules.num_players != 2:
            raise ValueError(f"the exact equilibrium is for two players, not {named('num_players', rules.num_players)}")
        if solution is None:
            if rules.objective == "round":
                solution = solve_round(rules.coins, rules.zero_call)[1]
            else:
                solution = cached_solution(rules.coins, rules.zero_call)
        if hasattr(solution, "table"):
            if (solution.coins, solution.zero_call) != (rules.coins, rules.zero_call):
                made = {"coins": solution.coins, "zero_call": solution.zero_call}
                raise ValueError(f"the solution is for {mismatch(made, rules.params)}")
            solution = solution.table
        self.rules = rules
        self.table = solution

    def policy(self, observation: Observation) -> np.ndarray:
        mask = legal_mask(observation)
        probs = self.table.get(present_round(self.rules, np.asarray(observation["observation"])))
        if probs is None:
            raise ValueError(f"{self!r} has no move for this observation: is it a game of {self.rules}?")
        if (probs * ~mask).sum() > 1e-9:
            raise RuntimeError(f"{self!r} would play an illegal move here")
        return probs * mask / (probs * mask).sum()

    def __repr__(self) -> str:
        r = self.rules
        return f"BidSpoofEquilibriumAgent(coins={r.coins}, zero_call={r.zero_call!r}, objective={r.objective!r})"
