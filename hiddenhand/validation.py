"""Argument checks shared by every game, so that every bad configuration fails the same way:
a ``ValueError`` that names the argument, the bad value and what is allowed.

- Integers (:func:`check_int`): an integer of any kind (Python's, numpy's) or an integral
  float (``5.0``, ``np.float32(5.0)``: how a JSON, YAML or RLlib configuration often carries
  an integer) is accepted and kept as a Python ``int``; a fraction (``5.5``), a bool, NaN, an
  infinity or a string is refused.
- Text: numbers written as text are ASCII digits (:func:`integer_text`), since Python's
  ``int()`` also reads ``" 5"``, ``"5_0"`` and other scripts' digits (``"٣"`` is 3), none of
  which a configuration or a command line means; a list written as text
  (:func:`split_items`) has no empty items and no spaces around its items.
- Names: a message names a parameter through :func:`named`: ``num_cards=99`` as Python
  spells it, and, while a command runs, as the command line's flag (:func:`spelled_as`):
  ``--cards 99``. The checks are written once and read right in both places. A whole
  configuration is named the same way (:func:`configuration`): ``goofspiel with num_cards=3``,
  or on the command line ``goofspiel --cards 3``.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

import numpy as np

_FLAGS: ContextVar[Mapping[str, Sequence[str]] | None] = ContextVar("hiddenhand_flags", default=None)
_NO_VALUE = object()
_PLAIN = re.compile(r"[\w.,:/@+=-]+", re.ASCII)  # text a shell takes as typed, without quotes
_INTEGER = re.compile(r"-?[0-9]+")


def shown(value: Any) -> str:
    """``repr(value)`` cut to a readable length (a 400-digit integer, a large array)."""
    if isinstance(value, int) and value.bit_length() > 200:  # repr refuses past 4,300 digits
        return f"an integer of {value.bit_length()} bits"
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}...{text[-12:]} ({type(value).__name__})"


@contextlib.contextmanager
def spelled_as(flags: Mapping[str, Sequence[str]]) -> Iterator[None]:
    """While the block runs, :func:`named` names the parameters in ``flags`` (a parameter's
    name -> the option strings that set it, ``("--reveal-bids", "--no-reveal-bids")`` for a
    switch) as the command line does. The command line runs every command inside it."""
    token = _FLAGS.set(flags)
    try:
        yield
    finally:
        _FLAGS.reset(token)


def named(name: str, value: Any = _NO_VALUE) -> str:
    """The parameter ``name`` (set to ``value``) as a message names it: ``num_cards=99``, or
    inside :func:`spelled_as` the flag as typed, ``--cards 99`` (a switch: ``--no-reveal-bids``)."""
    flags = (_FLAGS.get() or {}).get(name)
    if not flags:
        return name if value is _NO_VALUE else f"{name}={shown(value)}"
    if value is _NO_VALUE:
        return flags[0]
    if isinstance(value, (bool, np.bool_)) and len(flags) > 1:
        return flags[0] if value else flags[1]
    return f"{flags[0]} {_typed(value)}"


def configuration(game: str, params: Mapping[str, Any]) -> str:
    """The game ``game`` set up by ``params`` as a message names it, each parameter as
    :func:`named` names it: ``goofspiel with num_cards=3, scoring='win_loss'``, or inside
    :func:`spelled_as` the command line that sets it up, ``goofspiel --cards 3 --scoring
    win_loss``, with the game as a command spells it (``bid-spoof``): what the reader typed,
    or would type, not a Python repr."""
    parts = [named(name, value) for name, value in params.items()]
    if _FLAGS.get() is None:
        return f"{game} with {', '.join(parts)}" if parts else game
    return " ".join([game.replace("_", "-"), *parts])


def mismatch(found: Mapping[str, Any], wanted: Mapping[str, Any]) -> str:
    """Where two configurations differ, each parameter as :func:`named` names it: ``num_cards=3,
    not num_cards=4``, or on the command line ``--cards 3, not --cards 4``: what a file was
    made for against what it was asked for, over the parameters both name."""
    differ = [name for name in found if name in wanted and found[name] != wanted[name]]
    found_text, wanted_text = (" ".join(named(name, params[name]) for name in differ) for params in (found, wanted))
    return f"{found_text}, not {wanted_text}"


def _typed(value: Any) -> str:
    """``value`` as it is typed after its flag: a plain word as it is, a tuple of integers
    with commas (``2,3``), anything else as its ``repr``."""
    if isinstance(value, tuple) and value and all(type(v) is int for v in value):
        return ",".join(map(str, value))
    if isinstance(value, str) and _PLAIN.fullmatch(value):
        return value
    return shown(value)


def integer_text(text: str) -> int | None:
    """The integer ``text`` spells in ASCII digits (``"12"``, ``"-3"``), else ``None``: no
    spaces, underscores, signs other than a leading minus, or digits of other scripts."""
    return int(text) if isinstance(text, str) and _INTEGER.fullmatch(text) else None


def split_items(name: str, text: str, allowed: str, separators: str = ",", trailing: bool = False) -> list[str]:
    """The items of the list ``text``, the value of parameter ``name``, separated by any of
    ``separators`` (none: ``text`` is one item). An empty item, or spaces around an item, is
    refused naming ``name``, ``text`` and ``allowed``; with ``trailing`` the list may end with
    one separator (``"0;"``: how an OpenSpiel game string keeps a list of one number a string)."""
    if not text.strip():
        raise ValueError(f"{named(name, text)} is empty; allowed: {allowed}")
    items = re.split(f"[{re.escape(separators)}]", text) if separators else [text]
    if trailing and len(items) > 1 and not items[-1]:
        items.pop()
    for item in items:
        if not item.strip():
            raise ValueError(f"{named(name, text)} has an empty item; allowed: {allowed}")
        if item != item.strip():
            raise ValueError(f"{named(name, text)} has spaces around {item.strip()!r}; allowed: {allowed}")
    return items


def _as_int(value: Any) -> int | None:
    """``value`` as an int if it is an integer of any kind (numpy's included) or an integral
    float (numpy's included); ``None`` for bools, fractions, infinities, NaN and everything else."""
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
        raise ValueError(f"{named(name, value)} is not an integer; allowed: {low} to {high}")
    if not low <= number <= high:
        raise ValueError(f"{named(name, value)} is out of range; allowed: {low} to {high}")
    return number


def check_number(name: str, value: Any, fits: Callable[[float], bool], allowed: str) -> float:
    """``value``, a real number (not a bool) for which ``fits`` holds; ``allowed`` says which
    ones do, in words ("0 to 1"), for the error."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not fits(value):
        raise ValueError(f"{named(name, value)} is not allowed; allowed: a number {allowed}")
    return value


def check_choice(name: str, value: Any, allowed: Iterable[Any]) -> Any:
    """The one of ``allowed`` that ``value`` is (of the same kind: the string ``"random"``
    matches, a numpy array holding it does not)."""
    allowed = tuple(allowed)
    for choice in allowed:
        if isinstance(value, type(choice)) and value == choice:
            return choice
    raise ValueError(f"{named(name, value)} is not allowed; choose one of: {', '.join(map(repr, allowed))}")


def check_bool(name: str, value: Any) -> bool:
    """``value`` as a bool: Python's or numpy's booleans, or the integers 0 and 1."""
    if not isinstance(value, (bool, np.bool_, numbers.Integral)) or value not in (0, 1):
        raise ValueError(f"{named(name, value)} is not a boolean; allowed: True or False")
    return bool(value)
