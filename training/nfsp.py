"""OpenSpiel's NFSP as a baseline on our games, through the OpenSpiel adapter
(:mod:`.openspiel_rl`: the environment, the Markov observation, one policy for every seat).

:func:`train_nfsp` makes OpenSpiel's ``pytorch.nfsp.NFSP`` agent for each seat, as its
examples do, and then has every seat's agent use the first one's networks and optimisers
(average policy, Q-network, target network): each seat keeps its own buffers, mode and
episode bookkeeping, and both seats' experience trains the one network pair. The agent is
the average-policy network, saved as a :class:`~hiddenhand.agents.network.NetworkAgent`.
Steps are environment decisions (every seat's); the exact measure is taken every
``eval_every`` of them, off the clock, and the run's files and Ctrl-C are
:class:`~hiddenhand.training.run.Run`'s (``curve.csv``, ``curve.png``, ``run.json``, then
the agent: ``NetworkAgent.load(out_dir)``).

**Hyperparameters** (:data:`NFSP_OPENSPIEL`, :data:`NFSP_OURS`). The starting point is
OpenSpiel's ``examples/nfsp_leduc_pytorch.py`` and ``nfsp_kuhn_pytorch.py`` (the NFSP
paper's Leduc settings). The tuned values of "Reevaluating Policy Gradient Methods for
Imperfect-Information Games" (Rudolph et al.; github.com/nathanlct/IIG-RL-Benchmark,
``best_hyperparameters/min_final_expl_hparams/nfsp/liars_dice``) informed the changes; the
values we run, and why, are documented on each, and the runs that chose them in
``docs/training.md``.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from hiddenhand.agents.network import Member, NetworkAgent
from hiddenhand.core import Rules
from hiddenhand.global_rngs import keeping_global_rngs
from hiddenhand.registry import get
from hiddenhand.training.openspiel_rl import check_learn_every, copy_state, environment, prepare
from hiddenhand.training.run import Point, Run, exact_measure
from hiddenhand.validation import check_choice


@dataclass(frozen=True)
class NFSPSettings:
    """Arguments of OpenSpiel's ``pytorch.nfsp.NFSP`` (its inner DQN takes ``batch_size``,
    ``learn_every``, ``min_buffer_size_to_learn`` and ``optimizer`` from NFSP's, and
    ``rl_learning_rate`` as its learning rate)."""

    hidden: tuple[int, ...] = (128,)
    anticipatory_param: float = 0.1
    batch_size: int = 128
    learn_every: int = 64
    rl_learning_rate: float = 0.01
    sl_learning_rate: float = 0.01
    optimizer: str = "sgd"
    loss: str = "mse"
    min_buffer_size_to_learn: int = 1000
    replay_buffer_capacity: int = 200_000
    reservoir_buffer_capacity: int = 2_000_000
    """Capped at the run's steps (the buffer is allocated whole, and never holds more)."""
    update_target_network_every: int = 19_200
    epsilon_start: float = 0.06
    epsilon_end: float = 0.001
    epsilon_decay: str = "exp"
    """OpenSpiel's DQN schedule, over the run's steps (as the examples decay over the run)."""


NFSP_OPENSPIEL = NFSPSettings()
"""OpenSpiel's ``examples/nfsp_leduc_pytorch.py`` defaults (the NFSP paper's Leduc settings):
one hidden layer of 128, anticipatory parameter 0.1, SGD at 0.01 for both networks, batches
of 128 every 64 steps, replay 2e5, reservoir 2e6, target network every 19,200 steps,
exploration 0.06 decaying to 0.001 over the run."""

NFSP_OURS = replace(
    NFSP_OPENSPIEL,
    anticipatory_param=0.3,
    optimizer="adam",
    rl_learning_rate=1e-3,
    sl_learning_rate=1e-3,
    min_buffer_size_to_learn=500,
    update_target_network_every=1000,
)
"""What we run: OpenSpiel's settings with Adam at 1e-3 for both networks, the study's
anticipatory parameter (0.316 there), learning from 500 samples and the target network
refreshed every 1000 steps (the examples' 19,200 are a tenth of a Leduc run of millions).
``docs/training.md`` has the runs that chose them."""

NFSP_SETTINGS: dict[str, NFSPSettings] = {"default": NFSP_OURS}
"""Per game; a game absent here uses ``"default"``."""


def settings_for_rules(rules: Rules):
    """The learner's settings for ``rules`` (its declaration, training/learners.py)."""
    return nfsp_settings_for(rules.name)


def nfsp_settings_for(game: str) -> NFSPSettings:
    return NFSP_SETTINGS.get(get(game).name, NFSP_SETTINGS["default"])


