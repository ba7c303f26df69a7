"""Ctrl-C in long jobs: stop promptly, keep what is complete, say what was cut.

A training run or benchmark that Ctrl-C stops writes its files first (each atomically, so
every file is complete or absent) and then raises :class:`Interrupted`, which is a
``KeyboardInterrupt`` carrying a one-line account and the partial result. Callers that
run several jobs (the benchmark) catch it to report what finished; the command line prints
the account and exits with status 130, the shell's code for Ctrl-C.

While a job writes its results (:func:`held_ctrl_c`), a further Ctrl-C is held rather than
raised: raised in the middle of a save it would lose the file the first Ctrl-C meant to keep.
Only the optional measure between the saves stays interruptible, and a held Ctrl-C skips it.

A training run also takes SIGTERM this way (``kill``, ``docker stop``, a cluster scheduler's
end of a job; and the only way to stop a job started with ``nohup … &``, which ignores
SIGINT): it stops at the next batch and writes its files as after Ctrl-C, but skips the
final measure, since whoever sent it may not wait long before SIGKILL, and the command
exits with status 143 (128 + SIGTERM).

This module imports nothing heavy: ``hiddenhand/__init__.py`` imports it first, so that a
Ctrl-C while the command starts ends it with the same one line and status 130
(:func:`end_the_command_on_ctrl_c`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

COMMAND = "hiddenhand"
EXIT_STATUS = 130
"""The shell's status for a process stopped by Ctrl-C (128 + SIGINT)."""


STOPPED_BY = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}
"""How messages name each signal that stops a job."""


class Interrupted(KeyboardInterrupt):
    """Raised after a job that Ctrl-C (or, for a training run, SIGTERM: ``signum``) stopped
    has written its results; ``status`` is the command's exit status for it."""

    def __init__(self, message: str, result: Any = None, signum: int = signal.SIGINT) -> None:
        super().__init__(message)
        self.message = message
        self.result = result
        self.status = 128 + int(signum)


class HeldCtrlC:
    """What :func:`held_ctrl_c` yields: whether Ctrl-C was pressed while it was held, and
    :meth:`unless_interrupted` for the one step that Ctrl-C may still stop."""

    def __init__(self, holding: bool) -> None:
        self._holding = holding  # whether the block installed the holding handler
        self._raising = False  # whether a press raises now: inside unless_interrupted only
        self.pressed = False
        self.signum = signal.SIGINT  # the first signal held (a KeyboardInterrupt counts as SIGINT)
        self._untold = False  # a press that no skipped step has reported to the job yet

    def _hold(self, signum: int, frame: Any) -> None:
        if not self.pressed:
            self.signum = signal.Signals(signum)
        self.pressed = self._untold = True
        if self._raising:
            self._raising = False
            raise KeyboardInterrupt

    def _pressed_by(self, error: BaseException | None) -> bool:
        return isinstance(error, KeyboardInterrupt) and self.pressed

    def unless_interrupted(self, work: Callable[[], Any], fallback: Any = None) -> tuple[Any, bool]:
        """``(work(), False)``, or ``(fallback, True)`` if Ctrl-C was pressed before (while
        held) or stops it: for an optional step of a job (a measure), which Ctrl-C skips
        instead of losing the files still to write.

        A ``KeyboardInterrupt`` raised while ``work`` is inside numba-compiled code does not
        come back out as itself: the compiled function returns with the exception set and
        CPython reports a ``SystemError`` or a failed unboxing (``TypeError``) instead. So
        what tells a skipped step is the press the handler recorded, not the exception's type.
        Raised where Python cannot raise (a weakref callback of the import machinery, a
        finaliser), it is dropped, the step goes on to its end, and only the flag is left:
        that report is not printed."""
        if self.pressed:
            self._untold = False
            return fallback, True
        self._raising = self._holding
        report = sys.unraisablehook
        sys.unraisablehook = lambda unraisable: None if self._pressed_by(unraisable.exc_value) else report(unraisable)
        try:
            try:
                return work(), False
            finally:
                self._raising = False
                sys.unraisablehook = report
        except KeyboardInterrupt:
            self.pressed, self._untold = True, False
            return fallback, True
        except Exception:
            if not self.pressed:
                raise
            self._untold = False
            return fallback, True


