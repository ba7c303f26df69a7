"""Agents for every game, behind one protocol (:class:`Agent`): ``policy(observation)`` gives
the probabilities of every action, ``act(observation)`` samples one with the agent's own
seeded generator. Rule-based agents sit beside learned ones, as in RLCard.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from hiddenhand.agents.base import Agent, RandomAgent
from hiddenhand.agents.goofspiel_heuristic import LEVELS as GOOFSPIEL_LEVELS
from hiddenhand.agents.goofspiel_heuristic import GoofspielHeuristic
from hiddenhand.agents.policy_agent import PolicyAgent

AGENTS: dict[str, dict[str, Callable[..., Agent]]] = {
    "goofspiel": {
        "random": RandomAgent,
        **{level: (lambda seed=None, level=level: GoofspielHeuristic(level, seed=seed)) for level in GOOFSPIEL_LEVELS},
    },
}
"""Game name -> agent name -> factory taking ``seed``: the agents the CLI can field."""


def make_agent(game: str, name: str, seed: int | None = None) -> Agent:
    """The agent called ``name`` for ``game`` (see :data:`AGENTS`)."""
    if game not in AGENTS:
        raise ValueError(f"unknown game {game!r}; games with agents: {', '.join(AGENTS)}")
    if name not in AGENTS[game]:
        raise ValueError(f"unknown agent {name!r} for {game}; choose one of: {', '.join(AGENTS[game])}")
    return AGENTS[game][name](seed=seed)


def load_agent(game: str, spec: str, params: dict | None = None, seed: int | None = None) -> Agent:
    """An agent by name (see :data:`AGENTS`) or a saved policy (a directory holding
    ``policy.npz``, or the file). With ``params``, a saved policy must have been made for
    exactly that configuration of ``game``."""
    if spec in AGENTS.get(game, {}):
        return make_agent(game, spec, seed)
    if not Path(spec).exists():
        names = ", ".join(AGENTS.get(game, {}))
        raise ValueError(f"{spec!r} is neither an agent ({names}) nor a saved policy")
    agent = PolicyAgent.load(spec, seed=seed)
    if agent.game != game or (params is not None and agent.params != params):
        raise ValueError(
            f"the policy in {spec} was made for {agent.game} with {agent.params}, not {game} with {params}"
        )
    return agent


__all__ = ["AGENTS", "Agent", "GoofspielHeuristic", "PolicyAgent", "RandomAgent", "load_agent", "make_agent"]
