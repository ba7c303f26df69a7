"""Self-play policy gradients that aim at the equilibrium: one network plays every seat
against its current self, trained by tuned PPO or by magnetic mirror descent (MMD).

Why self-play against the current self. The pool-based loop of :mod:`.ppo` trains one seat
against snapshots and heuristics, and learns to beat *them*: at 4 Goofspiel cards it ends
as exploitable as the heuristics it beats. Here every decision of every seat is a sample
for one network, credited with the return of the player who made it, so the policy is
pushed towards a best response to itself, the fixed point of which is an equilibrium; the
regularisation below keeps the iteration from cycling around it.

The settings come from the study that measured policy gradients against exact
exploitability, "Reevaluating Policy Gradient Methods for Imperfect-Information Games"
(Rudolph et al., ICLR 2026; tuned values in github.com/nathanlct/IIG-RL-Benchmark,
``best_hyperparameters/min_final_expl_hparams``): much more entropy, a smaller learning
rate and a tighter clip than PPO's defaults. Their liar's dice values (the closest of their
games to ours: small hidden hands, a bid, a reveal), :data:`STUDY`, were our starting
point; :data:`OURS` departs from them where runs on our games showed why (the study's
budgets are tens of millions of steps, ours minutes), and :data:`SETTINGS` may differ per
game. MMD (Sokota et al., ICLR 2023, "A
Unified Approach to Reinforcement Learning, Quantal Response Equilibria, and Two-Player
Zero-Sum Games") is PPO's update plus a reverse-KL pull ``KL(pi || magnet)`` with the magnet
moved to the current policy every ``magnet_every`` updates (every update, as in the study,
makes the magnet the policy that collected the data: mirror descent's proximal term),
beside the entropy bonus (a pull towards the uniform policy).

Why not ``stable_baselines3``'s ``learn()``: it trains one agent in a single-agent env, so the
other seats' moves are the env's and never become samples. We keep sb3-contrib's
``MaskablePPO`` *policy* (its network, masked distribution and file format, so the result
loads as a :class:`~hiddenhand.agents.PPOAgent` and plays everywhere an agent does) and write
only what sb3 cannot do for us: the rollout of whole games over the rules engine, every
seat by the same network, and the loss with the magnet term. Rewards arrive at the end of
a game, so each player's advantage is GAE over that player's own decisions with gamma 1
(the games are finite; the equilibrium is of the undiscounted game).

Exploitability is measured exactly (the game's declared measure: positions for Markov
Goofspiel agents, whole-game best responses for Spoof and two-player Bid Spoof) every
``eval_every`` decisions; the clock excludes those measurements. Writes ``curve.csv``,
``curve.png``, ``run.json`` and the model (``PPOAgent.load(out_dir)``). Ctrl-C saves the
model, measures it (a second Ctrl-C skips that) and raises
:class:`~hiddenhand.interrupt.Interrupted`.
"""

from __future__ import annotations

import copy
import json
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from hiddenhand.agents.base import RandomAgent
from hiddenhand.agents.ppo import PPOAgent
from hiddenhand.files import atomic_write
from hiddenhand.gymnasium_env import SingleAgentEnv
from hiddenhand.interrupt import Interrupted, held_ctrl_c
from hiddenhand.pettingzoo_env import env_factories
from hiddenhand.registry import get
from hiddenhand.training.plots import describe
from hiddenhand.training.ppo import PPOPoint, exact_measure, write_curve
from hiddenhand.validation import check_choice, check_int

LEARNERS = ("ppo", "mmd")


@dataclass(frozen=True)
class Settings:
    """One learner's hyperparameters (see the module docstring for where they come from)."""

    learning_rate: float = 6.25e-5
    anneal_lr: bool = True
    anneal_entropy: bool = False
    """Decay ``ent_coef`` linearly to 0 with the learning rate: the entropy-regularised fixed
    point (a quantal response equilibrium) moves towards the equilibrium as training ends."""
    games: int = 64
    """Games played in lockstep (one forward pass serves them all)."""
    batch: int = 2048
    """Decisions per update (whole games: the last ones are finished, so a little more)."""
    epochs: int = 8
    minibatches: int = 1
    clip: float = 0.025
    ent_coef: float = 0.1
    vf_coef: float = 0.0625
    gae_lambda: float = 0.95
    normalize_advantages: bool = True
    """Per minibatch, as the study does; off, the returns are divided by the largest the game
    pays, so that ``ent_coef`` is a temperature in a fixed unit."""
    max_grad_norm: float = 0.5
    kl_coef: float = 0.0
    """MMD's pull towards the magnet; 0 is plain PPO."""
    magnet_every: int = 1
    """Updates between moves of the magnet to the current policy."""
    hidden: tuple[int, ...] = (64, 64)
    """Hidden layers of the policy and of the value network (sb3's default)."""


