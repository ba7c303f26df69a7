"""The tabular control on whole Spoof and whole two-player Bid Spoof: magnetic mirror descent
with exact values, one row of logits per Markov observation, through the same round model
and closed-form step as ``hiddenhand train mmd-critic`` (docs/training.md, "Spoof: targets
from a model of the round" and "Bid Spoof: the same model").

If this converges at a temperature and step, the method does; where the network learner
does not get as far, the network or its critic is what stops it. Each iteration evaluates
the table's policy (the round model's expectation swept towards its fixed point from the
last iteration's values: the values of the Markov chain of rounds, a round nobody wins
played again), takes MMD's step at every observation, and every ``--measure-every``
iterations measures the table's exact exploitability with the game's own measure.

With ``--network`` the table's step is replaced by the learner's (``hiddenhand train
mmd-critic``'s policy network, its collection and its fit, the settings given here) reading
the exact values at the collection's observations instead of its critic's: what the critic's
error costs, apart from the network's; ``--set NAME=VALUE`` changes one of its settings,
``--everywhere`` fits it at every reachable observation instead of the collection's.

Example: ``python benchmarks/diagnose_rounds.py --matches 3 --temperature 0.1 --eta 0.1``, or
``--game bid-spoof --coins 3``.
"""

from __future__ import annotations

import argparse
from types import SimpleNamespace

import numpy as np
import torch
from diagnose_critic import settings_from
from tqdm.auto import tqdm

from hiddenhand.agent import Agent
from hiddenhand.core import TERMINAL
from hiddenhand.registry import get
from hiddenhand.training.critic_mmd import (
    CriticMMD,
    CriticSettings,
    _fit_policy,
    distinct_observations,
    masked_log_softmax,
    mmd_target,
    round_model,
)


def observations(rules) -> torch.Tensor:
    """Every Markov observation a decision can show, from a walk of the engine's game: each
    round-state the game can reach, walked once."""
    seen: dict[bytes, np.ndarray] = {}
    rounds: set[int] = set()

    def walk(state):
        if state.round_state() >= 0:
            if state.round_state() in rounds:
                return
            rounds.add(state.round_state())
        mover = state.current_player()
        x = state.observation_tensor(mover)
        seen.setdefault(x.tobytes(), x)
        for action in state.legal_actions(mover):
            child = state.clone()
            child.apply(action)
            if child.current_player() != TERMINAL:
                walk(child)

    walk(rules.new_initial_state())
    return torch.as_tensor(np.stack(list(seen.values())))


