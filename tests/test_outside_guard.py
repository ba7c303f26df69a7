"""The guard that keeps tests inside the repository (``tests/outside_guard.py``) catches a
read beside the clone, whichever way it is made, and lets the repository and the
environment through."""

import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import outside_guard
import pytest

NEIGHBOUR = outside_guard.REPOSITORY.parent / "shared" / "reference" / "table.csv"

needs_a_guarded_parent = pytest.mark.skipif(
    outside_guard.GUARDED_PARENT is None,
    reason="the clone sits directly in /, the temporary folder or the home folder: nothing beside it is guarded",
)


@needs_a_guarded_parent
@pytest.mark.parametrize(
    "reach",
    [
        lambda: open(NEIGHBOUR),
        lambda: NEIGHBOUR.read_text(),
        lambda: np.load(NEIGHBOUR),
        lambda: os.open(NEIGHBOUR, os.O_RDONLY),
        lambda: os.listdir(NEIGHBOUR.parent),
        lambda: list(os.scandir(outside_guard.REPOSITORY / ".." / "shared")),
    ],
    ids=["open", "read_text", "numpy.load", "os.open", "listdir", "scandir-dotdot"],
)
def test_a_read_beside_the_clone_fails_before_the_file_is_looked_for(reach):
    """The guard refuses before the operating system answers, so the test fails the same
    way whether or not the folder happens to exist here."""
    with pytest.raises(outside_guard.OutsideRepositoryError, match="shared"):
        reach()


def test_the_repository_and_the_environment_pass(tmp_path):
    assert not outside_guard.is_outside(outside_guard.REPOSITORY / "tests" / "data" / "goofspiel_first_move_n5.csv")
    assert not outside_guard.is_outside(Path(sys.prefix) / "lib")
    assert not outside_guard.is_outside(Path(np.__file__))
    assert not outside_guard.is_outside(tmp_path / "x.npz")
    assert not outside_guard.is_outside(Path(tempfile.gettempdir()) / "y")
    (tmp_path / "x.txt").write_text("read inside the temporary folder")
    assert (tmp_path / "x.txt").read_text().startswith("read")


def test_a_neighbour_that_is_a_link_is_still_a_neighbour(tmp_path, monkeypatch):
    """``../shared`` may be a link to a folder far from the clone; reached through it, it is
    still beside the clone. A clone at ``tmp/parent/repo``, its neighbour a link elsewhere."""
    parent, elsewhere = tmp_path / "parent", tmp_path / "elsewhere"
    (parent / "repo").mkdir(parents=True)
    (elsewhere / "seeds").mkdir(parents=True)
    (parent / "shared").symlink_to(elsewhere, target_is_directory=True)
    monkeypatch.setattr(outside_guard, "GUARDED_PARENT", parent)
    monkeypatch.setattr(outside_guard, "REPOSITORY", parent / "repo")
    monkeypatch.setattr(outside_guard, "ENVIRONMENT_ROOTS", ())
    monkeypatch.chdir(parent / "repo")
    assert outside_guard.is_outside("../shared/seeds/x.txt")
    assert outside_guard.is_outside(parent / "shared")
    assert not outside_guard.is_outside(elsewhere / "seeds")  # not beside the clone itself
    assert not outside_guard.is_outside("README.md")


@needs_a_guarded_parent
def test_a_relative_path_is_judged_where_it_points(monkeypatch):
    monkeypatch.chdir(outside_guard.REPOSITORY / "tests")
    assert outside_guard.is_outside("../../shared/seeds/x.txt")
    assert not outside_guard.is_outside("../README.md")
