"""Bid Spoof's agents: a rule-of-thumb player, and the exact two-player equilibrium as a table.

It reasons from the distribution of the total: its own hand plus the others' hands, each
taken as uniformly random over 0..their coins and independent. Calls are judged by the
chance that they lose a coin (call: the total reaches the bid; cliff, spoof and zero: the
claim is wrong); raises are as low as possible, as the rules advise, while the bid stays
likely.
"""

from __future__ import annotations

import numpy as np

from hiddenhand.agents.base import Agent, Observation, legal_mask
from hiddenhand.envs.bid_spoof import BidSpoofRules


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
        layout, n, c = self.rules.layout, self.rules.num_players, self.rules.coins
        coins = [int(np.flatnonzero(obs[layout.coin_counts + s * (c + 1) : layout.coin_counts + (s + 1) * (c + 1)])[0]) for s in range(n)]
        hold = np.flatnonzero(obs[layout.own_hold : layout.own_hold + c + 1])
        made = np.flatnonzero(obs[layout.bids : layout.last_round].reshape(n * c, n).any(axis=1))
        return coins, (int(hold[0]) if len(hold) else None), (int(made[-1]) + 1 if len(made) else 0)

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


def present_round(rules: BidSpoofRules, observation: np.ndarray) -> bytes:
    """The part of an observation that describes the present round (the table key)."""
    layout = rules.layout
    return np.ascontiguousarray(observation[layout.coin_counts : layout.last_round], dtype=np.float32).tobytes()


class BidSpoofEquilibriumAgent(Agent):
    """Plays a tabulated two-player equilibrium, looked up by the present round."""

    uses_history = False

    def __init__(self, rules: BidSpoofRules, table: dict[bytes, np.ndarray], seed: int | None = None) -> None:
        super().__init__(seed)
        if rules.num_players != 2:
            raise ValueError(f"the exact equilibrium is for two players; {rules!r} has {rules.num_players}")
        self.rules = rules
        self.table = table

    def policy(self, observation: Observation) -> np.ndarray:
        mask = legal_mask(observation)
        probs = self.table.get(present_round(self.rules, np.asarray(observation["observation"])))
        if probs is None:
            raise ValueError(f"{self!r} has no move for this observation: is it a game of {self.rules!r}?")
        if (probs * ~mask).sum() > 1e-9:
            raise RuntimeError(f"{self!r} would play an illegal move here")
        return probs * mask / (probs * mask).sum()

    def __repr__(self) -> str:
        return f"BidSpoofEquilibriumAgent(coins={self.rules.coins}, zero_call={self.rules.zero_call!r}, objective={self.rules.objective!r})"