STUDY = Settings()
"""PPO's tuned liar's dice settings from the study (entropy 0.1, learning rate 6.25e-5, clip
0.025, value coefficient 0.0625, 8 epochs of one minibatch on 2048 decisions, advantages
normalised per minibatch); MMD adds its KL coefficient 0.025."""

OURS = replace(
    STUDY,
    learning_rate=1e-3,
    clip=0.2,
    ent_coef=0.05,
    anneal_entropy=True,
    normalize_advantages=False,
    gae_lambda=0.7,
    hidden=(128, 128),
)
"""What we run on our games, departing from :data:`STUDY` where 4-card Goofspiel (Markov,
exact exploitability every 40,000 decisions, one seed per setting, 0.3 to 1.1 million
decisions; ``python benchmarks/bench_learners.py``) showed why:

- advantages scaled by the game's largest payoff rather than normalised per minibatch: in
  self-play a tie (both bid the same card) pays 0, so a policy that has drifted towards
  matching the prize sees advantages near 0, which normalisation blows up to unit noise
  that swamps the entropy bonus; with the study's settings every run collapsed onto
  "bid the prize" (exploitability 1.99, uniform play concedes 2.5);
- a learning rate 16 times larger and PPO's usual clip 0.2: the study trains for tens of
  millions of steps, our budgets are minutes (6.25e-5 moved exploitability from 2.50 to
  2.31 in 110,000 decisions, 1e-3 to about 0.9);
- entropy 0.05 decayed to 0 with the learning rate, so that the regularised fixed point
  (a quantal response equilibrium) moves to the equilibrium as training ends;
- GAE lambda 0.7 (the value network takes more of the credit assignment, less variance)
  and 128-unit layers: each a little better (0.82 and 0.75 against 0.92 after 560,000
  decisions, within seed noise)."""

ROUNDS = replace(OURS, ent_coef=0.1, anneal_entropy=False)
"""Spoof and Bid Spoof, whose equilibria bluff (mix) at almost every decision: the study's
entropy 0.1, kept to the end. On whole 3-match Spoof (200,000 decisions, one seed) it
reached 0.48 where entropy 0.05 (learning rate 3e-4) reached 0.60, 0.02 with a magnet
moved every 10 updates 0.56, and our Goofspiel settings (annealed to 0) 0.99, a policy
nearly as exploitable as a pure one (random play: 0.50)."""

SETTINGS: dict[tuple[str, str], Settings] = {
    ("ppo", "default"): OURS,
    ("mmd", "default"): replace(OURS, kl_coef=0.025),
    **{("ppo", game): ROUNDS for game in ("spoof", "bid_spoof")},
    **{("mmd", game): replace(ROUNDS, kl_coef=0.025) for game in ("spoof", "bid_spoof")},
}
"""Per ``(learner, game)``: a game absent here uses ``(learner, "default")``."""


def settings_for(learner: str, game: str) -> Settings:
    learner = check_choice("learner", learner, LEARNERS)
    return SETTINGS.get((learner, game), SETTINGS[(learner, "default")])


@dataclass
class _Batch:
    """One update's decisions, every seat's, as arrays."""

    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    logp: np.ndarray
    values: np.ndarray
    advantages: np.ndarray
    returns: np.ndarray