class Table:
    """A row per observation of ``obs``, found for any batch of observations by a random
    projection (observations the table lacks, which the model meets only with weight 0,
    read as ``default``)."""

    def __init__(self, obs: torch.Tensor) -> None:
        self.weights = torch.rand(obs.shape[1], dtype=torch.float64, generator=torch.Generator().manual_seed(0))
        keys = obs.double() @ self.weights
        self.order = torch.argsort(keys)
        self.keys = keys[self.order]

    def rows(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        keys = x.double() @ self.weights
        at = torch.searchsorted(self.keys, keys).clamp(max=len(self.keys) - 1)
        return self.order[at], self.keys[at] == keys

    def read(self, values: torch.Tensor, x: torch.Tensor, default: float = 0.0) -> torch.Tensor:
        rows, found = self.rows(x)
        return torch.where(found[:, None], values[rows], torch.full_like(values[rows], default))


class TableAgent(Agent):
    """The table's policy as an agent, for the game's exact measure."""

    uses_history = False

    def __init__(self, table: Table, probs: torch.Tensor) -> None:
        super().__init__()
        self.table, self.probs = table, probs

    def policy(self, observation) -> np.ndarray:
        return self.policy_batch({k: np.asarray(v)[None] for k, v in observation.items()})[0]

    def policy_batch(self, observations) -> np.ndarray:
        x = torch.as_tensor(np.asarray(observations["observation"], dtype=np.float32))
        mask = np.asarray(observations["action_mask"], dtype=bool)
        probs = self.table.read(self.probs, x).numpy().astype(np.float64) * mask
        missing = probs.sum(1) <= 0
        probs[missing] = mask[missing]
        return probs / probs.sum(1, keepdims=True)


def run(
    rules,
    iterations: int,
    eta: float,
    temperature: float,
    magnet_every: int,
    sweeps: int,
    every: int,
    network: bool,
    changes: list[str],
    everywhere: bool = False,
    floor: float = 0.0,
):
    game = get(rules.name)
    model = round_model(rules, "expected")
    obs = observations(rules)
    legal = model.legal(obs)
    table = Table(obs)
    logp = masked_log_softmax(torch.zeros(len(obs), rules.actions.size), legal)
    magnet = logp.clone()
    q = torch.zeros(len(obs), rules.actions.size)
    if network:
        base = CriticSettings(
            critic_learning_rate=1e-3,
            critic_epochs=8,
            policy_steps=16,
            replay=1,
            lookahead=True,
            eta=eta,
            temperature=temperature,
            magnet_every=magnet_every,
            floor=floor,
        )
        settings = settings_from(changes, base)
        learner = CriticMMD(rules, settings, seed=0, device="cpu")

    def probs_of(current):
        def probs(x, mask):
            if network:
                with torch.no_grad():
                    return torch.softmax(masked_log_softmax(learner.policy(x), mask), dim=1)
            return torch.where(mask, table.read(current.exp(), x), 0.0)

        return probs

    print(f"{len(obs)} observations; eta {eta}, temperature {temperature}, magnet every {magnet_every or 'never'}")
    for it in tqdm(range(iterations + 1), desc="iterations", unit="it"):
        probs = probs_of(logp)
        for _ in range(sweeps):
            q = model.expected_q(obs, probs, lambda x: table.read(q, x), 1.0)
        if it % every == 0:
            agent = learner.agent() if network else TableAgent(table, logp.exp())
            shown = logp
            if network:
                with torch.no_grad():
                    shown = masked_log_softmax(learner.policy(obs), legal)
            spread = -shown.masked_fill(~legal, 0.0).min()
            tqdm.write(
                f"iteration {it}: exploitability {game.exact_exploitability(rules, agent):.4f}, "
                f"widest log-probability gap {spread:.1f}"
            )
        if network:
            if magnet_every and it % magnet_every == 0:
                learner.magnet.load_state_dict(learner.policy.state_dict())
            if everywhere:
                batch = SimpleNamespace(obs=obs.numpy(), masks=legal.numpy().astype(np.float32), actions=obs[:, 0])
            else:
                batch, _, _ = learner.collector.collect(learner.policy, 0.0, 1.0)
            if len(batch.actions):
                seen = torch.as_tensor(distinct_observations(batch)[0])
                values = table.read(q, seen)
                anchor = learner.magnet if magnet_every else None
                _fit_policy(
                    learner.policy, anchor, learner.critic, learner.optimizer, batch, settings, temperature, values
                )
            continue
        if magnet_every and it % magnet_every == 0:
            magnet = logp.clone()
        target = mmd_target(logp, magnet, q, legal, eta, temperature, floor)
        logp = torch.log(target.clamp_min(1e-300)).masked_fill(~legal, -torch.inf)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=("spoof", "bid-spoof"), default="spoof", help="the game (default spoof)")
    parser.add_argument("--matches", type=int, default=3, help="Spoof: starting matches of each player (default 3)")
    parser.add_argument("--coins", type=int, default=3, help="Bid Spoof (two players): starting coins (default 3)")
    parser.add_argument("--iterations", type=int, default=2000, help="MMD iterations (default 2000)")
    parser.add_argument("--eta", type=float, default=0.1, help="MMD's step, per unit of a game won (default 0.1)")
    parser.add_argument("--temperature", type=float, default=0.1, help="MMD's temperature (default 0.1)")
    parser.add_argument("--magnet-every", type=int, default=0, help="iterations between magnet moves (0: uniform)")
    parser.add_argument(
        "--floor",
        type=float,
        default=0.0,
        help="least ratio of an action's probability to the most likely one's in each step's target (default 0: none)",
    )
    parser.add_argument("--sweeps", type=int, default=10, help="evaluation sweeps per iteration (default 10)")
    parser.add_argument("--measure-every", type=int, default=200, help="iterations between measures (default 200)")
    parser.add_argument(
        "--network", action="store_true", help="the learner's policy network and collection with exact values"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="with --network, change one of the learner's settings (repeatable; --set policy_steps=64)",
    )
    parser.add_argument(
        "--everywhere",
        action="store_true",
        help="with --network, fit the policy at every observation the game can reach, each alike, in place of "
        "the collection's (a control: what the observations self-play meets leave out)",
    )
    a = parser.parse_args()
    if (a.set or a.everywhere) and not a.network:
        parser.error("--set and --everywhere change the network learner: give --network with them")
    torch.set_num_threads(1)
    if a.game == "spoof":
        rules = get("spoof").rules(matches=a.matches, observation="markov")
    else:
        rules = get("bid_spoof").rules(num_players=2, coins=a.coins, observation="markov")
    run(
        rules,
        a.iterations,
        a.eta,
        a.temperature,
        a.magnet_every,
        a.sweeps,
        a.measure_every,
        a.network,
        a.set,
        a.everywhere,
        a.floor,
    )


if __name__ == "__main__":
    main()
