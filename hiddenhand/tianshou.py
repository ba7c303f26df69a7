"""Tianshou 2.x on our games: an episode hook that pays every player, not only the last mover.

Tianshou plays a PettingZoo AEC game (``tianshou.env.PettingZooEnv``) as one stream of
transitions, one per move. Each step returns the reward vector of every player, and its
multi-agent algorithms (``MultiAgentOnPolicyAlgorithm``, ``MultiAgentOffPolicyAlgorithm``)
credit a transition with the mover's entry only. Our games pay everyone at the end, on the
step of the last move, so every player but the last mover loses its reward: in two-player
Goofspiel, player 0 never bids last and never sees a point. Its transitions never end an
episode either, so its returns would run on into the next game.

:class:`CreditEachPlayer` is an ``on_episode_done_hook`` of Tianshou's ``Collector``. When a
game ends it rewrites that game in the buffer, as PettingZoo means its rewards: each reward
goes to its recipient's latest move at or before it, and each player's last move ends that
player's episode (terminated, or truncated when the game was cut short). The last mover's
transitions are unchanged. A player who never moved has no transition to credit::

    from tianshou.data import Collector
    from hiddenhand.tianshou import CreditEachPlayer

    collector = Collector(algorithm, envs, buffer, on_episode_done_hook=CreditEachPlayer(agents))
    collector.collect(n_episode=16)  # a hook that rewrites the buffer needs whole episodes

``examples/tianshou_selfplay.py`` trains with it. Only numpy is imported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def movers(episode: Any, agents: Sequence[str]) -> np.ndarray:
    """The player index of each transition's mover (``episode.obs.agent_id``)."""
    index = {agent: i for i, agent in enumerate(agents)}
    return np.array([index[agent] for agent in episode.obs.agent_id], dtype=np.int64)


def credited_rewards(episode: Any, agents: Sequence[str]) -> np.ndarray:
    """What Tianshou's multi-agent algorithms learn from: each transition's reward to its mover."""
    rewards = np.asarray(episode.rew, dtype=np.float64)
    return rewards[np.arange(len(rewards)), movers(episode, agents)]


class CreditEachPlayer:
    """``Collector(..., on_episode_done_hook=CreditEachPlayer(agents))``; see the module docstring.

    ``agents`` are the env's agents in player order (``PettingZooEnv(env).agents``)."""

    def __init__(self, agents: Sequence[str]) -> None:
        self.agents = list(agents)

    def __call__(self, episode: Any) -> dict[str, np.ndarray]:
        rewards = np.asarray(episode.rew, dtype=np.float64)
        mover = movers(episode, self.agents)
        steps = np.arange(len(mover))
        credited = np.zeros_like(rewards)
        last_moves = np.zeros(len(mover), dtype=bool)
        for player in range(rewards.shape[1]):
            moves = np.flatnonzero(mover == player)
            if len(moves) == 0:
                continue
            latest = np.searchsorted(moves, steps, side="right") - 1  # the player's latest move at or before each step
            paid = latest >= 0  # (a reward before the player's first move has no move to go to)
            np.add.at(credited[:, player], moves[latest[paid]], rewards[paid, player])
            last_moves[moves[-1]] = True
        end = "truncated" if bool(episode.truncated[-1]) else "terminated"
        return {"rew": credited, end: last_moves, "done": last_moves}