class _Rollout:
    """``games`` PettingZoo AEC envs of ``game`` (the public face, PettingZoo's conventions)
    in lockstep, every seat played by ``policy``; see :meth:`collect`. Each game's record is
    kept per agent: (observation, mask, action, log-probability, value) of each of that
    agent's decisions, and its return summed from the env's rewards."""

    def __init__(self, game: str, params: dict, games: int, rng: np.random.Generator) -> None:
        env_factory = env_factories(get(game).env)[0]
        self.rng = rng
        self.envs = [env_factory(**params) for _ in range(games)]
        self.records: list[dict[str, list[tuple]]] = [{} for _ in range(games)]
        self.returns: list[dict[str, float]] = [{} for _ in range(games)]
        for i in range(games):
            self._reset(i)

    def _reset(self, i: int) -> None:
        env = self.envs[i]
        env.reset(seed=int(self.rng.integers(2**63)))
        self.records[i] = {agent: [] for agent in env.agents}
        self.returns[i] = dict.fromkeys(env.agents, 0.0)

    def _to_move(self, i: int) -> dict | None:
        """The observation of the agent to move in game ``i``, stepping past the agents whose
        game is over (PettingZoo's ``step(None)``); ``None`` once every agent is done."""
        env = self.envs[i]
        while env.agents:
            observation, _, terminated, truncated, _ = env.last()
            if not (terminated or truncated):
                return observation
            env.step(None)
        return None

    def collect(self, policy, batch: int, gae_lambda: float, scale: float) -> tuple[_Batch, int]:
        """At least ``batch`` decisions from whole games (the games under way when the
        count is reached are played to their end), with each agent's GAE advantages of
        its return times ``scale``. Returns the batch and the number of games finished."""
        import torch

        rows: list[tuple] = []
        advantages: list[float] = []
        returns: list[float] = []
        finished, decisions = 0, 0
        live = list(range(len(self.envs)))
        while live:
            shown = [self._to_move(i) for i in live]
            obs = np.stack([o["observation"] for o in shown])
            masks = np.stack([o["action_mask"] for o in shown]).astype(bool)
            with torch.no_grad():
                actions, values, logp = policy(torch.as_tensor(obs), action_masks=masks)
            actions, values, logp = actions.numpy(), values.numpy().ravel(), logp.numpy()
            decisions += len(live)
            still = []
            for k, i in enumerate(live):
                env = self.envs[i]
                self.records[i][env.agent_selection].append((obs[k], masks[k], actions[k], logp[k], values[k]))
                env.step(int(actions[k]))
                for agent, reward in env.rewards.items():
                    self.returns[i][agent] += reward
                if self._to_move(i) is not None:
                    still.append(i)
                    continue
                finished += 1
                for agent, record in self.records[i].items():
                    rows += record
                    gains, targets = _gae([r[4] for r in record], scale * self.returns[i][agent], gae_lambda)
                    advantages += gains
                    returns += targets
                self._reset(i)
                if decisions < batch:
                    still.append(i)
            live = still
        obs, masks, actions, logp, values = (np.array(column) for column in zip(*rows))
        return _Batch(obs, masks, actions, logp, values, np.array(advantages), np.array(returns)), finished


def _gae(values: list[float], reward: float, lam: float) -> tuple[list[float], list[float]]:
    """GAE (gamma 1) of one player's decisions in one game, paid ``reward`` at the end:
    ``delta_t = v[t+1] - v[t]``, the last ``reward - v[-1]``. Returns advantages and the
    value targets (advantage + value)."""
    nxt, running = reward, 0.0
    gains = [0.0] * len(values)
    for t in range(len(values) - 1, -1, -1):
        running = (nxt - values[t]) + lam * running
        gains[t] = running
        nxt = values[t]
    return gains, [g + v for g, v in zip(gains, values)]


def _update(policy, magnet, optimizer, batch: _Batch, s: Settings, rng: np.random.Generator, left: float) -> None:
    """PPO's clipped surrogate, the value loss, the entropy bonus and (MMD) ``kl_coef *
    KL(pi || magnet)`` over the legal actions, for ``s.epochs`` passes. ``left``: the share
    of training still to come (for the entropy's annealing)."""
    import torch

    tensors = {name: torch.as_tensor(value) for name, value in asdict(batch).items()}
    tensors["obs"] = tensors["obs"].float()
    n = len(batch.actions)
    size = -(-n // s.minibatches)
    for _ in range(s.epochs):
        order = rng.permutation(n)
        for start in range(0, n, size):
            rows = torch.as_tensor(order[start : start + size])
            obs, masks = tensors["obs"][rows], tensors["masks"][rows].numpy()
            dist = policy.get_distribution(obs, action_masks=masks)
            logp = dist.log_prob(tensors["actions"][rows])
            gains = tensors["advantages"][rows].float()
            if s.normalize_advantages and len(rows) > 1:
                gains = (gains - gains.mean()) / (gains.std() + 1e-8)
            ratio = torch.exp(logp - tensors["logp"][rows])
            surrogate = torch.max(-gains * ratio, -gains * torch.clamp(ratio, 1 - s.clip, 1 + s.clip)).mean()
            value_loss = 0.5 * ((policy.predict_values(obs).ravel() - tensors["returns"][rows].float()) ** 2).mean()
            loss = (
                surrogate
                + s.vf_coef * value_loss
                - s.ent_coef * (left if s.anneal_entropy else 1.0) * dist.entropy().mean()
            )
            if s.kl_coef:
                with torch.no_grad():
                    anchor = magnet.get_distribution(obs, action_masks=masks).distribution.logits
                # Normalised log-probabilities, finite where masked (about -1e8, with probability 0
                # under both): log(0) would put 0 * inf into the gradient.
                own = dist.distribution.logits
                kl = (own.exp() * (own - anchor)).sum(dim=1).mean()
                loss = loss + s.kl_coef * kl
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), s.max_grad_norm)
            optimizer.step()


