"""TorchRL on our games: ``PettingZooWrapper`` over the AEC env, unchanged, and a tiny self-play policy gradient.

TorchRL's wrapper needs nothing from us. ``use_mask=True`` (required for AEC envs) puts each
player in a group of its own with ``(player, "mask")`` (whose turn it is) and
``(player, "action_mask")`` (the legal moves, which TorchRL also sets on the action spec, so
``env.rand_action`` is legal). Every step carries every player's reward, so the final rewards
reach everyone on the last step; credit them to your own moves with the ``mask``, as below.

    python examples/torchrl_pettingzoo.py --game goofspiel --updates 200
"""

from __future__ import annotations

import argparse

import pettingzoo
import torch
from tensordict.nn import InteractionType, TensorDictModule, TensorDictSequential
from torchrl.envs import PettingZooWrapper
from torchrl.modules import MaskedCategorical, ProbabilisticActor

from hiddenhand.registry import get


def make_env(game: str, seed: int = 0, **params) -> PettingZooWrapper:
    return PettingZooWrapper(pettingzoo.make("aec", get(game).env_id, **params), use_mask=True, seed=seed)


class Uniform(torch.nn.Module):
    """Equal logits: uniform over the legal moves once the mask is applied."""

    def __init__(self, num_actions: int) -> None:
        super().__init__()
        self.num_actions = num_actions

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        return torch.zeros(*observation.shape[:-1], self.num_actions)


def num_actions(env: PettingZooWrapper) -> int:
    return env.full_action_spec[next(iter(env.group_map)), "action"].space.n


def actor(player: str, net: torch.nn.Module) -> ProbabilisticActor:
    """``player``'s move: ``net``'s logits on its observation, masked to its legal moves."""
    logits = TensorDictModule(net, in_keys=[(player, "observation", "observation")], out_keys=[(player, "logits")])
    return ProbabilisticActor(
        logits,
        in_keys={"logits": (player, "logits"), "mask": (player, "action_mask")},
        out_keys=[(player, "action")],
        distribution_class=MaskedCategorical,
        default_interaction_type=InteractionType.RANDOM,
    )


def score_against_random(env: PettingZooWrapper, net: torch.nn.Module, games: int) -> float:
    """Mean return of ``net`` in every seat in turn, the other seats uniformly random."""
    uniform = Uniform(num_actions(env))
    total = 0.0
    with torch.no_grad():
        for seat in env.group_map:
            policy = TensorDictSequential(*(actor(p, net if p == seat else uniform) for p in env.group_map))
            for _ in range(games):
                episode = env.rollout(10_000, policy, break_when_any_done=True)
                total += episode["next", seat, "reward"].sum().item()
    return total / (games * len(env.group_map))


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="goofspiel")
    parser.add_argument("--num-cards", type=int, default=4, help="Goofspiel's num_cards")
    parser.add_argument("--updates", type=int, default=200)
    parser.add_argument("--games-per-update", type=int, default=8)
    parser.add_argument("--eval-games", type=int, default=100, help="games per seat against random play")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    params = {"num_cards": args.num_cards} if args.game == "goofspiel" else {}

    env = make_env(args.game, seed=args.seed, **params)
    players = list(env.group_map)
    obs_size = env.observation_spec[players[0], "observation", "observation"].shape[-1]
    net = torch.nn.Sequential(torch.nn.Linear(obs_size, 64), torch.nn.Tanh(), torch.nn.Linear(64, num_actions(env)))
    actors = {p: actor(p, net) for p in players}  # self-play: one network in every seat
    policy = TensorDictSequential(*actors.values())
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)

    before = score_against_random(env, net, args.eval_games)
    for _ in range(args.updates):
        loss = 0.0
        for _ in range(args.games_per_update):
            with torch.no_grad():
                episode = env.rollout(10_000, policy, break_when_any_done=True)
            for p in players:
                moved = episode[p, "mask"].squeeze(-1)  # the steps on which p moved
                rewards = episode["next", p, "reward"].reshape(-1)
                to_go = rewards.flip(0).cumsum(0).flip(0)  # p's return from each step on (gamma 1)
                log_prob = actors[p].get_dist(episode).log_prob(episode[p, "action"]).reshape(-1)
                loss = loss - (log_prob * to_go)[moved].sum()
        optimizer.zero_grad()
        (loss / args.games_per_update).backward()
        optimizer.step()
    after = score_against_random(env, net, args.eval_games)
    print(f"{args.game} {params}: {args.updates} updates of {args.games_per_update} games")
    print(f"mean return against random play, every seat: {before:+.3f} before, {after:+.3f} after")
    return {"before": before, "after": after}


if __name__ == "__main__":
    main()
