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

import numpy as np


@contextlib.contextmanager
def keeping_global_rngs():
    """Restore Python's, numpy's and torch's global generators afterwards."""
    import torch

    states = random.getstate(), np.random.get_state(), torch.get_rng_state()
    try:
        yield
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])
        torch.set_rng_state(states[2])
