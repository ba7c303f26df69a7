"""The PettingZoo face: one AEC environment class over any :class:`~hiddenhand.core.Rules`.

A game module subclasses :class:`RulesAECEnv` as its ``raw_env`` (setting ``rules_class``
and ``metadata``) and gets ``env`` and ``parallel_env`` from :func:`env_factories`.

Chance nodes never surface as turns: they are sampled from the environment's own
generator, seeded by ``reset(seed=...)``, so the same seed and actions give the same
episode. Observations are ``{"observation": float32 vector, "action_mask": int8 vector}``.
The mask of a player who does not have to move is all zeros; in a simultaneous round
(every player bids once, in seat order, without seeing the others' bids) a player whose
bid is still due already sees their legal bids, so the Parallel env hands every player a
usable mask.

Every face keeps the same promises: ``step`` (and ``observe``, ``last``, ``render``,
``agent_iter``) before ``reset()``, or ``step`` once every agent has left a finished game,
raises ``RuntimeError`` saying what to call, where PettingZoo's own wrapper raises a bare
``AssertionError`` or only logs. ``render_mode="rgb_array"`` draws the table
(:mod:`hiddenhand.picture`) as a spectator sees it: every hand face up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.conversions import aec_to_parallel_wrapper
from pettingzoo.utils.env_logger import EnvLogger

from hiddenhand.core import TERMINAL, IllegalActionError, Rules, State, play_chance
from hiddenhand.picture import draw
from hiddenhand.validation import check_choice

RENDER_MODES = ("ansi", "human", "rgb_array")
GAME_OVER = "the game is over and every agent has left it; call reset() to play again"


class RulesAECEnv(AECEnv):
    """PettingZoo AEC environment for any game given as :class:`Rules`.

    Agents are ``player_0 .. player_{N-1}``. Rewards are the game's returns, paid when it
    ends; a game cut short by a limit (``State.is_truncated``) ends in truncations rather
    than terminations, as Gymnasium's time limits do. ``render_mode="ansi"`` makes ``render()``
    return the full table as text; ``"human"`` prints it after every move; ``"rgb_array"``
    returns a picture of it, an ``HxWx3`` uint8 array of the same size every frame (the
    spectator's view: every hand face up).

    ``illegal_action`` says what an illegal action does: ``"raise"`` (the default of
    ``raw_env``) raises :class:`~hiddenhand.core.IllegalActionError` naming the legal
    actions; ``"terminate"`` (what ``env()`` uses) is PettingZoo's convention, as its
    ``TerminateIllegalWrapper`` applies it (a warning, the game ends for everyone), with
    payoffs that make it a forfeit in every game: the offender gets the worst return the
    game allows and every other player the best. (PettingZoo pays the others 0, which in a
    game whose worst return is 0, such as total points, would not punish the offender.) It
    is done here rather than with that wrapper because the wrapper's attribute forwarding
    on every call costs the env much of its throughput (``benchmarks/bench_env.py``;
    docs/performance.md).

    An action must be an integer (Python's, numpy's, or a 0-d integer array); anything
    else raises ``TypeError`` whatever ``illegal_action`` says, since it is a bug in the
    caller rather than a move.
    """

    rules_class: ClassVar[type[Rules]]
    configurations: ClassVar[dict[str, dict[str, Any]]] = {}
    """Named game configurations the conformance suite (``tests/test_conformance.py``) runs
    besides the defaults. ``"tiny"`` is required: small enough to walk every information
    state in a second or two (exhaustive checks, CFR, the kept playthrough). Add others
    that exercise different rules (another scoring, more players)."""
    too_large_for_random_sim: ClassVar[dict[str, str]] = {}
    """Configurations (by name, ``"default"`` included) on which OpenSpiel's
    ``random_sim_test`` cannot run here, with the reason; the suite reports them as
    skipped. That test keeps a clone of every state of its random games."""
    metadata: ClassVar[dict[str, Any]] = {"render_modes": list(RENDER_MODES), "name": "rules_env"}

    def __init__(self, render_mode: str | None = None, illegal_action: str = "raise", **game_kwargs: Any) -> None:
        super().__init__()
        self.render_mode = check_choice("render_mode", render_mode, (None,) + RENDER_MODES)
        self.illegal_action = check_choice("illegal_action", illegal_action, ("raise", "terminate"))
        self.rules = self.rules_class(**game_kwargs)
        self.illegal_reward, self.bystander_reward = map(float, self.rules.utility_range)
        self.possible_agents = [f"player_{i}" for i in range(self.rules.num_players)]
        self._player_of = {agent: i for i, agent in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (self.rules.observation_size,), np.float32),
                "action_mask": spaces.Box(0, 1, (self.rules.num_actions,), np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(self.rules.num_actions) for a in self.possible_agents}
        self._rng = np.random.default_rng()
        self.game_state: State | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.game_state = self.rules.new_initial_state()
        play_chance(self.game_state, self._rng)
        self.agent_selection = self.agents[0]
        self._after_move()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        player = self._player("observe", agent)  # before game_state is read: it is None before reset()
        return self.game_state.observation(player)

    def last(self, observe: bool = True):
        self._check_reset("last")
        return super().last(observe)

    def agent_iter(self, max_iter: int = 2**63):
        self._check_reset("agent_iter")
        return super().agent_iter(max_iter)

    def step(self, action: int | None) -> None:
        self._check_reset("step")
        if not self.agents:
            raise RuntimeError(GAME_OVER)
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is to move and must act; action None is only for finished agents")
        action = self.game_state.check_action(action)
        self._cumulative_rewards[agent] = 0.0
        try:
            self.game_state.apply(action)
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            self._terminate_illegal(agent)
            return
        play_chance(self.game_state, self._rng)
        self._after_move()
        if self.render_mode == "human":
            self.render()

    def _check_reset(self, call: str) -> None:
        if self.game_state is None:
            raise RuntimeError(f"{call}() before reset(): call reset() first")

    def _player(self, call: str, agent: str) -> int:
        """The player id of ``agent``, for ``call`` (which needs a reset game)."""
        self._check_reset(call)
        if agent not in self._player_of:
            raise ValueError(f"unknown agent {agent!r}; the agents are: {', '.join(self.possible_agents)}")
        return self._player_of[agent]

    def agent_observation(self, agent: str) -> dict[str, np.ndarray]:
        """What our agents take (:meth:`~hiddenhand.core.State.agent_observation`): the
        observation plus the perfect-recall information state, which tabular policies
        (CFR's) need in games whose observation is a bounded window. In a PettingZoo
        loop: ``agent.act(env.unwrapped.agent_observation(name))``."""
        player = self._player("agent_observation", agent)  # before game_state is read: it is None before reset()
        return self.game_state.agent_observation(player)

    def _after_move(self) -> None:
        """Point ``agent_selection`` at the player to move, or pay out at the end."""
        state = self.game_state
        player = state.current_player()
        if player == TERMINAL:
            self.rewards = dict(zip(self.agents, map(float, state.returns())))
            ended = self.truncations if state.is_truncated() else self.terminations
            ended.update(dict.fromkeys(self.agents, True))
            self._accumulate_rewards()
        else:
            self.agent_selection = self.possible_agents[player]
            self._clear_rewards()

    def _terminate_illegal(self, agent: str) -> None:
        EnvLogger.warn_on_illegal_move()
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.agents, self.bystander_reward)
        self.rewards[agent] = self.illegal_reward
        self._accumulate_rewards()
        self._deads_step_first()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn(
                f"render() was called without a render_mode; pass render_mode= one of {', '.join(RENDER_MODES)}."
            )
            return None
        self._check_reset("render")
        if self.render_mode == "rgb_array":
            return draw(self.game_state.table())
        text = self.game_state.render()
        if self.render_mode == "human":
            print(text, end="\n\n")
            return None
        return text

    def close(self) -> None:
        pass


class _OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order checks (attributes before ``reset()``, ``step()`` or ``reset()``
    between two turns of ``agent_iter``), with the calls out of order left to the env, whose
    ``RuntimeError`` says what to call: the wrapper raises a bare ``AssertionError`` before
    ``reset()`` and only logs a ``step()`` once every agent has left, which then did nothing.
    Stepping an agent that is done with ``None`` stays legal while it is still listed.
    ``last()`` is answered by the env in one call rather than through five attribute lookups
    forwarded by the wrapper's ``__getattr__``."""

    def step(self, action: int | None) -> None:
        self._has_updated = True
        self.env.step(action)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return self.env.observe(agent)

    def last(self, observe: bool = True):
        return self.env.last(observe)

    def render(self) -> str | np.ndarray | None:
        return self.env.render()

    def agent_iter(self, max_iter: int = 2**63):
        self.env.unwrapped._check_reset("agent_iter")
        return super().agent_iter(max_iter)


class RulesParallelEnv(aec_to_parallel_wrapper):
    """PettingZoo's AEC-to-Parallel conversion of :class:`RulesAECEnv`, with two things it
    lacks: the actions dict must name exactly the agents still in the game (a missing or
    unknown one raises ``ValueError`` naming them, rather than a ``KeyError`` from inside
    PettingZoo or silence), and an illegal action by any player ends the game under the
    AEC env's convention (the conversion asserted when a player other than the last
    bidder ended it)."""

    def step(self, actions: dict[str, Any]):
        self.unwrapped._check_reset("step")
        if not self.agents:
            raise RuntimeError(GAME_OVER)
        missing = [a for a in self.agents if a not in actions]
        unknown = [a for a in actions if a not in self.agents]
        if missing or unknown:
            raise ValueError(
                f"the actions dict must have one action for each agent in the game ({', '.join(self.agents)}); "
                f"missing: {missing or 'none'}, unknown: {unknown or 'none'}"
            )
        aec = self.aec_env
        state = aec.unwrapped.game_state
        for agent in self.agents:  # every action checked before anyone moves: no half-played round
            if actions[agent] is None:
                raise ValueError(f"{agent} is in the game and must act; action None is only for finished agents")
            state.check_action(actions[agent])
        rewards = dict.fromkeys(self.agents, 0.0)
        for _ in self.agents:
            agent = aec.agent_selection
            if aec.terminations[agent] or aec.truncations[agent]:
                break  # an illegal action ended the game before everyone had moved
            aec.step(actions[agent])
            for other in aec.agents:
                rewards[other] += aec.rewards[other]
        terminations, truncations, infos = dict(aec.terminations), dict(aec.truncations), dict(aec.infos)
        observations = {agent: aec.observe(agent) for agent in aec.agents}
        while aec.agents and (aec.terminations[aec.agent_selection] or aec.truncations[aec.agent_selection]):
            aec.step(None)
        self.agents = aec.agents
        return observations, rewards, terminations, truncations, infos


def env_factories(raw_env: Callable[..., RulesAECEnv]) -> tuple[Callable[..., AECEnv], Callable[..., Any]]:
    """``(env, parallel_env)`` for a game's ``raw_env`` class, as PettingZoo modules have.

    ``env`` is ``raw_env`` with PettingZoo's conventions: an illegal action ends the game
    as a forfeit (see :class:`RulesAECEnv`), and the order of calls is enforced
    (``OrderEnforcingWrapper``). ``parallel_env`` is :class:`RulesParallelEnv` over it where
    every player moves each round (``metadata["is_parallelizable"]``); in any other game it
    raises ``ValueError`` saying why there is none, and it is what PettingZoo's registry
    makes of the game's id as a Parallel env.
    """
    name = raw_env.metadata["name"]

    def env(**kwargs: Any) -> AECEnv:
        return _OrderEnforcing(raw_env(illegal_action="terminate", **kwargs))

    def parallel_env(**kwargs: Any) -> RulesParallelEnv:
        if not raw_env.metadata.get("is_parallelizable"):
            raise ValueError(
                f"{name} has no Parallel env: its players do not all move each round (some turns are one "
                "player's alone), while a Parallel env takes an action from every agent at every step; "
                f"play it as an AEC env ({name}.env(), or pettingzoo.make('aec', ...) with the same id)"
            )
        return RulesParallelEnv(env(**kwargs))

    env.__doc__ = f"The AEC environment of {name} with PettingZoo's conventions (see the module docstring)."
    parallel_env.__doc__ = f"The Parallel environment of {name} (every player bids each round), where it has one."
    return env, parallel_env
