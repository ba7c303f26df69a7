"""A saved network agent: one or more small torch MLPs over the observation vector, mixed
per observation with fixed weights. What the OpenSpiel baselines
(:mod:`hiddenhand.training.nfsp`, :mod:`hiddenhand.training.psro`) save:

- NFSP's average-policy network: one member whose outputs are logits (a softmax over the
  legal actions);
- PSRO's population and meta-strategy: one member per policy, each a DQN best response that
  plays greedily on its Q-values (or the uniform policy PSRO starts from), mixed with the
  meta-probabilities *at every observation*. That per-observation average is a behaviour
  policy, but not the one realization-equivalent to PSRO's mixture (which draws one member
  per game and plays it throughout); see the training module for what its exploitability
  means.

A member's network has the layers of OpenSpiel's PyTorch DQN and NFSP MLP (``Linear``+``ReLU``
per hidden layer, then a ``Linear``), with the same parameter names, so their state dicts
load unchanged. Saved as ``network.pt`` (the members' state dicts, read back with
``torch.load(weights_only=True)``) beside ``agent.json``: the game and its parameters, the
kind, the architecture, each member's output kind and weight, and the sha256 of
``network.pt``, so a damaged or swapped file is refused.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hiddenhand.agent import Agent, Observation, legal_mask
from hiddenhand.files import atomic_write, check_writable, digest, read_json, verify_file_digest

WEIGHTS_FILE, META_FILE = "network.pt", "agent.json"
KIND_MARK = "network"
"""``agent.json``'s ``"format"``: tells these directories apart from the other saved agents'."""

OUTPUTS = ("logits", "q_greedy", "uniform")
"""What a member's network outputs, hence how it acts: ``logits``, the softmax over the legal
actions; ``q_greedy``, all probability on the legal action of highest value (the lowest
index among ties), as a DQN acts when not exploring; ``uniform``, no network, every legal
action alike."""

BATCH = 65536
"""Observations per forward pass in :meth:`NetworkAgent.policy_batch` (bounds its memory)."""


def mlp(input_size: int, hidden: Sequence[int], output_size: int):
    """The layers of OpenSpiel's PyTorch ``dqn.MLP`` (its ``.model``): per hidden layer a
    ``Sequential(Linear, ReLU)``, then the output ``Linear``. The parameter names match, so
    ``mlp(...).load_state_dict(openspiel_mlp.model.state_dict())`` copies one."""
    from torch import nn

    layers: list[Any] = []
    size = input_size
    for width in hidden:
        layers.append(nn.Sequential(nn.Linear(size, int(width)), nn.ReLU()))
        size = int(width)
    layers.append(nn.Linear(size, output_size))
    return nn.Sequential(*layers)


VIEWS = ("observation", "canonical")
"""What a network reads: ``observation``, the observation vector itself; ``canonical``, the
game's canonical view of it (``Rules.canonical``: positions that are the same game with the
actions renamed read as one, :mod:`hiddenhand.agents.canonical_mlp`)."""


def network(input_size: int, hidden: Sequence[int], output_size: int, rules=None):
    """:func:`mlp`, or with ``rules`` its layers over ``rules``' canonical observation
    (:class:`~hiddenhand.agents.canonical_mlp.CanonicalMLP`; the same parameter names)."""
    layers = mlp(input_size, hidden, output_size)
    if rules is None:
        return layers
    from hiddenhand.agents.canonical_mlp import CanonicalMLP

    return CanonicalMLP(layers, rules.canonical)


def declares_canonical(rules, input_size: int, num_actions: int) -> bool:
    """Whether ``rules`` declare a canonical view of their observation vectors
    (``Rules.canonical`` answers rather than ``None``)."""
    return rules.canonical(np.zeros((1, input_size), np.float32), np.ones((1, num_actions), bool)) is not None


@dataclass(frozen=True)
class Member:
    """One policy of a :class:`NetworkAgent`: how it acts (:data:`OUTPUTS`), its weight in the
    mixture, and its network's state dict (``None`` for ``uniform``)."""

    output: str
    weight: float
    state_dict: dict | None = None


