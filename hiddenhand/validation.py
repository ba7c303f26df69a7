"""Argument checks shared by every game, so that every bad configuration fails the same way:
a ``ValueError`` that names the argument, the bad value and what is allowed."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np


def shown(value: Any) -> str:
    """``repr(value)`` cut to a readable length (a 400-digit integer, a large array)."""
    if isinstance(value, int) and value.bit_length() > 200:  # repr refuses past 4,300 digits
        return f"an integer of {value.bit_length()} bits"
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}...{text[-12:]} ({type(value).__name__})"


def _as_int(value: Any) -> int | None:
    """``value`` as an int if it is an integer of any kind (numpy's included) or an integral
    float; ``None`` for bools, fractions, infinities, NaN and everything else."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    return None


def check_int(name: str, value: Any, low: int, high: int) -> int:
    """``value`` as an int in ``[low, high]``; see :func:`_as_int` for what counts as one."""
    number = _as_int(value)
    if number is None:
        raise ValueError(f"{name}={shown(value)} is not an integer; allowed: {low} to {high}")
    if not low <= number <= high:
        raise ValueError(f"{name}={shown(value)} is out of range; allowed: {low} to {high}")
    return number


def check_choice(name: str, value: Any, allowed: Iterable[Any]) -> Any:
    """The one of ``allowed`` that ``value`` is (of the same kind: the string ``"random"``
    matches, a numpy array holding it does not)."""
    allowed = tuple(allowed)
    for choice in allowed:
        if isinstance(value, type(choice)) and value == choice:
            return choice
    raise ValueError(f"{name}={shown(value)} is not allowed; choose one of: {', '.join(map(repr, allowed))}")


def check_bool(name: str, value: Any) -> bool:
    """``value`` as a bool: Python's or numpy's booleans, or the integers 0 and 1."""
    if not isinstance(value, (bool, np.bool_, numbers.Integral)) or value not in (0, 1):
        raise ValueError(f"{name}={shown(value)} is not a boolean; allowed: True or False")
    return bool(value)
