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
only what sb3 cannot do for us: the collection of games, every seat by the same network,
and the loss with the magnet term.

The games are played ``games`` at a time in the game's batched env, ``batch / games`` steps
per update, each decision credited by GAE over its own player's decisions with the points
still to come (:mod:`.selfplay_collection`, which the learner with a critic,
:mod:`.critic_mmd`, shares).

The run (clock, curve, record, Ctrl-C) is :class:`~hiddenhand.training.run.Run`'s: the
exploitability is measured exactly (the game's declared measure: positions for Markov
Goofspiel agents, whole-game best responses for Spoof and two-player Bid Spoof) every
``eval_every`` decisions, off the training clock. Writes ``curve.csv``, ``curve.png``,
``run.json`` and the model (``PPOAgent.load(out_dir)``).
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from hiddenhand.agent import RandomAgent
from hiddenhand.agents.ppo import PPOAgent
from hiddenhand.core import Rules, check_rules
from hiddenhand.devices import torch_device
from hiddenhand.gymnasium_env import SingleAgentEnv
from hiddenhand.registry import game_of
from hiddenhand.training.run import Point, Run, exact_measure
from hiddenhand.training.selfplay_collection import Batch, Collector
from hiddenhand.validation import check_choice, check_int
from hiddenhand.vector import MAX_ENVS

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
    """Games played at once in the batched env (one step and one forward pass serve them all)."""
    batch: int = 2048
    """Decisions played per update, in whole steps of every game (``batch / games`` steps)."""
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
    normalize_advantages=False,
    gae_lambda=0.7,
    hidden=(128, 128),
)
"""What we run on our games, departing from :data:`STUDY` where 4-card Goofspiel showed why
(the runs: ``python benchmarks/bench_learners.py``; their figures: docs/training.md):

- advantages scaled by the game's largest payoff rather than normalised per minibatch: in
  self-play a tie (both bid the same card) pays 0, so a policy that has drifted towards
  matching the prize sees advantages near 0, which normalisation blows up to unit noise
  that swamps the entropy bonus (with the study's settings runs collapsed onto "bid the
  prize");
- a learning rate 16 times larger and PPO's usual clip 0.2: the study trains for tens of
  millions of steps, our budgets are minutes;
- entropy 0.05, kept to the end. Decayed to 0 with the learning rate it would move the
  regularised fixed point (a quantal response equilibrium) to the equilibrium as training
  ends; instead the policy hardens as the bonus goes, and the runs' last points climb back
  from their best, where kept the last point stays near the best (the runs:
  docs/training.md, "Entropy kept, not annealed");
- GAE lambda 0.7 (the value network takes more of the credit assignment, less variance)
  and 128-unit layers, each a little better within seed noise."""

ROUNDS = replace(OURS, ent_coef=0.1)
"""Spoof and Bid Spoof, whose equilibria bluff (mix) at almost every decision: the study's
entropy 0.1; with entropy 0.05 annealed to 0 the policy ended nearly pure, and as
exploitable as one (docs/training.md has the runs)."""

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


