"""An OpenSpiel policy (a CFR average policy, any tabular policy) as a hiddenhand agent.

OpenSpiel policies are keyed by information-state strings; the agent is a table keyed by
the perfect-recall information-state tensor, which is one-to-one with them (the
conformance tests check it for every game), built by walking the game once. That bounds it
to games small enough to enumerate, which is where tabular policies live.

It is not keyed by the observation: in Bid Spoof and EggHead the observation is a bounded
window of the history that merges information states, and a table keyed by it would play
another policy than the one trained. Our own loops hand agents the information state
(``State.agent_observation``); in a PettingZoo loop use
``env.unwrapped.agent_observation(agent)``. Where the observation is the information
state (Goofspiel, Spoof) the plain PettingZoo observation works too.

A table learnt on the observation itself (``keyed_by="observation"``: the sampled-regret
learner of :mod:`hiddenhand.training.sampled_regret`, on the Markov observation) is looked
up by the observation, and plays uniformly over the legal actions where its table has no row
(``unseen="uniform"``: a position its training never reached). Keyed by the canonical
observation (``keyed_by="canonical_observation"``: ``Rules.canonical``, Goofspiel's
interleaving patterns), an observation is reduced before the lookup and the row's actions
renamed back, so that one row serves every position the reduction merges.
"""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path

import numpy as np

from hiddenhand.agent import Agent, Observation
from hiddenhand.files import check_writable, load_npz, save_npz
from hiddenhand.validation import check_choice

FILE_NAME = "policy.npz"


