"""Old spellings of names that moved: they keep working for a release, with a warning.

A public name moves when it sat in the wrong layer or the wrong module (a helper of one
command beside the core, a training helper in an agent's module); code written against the
old import should not break the day it moves, nor keep working silently for ever. The old
module's ``__getattr__`` (PEP 562: Python calls it only for a name the module does not hold)
imports the name from its new home and warns with a :class:`DeprecationWarning` that spells
the new import.

The new home is named by string and imported on first use, as a game's declaration names its
agents: an old home in a low layer may send a name up to a higher one (a training helper
that sat in an agent's module) without importing upwards at its own import.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any


def moved(module: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of the module called ``module``, for the names that ``homes`` maps
    to the modules that hold them now: ``__getattr__ = moved(__name__, {"Name": "new.module"})``.
    It keeps ``homes`` (as ``__getattr__.homes``), so that a test can hold every old spelling to
    its new home."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(
            f"{module}.{name} has moved to {home}.{name}: write 'from {home} import {name}' "
            f"(the old spelling goes in a future release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(home), name)

    __getattr__.homes = dict(homes)
    return __getattr__
