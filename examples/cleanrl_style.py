"""A CleanRL-style actor-critic on one seat of any of our games (``hiddenhand.gymnasium_env.SingleAgentEnv``).

A single-file loop written for plain Gymnasium needs five lines more for our games, marked
``(1)`` to ``(5)``: (1) Gymnasium's same-step autoreset, which CleanRL's loops assume (the step
that ends a game carries its reward and done, and already returns the next game's first
observation; Gymnasium 1.x defaults to next-step autoreset, which would add a step per game
whose action is ignored); (2) the legal moves of every env, read after the step so that they
belong to the observation it returned; (3) the mask applied to the logits; (4) the mask kept
with the rollout and (5) given back when the update recomputes the log-probabilities.

    python examples/cleanrl_style.py --game goofspiel --num-cards 4 --iterations 300
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

from hiddenhand.agents import RandomAgent
from hiddenhand.gymnasium_env import SingleAgentEnv


def make_env(game: str, **params):
    # illegal_action="raise": a masked loop never plays an illegal move, and if it did, it would be loud
    return lambda: gym.wrappers.RecordEpisodeStatistics(
        SingleAgentEnv(game, RandomAgent(), seat="random", illegal_action="raise", **params)
    )


def make_envs(game: str, num_envs: int, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP, **params):
    return gym.vector.SyncVectorEnv([make_env(game, **params)] * num_envs, autoreset_mode=autoreset_mode)  # (1)


class Agent(nn.Module):
    def __init__(self, obs_size: int, num_actions: int, hidden: int = 64) -> None:
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(obs_size, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.actor = nn.Sequential(nn.Linear(obs_size, hidden), nn.Tanh(), nn.Linear(hidden, num_actions))

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x).squeeze(-1)

    def get_action_and_value(self, x, mask, action=None):
        logits = self.actor(x).masked_fill(~mask, -1e9)  # (3)
        probs = Categorical(logits=logits)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.get_value(x)


def collect(envs, agent: Agent, next_obs: torch.Tensor, num_steps: int) -> dict[str, torch.Tensor]:
    """``num_steps`` steps of every env: ``obs``, ``masks``, ``actions``, ``logprobs``, ``values``,
    ``rewards``, ``dones`` (the step ended a game), ``infos``, and ``next_obs`` to go on from."""
    keys = ("obs", "masks", "actions", "logprobs", "values", "rewards", "dones")
    rollout = {key: [] for key in keys}
    rollout["infos"] = []
    for _ in range(num_steps):
        mask = torch.as_tensor(np.stack(envs.call("action_masks")), dtype=torch.bool)  # (2)
        with torch.no_grad():
            action, logprob, _, value = agent.get_action_and_value(next_obs, mask)
        obs, reward, terminated, truncated, info = envs.step(action.numpy())
        for key, item in zip(keys, (next_obs, mask, action, logprob, value)):  # (4): masks kept
            rollout[key].append(item)
        rollout["rewards"].append(torch.as_tensor(reward, dtype=torch.float32))
        rollout["dones"].append(torch.as_tensor(terminated | truncated, dtype=torch.float32))
        rollout["infos"].append(info)
        next_obs = torch.as_tensor(obs, dtype=torch.float32)
    out = {key: torch.stack(rollout[key]) for key in keys}
    return {**out, "infos": rollout["infos"], "next_obs": next_obs}


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="goofspiel")
    parser.add_argument("--num-cards", type=int, default=4, help="Goofspiel's num_cards")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--num-steps", type=int, default=32)
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--gae-lambda", type=float, default=0.95)
    parser.add_argument("--ent-coef", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    params = {"num_cards": args.num_cards} if args.game == "goofspiel" else {}

    envs = make_envs(args.game, args.num_envs, **params)
    agent = Agent(envs.single_observation_space.shape[0], envs.single_action_space.n)
    optimizer = torch.optim.Adam(agent.parameters(), lr=1e-3)
    next_obs = torch.as_tensor(envs.reset(seed=args.seed)[0], dtype=torch.float32)
    returns_seen: list[float] = []
    for _ in range(args.iterations):
        rollout = collect(envs, agent, next_obs, args.num_steps)
        next_obs, rewards, dones, values = rollout["next_obs"], rollout["rewards"], rollout["dones"], rollout["values"]
        returns_seen += rewards[dones.bool()].tolist()  # our games pay once, when they end
        with torch.no_grad():  # GAE, gamma 1: with same-step autoreset, dones[t] ends the game of step t
            next_value, advantages, gae = agent.get_value(next_obs), torch.zeros_like(rewards), 0.0
            for t in reversed(range(args.num_steps)):
                following = next_value if t == args.num_steps - 1 else values[t + 1]
                delta = rewards[t] + following * (1.0 - dones[t]) - values[t]
                advantages[t] = gae = delta + args.gae_lambda * (1.0 - dones[t]) * gae
        _, logprob, entropy, value = agent.get_action_and_value(
            rollout["obs"].flatten(0, 1),
            rollout["masks"].flatten(0, 1),
            rollout["actions"].flatten(),  # (5)
        )
        adv, ret = advantages.flatten(), (advantages + values).flatten()
        loss = -(logprob * adv).mean() + 0.5 * ((value - ret) ** 2).mean() - args.ent_coef * entropy.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    envs.close()
    tenth = max(1, len(returns_seen) // 10)
    first, last = float(np.mean(returns_seen[:tenth])), float(np.mean(returns_seen[-tenth:]))
    print(f"{args.game} {params}: {len(returns_seen)} games against random play")
    print(f"mean return: {first:+.3f} over the first tenth of the games, {last:+.3f} over the last")
    return {"first": first, "last": last, "games": float(len(returns_seen))}


if __name__ == "__main__":
    main()
