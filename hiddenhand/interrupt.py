"""Ctrl-C in long jobs: stop promptly, keep what is complete, say what was cut.

A training run or benchmark that Ctrl-C stops writes its files first (each atomically, so
every file is complete or absent) and then raises :class:`Interrupted`, which is a
``KeyboardInterrupt`` carrying a one-line account and the partial result. Callers that
run several jobs (the benchmark) catch it to report what finished; the command line prints
the account and exits with status 130, the shell's code for Ctrl-C.
"""

from __future__ import annotations

from typing import Any


class Interrupted(KeyboardInterrupt):
    """Raised after a job that Ctrl-C stopped has written its results."""

    def __init__(self, message: str, result: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.result = result


def unless_interrupted(work, fallback: Any = None) -> tuple[Any, bool]:
    """``(work(), False)``, or ``(fallback, True)`` if Ctrl-C stops it: for the optional
    last step of a job already interrupted once (a final evaluation), which a second
    Ctrl-C skips instead of losing the files still to write."""
    try:
        return work(), False
    except KeyboardInterrupt:
        return fallback, True
