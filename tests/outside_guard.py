"""Tests read nothing outside the repository: a user's clone has nothing beside it.

Installed once by ``conftest.py`` as an audit hook (``sys.addaudithook``): every file a test
opens or directory it lists, through ``open``, ``os.open``, ``numpy.loadtxt`` or anything
else, passes here first. A path beside the clone (``../shared/...``: a folder CI and the
developers happen to have next to their clone) is refused with :class:`OutsideRepositoryError`
before the operating system is asked, so such a test fails everywhere, not only on a
user's machine where the folder is missing. Paths elsewhere (the interpreter, site-packages,
temporary folders, the home folder's caches, ``/proc``) are the environment's, not the
repository's neighbours, and pass. Where the clone sits directly in ``/``, the temporary
folder or the home folder, everything beside it is the environment's, so nothing is guarded.
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


def _guarded_parent() -> Path | None:
    """The folder whose other entries are the clone's neighbours: none where the clone sits
    directly in ``/``, the temporary folder or the home folder."""
    parent = REPOSITORY.parent
    everyday = {Path(os.path.realpath(p)) for p in (tempfile.gettempdir(), Path.home())}
    return None if parent == Path(parent.anchor) or parent in everyday else parent


GUARDED_PARENT = _guarded_parent()

ENVIRONMENT_ROOTS = tuple(
    root
    for root in {
        Path(os.path.realpath(p))
        for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, tempfile.gettempdir(), Path.home())
    }
    if GUARDED_PARENT is not None and root.is_relative_to(GUARDED_PARENT)
)
"""Folders beside the clone that hold the environment, not the project (a virtual
environment or a temporary folder next to it): their files are not a neighbour's. A folder
that holds the clone itself (the clone may sit inside the temporary folder) exempts nothing."""


def is_outside(path: str | os.PathLike) -> bool:
    """Whether ``path`` lies beside the repository: under its parent folder, but neither in
    the repository nor in an :data:`ENVIRONMENT_ROOTS` folder. Judged both as written and
    with its links followed: a neighbour that is a link (``../shared`` pointing elsewhere)
    is still a neighbour, and a link inside the clone that points beside it still leaves it."""
    if GUARDED_PARENT is None:
        return False
    joined = os.path.join(os.getcwd(), os.fsdecode(path))
    return any(_beside(Path(where)) for where in (os.path.abspath(joined), os.path.realpath(joined)))


def _beside(where: Path) -> bool:
    if not where.is_relative_to(GUARDED_PARENT) or where.is_relative_to(REPOSITORY):
        return False
    return not any(where.is_relative_to(root) or root.is_relative_to(where) for root in ENVIRONMENT_ROOTS)


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
