"""Agents every game shares, over the agent protocol (:class:`~hiddenhand.agent.Agent`,
which lives in the core and is imported here): an agent fed translated observations, and
uniform random play.
"""

from __future__ import annotations

import numpy as np

from hiddenhand.agent import Agent, Observation


class Translated(Agent):
    """``agent`` fed ``translate(observations)`` (a batch in, a batch out) instead of the
    observations it is given: an agent trained on one observation of a game playing where
    the rules give another, e.g. a Markov Goofspiel agent against the hard heuristic, which
    reads the score (``GoofspielRules.markov_observations``). It plays, and declares, what
    ``agent`` does."""

    def __init__(self, agent: Agent, translate, seed: int | None = None) -> None:
        super().__init__(seed)
        self.agent, self.translate = agent, translate
        self.uses_score, self.uses_history = agent.uses_score, agent.uses_history

    def policy(self, observation: Observation) -> np.ndarray:
        return self.policy_batch({key: np.asarray(observation[key])[None] for key in ("observation", "action_mask")})[0]

    def policy_batch(self, observations: Observation) -> np.ndarray:
        return self.agent.policy_batch(self.translate(observations))

    def __repr__(self) -> str:
        return f"Translated({self.agent!r})"


def legal_mask(observation: Observation) -> np.ndarray:
    """The action mask as booleans, refusing an observation in which nothing is legal."""
    mask = np.asarray(observation["action_mask"]).astype(bool)
    if not mask.any():
        raise ValueError("the action mask is all zeros: this player has no move to make")
    return mask


class RandomAgent(Agent):
    """Uniform over the legal actions."""

    uses_score = False
    uses_history = False

    def policy(self, observation: Observation) -> np.ndarray:
        mask = legal_mask(observation)
        return mask / mask.sum()

    def policy_batch(self, observations: Observation) -> np.ndarray:
        masks = np.asarray(observations["action_mask"]).astype(np.float64)
        counts = masks.sum(axis=1, keepdims=True)
        if (counts == 0).any():
            raise ValueError("an action mask is all zeros: that player has no move to make")
        return masks / counts