def train_selfplay(
    game: str,
    game_kwargs: dict[str, Any],
    steps: int,
    out_dir: str | Path,
    learner: str = "mmd",
    seed: int = 0,
    eval_every: int = 20_000,
    settings: Settings | None = None,
    progress: bool = True,
) -> list[PPOPoint]:
    """Train ``learner`` (``"ppo"`` or ``"mmd"``) by self-play for ``steps`` decisions (every
    seat's; the last update's games are played to their end, so a little more) on ``game``
    with ``game_kwargs``, measuring the exact exploitability every ``eval_every`` decisions
    where the game declares a measure that covers the agent (a Markov observation,
    ``observation="markov"``, is what makes it exact beyond tiny sizes). ``settings``
    default to :func:`settings_for`. Saves the model to ``out_dir`` and returns the curve;
    see the module docstring."""
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    declared = get(game)
    game = declared.name
    learner = check_choice("learner", learner, LEARNERS)
    steps = check_int("steps", steps, 1, 10**10)
    eval_every = check_int("eval_every", eval_every, 1, 10**10)
    s = settings or settings_for(learner, game)
    rules = declared.rules(**game_kwargs)
    params = rules.params
    torch.manual_seed(seed)
    env = SingleAgentEnv(game, RandomAgent(), **game_kwargs)  # only for the spaces
    net = dict(pi=list(s.hidden), vf=list(s.hidden))
    model = MaskablePPO("MlpPolicy", env, seed=seed, device="cpu", policy_kwargs=dict(net_arch=net))
    policy = model.policy
    optimizer = torch.optim.Adam(policy.parameters(), lr=s.learning_rate, eps=1e-5)
    magnet = copy.deepcopy(policy)
    rng = np.random.default_rng(seed)
    rollout = _Rollout(game, game_kwargs, s.games, rng)
    scale = 1.0 if s.normalize_advantages else 1.0 / max(abs(u) for u in rules.utility_range)
    out = Path(out_dir)
    curve: list[PPOPoint] = []
    clock = {"seconds": 0.0, "since": time.perf_counter()}
    done = {"steps": 0, "games": 0, "next_eval": 0}

    def evaluate() -> None:
        clock["seconds"] += time.perf_counter() - clock["since"]
        agent = PPOAgent(model, game, params, seed=seed)
        curve.append(PPOPoint(done["steps"], clock["seconds"], exact_measure(declared, rules, agent), {}))
        write_curve(out, curve, f"self-play {learner.upper()} on {describe(rules)}")
        clock["since"] = time.perf_counter()

    interrupted = False
    with tqdm(total=steps, desc=f"{learner.upper()} on {rules.name}", disable=not progress, unit="step") as bar:
        try:
            update = 0
            while done["steps"] < steps:
                left = 1 - done["steps"] / steps
                if done["steps"] >= done["next_eval"]:
                    evaluate()
                    done["next_eval"] += eval_every
                    bar.set_postfix(exploitability=curve[-1].exploitability)
                if s.anneal_lr:
                    for group in optimizer.param_groups:
                        group["lr"] = s.learning_rate * left
                if s.kl_coef and update % s.magnet_every == 0:
                    magnet.load_state_dict(policy.state_dict())
                batch, games = rollout.collect(policy, s.batch, s.gae_lambda, scale)
                _update(policy, magnet, optimizer, batch, s, rng, left)
                update += 1
                done["steps"] += len(batch.actions)
                done["games"] += games
                bar.update(len(batch.actions))
        except KeyboardInterrupt:
            interrupted = True
            bar.write("interrupted: saving the model, then measuring it (Ctrl-C skips that)")
    with held_ctrl_c() as ctrl_c:  # a Ctrl-C from here on skips the final measure only
        PPOAgent(model, game, params).save(out)
        if not curve or curve[-1].steps != done["steps"]:
            _, skipped = ctrl_c.unless_interrupted(evaluate)
            interrupted |= skipped
        with atomic_write(out / "run.json", "w") as handle:
            record = {"game": game, "params": params, "learner": learner, "settings": asdict(s), "seed": seed}
            record |= {"steps": done["steps"], "games": done["games"], "interrupted": interrupted}
            json.dump({**record, "curve": [asdict(p) for p in curve]}, handle, indent=2)
        if interrupted:
            raise Interrupted(f"{learner} stopped by Ctrl-C after {done['steps']} steps; results in {out}", curve)
    return curve


__all__ = ["LEARNERS", "OURS", "ROUNDS", "SETTINGS", "STUDY", "Settings", "settings_for", "train_selfplay"]
