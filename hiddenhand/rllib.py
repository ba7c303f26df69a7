"""Ray RLlib (2.60, new API stack) on every registered game, without glue in user code.

What a new user trips over, and what this module does about it:

- RLlib's workers are fresh processes, where ``import hiddenhand`` in the driver has not
  registered anything: :func:`register_games` registers each game with Ray Tune's registry
  under :func:`env_name` through :func:`make_env`, which imports hiddenhand *inside* the
  worker and builds the env there.
- RLlib's masking convention is a dict observation ``{"observations", "action_mask"}``;
  PettingZoo's (ours) is ``{"observation", "action_mask"}``. :class:`MultiAgentGame`
  presents our PettingZoo AEC env as an RLlib ``MultiAgentEnv`` in RLlib's convention:
  only the agent to move gets an observation, each agent is paid what the game settles
  for it as it settles (the change of ``State.banked``: in Goofspiel the points of each
  round, so that RLlib credits a decision with the points still to come, as our self-play
  learners do) and the rest of its return on the step that ends the game (with a final
  observation each), and an illegal move (RLlib's env checker samples one unmasked) ends
  the game as a forfeit, PettingZoo's convention, rather than raising.
- RLlib's default PPO module cannot encode a dict observation and does not mask:
  :class:`MaskedPPOModule` encodes ``"observations"`` with RLlib's default PPO networks and
  adds ``log(mask)`` (floored) to the action logits, so an illegal move has probability 0 in
  sampling, in the loss and at inference.
- Self-play needs a policy mapping: :func:`ppo_config` maps every seat to one shared module
  (``"shared"``) or each seat to its own (``"per_seat"``).
- A learner that needs every legal action's value (MMD with a critic,
  ``hiddenhand.training.rllib_mmd``) asks :func:`ppo_config` for ``action_values`` (the unit
  they are learnt in, the game's largest payoff): the module's value head then has one
  output per action (:meth:`MaskedPPOModule.compute_q`), on an encoder of its own, and its
  state value is the policy's expectation of them, which is what RLlib's advantage
  estimation reads.

A trained module plays as a hiddenhand agent (:class:`RLlibAgent`: ``policy_batch`` is one
forward pass), so it enters ``hiddenhand play``, tournaments and ``hiddenhand
exploitability`` like any agent; its directory holds ``module.pt`` (the weights) and
``agent.json`` (the game, its arguments, the network's settings and the weights' sha256).
Ray is an optional extra: ``pip install ".[ray]"`` from a clone of the repository.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from hiddenhand.agent import Agent, Observation
from hiddenhand.files import atomic_write, check_writable, digest, read_json, verify_file_digest
from hiddenhand.pettingzoo_env import env_factories
from hiddenhand.registry import games, get

try:
    import ray  # noqa: F401
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
    from ray.rllib.core.columns import Columns
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
except ImportError as error:  # pragma: no cover - the message is the point
    raise ImportError(
        'hiddenhand.rllib needs Ray RLlib: pip install ".[ray]" from a clone of the repository'
    ) from error

OBSERVATIONS = "observations"
"""RLlib's key for the observation beside ``"action_mask"``."""
POLICIES = ("shared", "per_seat")
MODULE_FILE, META_FILE = "module.pt", "agent.json"
LOGIT_FLOOR = -1e9
"""What ``log(0)`` of an illegal action's mask becomes in the logits."""
ACTION_VALUES = "action_values"
"""The model-config key that gives :class:`MaskedPPOModule` one value per action: the unit of
the value head's outputs (more than 0; absent or 0: one state value)."""


def env_name(game: str) -> str:
    """The name a game's env is registered under with Ray Tune (``hiddenhand_<game>``)."""
    return f"hiddenhand_{get(game).name}"


def make_env(game: str, config: dict | None = None) -> MultiAgentGame:
    """Ray's env creator: build :class:`MultiAgentGame`. A worker, which has not run the
    driver's imports, unpickles this function by importing its module, and so the package
    first (``hiddenhand/__init__.py``), which registers the games there."""
    return MultiAgentGame(game, **dict(config or {}))


