"""A trained best responder: a lower bound on exploitability where no exact method applies.

Where the game tree is too large for an exact best response (Goofspiel beyond about 8
cards for agents that read the score or the history, hidden-bid or many-player Goofspiel,
Bid Spoof, EggHead), :func:`approximate_exploitability` trains a MaskablePPO responder in
each seat against the frozen agent in every other seat (the Gymnasium face,
:class:`~hiddenhand.gymnasium_env.SingleAgentEnv`) and measures what it gains.
A trained responder is a best response only if training found one, so its gain is a LOWER
BOUND on the exploitability, reported with a 95% interval and ``exact=False``.

How one seat ``s`` is measured, and why:

- ``len(seeds)`` responders are trained, one per seed, for ``steps`` env steps each: PPO
  runs vary a lot with their seed, and the best of a few is far better than one.
- Each responder is played both greedily (its most probable move) and as trained (sampling
  its distribution). A best response against a fixed agent can be pure when the responder
  sees its whole information state, and greedy play then removes the noise PPO's policy keeps;
  where the observation is a bounded window (Bid Spoof, EggHead) a mixed policy over it can do
  better, so both are tried.
- The best of those ``2 × len(seeds)`` candidates is picked on ``eval_games`` *selection*
  games, and its figure is measured on ``eval_games`` fresh *test* games: the maximum of
  several noisy means on the same games is biased upwards, a fresh sample is not.
- The seat's on-policy value (the agent in every seat) is estimated on the same test games,
  not assumed: an agent may read its seat, so even a symmetric zero-sum game need not give
  it 0. Game ``g`` of the test set draws chance and the agent's moves from the same seeds
  with and without the responder (common random numbers), and the estimate is the mean of
  the paired differences, ``ci95 = 1.96 × their standard error``. The on-policy games do not
  depend on the seat, so in a constant-sum game their noise cancels from NashConv.

The responder sees what the game's observation shows its seat: the whole information state
in Goofspiel, a bounded window in Bid Spoof and EggHead (a further reason the figure is only
a lower bound). A responder that found nothing better than the agent's own play gets a
figure near 0, or below it by noise: it is reported as measured, never clamped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from tqdm.auto import tqdm

from hiddenhand.agent import Agent, Observation
from hiddenhand.agents.ppo import PPOAgent
from hiddenhand.core import Rules
from hiddenhand.devices import torch_device
from hiddenhand.exploitability import Exploitability
from hiddenhand.global_rngs import keeping_global_rngs
from hiddenhand.gymnasium_env import SingleAgentEnv
from hiddenhand.training.evaluation import play_game
from hiddenhand.training.sb3_logger import without_log_folder
from hiddenhand.validation import check_int

ENVS = 8
"""Games a responder plays side by side: the policy network then runs on a batch of
observations instead of one, which makes collecting moves several times faster."""

RESPONDER_PPO = {
    "n_steps": 64,
    "batch_size": 128,
    "n_epochs": 10,
    "gamma": 1.0,
    "gae_lambda": 0.95,
    "clip_range": 0.2,
    "ent_coef": 0.0,
    "policy_kwargs": {"net_arch": [128, 128]},
}
"""MaskablePPO's settings for a responder. Stable-baselines3's defaults, changed for a best
response against a fixed agent: ``gamma=1`` because the quantity measured is the
undiscounted return (discounting would favour quick wins in games of varying length); no
entropy bonus, because against a stationary opponent the task is a fixed MDP with a
deterministic optimum, with no moving target that exploration must keep tracking (as in
self-play); shorter rollouts (:data:`ENVS` × 64 = 512 moves instead of 2048) for more
updates within a small budget, which a stationary target tolerates; and a wider network
(128 units instead of 64) for the history a responder to a history-reading agent must read.
The learning rate falls linearly from :data:`LEARNING_RATE` to 0, so that the policy
settles by the end of the budget instead of jittering."""

LEARNING_RATE = 1e-3
"""The responder's initial learning rate. Chosen on 4-card Goofspiel (a size the validation
does not use) against the medium and hard heuristics, 5,120 steps, two seeds, greedy play on
3,000 games: the share of the exact gain recovered was 50-66% against hard at
stable-baselines3's 3e-4, 90-97% at 1e-3 (96-99% with 128 units), 87-95% at 3e-3; more
epochs, smaller rollouts or an entropy bonus of 0.01 changed it by less than the noise."""


class Greedy(Agent):
    """``inner``'s most probable legal move, always: a trained policy played without its
    leftover randomness (see the module docstring)."""

    def __init__(self, inner: Agent) -> None:
        super().__init__()
        self.inner = inner

    def policy(self, observation: Observation) -> np.ndarray:
        probs = self.inner.policy(observation)
        choice = np.zeros_like(probs)
        choice[int(np.argmax(probs))] = 1.0
        return choice

    def __repr__(self) -> str:
        return f"Greedy({self.inner!r})"


def approximate_exploitability(
    rules: Rules,
    agent: Agent,
    *,
    steps: int = 200_000,
    seeds: Sequence[int] = (0, 1, 2),
    eval_games: int = 2000,
    progress: bool = True,
    device: str = "auto",
) -> Exploitability:
    """A lower bound on the exploitability of ``agent`` playing every seat of ``rules``, by
    trained best responders; see the module docstring for the method.

    ``steps``: env steps (the responder's moves) of training per responder, rounded up to
    whole rollouts of ``ENVS × RESPONDER_PPO["n_steps"]``; ``seeds``: one responder per seed and
    seat; ``eval_games``: games in each of the selection and test sets; ``device``: where the
    responders train (:func:`~hiddenhand.devices.torch_device`). The same arguments
    give the same result (the agent's generator is reseeded as it plays, as in every match).
    Costs ``num_players × len(seeds)`` trainings; a command line can pass its options
    straight through."""
    steps = check_int("steps", steps, 1, 10**10)
    device = torch_device(device)
    eval_games = check_int("eval_games", eval_games, 2, 10**9)
    seeds = _check_seeds(seeds)
    selection, test = np.random.SeedSequence(list(seeds)).generate_state(2)
    players = rules.num_players
    on_policy = _returns(rules, agent, int(test), eval_games)
    per_seat, ci95 = [], []
    with (
        keeping_global_rngs(),
        tqdm(total=players * len(seeds), desc="best responders", unit="run", disable=not progress) as bar,
    ):
        for seat in range(players):
            candidates = []
            for seed in seeds:
                bar.set_postfix(seat=seat, seed=seed)
                responder = train_responder(rules, agent, seat, steps, seed, device)
                candidates += [responder, Greedy(responder)]
                bar.update()
            scores = [_returns(rules, agent, int(selection), eval_games, c, seat)[:, seat].mean() for c in candidates]
            best = candidates[int(np.argmax(scores))]
            gains = _returns(rules, agent, int(test), eval_games, best, seat)[:, seat] - on_policy[:, seat]
            per_seat.append(float(gains.mean()))
            ci95.append(1.96 * float(gains.std(ddof=1)) / math.sqrt(eval_games))
    rollout = ENVS * RESPONDER_PPO["n_steps"]
    trained = -(-steps // rollout) * rollout
    method = f"trained best responder (PPO, {trained} steps × {len(seeds)} seeds per seat), lower bound"
    return Exploitability(tuple(per_seat), exact=False, method=method, ci95=tuple(ci95))


def train_responder(rules: Rules, agent: Agent, seat: int, steps: int, seed: int, device: str = "auto") -> PPOAgent:
    """A MaskablePPO policy trained for ``steps`` moves in ``seat`` against ``agent`` in every
    other seat (settings :data:`RESPONDER_PPO`) on ``device``
    (:func:`~hiddenhand.devices.torch_device`), as an agent. Reseeds the global generators
    (stable-baselines3 does): :func:`approximate_exploitability` restores them."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)  # on two cores more threads made PPO far slower
    env = DummyVecEnv([lambda: SingleAgentEnv(rules.name, agent, seat=seat, **rules.params)] * ENVS)
    model = MaskablePPO(
        "MlpPolicy",
        env,
        learning_rate=lambda remaining: LEARNING_RATE * remaining,
        seed=int(np.random.SeedSequence([seed, seat]).generate_state(1)[0]),
        device=torch_device(device),
        verbose=0,
        **RESPONDER_PPO,
    )
    without_log_folder(model).learn(total_timesteps=steps)
    return PPOAgent(model, rules.name, rules.params)


def _check_seeds(seeds: Sequence[int]) -> tuple[int, ...]:
    """``seeds`` as a tuple of distinct non-negative ints (two equal seeds would train the
    same responder twice)."""
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence):
        raise ValueError(f"seeds={seeds!r} must be a sequence of integers, such as (0, 1, 2)")
    checked = tuple(check_int("seed", s, 0, 2**63 - 1) for s in seeds)
    if not checked or len(set(checked)) != len(checked):
        raise ValueError(f"seeds={seeds!r} must be one or more distinct integers")
    return checked


def _returns(
    rules: Rules, agent: Agent, key: int, games: int, responder: Agent | None = None, seat: int = 0
) -> np.ndarray:
    """The returns (games, seats) of ``games`` games of ``agent`` in every seat but ``seat``,
    which ``responder`` takes (``None``: the agent plays every seat). Game ``g`` draws chance
    from seed ``(key, g, 0)``, the agent's moves from ``(key, g, 1)`` and the responder's from
    ``(key, g, 2)``: the same ``key`` replays the same chance and the same draws of the agent
    whoever responds (common random numbers)."""
    seated = [agent] * rules.num_players
    if responder is not None:
        seated[seat] = responder
    returns = np.empty((games, rules.num_players))
    for g in range(games):
        agent.seed([key, g, 1])
        if responder is not None:
            responder.seed([key, g, 2])
        returns[g] = play_game(rules, seated, np.random.default_rng([key, g, 0]))
    return returns
