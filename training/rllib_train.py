"""Multi-agent PPO self-play on Ray RLlib: ``hiddenhand train rllib``.

RLlib's PPO (new API stack) with :class:`hiddenhand.rllib.MaskedPPOModule`, every seat mapped
to one shared module (or one per seat), on a local Ray instance (127.0.0.1, usage statistics
off, the CPUs given) or on an existing cluster (``address``). Each iteration collects
``batch`` decisions from ``env_runners`` runners of ``envs_per_runner`` games each. The
shared module is measured exactly every ``eval_every`` iterations where the game declares a
measure that covers it (the Markov observation makes it exact), off the training clock; the
curve, the plot, ``run.json`` and Ctrl-C are :class:`~hiddenhand.training.run.Run`'s (its
steps are the decisions sampled, its bar's total ``iterations * batch``). The agent reloads with
:meth:`hiddenhand.rllib.RLlibAgent.load` (``hiddenhand play --opponent DIR`` and
``hiddenhand exploitability --agent DIR`` read it).

The settings are those of our own PPO self-play on the game (:func:`.policy_gradient.settings_for`)
with the two that RLlib's advantages call for changed (:func:`rllib_settings_for`),
translated into ``PPOConfig.training`` by :func:`rllib_training`: the game undiscounted
(gamma 1, where RLlib's default 0.99 would make a card bid early count less than one bid
late), GAE lambda, learning rate and entropy (each annealed to 0 over the run where the
settings say so), clip, value coefficient, gradient norm, epochs and minibatches, the decisions per update,
the hidden layers; RLlib's adaptive KL penalty off (ours has none) and its value-loss clip
off (it caps the squared error at 10, and Goofspiel's returns run to tens of points). Two of ours do not
apply: RLlib always standardises advantages per minibatch (ours scale them by the largest
payoff; hence the study's clip and entropy), and its episodes end with the game, so there
is no carrying of unfinished games.
The credit is ours: the env pays each seat the points as rounds settle them
(:class:`hiddenhand.rllib.MultiAgentGame`).

Setting ``update`` ``"mmd-critic"`` replaces PPO's loss by the update of
:mod:`.critic_mmd` (self-play MMD in closed form with a Q critic), as an RLlib Learner
(:mod:`.rllib_mmd`): the same collection, so it scales over a cluster as PPO does. The
learner ``rllib-mmd-critic`` starts from that learner's settings for the configuration
(:func:`mmd_critic_settings_for_rules`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from hiddenhand.core import Rules, check_rules
from hiddenhand.devices import torch_device
from hiddenhand.ray_cluster import start_ray
from hiddenhand.registry import game_of
from hiddenhand.training.critic_mmd import TARGETS, round_model
from hiddenhand.training.critic_mmd import settings_for_rules as critic_settings_for_rules
from hiddenhand.training.policy_gradient import STUDY, Settings, settings_for
from hiddenhand.training.run import Point, Run, exact_measure
from hiddenhand.validation import check_bool, check_choice, check_int, check_number


@dataclass(frozen=True)
class RLlibSettings(Settings):
    """Our PPO self-play's settings (:class:`~hiddenhand.training.policy_gradient.Settings`,
    those RLlib has a counterpart for: :func:`rllib_training`), and where RLlib runs."""

    env_runners: int = 1
    """Remote env runners (0: the games are played in the driver)."""
    envs_per_runner: int = 8
    """Games each runner steps together: our games are short, and RLlib's cost per episode is fixed."""
    policy: str = "shared"
    """One module for every seat (shared) or one per seat (per_seat)."""
    address: str = ""
    """An existing Ray cluster (ray start --head; ray start --address=HEAD:6379 on the
    others); empty: a local instance on 127.0.0.1."""
    num_cpus: int = 0
    """CPUs of the local instance (0: all)."""
    update: str = "ppo"
    """The learner's loss: ``ppo`` (RLlib's PPO) or ``mmd-critic`` (MMD in closed form from a
    Q critic's values of every legal action, as ``hiddenhand train mmd-critic`` updates; the
    settings below, ``anneal_entropy`` anneals its temperature and ``magnet_every`` moves its
    magnet, 0 keeping the uniform policy)."""
    eta: float = 1.0
    """With ``mmd-critic``: MMD's step size, per unit of the game's largest payoff."""
    temperature: float = 0.05
    """With ``mmd-critic``: MMD's temperature (the pull towards the uniform policy), in units
    of the game's largest payoff."""
    critic_learning_rate: float = 3e-4
    """With ``mmd-critic``: Adam's step for the Q network (``learning_rate`` is the policy's)."""
    targets: str = "auto"
    """With ``mmd-critic``: the critic's targets, ``sampled`` (each decision's lambda-return),
    ``expected`` (every legal action's value over the round, where the game declares a round
    model) or ``auto`` (expected where it does)."""
    lookahead: bool = False
    """With ``mmd-critic`` and a round model's targets: the policy's step reads each legal
    action's value as the model computes it (the critic's values at the positions that
    follow) instead of the value head's output at the observation, as in
    ``hiddenhand train mmd-critic``."""
    floor: float = 0.0
    """With ``mmd-critic``: if more than 0, the least ratio of a legal action's probability
    to the most likely action's in each step's target, as in ``hiddenhand train mmd-critic``."""

    def check(self) -> None:
        """Refuse a setting out of its range, naming it and what is allowed."""
        check_int("env_runners", self.env_runners, 0, 10_000)
        check_int("envs_per_runner", self.envs_per_runner, 1, 10_000)
        check_int("num_cpus", self.num_cpus, 0, 10**6)
        check_int("batch", self.batch, self.minibatches, 10**8)
        check_choice("policy", self.policy, POLICIES)
        check_choice("update", self.update, UPDATES)
        check_choice("targets", self.targets, TARGETS)
        for name in ("eta", "critic_learning_rate"):
            check_number(name, getattr(self, name), lambda x: x > 0, "more than 0")
        check_number("temperature", self.temperature, lambda x: x >= 0, "0 or more")
        check_int("magnet_every", self.magnet_every, 0, 10**9)
        check_bool("lookahead", self.lookahead)
        check_number("floor", self.floor, lambda x: 0 <= x < 1, "0 or more, below 1")