def register_games() -> list[str]:
    """Register every registered game (ours, entry points', the user's) with Ray Tune's
    registry; returns the names (:func:`env_name`)."""
    from functools import partial

    from ray.tune.registry import register_env

    names = []
    for name in games():
        register_env(env_name(name), partial(make_env, name))
        names.append(env_name(name))
    return names


def _rllib_space(space: gymnasium.spaces.Dict) -> gymnasium.spaces.Dict:
    return gymnasium.spaces.Dict({OBSERVATIONS: space["observation"], "action_mask": space["action_mask"]})


class MultiAgentGame(MultiAgentEnv):
    """``game``'s PettingZoo AEC env (PettingZoo's conventions: an illegal action forfeits)
    as an RLlib multi-agent env in RLlib's masking convention; see the module docstring."""

    def __init__(self, game: str, **params: Any) -> None:
        super().__init__()
        self.game = get(game).name
        self.aec = env_factories(get(game).env)[0](**params)
        self.aec.reset()
        self.possible_agents = list(self.aec.possible_agents)
        self.agents = list(self.possible_agents)
        self.observation_spaces = {a: _rllib_space(self.aec.observation_space(a)) for a in self.possible_agents}
        self.action_spaces = {a: self.aec.action_space(a) for a in self.possible_agents}

    def _shown(self, agent: str) -> dict[str, np.ndarray]:
        seen = self.aec.observe(agent)
        return {OBSERVATIONS: seen["observation"], "action_mask": seen["action_mask"]}

    def _skip_done(self) -> None:
        """Step past agents whose game is over (PettingZoo's ``step(None)``) until one is to
        move or every agent is done."""
        while self.aec.agents:
            _, _, terminated, truncated, _ = self.aec.last()
            if not (terminated or truncated):
                return
            self.aec.step(None)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self.aec.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        self._paid = dict.fromkeys(self.possible_agents, 0.0)
        self._skip_done()
        return {self.aec.agent_selection: self._shown(self.aec.agent_selection)}, {}

    def _pay(self, owed: dict[str, float]) -> dict[str, float]:
        """What each agent is owed beyond what it has been paid (those that are owed something)."""
        rewards = {a: owed[a] - self._paid[a] for a in self.possible_agents if owed[a] != self._paid[a]}
        self._paid.update(owed)
        return rewards

    def step(self, action_dict: dict[str, Any]):
        mover = self.aec.agent_selection
        self.aec.step(int(action_dict[mover]))
        terminated = {a: t for a, t in self.aec.terminations.items()}
        truncated = {a: t for a, t in self.aec.truncations.items()}
        if all(terminated[a] or truncated[a] for a in self.possible_agents):
            shown = {a: self._shown(a) for a in self.possible_agents}  # before the agents step out
            # The AEC env pays the whole return (or a forfeit's) on the last step.
            owed = {a: float(self.aec.rewards.get(a, 0.0)) for a in self.possible_agents}
            rewards = dict.fromkeys(self.possible_agents, 0.0) | self._pay(owed)
            over = any(terminated.values())
            self._skip_done()
            return shown, rewards, {"__all__": over}, {"__all__": not over}, {}
        rewards = {mover: 0.0} | self._pay(dict(zip(self.possible_agents, self.aec.unwrapped.game_state.banked())))
        self._skip_done()
        return (
            {self.aec.agent_selection: self._shown(self.aec.agent_selection)},
            rewards,
            {"__all__": False},
            {"__all__": False},
            {},
        )


