"""An agent fed translated observations: one trained on one observation of a game, playing
where the rules give another.

The agent protocol and uniform random play (:class:`~hiddenhand.agent.Agent`,
:class:`~hiddenhand.agent.RandomAgent`, ``legal_mask``) live in the core, where the registry
can reach them; their old spellings here still work, with a warning.
"""

from __future__ import annotations

import numpy as np

from hiddenhand import agent as protocol  # by module: Agent here is only the old spelling, which warns
from hiddenhand.moved import moved


class Translated(protocol.Agent):
    """``agent`` fed ``translate(observations)`` (a batch in, a batch out) instead of the
    observations it is given: an agent trained on one observation of a game playing where
    the rules give another, e.g. a Markov Goofspiel agent against the hard heuristic, which
    reads the score (``GoofspielRules.markov_observations``). It plays, and declares, what
    ``agent`` does."""

    def __init__(self, agent: protocol.Agent, translate, seed: int | None = None) -> None:
        super().__init__(seed)
        self.agent, self.translate = agent, translate
        self.uses_score, self.uses_history = agent.uses_score, agent.uses_history

    def policy(self, observation: protocol.Observation) -> np.ndarray:
        return self.policy_batch({key: np.asarray(observation[key])[None] for key in ("observation", "action_mask")})[0]

    def policy_batch(self, observations: protocol.Observation) -> np.ndarray:
        return self.agent.policy_batch(self.translate(observations))

    def __repr__(self) -> str:
        return f"Translated({self.agent!r})"


__getattr__ = moved(__name__, dict.fromkeys(("Agent", "Observation", "RandomAgent", "legal_mask"), "hiddenhand.agent"))
