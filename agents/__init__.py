"""Agents for every game, behind one protocol (:class:`Agent`): ``policy(observation)`` gives
the probabilities of every action, ``act(observation)`` samples one with the agent's own
seeded generator. Rule-based agents sit beside learned ones, as in RLCard.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from hiddenhand.agents.base import Agent, RandomAgent
from hiddenhand.agents.bid_spoof import BidSpoofEquilibriumAgent, BidSpoofHeuristic
from hiddenhand.agents.egghead import BehaviouralAnalyst, NaiveDeducer
from hiddenhand.agents.goofspiel_heuristic import LEVELS as GOOFSPIEL_LEVELS
from hiddenhand.agents.goofspiel_heuristic import GoofspielHeuristic
from hiddenhand.envs.goofspiel import GoofspielRules
from hiddenhand.agents.policy_agent import PolicyAgent, policy_file
from hiddenhand.agents.spoof import SpoofEquilibriumAgent, SpoofHeuristic
from hiddenhand.envs.bid_spoof import BidSpoofRules
from hiddenhand.envs.egghead import EggHeadRules
from hiddenhand.envs.spoof import SpoofRules
from hiddenhand.files import read_npz_meta


def _check_equilibrium_game(params: dict) -> None:
    """Refuse a Goofspiel configuration other than the one the exact solver solves."""
    wanted = {"num_players": 2, "prize_order": "random", "scoring": "point_difference", "reveal_bids": True}
    differs = {k: params.get(k, v) for k, v in wanted.items() if params.get(k, v) != v}
    if differs:
        raise ValueError(f"the equilibrium agent plays the game {wanted}; this one has {differs}")


def _goofspiel_equilibrium(params: dict, seed: int | None = None) -> Agent:
    from hiddenhand.agents.gops_equilibrium import GopsEquilibriumAgent

    _check_equilibrium_game(params)
    cards = params.get("num_cards", GoofspielRules.param_defaults()["num_cards"])
    if cards > IN_PROCESS_SOLVE_LIMIT:
        raise ValueError(
            f"solving {cards} cards takes long: run `hiddenhand solve goofspiel --cards {cards} --out gops{cards}.npz` "
            f"once, then pass the file as the agent (e.g. --opponent gops{cards}.npz)"
        )
    return GopsEquilibriumAgent(cards, seed=seed)


def _spoof_equilibrium(params: dict, seed: int | None = None) -> Agent:
    from hiddenhand.solvers.spoof import cached_solution

    rules = SpoofRules(**params)
    # One round needs only that round's LP, not the whole game's solution.
    solution = cached_solution(rules.max_hold) if rules.objective == "game" else None
    return SpoofEquilibriumAgent(solution, rules, seed=seed)


def _bid_spoof_equilibrium(params: dict, seed: int | None = None) -> Agent:
    from hiddenhand.solvers.bid_spoof import equilibrium_agent

    return equilibrium_agent(BidSpoofRules(**params), seed=seed)


IN_PROCESS_SOLVE_LIMIT = 10
"""The equilibrium agent solves up to this many cards when it is created (seconds)."""

AGENTS: dict[str, dict[str, Callable[..., Agent]]] = {
    "goofspiel": {
        "random": lambda params, seed=None: RandomAgent(seed=seed),
        **{
            level: (lambda params, seed=None, level=level: GoofspielHeuristic(level, seed=seed))
            for level in GOOFSPIEL_LEVELS
        },
        "equilibrium": _goofspiel_equilibrium,
    },
    "spoof": {
        "random": lambda params, seed=None: RandomAgent(seed=seed),
        "heuristic": lambda params, seed=None: SpoofHeuristic(SpoofRules(**params), seed=seed),
        "equilibrium": _spoof_equilibrium,
    },
    "bid_spoof": {
        "random": lambda params, seed=None: RandomAgent(seed=seed),
        "heuristic": lambda params, seed=None: BidSpoofHeuristic(BidSpoofRules(**params), seed=seed),
        "equilibrium": _bid_spoof_equilibrium,
    },
    "egghead": {
        "random": lambda params, seed=None: RandomAgent(seed=seed),
        "naive": lambda params, seed=None: NaiveDeducer(EggHeadRules(**params), seed=seed),
        "analyst": lambda params, seed=None: BehaviouralAnalyst(EggHeadRules(**params), seed=seed),
    },
}
"""Game name -> agent name -> factory taking the game's keyword arguments and ``seed``:
the agents the command line can field by name."""

HEURISTICS = {
    "goofspiel": ["random", *GOOFSPIEL_LEVELS],
    "spoof": ["random", "heuristic"],
    "egghead": ["random", "naive", "analyst"],
    "bid_spoof": ["random", "heuristic"],
}
"""The rule-based agents of each game (a tournament's default field)."""


def make_agent(game: str, name: str, params: dict | None = None, seed: int | None = None) -> Agent:
    """The agent called ``name`` for ``game`` configured by ``params`` (see :data:`AGENTS`)."""
    if game not in AGENTS:
        raise ValueError(f"unknown game {game!r}; games with agents: {', '.join(AGENTS)}")
    if name not in AGENTS[game]:
        raise ValueError(f"unknown agent {name!r} for {game}; choose one of: {', '.join(AGENTS[game])}")
    return AGENTS[game][name](params or {}, seed=seed)


def load_agent(game: str, spec: str, params: dict | None = None, seed: int | None = None) -> Agent:
    """An agent by name (see :data:`AGENTS`), a saved policy (a directory holding
    ``policy.npz``, or the file), or for Goofspiel a saved exact solution (the ``.npz`` of
    ``hiddenhand solve goofspiel --out``). With ``params``, a saved policy must have been
    made for exactly that configuration of ``game``."""
    if spec in AGENTS.get(game, {}):
        return make_agent(game, spec, params, seed)
    from hiddenhand.agents.ppo import PPOAgent, is_ppo_dir

    if is_ppo_dir(spec):
        agent = PPOAgent.load(spec, seed=seed)
        if agent.game != game or (params is not None and not _same_game(game, agent.params, params)):
            raise ValueError(f"the PPO agent in {spec} was trained on {agent.game} with {agent.params}, not {game} with {params}")
        return agent
    if not Path(spec).exists() or not policy_file(spec).exists():
        names = ", ".join(AGENTS.get(game, {}))
        raise ValueError(f"{spec!r} is neither an agent ({names}) nor a saved policy or solution")
    if game == "goofspiel" and _is_gops_solution(Path(spec)):
        from hiddenhand.agents.gops_equilibrium import GopsEquilibriumAgent
        from hiddenhand.solvers.gops import GopsSolution

        _check_equilibrium_game(params or {})
        cards = read_npz_meta(spec)["num_cards"]
        if params is not None and params.get("num_cards", cards) != cards:
            raise ValueError(f"{spec} solves {cards} cards; the game has {params['num_cards']}")
        solution = GopsSolution.load(spec)
        return GopsEquilibriumAgent(solution.num_cards, solution=solution, seed=seed)
    agent = PolicyAgent.load(spec, seed=seed)
    if agent.game != game or (params is not None and not _same_game(game, agent.params, params)):
        raise ValueError(
            f"the policy in {spec} was made for {agent.game} with {agent.params}, not {game} with {params}"
        )
    return agent


def _same_game(game: str, saved_params: dict, params: dict) -> bool:
    """Whether a saved agent's parameters (OpenSpiel's form, or the env's) describe the
    game of ``params``."""
    from hiddenhand.envs import ENV_MODULES

    rules_class = ENV_MODULES[game].raw_env.rules_class
    return rules_class.from_openspiel(saved_params).params == rules_class(**params).params


def _is_gops_solution(path: Path) -> bool:
    if path.suffix != ".npz" or not path.is_file():
        return False
    try:
        return "num_cards" in read_npz_meta(path)
    except ValueError:
        return False


__all__ = [
    "AGENTS",
    "Agent",
    "BehaviouralAnalyst",
    "BidSpoofEquilibriumAgent",
    "BidSpoofHeuristic",
    "GoofspielHeuristic",
    "HEURISTICS",
    "NaiveDeducer",
    "PolicyAgent",
    "RandomAgent",
    "SpoofEquilibriumAgent",
    "SpoofHeuristic",
    "load_agent",
    "make_agent",
]
