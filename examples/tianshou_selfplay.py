"""Self-play REINFORCE with Tianshou 2.x on any of our games, through Tianshou's PettingZoo wrapper.

Why an adapter: Tianshou plays an AEC game as one stream of transitions and its multi-agent
algorithms credit each transition with the mover's entry of the step's reward vector. Our
games pay everyone on the last move, so without help every player but the last mover learns
from nothing (in Goofspiel, player 0 never bids last and would never see a point).
``hiddenhand.tianshou.CreditEachPlayer``, an episode hook of the Collector, rewrites each
finished game in the buffer: every reward goes to its recipient's latest move, and each
player's last move ends its episode. It needs whole episodes (``collection_step_num_episodes``).

    python examples/tianshou_selfplay.py --game goofspiel --num-cards 4 --epochs 10
"""

from __future__ import annotations

import argparse
import logging

import numpy as np
import pettingzoo
import torch
from tianshou.algorithm import MARLRandomDiscreteMaskedOffPolicyAlgorithm, Reinforce
from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy
from tianshou.algorithm.multiagent.marl import MultiAgentOnPolicyAlgorithm, MultiAgentPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.trainer import OnPolicyTrainerParams

from hiddenhand.registry import get
from hiddenhand.tianshou import CreditEachPlayer


class MaskedActor(torch.nn.Module):
    """Logits for Tianshou's policies; illegal actions (``obs.mask`` False) get none of the mass."""

    def __init__(self, obs_size: int, num_actions: int, hidden: int = 64) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(obs_size, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, num_actions)
        )

    def forward(self, obs, state=None, info=None):
        logits = self.net(torch.as_tensor(obs.obs, dtype=torch.float32))
        legal = torch.as_tensor(obs.mask, dtype=torch.bool)
        return logits.masked_fill(~legal, torch.finfo(logits.dtype).min), state


def make_env(game: str, **params) -> PettingZooEnv:
    return PettingZooEnv(pettingzoo.make("aec", get(game).env_id, **params))


def score_against_random(policy, game: str, params: dict, episodes: int, seed: int = 0) -> float:
    """Mean return of ``policy`` in every seat in turn, the other seats played uniformly at random."""
    env = make_env(game, **params)
    agents, random = env.agents, MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space).policy
    scores = []
    for seat, agent in enumerate(agents):
        seated = MultiAgentPolicy({a: policy if a == agent else random for a in agents})
        envs = DummyVectorEnv([lambda: make_env(game, **params)])
        envs.seed(seed)
        collector = Collector(seated, envs)
        stats = collector.collect(n_episode=episodes, reset_before_collect=True)
        scores.append(np.mean(stats.returns[:, seat]))
    return float(np.mean(scores))


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="goofspiel")
    parser.add_argument("--num-cards", type=int, default=4, help="Goofspiel's num_cards")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--steps-per-epoch", type=int, default=2000, help="moves collected per epoch")
    parser.add_argument("--games-per-update", type=int, default=32)
    parser.add_argument("--eval-games", type=int, default=200, help="games per seat against random play")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # Tianshou's random policy draws from numpy's global generator
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)  # vector returns: one per player
    params = {"num_cards": args.num_cards} if args.game == "goofspiel" else {}

    env = make_env(args.game, **params)
    actor = MaskedActor(env.observation_space["observation"].shape[0], env.action_space.n)
    reinforce = Reinforce(
        policy=DiscreteActorPolicy(actor=actor, action_space=env.action_space),
        optim=AdamOptimizerFactory(lr=1e-3),
        gamma=1.0,
    )
    # Self-play: one algorithm (one network) plays every seat.
    algorithm = MultiAgentOnPolicyAlgorithm(algorithms=[reinforce] * len(env.agents), env=env)

    envs = DummyVectorEnv([lambda: make_env(args.game, **params) for _ in range(4)])
    envs.seed(args.seed)
    collector = Collector(
        algorithm,
        envs,
        VectorReplayBuffer(20_000, len(envs)),
        on_episode_done_hook=CreditEachPlayer(env.agents),  # the adapter: every player gets its reward
    )
    before = score_against_random(reinforce.policy, args.game, params, args.eval_games, args.seed)
    result = algorithm.run_training(
        OnPolicyTrainerParams(
            training_collector=collector,
            max_epochs=args.epochs,
            epoch_num_steps=args.steps_per_epoch,
            collection_step_num_episodes=args.games_per_update,
            collection_step_num_env_steps=None,
            batch_size=None,  # one gradient step on all the games collected
            multi_agent_return_reduction=lambda returns: returns[:, 0],
            verbose=False,
            show_progress=False,
        )
    )
    after = score_against_random(reinforce.policy, args.game, params, args.eval_games, args.seed)
    seconds = result.timing.total_time
    print(f"{args.game} {params}: {result.update_step} updates, {result.train_step} moves in {seconds:.1f} s")
    print(f"mean return against random play, every seat: {before:+.3f} before, {after:+.3f} after")
    return {"before": before, "after": after, "moves": float(result.train_step)}


if __name__ == "__main__":
    main()