class MaskedPPOModule(DefaultPPOTorchRLModule):
    """RLlib's default PPO networks on ``"observations"``, with the action mask applied to
    the logits (``log(mask)``, floored at :data:`LOGIT_FLOOR`); with ``model_config``
    :data:`ACTION_VALUES` more than 0, the value head gives every action's value; see the module
    docstring."""

    def __init__(self, *args, observation_space=None, **kwargs) -> None:
        if not isinstance(observation_space, gymnasium.spaces.Dict) or set(observation_space) != {
            OBSERVATIONS,
            "action_mask",
        }:
            raise ValueError(
                f"MaskedPPOModule needs a Dict observation space with keys {OBSERVATIONS!r} and 'action_mask' "
                f"(what MultiAgentGame gives); got {observation_space!r}"
            )
        self.masked_space = observation_space
        super().__init__(*args, observation_space=observation_space[OBSERVATIONS], **kwargs)

    def setup(self) -> None:
        super().setup()
        if self.model_config.get(ACTION_VALUES):
            from dataclasses import replace

            head = replace(self.catalog.vf_head_config, output_layer_dim=int(self.action_space.n))  # in that unit
            self.vf = head.build(framework="torch")

    @staticmethod
    def _split(batch: dict) -> tuple[Any, dict]:
        """The mask, and the batch with only the observations under ``obs``."""
        seen = batch[Columns.OBS]
        return seen["action_mask"], {**batch, Columns.OBS: seen[OBSERVATIONS]}

    @staticmethod
    def _masked(out: dict, mask) -> dict:
        import torch

        floor = torch.clamp(torch.log(mask.float()), min=LOGIT_FLOOR)
        out[Columns.ACTION_DIST_INPUTS] = out[Columns.ACTION_DIST_INPUTS] + floor
        return out

    def _forward(self, batch: dict, **kwargs) -> dict:
        mask, batch = self._split(batch)
        return self._masked(super()._forward(batch, **kwargs), mask)

    def _forward_train(self, batch: dict, **kwargs) -> dict:
        mask, batch = self._split(batch)
        return self._masked(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict, embeddings=None):
        """The state value: the value head's, or with :data:`ACTION_VALUES` the policy's
        expectation of :meth:`compute_q` (expected SARSA's bootstrap)."""
        if not self.model_config.get(ACTION_VALUES):
            if isinstance(batch[Columns.OBS], dict):
                _, batch = self._split(batch)
            return super().compute_values(batch, embeddings)
        import torch

        mask, inner = self._split(batch)
        logits = self._masked(super()._forward(inner), mask)[Columns.ACTION_DIST_INPUTS]
        return (torch.softmax(logits, dim=-1) * self.compute_q(batch, embeddings)).sum(dim=-1)

    def compute_q(self, batch: dict, embeddings=None):
        """Every action's value at the batch's observations (a row per observation), from the
        value head of a module built with :data:`ACTION_VALUES`."""
        if not self.model_config.get(ACTION_VALUES):
            raise ValueError(f"compute_q needs a module built with model_config {ACTION_VALUES!r} more than 0")
        _, inner = self._split(batch)
        values = super().compute_values(inner, embeddings)
        return values.reshape(len(values), int(self.action_space.n)) * self.model_config[ACTION_VALUES]