class PolicyAgent(Agent):
    """A table from information-state tensors to probabilities; see the module docstring.

    ``game`` and ``params`` name the game the table was built for (``hiddenhand.envs``
    name and keyword arguments), so a saved policy can be checked against its use.
    """

    KEYS = ("information_state", "observation", "canonical_observation")
    UNSEEN = ("error", "uniform")

    def __init__(
        self,
        game: str,
        params: dict,
        table: dict[bytes, np.ndarray],
        seed: int | None = None,
        keyed_by: str = "information_state",
        unseen: str = "error",
    ) -> None:
        super().__init__(seed)
        self.game = game
        self.params = dict(params)
        self.table = table
        self.keyed_by = check_choice("keyed_by", keyed_by, self.KEYS)
        self.unseen = check_choice("unseen", unseen, self.UNSEEN)
        # A table of Markov observations reads neither the score nor the past: it declares
        # itself Markov, so its exploitability is measured over positions.
        markov = keyed_by != "information_state" and self.params.get("observation") == "markov"
        self.uses_score = self.uses_history = not markov

    @classmethod
    def from_openspiel(cls, game, policy, seed: int | None = None) -> PolicyAgent:
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

    @cached_property
    def rules(self):
        """The rules of the game the table was built for."""
        from hiddenhand.registry import get

        return get(self.game).rules_class.from_openspiel(self.params)

    def _observation_is_information_state(self) -> bool:
        return self.rules.observation_is_information_state

    def policy(self, observation: Observation) -> np.ndarray:
        if self.keyed_by == "canonical_observation":
            return self.policy_batch({name: np.asarray(value)[None] for name, value in observation.items()})[0]
        if self.keyed_by == "observation":
            return self._row(_key(observation["observation"]), observation.get("action_mask"))
        try:
            key = _key(observation["information_state"])
        except KeyError:  # a plain PettingZoo observation
            if not self._observation_is_information_state():
                raise ValueError(
                    f"a tabular {self.game} policy needs the perfect-recall information state, which this "
                    f"game's observation is not; pass env.unwrapped.agent_observation(agent) (or "
                    f"State.agent_observation(player)) instead of the PettingZoo observation"
                ) from None
            key = _key(observation["observation"])
        return self._row(key)

    def _row(self, key: bytes, mask=None) -> np.ndarray:
        try:
            return self.table[key]
        except KeyError:
            if self.unseen == "uniform":
                if mask is None:
                    raise ValueError(
                        "this table plays uniformly where it has no row: it needs the action_mask"
                    ) from None
                legal = np.asarray(mask, dtype=np.float64)
                return legal / legal.sum()
            raise ValueError(
                f"this observation is not in the policy's table: the policy was built for "
                f"{self.game} with {self.params}; is the game configured the same way?"
            ) from None

    def policy_batch(self, observations: Observation) -> np.ndarray:
        """Table lookups, one per row, without building a dict per row."""
        if self.keyed_by == "canonical_observation":
            return self._canonical_batch(np.asarray(observations["observation"]), observations.get("action_mask"))
        if self.keyed_by == "observation":
            masks = observations.get("action_mask")
            rows = np.asarray(observations["observation"])
            return np.stack([self._row(_key(k), None if masks is None else masks[i]) for i, k in enumerate(rows)])
        if "information_state" in observations:
            keys = observations["information_state"]
        else:
            keys = observations["observation"]
            if not self._observation_is_information_state():
                return super().policy_batch(observations)  # policy() explains what to pass instead
        return np.stack([self._row(_key(key)) for key in np.asarray(keys)])

    def _canonical_batch(self, observations: np.ndarray, masks: np.ndarray | None) -> np.ndarray:
        """Each observation's row looked up by its canonical observation, its actions renamed back."""
        if masks is None:
            raise ValueError("a table keyed by the canonical observation needs the action_mask")
        masks = np.asarray(masks)
        reduced = self.rules.canonical(observations, masks)
        if reduced is None:
            raise ValueError(f"{self.game} with {self.params} declares no canonical observation (Rules.canonical)")
        canonical, canonical_masks, order = reduced
        rows = np.stack([self._row(_key(k), m) for k, m in zip(canonical, canonical_masks)])
        width = masks.shape[1]
        out = np.zeros((len(rows), width + 1))  # the last column takes the canonical actions that stand for none
        np.put_along_axis(out, np.where(order >= 0, order, width), rows, axis=1)
        return out[:, :width]

    def save(self, path: str | os.PathLike) -> Path:
        """Write the table to ``path`` (a directory gets ``policy.npz`` inside), atomically and
        with a checksum (:func:`hiddenhand.files.save_npz`), so that a damaged file is refused."""
        file = policy_file(path)
        check_writable(path, "policy file", kind="file" if file == Path(path) else "dir")
        keys, probs = np.zeros((0, 0), dtype=np.float32), np.zeros((0, 0))  # a run stopped before it learnt
        if self.table:
            keys = np.stack([np.frombuffer(k, dtype=np.float32) for k in self.table])
            probs = np.stack(list(self.table.values()))
        meta = {"game": self.game, "params": self.params, "keyed_by": self.keyed_by, "unseen": self.unseen}
        return save_npz(file, meta, {"information_states": keys, "probabilities": probs}, compress=True)

    @classmethod
    def load(cls, path: str | os.PathLike, seed: int | None = None) -> PolicyAgent:
        """Read a table written by :meth:`save` (a file, or a directory holding ``policy.npz``);
        ``ValueError`` naming the file if it is damaged, incomplete or has no checksum (written
        before there were any: those cannot be told from damaged ones, so train it again)."""
        path = policy_file(path)
        meta, arrays = load_npz(
            path, "hiddenhand policy file", ("game", "params"), ("information_states", "probabilities")
        )
        keys, probs = arrays["information_states"], arrays["probabilities"]
        if not isinstance(meta["game"], str) or not isinstance(meta["params"], dict) or len(keys) != len(probs):
            raise ValueError(f"{path} is not a hiddenhand policy file: its game, params or table are malformed")
        table = {_key(k): p for k, p in zip(keys, probs)}
        # Files written before tables could be keyed by the observation have neither item.
        options = {name: meta[name] for name in ("keyed_by", "unseen") if name in meta}
        return cls(meta["game"], meta["params"], table, seed=seed, **options)

    def __repr__(self) -> str:
        keys = {"information_state": "information states", "observation": "observations"}.get(
            self.keyed_by, "canonical observations"
        )
        return f"PolicyAgent({self.game}, {self.params}, {len(self.table)} {keys})"


def _key(vector: np.ndarray) -> bytes:
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


def policy_file(path: str | os.PathLike) -> Path:
    """Where a policy saved at ``path`` lives: ``policy.npz`` inside a directory (or inside
    a path that does not exist yet and has no ``.npz`` suffix), else ``path`` itself."""
    path = Path(path)
    return path / FILE_NAME if path.is_dir() or (not path.exists() and path.suffix != ".npz") else path