def _update(policy, magnet, optimizer, batch: Batch, s: Settings, rng: np.random.Generator, left: float) -> None:
    """PPO's clipped surrogate, the value loss, the entropy bonus and (MMD) ``kl_coef *
    KL(pi || magnet)`` over the legal actions, for ``s.epochs`` passes. ``left``: the share
    of training still to come (for the entropy's annealing)."""
    import torch

    tensors = {name: torch.as_tensor(getattr(batch, name), device=policy.device) for name in Batch.COLUMNS}
    tensors["obs"] = tensors["obs"].float()
    n = len(batch.actions)
    size = -(-n // s.minibatches)
    for _ in range(s.epochs):
        order = rng.permutation(n)
        for start in range(0, n, size):
            rows = torch.as_tensor(order[start : start + size], device=policy.device)
            obs, masks = tensors["obs"][rows], tensors["masks"][rows].cpu().numpy()
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


def mmd_settings(rules: Rules) -> Settings:
    """Self-play MMD's settings for ``rules`` (its declaration, training/learners.py)."""
    return settings_for("mmd", rules.name)


def ppo_settings(rules: Rules) -> Settings:
    """Self-play tuned PPO's settings for ``rules`` (its declaration, training/learners.py)."""
    return settings_for("ppo", rules.name)


class SelfPlay:
    """The learner's state on ``rules``: the sb3 model (its policy is the network), the
    optimiser, the magnet, the generator and the collection. :meth:`update` is one
    collection and its update. One object, so that a run saves it whole and resumes from it
    (:meth:`~hiddenhand.training.run.Run.keep`)."""

    def __init__(self, rules: Rules, s: Settings, seed: int, device: str) -> None:
        import torch
        from sb3_contrib import MaskablePPO

        games = check_int("games", s.games, 1, MAX_ENVS)
        rounds = max(1, -(-check_int("batch", s.batch, 1, 10**9) // games))
        self.s = s
        torch.manual_seed(seed)
        env = SingleAgentEnv(rules.name, RandomAgent(), **rules.params)  # only for the spaces
        net = dict(pi=list(s.hidden), vf=list(s.hidden))
        self.model = MaskablePPO("MlpPolicy", env, seed=seed, device=device, policy_kwargs=dict(net_arch=net))
        self.optimizer = torch.optim.Adam(self.model.policy.parameters(), lr=s.learning_rate, eps=1e-5)
        self.magnet = copy.deepcopy(self.model.policy)
        self.rng = np.random.default_rng(seed)
        self.collector = Collector(rules.name, rules.params, games, rounds, seed)
        self.scale = 1.0 if s.normalize_advantages else 1.0 / rules.largest_payoff
        self.updates = 0

    def update(self, left: float) -> tuple[int, int]:
        """Anneal the learning rate (``left``: the share of the budget still to spend), move
        the magnet if it is due, collect and update; the decisions played and the games
        finished."""
        s, policy = self.s, self.model.policy
        if s.anneal_lr:
            for group in self.optimizer.param_groups:
                group["lr"] = s.learning_rate * left
        if s.kl_coef and self.updates % s.magnet_every == 0:
            self.magnet.load_state_dict(policy.state_dict())
        batch, played, finished = self.collector.collect(policy, s.gae_lambda, self.scale)
        _update(policy, self.magnet, self.optimizer, batch, s, self.rng, left)
        self.updates += 1
        return played, finished


def train_selfplay(
    rules: Rules,
    *,
    steps: int,
    out: str | Path,
    seed: int = 0,
    eval_every: int = 20_000,
    settings: Settings | None = None,
    progress: bool = True,
    seconds: float | None = None,
    device: str = "auto",
    resume: bool = False,
) -> list[Point]:
    """Train one network by self-play on ``rules`` (a game with a batched env) for ``steps``
    decisions (every seat's, in whole collections of ``batch``) or, with ``seconds``, until
    that many seconds of training have passed if that comes first, measuring the exact
    exploitability every ``eval_every`` decisions where the game declares a measure that
    covers the agent (a Markov observation, ``observation="markov"``, is what makes it exact
    beyond tiny sizes). ``settings`` default to MMD's for the game (:func:`settings_for`;
    PPO is MMD without the magnet, ``kl_coef=0``). The network runs on ``device``
    (:func:`~hiddenhand.devices.torch_device`). Saves the model to ``out`` and returns the
    curve; see the module docstring. The learner's state is saved in ``out`` too
    (:meth:`~hiddenhand.training.run.Run.keep`): ``resume`` goes on with the run saved there."""
    import torch

    torch.set_num_threads(1)
    declared = game_of(check_rules(rules, "train_selfplay"))
    game, params = declared.name, rules.params
    device = torch_device(device)
    steps = check_int("steps", steps, 1, 10**12)
    eval_every = check_int("eval_every", eval_every, 1, 10**12)
    s = settings or settings_for("mmd", game)
    name = "mmd" if s.kl_coef else "ppo"
    learner = SelfPlay(rules, s, seed, device)
    run = Run(f"self-play {name.upper()} on {device}", rules, out, total=steps, progress=progress, seconds=seconds)
    identity = {"settings": asdict(s), "seed": seed, "device": device}
    learner = run.keep(learner, identity, resume)

    def measure() -> tuple[float | None, dict]:
        return exact_measure(declared, rules, PPOAgent(learner.model, game, params, seed=seed)), {}

    with run.training():
        while run.going():
            if run.due(eval_every):
                run.measure(measure)
            run.advance(*learner.update(1 - run.spent()))
    return run.finish(lambda: PPOAgent(learner.model, game, params).save(run.out), measure, identity)


__all__ = [
    "LEARNERS",
    "OURS",
    "ROUNDS",
    "SETTINGS",
    "STUDY",
    "SelfPlay",
    "Settings",
    "mmd_settings",
    "ppo_settings",
    "settings_for",
    "train_selfplay",
]
