"""One solution per process: what the equilibrium agents (and the Spoof advisor) share.

An equilibrium agent made without a solution solves its game (seconds, at the sizes it
allows that); a tournament, a benchmark or a test makes many, so each solve's result is
kept for the life of the process, per solver and arguments, in this one bounded cache for
every game. Each agent module names its own entry point (``cached_solution``), typed for
its game.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


@functools.lru_cache(maxsize=8)
def solved(solve: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``solve(*args, **kwargs)`` without a progress bar, computed once per process for each
    solver and arguments (the eight most recent kept)."""
    return solve(*args, progress=False, **kwargs)