def ppo_config(
    game: str,
    params: dict | None = None,
    *,
    policy: str = "shared",
    env_runners: int = 1,
    envs_per_runner: int = 8,
    hidden: tuple[int, ...] = (128, 128),
    seed: int = 0,
    action_values: float = 0.0,
):
    """A ``PPOConfig`` for self-play on ``game`` (registered first): every seat mapped to one
    module (``policy="shared"``) or each seat to its own (``"per_seat"``, modules named by
    the seats), each a :class:`MaskedPPOModule` (with ``action_values`` more than 0, a value
    per action in that unit, on an encoder of its own). ``envs_per_runner`` games step together in each env runner:
    our games last 4 to 30 moves, so RLlib's fixed cost per episode would otherwise dominate."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    if policy not in POLICIES:
        raise ValueError(f"policy={policy!r} is not allowed; choose one of: {', '.join(map(repr, POLICIES))}")
    register_games()
    config = dict(params or {})
    rules = get(game).rules(**config)
    seats = [f"player_{i}" for i in range(rules.num_players)]
    modules = ["shared"] if policy == "shared" else seats
    values = {ACTION_VALUES: float(action_values), "vf_share_layers": False} if action_values else {}
    model = {"fcnet_hiddens": list(hidden)} | values
    spec = MultiRLModuleSpec(
        rl_module_specs={m: RLModuleSpec(module_class=MaskedPPOModule, model_config=model) for m in modules}
    )
    return (
        PPOConfig()
        .environment(env_name(game), env_config=config)
        .env_runners(num_env_runners=env_runners, num_envs_per_env_runner=envs_per_runner)
        .multi_agent(policies=set(modules), policy_mapping_fn=_shared if policy == "shared" else _own_seat)
        .rl_module(rl_module_spec=spec)
        .debugging(seed=seed)
    )


def _shared(agent_id, episode, **kwargs) -> str:
    return "shared"


def _own_seat(agent_id, episode, **kwargs) -> str:
    return agent_id


class RLlibAgent(Agent):
    """A trained :class:`MaskedPPOModule` as a hiddenhand agent for ``game`` with ``params``:
    its policy is the module's masked distribution (one forward pass per batch). Trained on
    a Markov observation (``observation="markov"``) it declares itself Markov, so exact
    exploitability applies."""

    def __init__(self, module: MaskedPPOModule, game: str, params: dict, seed: int | None = None) -> None:
        super().__init__(seed)
        self.module, self.game, self.params = module, get(game).name, dict(params)
        markov = self.params.get("observation") == "markov"
        self.uses_score = self.uses_history = not markov

    def policy(self, observation: Observation) -> np.ndarray:
        return self.policy_batch({key: np.asarray(observation[key])[None] for key in ("observation", "action_mask")})[0]

    def policy_batch(self, observations: Observation) -> np.ndarray:
        import torch

        masks = np.asarray(observations["action_mask"]).astype(bool)
        if not masks.any(axis=1).all():
            raise ValueError("an action mask is all zeros: that player has no move to make")
        device = next(self.module.parameters()).device  # where the module is, CPU or GPU
        seen = {
            OBSERVATIONS: torch.as_tensor(np.asarray(observations["observation"], dtype=np.float32), device=device),
            "action_mask": torch.as_tensor(masks.astype(np.float32), device=device),
        }
        with torch.no_grad():
            logits = self.module.forward_inference({Columns.OBS: seen})[Columns.ACTION_DIST_INPUTS]
            logits = logits.masked_fill(torch.as_tensor(~masks, device=device), -torch.inf)
            return torch.softmax(logits.double(), dim=1).cpu().numpy()

    def save(self, directory: str | os.PathLike) -> Path:
        """Write ``module.pt`` and ``agent.json`` into ``directory``, each atomically."""
        import torch

        directory = check_writable(directory, "RLlib agent directory", kind="dir")
        buffer = io.BytesIO()
        torch.save(self.module.state_dict(), buffer)
        with atomic_write(directory / MODULE_FILE) as handle:
            handle.write(buffer.getvalue())
        meta = {"game": self.game, "params": self.params, "kind": "rllib-ppo"}
        settings = {k: v for k, v in dict(self.module.model_config).items() if _plain(v)}
        meta |= {"model_config": settings, "module_sha256": digest(buffer.getvalue())}
        with atomic_write(directory / META_FILE, "w") as handle:
            json.dump(meta, handle)
        return directory

    @classmethod
    def load(cls, directory: str | os.PathLike, seed: int | None = None) -> RLlibAgent:
        """Read an agent written by :meth:`save`; ``ValueError`` naming the file at fault."""
        import torch

        directory = Path(directory)
        meta = read_json(directory / META_FILE, "RLlib agent description", required=("game", "params", "model_config"))
        verify_file_digest(directory / MODULE_FILE, meta.get("module_sha256"), directory / META_FILE)
        env = MultiAgentGame(meta["game"], **meta["params"])
        seat = env.possible_agents[0]
        module = MaskedPPOModule(
            observation_space=env.observation_spaces[seat],
            action_space=env.action_spaces[seat],
            model_config=meta["model_config"],
            inference_only=False,
        )
        module.load_state_dict(torch.load(directory / MODULE_FILE, weights_only=True))
        module.eval()
        return cls(module, meta["game"], meta["params"], seed=seed)

    def __repr__(self) -> str:
        return f"RLlibAgent({self.game}, {self.params})"


def _plain(value: Any) -> bool:
    """Whether a model setting survives JSON (numbers, strings, lists of them, None)."""
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str))


__all__ = [
    "ACTION_VALUES",
    "MaskedPPOModule",
    "MultiAgentGame",
    "RLlibAgent",
    "env_name",
    "make_env",
    "ppo_config",
    "register_games",
]