def _share_networks(agents) -> None:
    """Make every NFSP agent use the first one's networks and optimisers (see the module
    docstring). Names OpenSpiel's private attributes, so it checks they are there."""
    lead = agents[0]
    needed = [(lead, ("_avg_network", "_optimizer", "_rl_agent"))]
    needed.append((lead._rl_agent, ("_q_network", "_target_q_network", "_optimizer")))
    for obj, names in needed:
        missing = [n for n in names if not hasattr(obj, n)]
        if missing:
            raise RuntimeError(
                f"this OpenSpiel's pytorch NFSP has no {', '.join(missing)}: parameter sharing was written for the "
                "layout of open_spiel 2.0 (pytorch/nfsp.py and dqn.py)"
            )
    for other in agents[1:]:
        other._avg_network, other._optimizer = lead._avg_network, lead._optimizer
        rl, lead_rl = other._rl_agent, lead._rl_agent
        rl._q_network, rl._target_q_network, rl._optimizer = (
            lead_rl._q_network,
            lead_rl._target_q_network,
            lead_rl._optimizer,
        )


def train_nfsp(
    rules: Rules,
    *,
    steps: int,
    out: str | Path,
    seed: int = 0,
    eval_every: int = 20_000,
    settings: NFSPSettings | None = None,
    progress: bool = True,
    seconds: float | None = None,
    device: str = "auto",
) -> list[Point]:
    """Train OpenSpiel's NFSP (``open_spiel.python.pytorch.nfsp``) on ``rules``
    for ``steps`` decisions (every seat's; the last game is played to its
    end), one agent per seat sharing its networks (module docstring). Every ``eval_every``
    decisions the average-policy network is measured exactly; the agent saved to
    ``out`` is that network (``NetworkAgent.load(out)``, kind ``"nfsp"``).
    ``settings`` default to :func:`nfsp_settings_for`. Returns the curve."""
    import torch
    from open_spiel.python.pytorch import nfsp

    declared, steps, eval_every = prepare(rules, steps, eval_every, device, "train_nfsp")
    s = settings or nfsp_settings_for(declared.name)
    check_choice("optimizer", s.optimizer, ("sgd", "adam"))
    check_learn_every(s.learn_every)
    params = rules.params
    with keeping_global_rngs():  # OpenSpiel's agents draw from, and reseed, the global generators
        env = environment(rules, seed)
        size, actions = env.observation_spec()["info_state"][0], env.action_spec()["num_actions"]
        dqn_kwargs = dict(
            replay_buffer_capacity=int(s.replay_buffer_capacity),
            update_target_network_every=int(s.update_target_network_every),
            discount_factor=1.0,
            epsilon_start=float(s.epsilon_start),
            epsilon_end=float(s.epsilon_end),
            epsilon_decay_duration=int(steps),
            epsilon_decay_schedule_str=s.epsilon_decay,
            loss_str=s.loss,
        )
        agents = [
            nfsp.NFSP(
                player,
                int(size),
                int(actions),
                list(s.hidden),
                reservoir_buffer_capacity=int(min(s.reservoir_buffer_capacity, steps + 1)),
                anticipatory_param=float(s.anticipatory_param),
                batch_size=int(s.batch_size),
                rl_learning_rate=float(s.rl_learning_rate),
                sl_learning_rate=float(s.sl_learning_rate),
                min_buffer_size_to_learn=int(s.min_buffer_size_to_learn),
                learn_every=int(s.learn_every),
                optimizer_str=s.optimizer,
                seed=seed * 1000 + 10 * player,
                **dqn_kwargs,
            )
            for player in range(rules.num_players)
        ]
        _share_networks(agents)
        random.seed(seed)
        np.random.seed(seed)  # the constructors reseeded it; one known state for the run
        torch.manual_seed(seed)

        def agent() -> NetworkAgent:
            return NetworkAgent(
                declared.name,
                params,
                "nfsp",
                size,
                s.hidden,
                actions,
                [Member("logits", 1.0, copy_state(agents[0]._avg_network.model))],
                info={"network": "NFSP's average policy, shared by every seat", "seed": seed},
            )

        def measure() -> tuple[float | None, dict]:
            return exact_measure(declared, rules, agent()), {}

        run = Run("NFSP", rules, out, total=steps, progress=progress, seconds=seconds)
        with run.training():
            while run.going():
                if run.due(eval_every):
                    run.measure(measure)
                time_step = env.reset()
                while not time_step.last():
                    output = agents[time_step.observations["current_player"]].step(time_step)
                    time_step = env.step([output.action])
                    run.advance(1)
                for each in agents:
                    each.step(time_step)
                run.advance(0, games=1)
        return run.finish(lambda: agent().save(run.out), measure, {"settings": asdict(s), "seed": seed})


__all__ = ["NFSPSettings", "NFSP_OPENSPIEL", "NFSP_OURS", "NFSP_SETTINGS", "nfsp_settings_for", "train_nfsp"]
