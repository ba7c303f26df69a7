"""One way to lay out a vector, and one way to number actions, for every game.

An observation or information-state tensor is declared once, as OpenSpiel's observers
declare theirs (``open_spiel/python/games/kuhn_poker.py``): a list of named pieces with
shapes. Everything else follows from that list: the offsets, the size, named writable
views into a flat buffer for the encoder (``views["hand"][card - 1] = 1``) and named
read-only views of a vector for whoever decodes it, so the order of the pieces is written
in one place and an encoder and its decoder cannot disagree about it. A block that repeats
(a round of the history) is a piece of shape ``(rounds, block.size)`` read through a
second :class:`Layout`, the block's: views work on any leading dimensions, so
``block.views(views["history"])`` names the pieces of every round at once.

Actions are declared the same way (:class:`ActionCodec`): named, contiguous ranges of
action numbers, in order.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from math import prod

import numpy as np

Shape = tuple[int, ...]
Views = dict[str, np.ndarray]
"""Pieces by name: what :meth:`Layout.views` and :meth:`Layout.decode` give."""


class Layout:
    """Named pieces, each an array of a fixed shape, laid end to end in a flat vector.

    ``pieces`` are ``(name, shape)`` in order; a shape is a tuple of sizes (``()`` for a
    single number) or an int ``n``, short for ``(n,)``.
    """

    def __init__(self, pieces: Sequence[tuple[str, int | Sequence[int]]]) -> None:
        self.pieces: tuple[tuple[str, Shape], ...] = tuple((name, _shape(name, shape)) for name, shape in pieces)
        self._cuts: dict[str, tuple[slice, Shape]] = {}
        start = 0
        for name, shape in self.pieces:
            if name in self._cuts:
                raise ValueError(f"piece {name!r} is declared twice in {self!r}")
            self._cuts[name] = (slice(start, start + prod(shape)), shape)
            start += prod(shape)
        self.size = start

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._cuts)

    def offset(self, name: str) -> int:
        """Where piece ``name`` starts in the flat vector."""
        return self._cut(name)[0].start

    def slice(self, name: str) -> slice:
        """The flat vector's elements that piece ``name`` occupies."""
        return self._cut(name)[0]

    def views(self, buffer: np.ndarray) -> Views:
        """Each piece as a view into ``buffer``, shaped: writing to a view writes the buffer.

        ``buffer``'s last dimension is the vector (of length :attr:`size`); any leading
        dimensions (players, rounds) lead every view too. A view only splits the last
        dimension, which numpy always does without a copy, whatever the buffer's strides.
        """
        if self._check(buffer).ndim == 1:  # the usual case, spared the cost of indexing with ``...``
            return {name: buffer[cut].reshape(shape) for name, (cut, shape) in self._cuts.items()}
        lead = buffer.shape[:-1]
        return {name: buffer[..., cut].reshape(lead + shape) for name, (cut, shape) in self._cuts.items()}

    def zeros(self, *lead: int) -> tuple[np.ndarray, Views]:
        """A new float32 buffer of zeros (with leading dimensions ``lead``) and its :meth:`views`."""
        buffer = np.zeros(lead + (self.size,), dtype=np.float32)
        return buffer, self.views(buffer)

    def decode(self, vector: np.ndarray | Sequence[float]) -> Views:
        """The pieces of ``vector`` by name, as read-only views: what a reader of an
        observation needs, checked against the declared length first."""
        frozen = self._check(np.asarray(vector)).view()
        frozen.flags.writeable = False
        return self.views(frozen)

    def _check(self, vector: np.ndarray) -> np.ndarray:
        length = vector.shape[-1] if vector.ndim else None
        if length != self.size:
            raise ValueError(
                f"expected a vector of {self.size} numbers ({', '.join(self.names)}), got "
                f"{'a scalar' if length is None else f'{length} numbers'}"
            )
        return vector

    def _cut(self, name: str) -> tuple[slice, Shape]:
        try:
            return self._cuts[name]
        except KeyError:
            raise KeyError(f"no piece {name!r}; pieces: {', '.join(self.names)}") from None

    def __repr__(self) -> str:
        return f"Layout([{', '.join(f'({name!r}, {shape})' for name, shape in self.pieces)}])"


def one_hot_index(one_hot: np.ndarray) -> int | None:
    """Where a one-hot piece has its 1, or ``None`` when it is all zeros (nothing chosen yet)."""
    hits = np.flatnonzero(one_hot)
    return int(hits[0]) if len(hits) else None


def _shape(name: str, shape: int | Sequence[int]) -> Shape:
    dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in dims):
        raise ValueError(f"piece {name!r} has shape {shape!r}; a shape is sizes of 0 or more")
    return tuple(int(d) for d in dims)


class ActionCodec:
    """Action numbers as named, contiguous ranges: ``[("hold", 4), ("bid", range(1, 7))]``
    numbers ``("hold", 0..3)`` as actions 0 to 3 and ``("bid", 1..6)`` as 4 to 9.

    A range's values are an int ``n`` (``0 .. n - 1``) or any sequence of distinct
    hashable values (bid amounts, call names, hands), numbered in their order. Encoding
    and decoding are table lookups, so the engines call them on every move.
    """

    def __init__(self, kinds: Sequence[tuple[str, int | Sequence[Hashable]]]) -> None:
        self._values: dict[str, tuple[Hashable, ...]] = {}
        self._decoded: list[tuple[str, Hashable]] = []
        for kind, values in kinds:
            if kind in self._values:
                raise ValueError(f"action kind {kind!r} is declared twice")
            self._values[kind] = tuple(range(values)) if isinstance(values, (int, np.integer)) else tuple(values)
            self._decoded += [(kind, value) for value in self._values[kind]]
        self._encoded = {pair: action for action, pair in enumerate(self._decoded)}
        if len(self._encoded) != len(self._decoded):
            raise ValueError(f"an action kind repeats a value: {dict(self._values)!r}")
        self.size = len(self._decoded)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self._values)

    def encode(self, kind: str, value: Hashable) -> int:
        """The action number of ``value`` of ``kind``."""
        try:
            return self._encoded[kind, value]
        except (KeyError, TypeError):
            if kind not in self._values:
                raise ValueError(f"no action kind {kind!r}; kinds: {', '.join(self.kinds)}") from None
            raise ValueError(f"{kind} {value!r} is not an action; allowed: {self._allowed(kind)}") from None

    def decode(self, action: int) -> tuple[str, Hashable]:
        """``(kind, value)`` of action number ``action``."""
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool) and 0 <= action < self.size:
            return self._decoded[action]
        raise ValueError(f"action {action!r} is out of range; allowed: 0 to {self.size - 1}")

    def _allowed(self, kind: str) -> str:
        values = self._values[kind]
        if not values:
            return "none"
        if all(isinstance(v, int) for v in values) and values == tuple(range(values[0], values[0] + len(values))):
            return f"{values[0]} to {values[-1]}"
        return ", ".join(map(str, values))

    def __repr__(self) -> str:
        return f"ActionCodec([{', '.join(f'({k!r}, {len(v)})' for k, v in self._values.items())}])"