POLICIES = ("shared", "per_seat")
UPDATES = ("ppo", "mmd-critic")
"""The values of the ``update`` setting."""


def rllib_settings_for(game: str) -> RLlibSettings:
    """The settings RLlib trains with on ``game``: our PPO self-play's, with the study's clip
    (0.025) and entropy (0.1, kept to the end). RLlib standardises the advantages of every
    minibatch, as the study does, and the study tuned those two with that; ours were tuned
    without it. With ours RLlib's PPO drifts away from the equilibrium as it trains, with
    these it falls steadily (the runs, ``benchmarks/bench_rllib.py``: docs/training.md,
    "On Ray: RLlib")."""
    ours = replace(settings_for("ppo", game), clip=STUDY.clip, ent_coef=STUDY.ent_coef)
    return RLlibSettings(**asdict(ours))


def settings_for_rules(rules: Rules) -> RLlibSettings:
    """The learner's settings for ``rules`` (its declaration, training/learners.py)."""
    return rllib_settings_for(rules.name)


def mmd_critic_settings_for_rules(rules: Rules) -> RLlibSettings:
    """The ``rllib-mmd-critic`` learner's settings for ``rules``: those
    :mod:`.critic_mmd` trains with there, in RLlib's terms. RLlib fits the policy and the
    critic in one pass per epoch, so the policy's steps are the epochs of both; what it does
    not do: exploring seats (every seat plays the policy), a critic that remembers earlier
    collections, targets swept afresh several times an update (``critic_sweeps``), networks
    over the canonical observation (``canonical``: its networks read the observation)."""
    c = critic_settings_for_rules(rules)
    named = {name: getattr(c, name) for name in SHARED_WITH_CRITIC}
    return RLlibSettings(
        update="mmd-critic",
        anneal_lr=c.anneal_learning_rate,
        anneal_entropy=c.anneal,
        epochs=c.policy_steps,
        **named,
    )


SHARED_WITH_CRITIC = (
    "learning_rate",
    "batch",
    "minibatches",
    "gae_lambda",
    "max_grad_norm",
    "hidden",
    "eta",
    "temperature",
    "critic_learning_rate",
    "targets",
    "magnet_every",
    "lookahead",
    "floor",
)
"""The settings :class:`RLlibSettings` and :mod:`.critic_mmd`'s name alike and mean alike."""


