"""The agent protocol shared by every game and every face: a core concept.

An agent maps an observation (``{"observation": vector, "action_mask": mask}``, as the
PettingZoo envs give it; our own loops add ``"information_state"``, the perfect-recall
tensor, see ``State.agent_observation``) to a probability for every action, zero on illegal ones, and
samples its move from that distribution with its own seeded generator. Agents are
stateless: everything they use is in the observation, so one object can play any seat,
in any number of games at once, and be turned into an OpenSpiel policy.

It sits beside the rules protocol (:mod:`hiddenhand.core`) because the registry, the faces
and the solvers all speak of agents; the agents themselves (:mod:`hiddenhand.agents`) build
on it. Uniform random play (:class:`RandomAgent`) is here too: the registry gives every game
a ``random`` agent, and sits below the agents.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import ClassVar

import numpy as np

Observation = Mapping[str, np.ndarray]


class Agent(abc.ABC):
    """Base class: subclasses implement :meth:`policy`.

    ``uses_score`` and ``uses_history`` declare what of the observation the policy may
    depend on beyond the current position (the hands, the prizes, the table; in Spoof and
    Bid Spoof the round-state and the present round): the points won so far, and the past
    rounds. An agent that reads neither is *Markov*. Exact best-response computations
    (:mod:`hiddenhand.solvers.goofspiel.histories`, the whole-game measures of Spoof and Bid
    Spoof) merge states that differ only in what the agent ignores, so a false declaration
    gives a wrong answer; the defaults are safe. Instances may set them (a PPO agent trained
    on a Markov observation does). ``reads`` declares which items of the observation it
    reads at all (random play: the mask only), so that what it ignores is not built.
    """

    uses_score: ClassVar[bool] = True
    uses_history: ClassVar[bool] = True
    reads: ClassVar[frozenset[str] | None] = None
    """The items of an observation the policy reads (``"observation"``, ``"action_mask"``,
    ``"information_state"``), or ``None`` for any. Whoever builds observations in bulk
    builds only these (:func:`agent_reads`): the exact measure over Goofspiel's positions
    skips the observation vectors, most of its work, for an agent that reads only the
    mask. ``None`` is safe; a subclass that reads more than its base declares must widen
    the declaration."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int | None) -> None:
        """Restart the agent's generator, so that its moves repeat."""
        self.rng = np.random.default_rng(seed)

    @abc.abstractmethod
    def policy(self, observation: Observation) -> np.ndarray:
        """Probabilities of every action (float64, sums to 1, zero where the mask is 0)."""

    def policy_batch(self, observations: Observation) -> np.ndarray:
        """:meth:`policy` of many observations at once: every item of ``observations`` has
        one row per observation (``"observation"`` is ``(N, size)``, ``"action_mask"``
        ``(N, actions)``), and row ``i`` of the result is the policy of row ``i``. Exact
        exploitability gathers millions of positions' policies this way, in one buffer it
        rewrites for every batch (so an agent leaves the observations as they are and
        keeps none of them); this default asks :meth:`policy` row by row, and agents that
        can do better (a network's one forward pass, a vectorised rule) override it."""
        rows = len(observations["action_mask"])
        return np.stack([self.policy({key: value[i] for key, value in observations.items()}) for i in range(rows)])

    def act(self, observation: Observation) -> int:
        """An action drawn from :meth:`policy`."""
        probs = self.policy(observation)
        cumulative = np.cumsum(probs)
        index = int(np.searchsorted(cumulative, self.rng.random() * cumulative[-1], side="right"))
        return min(index, len(probs) - 1)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def agent_reads(agent, item: str) -> bool:
    """Whether ``agent``'s policy may read ``item`` of an observation (:attr:`Agent.reads`;
    an object without the declaration may read anything)."""
    reads = getattr(agent, "reads", None)
    return reads is None or item in reads


def legal_mask(observation: Observation) -> np.ndarray:
    """The action mask as booleans, refusing an observation in which nothing is legal."""
    mask = np.asarray(observation["action_mask"]).astype(bool)
    if not mask.any():
        raise ValueError("the action mask is all zeros: this player has no move to make")
    return mask


class RandomAgent(Agent):
    """Uniform over the legal actions: it reads the action mask and nothing else."""

    uses_score = False
    uses_history = False
    reads = frozenset({"action_mask"})

    def policy(self, observation: Observation) -> np.ndarray:
        mask = legal_mask(observation)
        return mask / mask.sum()

    def policy_batch(self, observations: Observation) -> np.ndarray:
        masks = np.asarray(observations["action_mask"]).astype(np.float64)
        counts = masks.sum(axis=1, keepdims=True)
        if (counts == 0).any():
            raise ValueError("an action mask is all zeros: that player has no move to make")
        return masks / counts
