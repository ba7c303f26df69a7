"""Python's, numpy's and torch's global generators, kept as they were around a library call.

Our agents and trainers draw from generators of their own, seeded; some libraries draw from,
or reseed, the global ones (loading a stable-baselines3 model reseeds them; OpenSpiel's NFSP
and PSRO agents draw from them), which would replay the same noise in a run that loads
snapshots or opponents. Both the agents (loading a model) and the trainers need the guard, so
it sits below both.
"""

from __future__ import annotations

import contextlib
import random
import sys
from typing import Any

import numpy as np


def global_states() -> dict[str, Any]:
    """The state of Python's, numpy's and, where torch is imported, torch's global generators
    (its CUDA ones too where CUDA has started), for :func:`set_global_states`. Torch is not
    imported here: a run without a network keeps no torch state and does not load it."""
    states: dict[str, Any] = {"random": random.getstate(), "numpy": np.random.get_state()}
    torch = sys.modules.get("torch")
    if torch is not None:
        states["torch"] = torch.get_rng_state()
        if torch.cuda.is_initialized():
            states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def set_global_states(states: dict[str, Any]) -> None:
    """Put back the generators' states that :func:`global_states` gave."""
    random.setstate(states["random"])
    np.random.set_state(states["numpy"])
    if "torch" in states:
        import torch

        torch.set_rng_state(states["torch"])
        if "cuda" in states:
            torch.cuda.set_rng_state_all(states["cuda"])


@contextlib.contextmanager
def keeping_global_rngs():
    """Restore Python's, numpy's and torch's global generators afterwards (torch's CUDA ones
    too, where CUDA has started)."""
    import torch  # noqa: F401  (imported, so that its generator is kept too)

    states = global_states()
    try:
        yield
    finally:
        set_global_states(states)