class NetworkAgent(Agent):
    """Acts with the per-observation mixture ``sum_k weight_k * policy_k(observation)`` of its
    members (:class:`Member`; one member with weight 1 is just that network's policy), over
    the legal actions only.

    The networks read ``observation["observation"]`` (the vector OpenSpiel's
    ``observation_tensor`` gives through the adapter). Trained on a Markov observation
    (``observation="markov"`` in ``params``) they see neither the score nor the past, so the
    agent declares itself Markov (``uses_score`` and ``uses_history`` false), as
    :class:`~hiddenhand.agents.PPOAgent` does, and its exploitability is computed exactly
    over positions."""

    def __init__(
        self,
        game: str,
        params: dict,
        kind: str,
        input_size: int,
        hidden: Sequence[int],
        num_actions: int,
        members: Sequence[Member],
        info: dict | None = None,
        seed: int | None = None,
        view: str = "observation",
    ) -> None:
        import torch

        super().__init__(seed)
        if view not in VIEWS:
            raise ValueError(f"network view {view!r} is not one of {', '.join(VIEWS)}")
        self.game, self.params, self.kind = game, dict(params), kind
        self.input_size, self.hidden, self.num_actions = (
            int(input_size),
            tuple(int(h) for h in hidden),
            int(num_actions),
        )
        self.info = dict(info or {})
        self.view = view
        rules = None
        if view == "canonical":
            from hiddenhand.registry import get

            rules = get(game).rules(**self.params)
            if not declares_canonical(rules, self.input_size, self.num_actions):
                raise ValueError(f"{game} {self.params} declares no canonical observation for a canonical network")
        if not members:
            raise ValueError("a network agent needs at least one member")
        for member in members:
            if member.output not in OUTPUTS:
                raise ValueError(f"member output {member.output!r} is not one of {', '.join(OUTPUTS)}")
            if (member.state_dict is None) != (member.output == "uniform"):
                raise ValueError(
                    f"a {member.output!r} member {'has no' if member.state_dict is None else 'takes no'} network"
                )
        weights = np.array([m.weight for m in members], dtype=np.float64)
        if not np.isfinite(weights).all() or (weights < 0).any() or weights.sum() <= 0:
            raise ValueError(f"member weights must be non-negative and not all zero, not {weights.tolist()}")
        self.weights = weights / weights.sum()
        self.outputs = [m.output for m in members]
        self.nets = []
        with torch.random.fork_rng(devices=[]):  # the layers' initial draws leave torch's generator as it was
            for member in members:
                if member.state_dict is None:
                    self.nets.append(None)
                    continue
                net = network(self.input_size, self.hidden, self.num_actions, rules)
                net.load_state_dict({k: torch.as_tensor(v) for k, v in member.state_dict.items()})
                net.eval()
                self.nets.append(net)
        markov = self.params.get("observation") == "markov"
        self.uses_score = self.uses_history = not markov

    @property
    def members(self) -> list[Member]:
        return [
            Member(output, float(w), None if net is None else net.state_dict())
            for output, w, net in zip(self.outputs, self.weights, self.nets)
        ]

    def policy(self, observation: Observation) -> np.ndarray:
        legal_mask(observation)
        return self.policy_batch({key: np.asarray(observation[key])[None] for key in ("observation", "action_mask")})[0]

    def policy_batch(self, observations: Observation) -> np.ndarray:
        """Every member's policy of the whole batch, one forward pass per member per
        :data:`BATCH` rows, mixed with the weights."""
        import torch

        masks = np.asarray(observations["action_mask"]).astype(bool)
        if masks.ndim != 2 or masks.shape[1] != self.num_actions:
            raise ValueError(f"action masks of shape {masks.shape} do not have {self.num_actions} actions per row")
        if not masks.any(axis=1).all():
            raise ValueError("an action mask is all zeros: that player has no move to make")
        vectors = np.asarray(observations["observation"], dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.input_size:
            raise ValueError(f"observations of shape {vectors.shape} are not vectors of {self.input_size} floats")
        out = np.zeros(masks.shape)
        uniform = masks / masks.sum(axis=1, keepdims=True)
        with torch.no_grad():
            for start in range(0, len(masks), BATCH):
                rows = slice(start, start + BATCH)
                x, legal = torch.as_tensor(vectors[rows]), torch.as_tensor(masks[rows])
                for output, weight, net in zip(self.outputs, self.weights, self.nets):
                    if weight == 0.0:
                        continue
                    if output == "uniform":
                        out[rows] += weight * uniform[rows]
                        continue
                    values = net(x).double().masked_fill(~legal, -torch.inf)
                    if output == "logits":
                        probs = torch.softmax(values, dim=1)
                    else:  # q_greedy: the first legal action of highest value
                        probs = torch.nn.functional.one_hot(values.argmax(dim=1), self.num_actions).double()
                    out[rows] += weight * probs.numpy()
        return out

    def save(self, directory: str | os.PathLike) -> Path:
        """Write ``network.pt`` and ``agent.json`` into ``directory``, each atomically."""
        import torch

        directory = check_writable(directory, "network agent directory", kind="dir")
        buffer = io.BytesIO()
        torch.save([None if net is None else net.state_dict() for net in self.nets], buffer)
        data = buffer.getvalue()
        with atomic_write(directory / WEIGHTS_FILE) as handle:
            handle.write(data)
        meta = {
            "format": KIND_MARK,
            "game": self.game,
            "params": self.params,
            "kind": self.kind,
            "architecture": {
                "input": self.input_size,
                "hidden": list(self.hidden),
                "actions": self.num_actions,
                "view": self.view,
            },
            "members": [{"output": o, "weight": float(w)} for o, w in zip(self.outputs, self.weights)],
            "info": self.info,
            "weights_sha256": digest(data),
        }
        with atomic_write(directory / META_FILE, "w") as handle:
            json.dump(meta, handle, indent=2)
        return directory

    @classmethod
    def load(cls, directory: str | os.PathLike, seed: int | None = None) -> NetworkAgent:
        """Read an agent written by :meth:`save`; ``ValueError`` naming the file at fault if
        ``agent.json`` is garbled or incomplete, or ``network.pt`` fails its checksum."""
        import torch

        directory = Path(directory)
        missing = [name for name in (WEIGHTS_FILE, META_FILE) if not (directory / name).is_file()]
        if missing:
            raise ValueError(f"{directory} holds no saved network agent: {' and '.join(missing)} missing")
        meta_path = directory / META_FILE
        meta = read_json(meta_path, "network agent description", required=("game", "params", "kind", "architecture"))
        arch, members = meta.get("architecture"), meta.get("members")
        well_formed = (
            isinstance(meta["game"], str)
            and isinstance(meta["params"], dict)
            and isinstance(arch, dict)
            and all(isinstance(arch.get(k), int) for k in ("input", "actions"))
            and isinstance(arch.get("hidden"), list)
            and arch.get("view", "observation") in VIEWS
            and isinstance(members, list)
            and all(isinstance(m, dict) and "output" in m and "weight" in m for m in members)
        )
        if not well_formed:
            raise ValueError(f"{meta_path} is corrupt: its game, params, architecture or members are malformed")
        verify_file_digest(directory / WEIGHTS_FILE, meta.get("weights_sha256"), meta_path)
        try:
            dicts = torch.load(directory / WEIGHTS_FILE, weights_only=True, map_location="cpu")
        except Exception as err:  # a file that passed its checksum but torch cannot read: not ours
            raise ValueError(f"{directory / WEIGHTS_FILE} is not a saved network ({err})") from None
        if not isinstance(dicts, list) or len(dicts) != len(members):
            raise ValueError(
                f"{directory / WEIGHTS_FILE} holds {len(dicts)} networks, {meta_path} lists {len(members)}"
            )
        return cls(
            meta["game"],
            meta["params"],
            meta["kind"],
            arch["input"],
            arch["hidden"],
            arch["actions"],
            [Member(m["output"], float(m["weight"]), d) for m, d in zip(members, dicts)],
            info=meta.get("info"),
            seed=seed,
            view=arch.get("view", "observation"),
        )

    def __repr__(self) -> str:
        mixed = f", {len(self.nets)} members" if len(self.nets) > 1 else ""
        return f"NetworkAgent({self.kind}, {self.game}, {self.params}{mixed})"


def is_network_dir(path: str | os.PathLike) -> bool:
    """A directory written by :meth:`NetworkAgent.save` (``network.pt`` beside an
    ``agent.json`` that says so)."""
    path = Path(path)
    meta = path / META_FILE
    if not (path / WEIGHTS_FILE).is_file() or not meta.is_file():
        return False
    try:
        return json.loads(meta.read_text()).get("format") == KIND_MARK
    except (OSError, ValueError, AttributeError):
        return False


__all__ = ["VIEWS", "Member", "NetworkAgent", "declares_canonical", "is_network_dir", "mlp", "network"]
