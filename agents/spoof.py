"""Spoof agents: the exact equilibrium and a rule-of-thumb player.

Both read only the present round from the observation (:class:`SpoofView`): every round
ends with both hands shown, so the past carries no information about the opponent's
present hand. They are built for one configuration of the game (``SpoofRules``), whose
layout tells them where things sit in the observation vector.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hiddenhand.agent import Agent, Observation, legal_mask
from hiddenhand.envs.spoof import SpoofRules, SpoofView
from hiddenhand.solvers.cache import solved
from hiddenhand.solvers.spoof import SpoofSolution, solve, solve_round


def cached_solution(matches: int) -> SpoofSolution:
    """The whole game up to ``matches`` each, solved once per process (agents and the advisor
    share it: :func:`hiddenhand.solvers.cache.solved`)."""
    return solved(solve, matches)


class _SpoofAgent(Agent):
    """Shared plumbing: decode the observation, and spread probabilities over holds or bids."""

    uses_history = False

    def __init__(self, rules: SpoofRules, seed: int | None = None) -> None:
        super().__init__(seed)
        self.rules = rules

    def view(self, observation: Observation) -> SpoofView:
        return SpoofView.decode(np.asarray(observation["observation"]), self.rules.layout)

    def _actions(self, view: SpoofView, probs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``probs`` over holds (hand phase) or bids, as probabilities over actions."""
        out = np.zeros(self.rules.num_actions)
        offset = 0 if view.hold is None else self.rules.bid_action(0)
        out[offset : offset + len(probs)] = probs
        out *= mask
        total = out.sum()
        if total < 1 - 1e-9:
            raise RuntimeError(f"{self!r} put probability {1 - total:.3g} on illegal actions in {view}")
        return out / total


class SpoofEquilibriumAgent(_SpoofAgent):
    """Plays an exact equilibrium: of the whole game (``objective="game"``, from a
    :class:`~hiddenhand.solvers.spoof.SpoofSolution`) or of the single round
    (``objective="round"``, the round's own sequence-form solution). ``solution`` defaults to
    solving the game once per process (under a second at 3 matches).

    The whole game's strategies are stationary, each round optimal given the values of the
    rounds after it, with the loop of a round where nobody is right ended by the player it
    favours, so that a losing first bidder cannot stall them to a draw: exploitable by about
    1e-12 in the unlimited game (see :mod:`hiddenhand.solvers.spoof`)."""

    def __init__(self, rules: SpoofRules, solution: Any | None = None, seed: int | None = None) -> None:
        super().__init__(rules, seed)
        if self.rules.objective == "game":
            solution = solution if solution is not None else cached_solution(self.rules.max_hold)
            if self.rules.max_hold > solution.matches:
                raise ValueError(
                    f"the solution covers up to {solution.matches} matches; {self.rules} needs {self.rules.max_hold}"
                )
        self.solution = solution

    def strategy(self, view: SpoofView):
        if self.rules.objective == "round":
            return solve_round(*self.rules.matches)[1]
        key = (view.mine, view.theirs) if view.first else (view.theirs, view.mine)
        return self.solution.strategy(*key)

    def policy(self, observation: Observation) -> np.ndarray:
        mask = legal_mask(observation)
        view = self.view(observation)
        strategy = self.strategy(view)
        if view.hold is None:
            return self._actions(view, strategy.hold(view.first), mask)
        return self._actions(view, strategy.bid(view.first, view.hold, view.their_bid), mask)

    def __repr__(self) -> str:
        return f"SpoofEquilibriumAgent({self.rules!r})"


class SpoofHeuristic(_SpoofAgent):
    """A rule of thumb: hold ``share`` of your matches (mixing the two nearest counts when
    that is not whole), and bid your hand plus the hand you expect the opponent to hold.

    The expected hand is half of the opponent's matches, as if they held a uniformly random
    number. Bidding second, it reads the first bid as the opponent's hand plus half of
    yours, and takes the rest as their hand (kept within what they have). Among the
    possible totals (your hand to your hand plus all of theirs) it bids the one nearest
    that estimate, never the opponent's bid; ties are split evenly.
    """

    def __init__(self, rules: SpoofRules, share: float = 0.5, seed: int | None = None) -> None:
        super().__init__(rules, seed)
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"share={share!r} is out of range; allowed: 0 to 1")
        self.share = share

    def policy(self, observation: Observation) -> np.ndarray:
        mask = legal_mask(observation)
        view = self.view(observation)
        if view.hold is None:
            target = self.share * view.mine
            low = int(np.floor(target))
            probs = np.zeros(view.mine + 1)
            probs[low] = 1.0 - (target - low)
            if target > low:
                probs[low + 1] = target - low
            return self._actions(view, probs, mask)
        if view.their_bid is None:
            expected = view.theirs / 2
        else:
            expected = float(np.clip(view.their_bid - view.mine / 2, 0, view.theirs))
        possible = np.arange(view.hold, view.hold + view.theirs + 1)
        possible = possible[possible != view.their_bid]
        distance = np.abs(possible - (view.hold + expected))
        best = possible[np.isclose(distance, distance.min())]
        probs = np.zeros(self.rules.max_total + 1)
        probs[best] = 1.0 / len(best)
        return self._actions(view, probs, mask)

    def __repr__(self) -> str:
        return f"SpoofHeuristic(share={self.share})"
