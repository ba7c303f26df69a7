"""The collection of self-play decisions that the network learners share: games played many
at a time in the game's batched env (:mod:`hiddenhand.vector`: one compiled step and one
forward pass serve them all), every seat played by the same policy, and each decision
credited by GAE over its own player's decisions.

Each player's advantage is GAE with gamma 1 over that player's own decisions in its game
(the games are finite; the equilibrium is of the undiscounted game), and its reward between
two of its decisions is what the game settled in between (``info["banked"]``: in Goofspiel
the points of the rounds, so a decision is credited with the points still to come, not with
the ones already won). Decisions of games still under way when a collection's steps are
done wait for their game's end and join the next collection.

A learner that acts otherwise than by sampling its policy (one that explores, or keeps more
of each decision) subclasses :class:`Collector` and overrides :meth:`Collector.act` (and
:meth:`Collector.stepped` for what it tracks per game); the columns its ``act`` adds come
back in :attr:`Batch.extra`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from hiddenhand.vector import vector_env


@dataclass
class Batch:
    """One update's decisions, every seat's, as arrays; ``extra`` holds the columns a
    :class:`Collector` subclass adds."""

    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    logp: np.ndarray
    values: np.ndarray
    advantages: np.ndarray
    returns: np.ndarray
    extra: dict[str, np.ndarray] = field(default_factory=dict)

    COLUMNS: ClassVar[tuple[str, ...]] = ("obs", "masks", "actions", "logp", "values", "advantages", "returns")


class Collector:
    """``games`` games of ``game`` in its batched env, every seat played by the policy; see
    :meth:`collect`. Steps whose game has not ended yet are kept for the next collection."""

    def __init__(self, game: str, params: dict, games: int, steps: int, seed: int) -> None:
        self.envs = vector_env(game, games, **params)
        self.obs, self.info = self.envs.reset(seed=seed)
        self.steps = steps
        self.kept: dict[str, np.ndarray] = {}

    def act(self, policy, obs: dict, info: dict) -> dict[str, np.ndarray]:
        """The action of every game's player to move, with its value and log-probability
        (columns ``actions``, ``values``, ``logp``): here ``policy`` is called as an sb3
        policy is, ``policy(observations, action_masks=...) -> (actions, values, logp)``."""
        import torch

        with torch.no_grad():
            seen = torch.from_numpy(obs["observation"]).to(policy.device)
            actions, values, logp = policy(seen, action_masks=obs["action_mask"])
        return {"actions": actions.cpu().numpy(), "values": values.cpu().numpy().ravel(), "logp": logp.cpu().numpy()}

    def stepped(self, ended: np.ndarray) -> None:
        """Called after every step with the games that ``ended`` in it (and restarted)."""

    def collect(self, policy, gae_lambda: float, scale: float) -> tuple[Batch, int, int]:
        """``steps`` steps of every game, then GAE (see the module docstring) of the decisions
        whose game ended; returns are multiplied by ``scale``. A column ``lam`` from
        :meth:`act` replaces ``gae_lambda`` decision by decision. Returns the batch, the
        decisions played and the games finished."""
        fresh: dict[str, list] = {}
        obs, info = self.obs, self.info
        rows = np.arange(self.envs.num_envs)
        for _ in range(self.steps):
            columns = self.act(policy, obs, info)
            columns.update(
                obs=obs["observation"],
                masks=obs["action_mask"].astype(bool),
                players=info["player"],
                banked=info["banked"][rows, info["player"]] * scale,
            )
            obs, rewards, terminated, truncated, info = self.envs.step(columns["actions"])
            columns.update(ended=terminated | truncated, rewards=rewards * scale)
            self.stepped(columns["ended"])
            for name, column in columns.items():
                fresh.setdefault(name, []).append(column)
        self.obs, self.info = obs, info
        arrays = {name: np.stack(column) for name, column in fresh.items()}
        arrays["pending"] = np.ones(arrays["actions"].shape, dtype=bool)
        games = int(arrays["ended"].sum())
        if self.kept:
            arrays = {name: np.concatenate([self.kept[name], array]) for name, array in arrays.items()}
        advantages, done = gae(arrays, arrays.get("lam", gae_lambda))
        use = done & arrays["pending"]
        arrays["pending"] &= ~done
        waiting = np.flatnonzero(arrays["pending"].any(axis=1))
        self.kept = {name: array[waiting[0] if len(waiting) else len(array) :] for name, array in arrays.items()}
        picked = {name: arrays[name][use] for name in ("obs", "masks", "actions", "logp", "values")}
        extra = {name: arrays[name][use] for name in arrays if name not in Batch.COLUMNS and name not in _OWN}
        return (
            Batch(**picked, advantages=advantages[use], returns=advantages[use] + picked["values"], extra=extra),
            self.steps * self.envs.num_envs,
            games,
        )


_OWN = ("players", "banked", "ended", "rewards", "pending")
"""The collector's own bookkeeping columns, not handed to the learner."""


def gae(arrays: dict[str, np.ndarray], lam: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """GAE (gamma 1) of every decision over its player's own decisions in its game, backwards
    in time over ``(steps, games)`` arrays, all games at once: the reward between a player's
    decision and its next one is what the game banked for it in between (the return, minus
    what was banked, after its last). ``lam`` is one number or one per decision (how much of
    the rest of the game as played a decision's credit takes beyond its player's next
    decision). Returns the advantages and which decisions belong to a game that ended
    within the arrays (the others cannot be credited yet)."""
    players, values, banked, ended, rewards = (arrays[n] for n in ("players", "values", "banked", "ended", "rewards"))
    steps, n = players.shape
    lam = np.broadcast_to(np.asarray(lam, dtype=float), (steps, n))
    rows = np.arange(n)
    following = np.zeros(rewards.shape[1:])  # per game and player: the value at its next decision (0 after its last)
    settled = np.zeros(rewards.shape[1:])  # and what was banked there (the return after its last)
    running = np.zeros(rewards.shape[1:])
    ends_later = np.zeros(n, dtype=bool)
    advantages = np.empty((steps, n))
    done = np.empty((steps, n), dtype=bool)
    for t in range(steps - 1, -1, -1):
        end = ended[t]
        following[end], settled[end], running[end] = 0.0, rewards[t][end], 0.0
        ends_later |= end
        seat = players[t]
        delta = settled[rows, seat] - banked[t] + following[rows, seat] - values[t]
        running[rows, seat] = delta + lam[t] * running[rows, seat]
        advantages[t] = running[rows, seat]
        following[rows, seat], settled[rows, seat] = values[t], banked[t]
        done[t] = ends_later
    return advantages, done


__all__ = ["Batch", "Collector", "gae"]
