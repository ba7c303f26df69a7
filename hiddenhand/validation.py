"""Argument checks shared by every game, so that every bad configuration fails the same way:
a ``ValueError`` that names the argument, the bad value and what is allowed."""

from __future__ import annotations

from typing import Any, Iterable


def check_int(name: str, value: Any, low: int, high: int) -> int:
    """``value`` as an int in ``[low, high]``; bools and non-integral numbers are refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
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
    if not isinstance(value, (bool, int)) or value not in (0, 1):
        raise ValueError(f"{name}={value!r} is not a boolean; allowed: True or False")
    return bool(value)
