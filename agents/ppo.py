"""A trained MaskablePPO model (sb3-contrib) as a hiddenhand agent.

The model maps the observation vector to action logits; the agent masks them with the
observation's action mask, so it only ever plays legal moves, and its ``policy`` is the
model's own distribution. Saved as ``model.zip`` (stable-baselines3's format) beside
``agent.json`` (the game and its arguments, so it can be checked against its use, and the
model's sha256, so damage is detected).
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import numpy as np

from hiddenhand import global_rngs  # by module: keeping_global_rngs here is only the old spelling, which warns
from hiddenhand.agent import Agent, Observation, legal_mask
from hiddenhand.devices import torch_device
from hiddenhand.files import atomic_write, check_writable, digest, read_json, verify_file_digest
from hiddenhand.moved import moved

MODEL_FILE, META_FILE = "model.zip", "agent.json"


BATCH = 65536
"""Observations per forward pass in :meth:`PPOAgent.policy_batch` (bounds its memory)."""


class PPOAgent(Agent):
    """Acts with a MaskablePPO ``model`` trained on ``game`` with ``params``.

    A model trained on a Markov observation (``observation="markov"``) sees neither the
    score nor the past, so the agent declares itself Markov (``uses_score`` and
    ``uses_history`` false) and its exploitability is computed exactly over positions."""

    def __init__(self, model, game: str, params: dict, seed: int | None = None) -> None:
        super().__init__(seed)
        self.model = model
        self.game = game
        self.params = dict(params)
        markov = self.params.get("observation") == "markov"
        self.uses_score = self.uses_history = not markov

    def policy(self, observation: Observation) -> np.ndarray:
        legal_mask(observation)
        return self.policy_batch({key: np.asarray(value)[None] for key, value in observation.items()})[0]

    def policy_batch(self, observations: Observation) -> np.ndarray:
        """The model's masked distributions, one forward pass per :data:`BATCH` rows.

        The logits come from the policy's own layers (features, actor network, action
        head), and the mask and softmax are applied here: building sb3-contrib's masked
        distribution object costs several times the network itself on large batches. The
        probabilities equal its ``get_distribution`` (the tests compare them)."""
        import torch

        masks = np.asarray(observations["action_mask"]).astype(bool)
        if not masks.any(axis=1).all():
            raise ValueError("an action mask is all zeros: that player has no move to make")
        vectors = np.asarray(observations["observation"], dtype=np.float32)
        net = self.model.policy
        out = np.empty(masks.shape)
        with torch.no_grad():
            for start in range(0, len(masks), BATCH):
                rows = slice(start, start + BATCH)
                seen = torch.as_tensor(vectors[rows], device=net.device)
                features = net.extract_features(seen, net.pi_features_extractor)
                logits = net.action_net(net.mlp_extractor.forward_actor(features))
                logits = logits.masked_fill(torch.as_tensor(~masks[rows], device=net.device), -torch.inf)
                out[rows] = torch.softmax(logits.double(), dim=1).cpu().numpy()
        return out

    def save(self, directory: str | os.PathLike) -> Path:
        """Write ``model.zip`` and ``agent.json`` (the game, its arguments and the model's sha256,
        so that :meth:`load` detects a damaged or swapped model) into ``directory``, each atomically."""
        directory = check_writable(directory, "PPO agent directory", kind="dir")
        buffer = io.BytesIO()
        self.model.save(buffer)
        with atomic_write(directory / MODEL_FILE) as handle:
            handle.write(buffer.getvalue())
        with atomic_write(directory / META_FILE, "w") as handle:
            json.dump({"game": self.game, "params": self.params, "model_sha256": digest(buffer.getvalue())}, handle)
        return directory

    @classmethod
    def load(cls, directory: str | os.PathLike, seed: int | None = None, device: str = "cpu") -> PPOAgent:
        """Read an agent written by :meth:`save`, onto ``device`` (the CPU unless asked:
        :func:`~hiddenhand.devices.torch_device`), whatever it was trained on; ``ValueError``
        naming the file at fault if ``agent.json`` is garbled or incomplete, or ``model.zip`` fails (or, written before
        there were checksums, lacks) the checksum recorded in it."""
        from sb3_contrib import MaskablePPO

        directory = Path(directory)
        missing = [name for name in (MODEL_FILE, META_FILE) if not (directory / name).is_file()]
        if missing:
            raise ValueError(f"{directory} holds no saved PPO agent: {' and '.join(missing)} missing")
        meta = read_json(directory / META_FILE, "PPO agent description", required=("game", "params"))
        if not isinstance(meta["game"], str) or not isinstance(meta["params"], dict):
            raise ValueError(f"{directory / META_FILE} is corrupt: its game or params are malformed")
        verify_file_digest(directory / MODEL_FILE, meta.get("model_sha256"), directory / META_FILE)
        with global_rngs.keeping_global_rngs():
            model = MaskablePPO.load(directory / MODEL_FILE, device=torch_device(device))
        return cls(model, meta["game"], meta["params"], seed=seed)

    def __repr__(self) -> str:
        return f"PPOAgent({self.game}, {self.params})"


def is_ppo_dir(path: str | os.PathLike) -> bool:
    path = Path(path)
    return (path / MODEL_FILE).is_file() and (path / META_FILE).is_file()


__getattr__ = moved(
    __name__,
    {"keeping_global_rngs": "hiddenhand.global_rngs", "without_log_folder": "hiddenhand.training.sb3_logger"},
)
