"""EggHead agents: the study's two deducers, acting from the valids masks of the observation.

Both call a hand the moment they are sure of it and pass otherwise, as the study assumes
("every player solves as soon as possible"). They differ in what they are sure of: the
:class:`NaiveDeducer` uses the answers alone (eq. 1), the :class:`BehaviouralAnalyst`
also what the others' reactions reveal (Algorithm 1). Deducing takes the whole history, so
they read the masks the env computes with its deduction engine
(``valids_in_observation=True``), and refuse a configuration without them. Seat them where
the env's ``analysts`` says analysts sit, so that the public model matches who they are.
"""

from __future__ import annotations

import numpy as np

from hiddenhand.agent import Agent, Observation, legal_mask
from hiddenhand.envs.egghead import EggHeadRules
from hiddenhand.validation import named


class _Deducer(Agent):
    """Calls the only hand left in its mask, else passes."""

    uses_score = False
    mask_name = "naive_valids"

    def __init__(self, rules: EggHeadRules, seed: int | None = None) -> None:
        super().__init__(seed)
        if not rules.layout.valids:
            raise ValueError(
                f"{type(self).__name__} reads the valids masks of the observation, which "
                f"{named('valids_in_observation', False)} leaves out: use {named('valids_in_observation', True)}"
            )
        self.rules = rules

    def valids(self, observation: Observation) -> np.ndarray:
        """The hands this agent still considers possible (indices)."""
        return np.flatnonzero(self.rules.layout.decode(observation["observation"])[self.mask_name])

    def policy(self, observation: Observation) -> np.ndarray:
        mask = legal_mask(observation)
        probs = np.zeros(len(mask))
        valids = self.valids(observation)
        probs[1 + valids[0] if len(valids) == 1 else 0] = 1.0
        if not mask[np.flatnonzero(probs)[0]]:
            raise ValueError("the observation's mask does not allow this agent's move: is it this agent's turn?")
        return probs

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class NaiveDeducer(_Deducer):
    """Calls when the answers alone (eq. 1) leave one hand."""

    mask_name = "naive_valids"


class BehaviouralAnalyst(_Deducer):
    """Calls when behavioural analysis (answers, the others' reactions and revealed hands)
    leaves one hand."""

    mask_name = "valids_mask"