@contextlib.contextmanager
def held_ctrl_c(raise_after: bool = True, sigterm: bool = False) -> Iterator[HeldCtrlC]:
    """Hold Ctrl-C in the block: a press is remembered (``.pressed``), not raised, except
    inside ``.unless_interrupted(step)``. With ``raise_after``, if the block ends normally
    after a press that no skipped step reported, :class:`Interrupted` is raised then: a job
    writing its results finishes every file first. Without it the press is only a flag: a
    training loop reads it between batches, so that Ctrl-C never lands inside a compiled
    section (where it would come back out as another error, the batch half done). With
    ``sigterm``, SIGTERM is held the same way where it has its default disposition
    (``.signum`` says which came first). Outside the main thread, where signals cannot be
    handled, nothing is held; nor is SIGINT where it is ignored (a background job's)."""
    held_here = []
    if threading.current_thread() is threading.main_thread():
        if signal.getsignal(signal.SIGINT) not in (signal.SIG_IGN, None):
            held_here.append(signal.SIGINT)
        if sigterm and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            held_here.append(signal.SIGTERM)
    live = {s: signal.getsignal(s) for s in held_here}
    held = HeldCtrlC(holding=bool(live))
    for s in live:
        signal.signal(s, held._hold)
    try:
        yield held
    finally:
        for s, handler in live.items():
            signal.signal(s, handler)
    if held._untold and raise_after:
        raise Interrupted(f"interrupted by {STOPPED_BY[held.signum]}", signum=held.signum)


def is_the_command(argv: list[str] | None = None) -> bool:
    """Whether this process is the ``hiddenhand`` command: its console script, or ``python
    -m hiddenhand`` (``argv``: the interpreter's own command line, ``sys.orig_argv``)."""
    argv = list(sys.orig_argv if argv is None else argv)
    args = iter(argv[1:])
    for arg in args:
        if arg == "-m":
            return next(args, None) == COMMAND
        if arg.startswith("-m"):
            return arg[2:] == COMMAND
        if arg == "-" or arg.startswith("-c"):
            return False
        if arg in ("-W", "-X", "--check-hash-based-pycs"):  # options that take a value
            next(args, None)
        elif not arg.startswith("-"):
            return Path(arg).stem == COMMAND  # the console script
    return False


def end_the_command_on_ctrl_c() -> None:
    """Called first thing by ``hiddenhand/__init__.py``: if this process is the ``hiddenhand``
    command, Ctrl-C ends it at once, with one line and status 130, until :func:`ctrl_c_raises`.

    That covers its start, a second of imports in which nothing is written yet. A
    ``KeyboardInterrupt`` there would print a traceback through the imports, or be lost: some
    imports swallow it, and one raised inside code that a library ``exec``-s from a string (as
    dataclasses and scipy do while importing) makes CPython end the process by SIGINT at exit
    whatever status it was given. In any other program (a library user's), nothing changes."""
    if is_the_command() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _end_at_once)


def ctrl_c_raises() -> None:
    """From here on Ctrl-C raises ``KeyboardInterrupt`` again: the command's work has begun,
    and may have files to finish (:func:`exit_after_ctrl_c` ends it afterwards)."""
    if signal.getsignal(signal.SIGINT) is _end_at_once:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def exit_after_ctrl_c(message: str = "interrupted by Ctrl-C", status: int = EXIT_STATUS) -> NoReturn:
    """End the command that Ctrl-C stopped: ``message`` on one line, ``status`` (130; 143
    for a run that SIGTERM stopped)."""
    print(f"\n{COMMAND}: {message}", file=sys.stderr)
    # A KeyboardInterrupt that went through code exec-ed from a string (a dataclass being made,
    # say) marks the interpreter to end by SIGINT rather than with this status; the next run of
    # such code clears the mark (CPython's run_eval_code_obj), so run an empty one.
    exec("")
    raise SystemExit(status)


def _end_at_once(signum: int, frame: Any) -> None:
    sys.stderr.write(f"\n{COMMAND}: interrupted by Ctrl-C\n")
    sys.stderr.flush()
    os._exit(EXIT_STATUS)  # nothing of the command's to finish yet: no cleanup to run
