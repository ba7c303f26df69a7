"""Tests read nothing outside the repository: a user's clone has nothing beside it.

Installed once by ``conftest.py`` as an audit hook (``sys.addaudithook``): every file a test
opens or directory it lists, through ``open``, ``os.open``, ``numpy.loadtxt`` or anything
else, passes here first. A path beside the clone (``../shared/...``: a folder CI and the
developers happen to have next to their clone) is refused with :class:`OutsideRepositoryError`
before the operating system is asked, so such a test fails everywhere, not only on a
user's machine where the folder is missing. Paths elsewhere (the interpreter, site-packages,
temporary folders, the home folder's caches, ``/proc``) are the environment's, not the
repository's neighbours, and pass. Where the clone sits directly in ``/``, the temporary
folder or the home folder, everything there is such a neighbour, so nothing is guarded.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
WATCHED_EVENTS = frozenset({"open", "os.listdir", "os.scandir"})


class OutsideRepositoryError(RuntimeError):
    """A test reached into a folder beside the repository."""


def _environment_roots() -> tuple[Path, ...]:
    """Folders that hold the environment rather than the project: never a neighbour's."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, tempfile.gettempdir(), str(Path.home())}
    return tuple(Path(os.path.realpath(root)) for root in roots)


def _guarded_parent() -> Path | None:
    parent = REPOSITORY.parent
    if parent == Path(parent.anchor) or parent in _environment_roots():
        return None
    return parent


GUARDED_PARENT = _guarded_parent()
ENVIRONMENT_ROOTS = _environment_roots()


def is_outside(path: str | os.PathLike) -> bool:
    """Whether ``path`` lies beside the repository: under its parent folder, but neither in
    the repository nor in a folder that holds the environment (a virtual environment or the
    temporary folder next to the clone)."""
    if GUARDED_PARENT is None:
        return False
    resolved = Path(os.path.realpath(os.path.join(os.getcwd(), os.fsdecode(path))))
    if not resolved.is_relative_to(GUARDED_PARENT) or resolved.is_relative_to(REPOSITORY):
        return False
    return not any(resolved.is_relative_to(root) or root.is_relative_to(resolved) for root in ENVIRONMENT_ROOTS)


def audit(event: str, args: tuple) -> None:
    if event not in WATCHED_EVENTS or not args:
        return
    path = args[0]
    if isinstance(path, int) or path is None:  # a file descriptor, or the current directory
        return
    if isinstance(path, (str, bytes, os.PathLike)) and is_outside(path):
        raise OutsideRepositoryError(
            f"a test reached outside the repository: {os.fsdecode(path)!r}; a user's clone has nothing "
            "beside it, so copy what the test needs into tests/data/"
        )
