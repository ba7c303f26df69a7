"""Agents for every game, behind one protocol (:class:`Agent`): ``policy(observation)`` gives
the probabilities of every action, ``act(observation)`` samples one with the agent's own
seeded generator. Rule-based agents sit beside learned ones, as in RLCard.
"""

from __future__ import annotations

import json
from pathlib import Path

from hiddenhand import registry
from hiddenhand.agent import Agent, RandomAgent
from hiddenhand.agents.bid_spoof import BidSpoofEquilibriumAgent, BidSpoofHeuristic
from hiddenhand.agents.egghead import BehaviouralAnalyst, NaiveDeducer
from hiddenhand.agents.goofspiel_equilibrium import GoofspielEquilibriumAgent
from hiddenhand.agents.goofspiel_heuristic import GoofspielHeuristic
from hiddenhand.agents.network import NetworkAgent
from hiddenhand.agents.policy_agent import PolicyAgent, policy_file
from hiddenhand.agents.ppo import PPOAgent
from hiddenhand.agents.spoof import SpoofEquilibriumAgent, SpoofHeuristic
from hiddenhand.core import Rules
from hiddenhand.validation import configuration, mismatch


def make_agent(game: str, name: str, params: dict | Rules | None = None, seed: int | None = None) -> Agent:
    """The agent called ``name`` (see ``hiddenhand.games()[game].agent_names``) for the
    configuration of ``game`` that ``params`` (keyword arguments, or the rules) describe."""
    spec = registry.get(game)
    return spec.make_agent(name, _rules(spec, params), seed=seed)


def load_agent(game: str, spec: str, params: dict | Rules | None = None, seed: int | None = None) -> Agent:
    """An agent by name, a saved policy (a directory holding ``policy.npz``, or the file), a
    saved PPO agent (its directory), or a file the game itself knows how to load (for
    Goofspiel, a solution of ``hiddenhand solve goofspiel --out``). With ``params``, a saved
    agent must have been made for exactly that configuration of ``game``."""
    declared = registry.get(game)
    rules = None if params is None else _rules(declared, params)
    if spec in declared.agent_names:
        return declared.make_agent(spec, rules, seed=seed)
    from hiddenhand.agents.ppo import is_ppo_dir

    if is_ppo_dir(spec):
        return _check_saved(PPOAgent.load(spec, seed=seed), declared, rules, spec)
    from hiddenhand.agents.network import is_network_dir

    if is_network_dir(spec):  # the OpenSpiel baselines' agents (NFSP, PSRO)
        return _check_saved(NetworkAgent.load(spec, seed=seed), declared, rules, spec)
    if _is_rllib_dir(spec):
        from hiddenhand.rllib import RLlibAgent  # needs Ray, installed with the agent's trainer

        return _check_saved(RLlibAgent.load(spec, seed=seed), declared, rules, spec)
    if declared.agent_file is not None:
        agent = registry.resolve(declared.agent_file)(spec, rules, seed)
        if agent is not None:
            return agent
    if not Path(spec).exists() or not policy_file(spec).exists():
        raise ValueError(
            f"{spec!r} is neither an agent of {declared.name} ({', '.join(declared.agent_names)}) "
            "nor a saved policy or agent directory"
        )
    return _check_saved(PolicyAgent.load(spec, seed=seed), declared, rules, spec)


def _is_rllib_dir(path: str) -> bool:
    """A directory written by :meth:`hiddenhand.rllib.RLlibAgent.save` (told apart without importing Ray)."""
    meta = Path(path) / "agent.json"
    if not (Path(path) / "module.pt").is_file() or not meta.is_file():
        return False
    try:
        return json.loads(meta.read_text()).get("kind") == "rllib-ppo"
    except (OSError, ValueError):
        return False


def _rules(game: registry.Game, params: dict | Rules | None) -> Rules:
    return params if isinstance(params, Rules) else game.rules(**(params or {}))


def _check_saved(agent, game: registry.Game, rules: Rules | None, path: str):
    """Refuse a saved agent made for another game or another configuration than ``rules``,
    naming the parameters that differ as the reader sets them (``goofspiel with --cards 3, not
    --cards 4`` on the command line)."""
    if agent.game != game.name:
        raise ValueError(
            f"the agent in {path} was made for {configuration(agent.game, {})}, not {configuration(game.name, {})}"
        )
    if rules is None:
        return agent
    made = game.rules_class.from_openspiel(agent.params).params
    if made != rules.params:
        raise ValueError(
            f"the agent in {path} was made for {configuration(game.name, {})} with {mismatch(made, rules.params)}"
        )
    return agent


__all__ = [
    "Agent",
    "BehaviouralAnalyst",
    "BidSpoofEquilibriumAgent",
    "BidSpoofHeuristic",
    "GoofspielHeuristic",
    "GoofspielEquilibriumAgent",
    "NaiveDeducer",
    "NetworkAgent",
    "PPOAgent",
    "PolicyAgent",
    "RandomAgent",
    "SpoofEquilibriumAgent",
    "SpoofHeuristic",
    "load_agent",
    "make_agent",
]
