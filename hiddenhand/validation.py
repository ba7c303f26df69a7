"""Argument checks shared by every game, so that every bad configuration fails the same way:
a ``ValueError`` that names the argument, the bad value and what is allowed."""

from __future__ import annotations

import math
import numbers
from typing import Any, Iterable

import numpy as np


def check_int(name: str, value: Any, low: int, high: int) -> int:
    """``value`` as an int in ``[low, high]``. Integers of any kind (numpy's included) and
    integral floats pass; bools, fractions, infinities and NaN are refused."""
    is_number = isinstance(value, (numbers.Integral, numbers.Real)) and not isinstance(value, (bool, np.bool_))
    if not is_number or not math.isfinite(value) or int(value) != value:
        raise ValueError(f"{name}={value!r} is not an integer; allowed: {low} to {high}")
    if not low <= value <= high:
        raise ValueError(f"{name}={value!r} is out of range; allowed: {low} to {high}")
    return int(value)


def check_choice(name: str, value: Any, allowed: Iterable[Any]) -> Any:
    """``value`` if it is one of ``allowed``."""
    allowed = tuple(allowed)
    if value not in allowed:
        raise ValueError(f"{name}={value!r} is not allowed; choose one of: {', '.join(map(repr, allowed))}")
    return value


def check_bool(name: str, value: Any) -> bool:
    """``value`` as a bool: Python's or numpy's booleans, or the integers 0 and 1."""
    if not isinstance(value, (bool, np.bool_, numbers.Integral)) or value not in (0, 1):
        raise ValueError(f"{name}={value!r} is not a boolean; allowed: True or False")
    return bool(value)
