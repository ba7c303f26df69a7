"""A trained MaskablePPO model (sb3-contrib) as a hiddenhand agent.

The model maps the observation vector to action logits; the agent masks them with the
observation's action mask, so it only ever plays legal moves, and its ``policy`` is the
model's own distribution. Saved as ``model.zip`` (stable-baselines3's format) beside
``agent.json`` (the game and its arguments), so it can be checked against its use.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from hiddenhand.agents.base import Agent, Observation, legal_mask
from hiddenhand.files import atomic_write

MODEL_FILE, META_FILE = "model.zip", "agent.json"


class PPOAgent(Agent):
    """Acts with a MaskablePPO ``model`` trained on ``game`` with ``params``."""

    def __init__(self, model, game: str, params: dict, seed: int | None = None) -> None:
        super().__init__(seed)
        self.model = model
        self.game = game
        self.params = dict(params)

    def policy(self, observation: Observation) -> np.ndarray:
        import torch

        mask = legal_mask(observation)
        obs = torch.as_tensor(np.asarray(observation["observation"], dtype=np.float32)[None])
        with torch.no_grad():
            dist = self.model.policy.get_distribution(obs, action_masks=mask[None])
            probs = dist.distribution.probs[0].numpy().astype(np.float64)
        probs = probs * mask
        return probs / probs.sum()

    def save(self, directory: str | os.PathLike) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        with atomic_write(directory / MODEL_FILE) as handle:
            self.model.save(handle)
        with atomic_write(directory / META_FILE, "w") as handle:
            json.dump({"game": self.game, "params": self.params}, handle)
        return directory

    @classmethod
    def load(cls, directory: str | os.PathLike, seed: int | None = None) -> "PPOAgent":
        from sb3_contrib import MaskablePPO

        directory = Path(directory)
        if not is_ppo_dir(directory):
            raise ValueError(f"{directory} holds no saved PPO agent ({MODEL_FILE} and {META_FILE})")
        meta = json.loads((directory / META_FILE).read_text())
        return cls(MaskablePPO.load(directory / MODEL_FILE, device="cpu"), meta["game"], meta["params"], seed=seed)

    def __repr__(self) -> str:
        return f"PPOAgent({self.game}, {self.params})"


def is_ppo_dir(path: str | os.PathLike) -> bool:
    path = Path(path)
    return (path / MODEL_FILE).is_file() and (path / META_FILE).is_file()