def iterations_for(decisions: int, settings: Settings) -> int:
    """RLlib iterations that train on at least ``decisions`` decisions: an iteration is one
    update of ``settings.batch``."""
    return -(-decisions // settings.batch)


def rllib_training(settings: Settings, decisions: int) -> dict[str, Any]:
    """``PPOConfig.training`` arguments for our self-play ``settings`` over a run of
    ``decisions`` (the schedules' end); see the module docstring. With the ``mmd-critic``
    update the entropy coefficient's schedule carries the temperature (MMD's pull towards
    the uniform magnet is an entropy bonus) and :mod:`.rllib_mmd`'s loss reads it."""

    def annealed(value: float, anneal: bool) -> float | list[list[float]]:
        return [[0, value], [decisions, 0.0]] if anneal else value

    mmd = isinstance(settings, RLlibSettings) and settings.update == "mmd-critic"
    entropy = settings.temperature if mmd else settings.ent_coef
    return {
        "gamma": 1.0,
        "lambda_": settings.gae_lambda,
        "lr": annealed(settings.learning_rate, settings.anneal_lr),
        "entropy_coeff": annealed(entropy, settings.anneal_entropy),
        "clip_param": settings.clip,
        "vf_loss_coeff": settings.vf_coef,
        "vf_clip_param": float("inf"),
        "grad_clip": settings.max_grad_norm,
        "num_epochs": settings.epochs,
        "train_batch_size_per_learner": settings.batch,
        "minibatch_size": settings.batch // settings.minibatches,
        "use_kl_loss": False,
    }


def train_rllib(
    rules: Rules,
    *,
    steps: int,
    out: str | Path,
    seed: int = 0,
    eval_every: int = 10_240,
    settings: RLlibSettings | None = None,
    progress: bool = True,
    seconds: float | None = None,
    device: str = "auto",
) -> list[Point]:
    """Train for ``steps`` decisions, in whole RLlib iterations of ``settings.batch``; see
    the module docstring. ``settings`` default to :func:`rllib_settings_for`. Returns the
    curve (decisions sampled, training seconds without measures, exploitability or None).
    On ``device`` ``cuda`` (or ``auto`` where torch sees a GPU) the learner asks Ray for one GPU
    (``num_gpus_per_learner=1``: Ray's own resources place it); the env runners act on CPUs."""
    import torch

    # The local learner (and, without remote env runners, the acting) runs in this process,
    # which Ray does not limit to one OpenMP thread as it does its workers: on two cores,
    # two runs side by side each spun a second thread and slowed each other several times.
    torch.set_num_threads(1)
    declared = game_of(check_rules(rules, "train_rllib"))
    game = declared.name
    device = torch_device(device)
    steps = check_int("steps", steps, 1, 10**12)
    eval_every = check_int("eval_every", eval_every, 1, 10**12)
    settings = settings or settings_for_rules(rules)
    settings.check()
    mmd = settings.update == "mmd-critic"
    iterations = iterations_for(steps, settings)
    record = {"iterations": iterations, "seed": seed, "settings": asdict(settings)}
    if mmd:  # refused here, before Ray starts, where the targets ask for a round model there is none of
        record["critic_targets"] = "expected" if round_model(rules, settings.targets) is not None else "sampled"
    policy, batch = settings.policy, settings.batch
    address, num_cpus = settings.address or None, settings.num_cpus or None
    env_runners, envs_per_runner = settings.env_runners, settings.envs_per_runner
    start_ray(address, num_cpus)
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

    from hiddenhand.rllib import RLlibAgent, ppo_config

    config = ppo_config(
        game,
        rules.params,
        policy=policy,
        env_runners=env_runners,
        envs_per_runner=envs_per_runner,
        hidden=settings.hidden,
        seed=seed,
        action_values=rules.largest_payoff if mmd else 0.0,
    ).training(**rllib_training(settings, iterations * batch))
    if mmd:
        from hiddenhand.training.rllib_mmd import mmd_learner

        config = config.learners(**mmd_learner(rules, settings, record["critic_targets"]))
    if device != "cpu":
        config = config.learners(num_gpus_per_learner=1)
    algo = config.build_algo()
    module = algo.get_module("shared" if policy == "shared" else "player_0")

    def measure() -> tuple[float | None, dict]:
        return exact_measure(declared, rules, RLlibAgent(module, game, rules.params, seed=seed)), {}

    try:
        name = f"RLlib {'MMD with a critic' if mmd else 'PPO'} self-play on {device}"
        run = Run(name, rules, out, total=iterations * batch, progress=progress, seconds=seconds)
        with run.training():
            while run.going():
                if run.due(eval_every):
                    run.measure(measure)
                algo.train()
                # Read from the algorithm's metrics, not the iteration's result: under load an
                # iteration's result can come back without its env runners' section, while the
                # lifetime count is kept across iterations.
                sampled = algo.metrics.peek((ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME), default=run.steps)
                run.advance(int(sampled) - run.steps)
        record["device"] = device
        return run.finish(lambda: RLlibAgent(module, game, rules.params).save(run.out), measure, record)
    finally:
        algo.stop()


__all__ = [
    "UPDATES",
    "RLlibSettings",
    "iterations_for",
    "mmd_critic_settings_for_rules",
    "rllib_settings_for",
    "rllib_training",
    "settings_for_rules",
    "train_rllib",
]
