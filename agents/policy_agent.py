"""An OpenSpiel policy (a CFR average policy, any tabular policy) as a hiddenhand agent.

Agents act from the observation alone, while OpenSpiel policies are keyed by information-
state strings. Every game here encodes a player's perfect-recall information state in the
observation vector, so the two keys are in one-to-one correspondence: the agent is a
table from observation vectors to action probabilities, built by walking the game once.
That bounds it to games small enough to enumerate, which is where tabular policies live.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import numpy as np

from hiddenhand.agents.base import Agent, Observation
from hiddenhand.files import atomic_write, load_npz

FILE_NAME = "policy.npz"


class PolicyAgent(Agent):
    """A table from observation vectors to probabilities; see the module docstring.

    ``game`` and ``params`` name the game the table was built for (``hiddenhand.envs``
    name and keyword arguments), so a saved policy can be checked against its use.
    """

    def __init__(self, game: str, params: dict, table: dict[bytes, np.ndarray], seed: int | None = None) -> None:
        super().__init__(seed)
        self.game = game
        self.params = dict(params)
        self.table = table

    @classmethod
    def from_openspiel(cls, game, policy, seed: int | None = None) -> "PolicyAgent":
        """Tabulate an OpenSpiel ``policy`` over ``game``: a ``hiddenhand_<game>`` game or its
        cached tree, whichever the policy was made on. Any OpenSpiel policy works: a Python
        ``Policy``, a C++ CFR or MCCFR average policy, a ``TabularPolicy``."""
        from hiddenhand.openspiel import information_states, state_policy

        params = dict(game.get_parameters())
        if "game" in params:  # a cached tree records the game it wraps
            params = dict(params["game"])
        name = params.pop("name", game.get_type().short_name).removeprefix("hiddenhand_")
        table: dict[bytes, np.ndarray] = {}
        for state in information_states(game):
            probs = np.zeros(game.num_distinct_actions())
            for action, prob in state_policy(policy, state):
                probs[action] = prob
            table[_key(np.asarray(state.information_state_tensor(), dtype=np.float32))] = probs
        return cls(name, params, table, seed=seed)

    def policy(self, observation: Observation) -> np.ndarray:
        key = _key(observation["observation"])
        try:
            return self.table[key]
        except KeyError:
            raise ValueError(
                f"this observation is not in the policy's table: the policy was built for "
                f"{self.game} with {self.params}; is the game configured the same way?"
            ) from None

    def save(self, path: str | os.PathLike) -> Path:
        """Write the table to ``path`` (a directory gets ``policy.npz`` inside), atomically."""
        path = policy_file(path)
        keys = np.stack([np.frombuffer(k, dtype=np.float32) for k in self.table])
        probs = np.stack(list(self.table.values()))
        meta = json.dumps({"game": self.game, "params": self.params})
        with atomic_write(path) as handle:
            np.savez_compressed(handle, observations=keys, probabilities=probs, meta=np.array(meta))
        return path

    @classmethod
    def load(cls, path: str | os.PathLike, seed: int | None = None) -> "PolicyAgent":
        """Read a table written by :meth:`save` (a file, or a directory holding ``policy.npz``)."""
        path = policy_file(path)
        meta, arrays = load_npz(path, "hiddenhand policy file")
        if "game" not in meta or "observations" not in arrays:
            raise ValueError(f"{path} is not a hiddenhand policy file (it holds {sorted(arrays)})")
        keys, probs = arrays["observations"], arrays["probabilities"]
        table = {_key(k): p for k, p in zip(keys, probs)}
        return cls(meta["game"], meta["params"], table, seed=seed)

    def __repr__(self) -> str:
        return f"PolicyAgent({self.game}, {self.params}, {len(self.table)} information states)"


def _key(vector: np.ndarray) -> bytes:
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


def policy_file(path: str | os.PathLike) -> Path:
    """Where a policy saved at ``path`` lives: ``policy.npz`` inside a directory (or inside
    a path that does not exist yet and has no ``.npz`` suffix), else ``path`` itself."""
    path = Path(path)
    return path / FILE_NAME if path.is_dir() or (not path.exists() and path.suffix != ".npz") else path
