"""The optimal basis of every matrix game of a Goofspiel solve, kept beside the solution.

Certifying a solution (:mod:`~hiddenhand.solvers.goofspiel.certificate`) needs the equilibrium's
row strategy at every position. Re-running the simplex for it costs as much as the solve
did; the basis the simplex ended in (:func:`~hiddenhand.solvers.matrix_game.value_and_basis`,
a bit mask of the rows and columns played) gives the same strategy by one small linear
solve. The solve writes those masks here, one ``uint32`` per matrix game (0.06 GB at 10
cards, 1.9 GB at 12, 11 GB at 13), and the certificate reads them.

A basis is only a hint: the certificate checks every strategy it rebuilds against the
game itself and re-solves a game whose mask does not prove optimal, so a missing level
(a solve resumed from a checkpoint written without bases) costs time, never correctness.
Each level's file is still tied to the values it was computed from (the digest of the
level below, whose values make its matrix games), so that bases of another solution are
refused by name rather than silently re-solved game by game.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from hiddenhand.files import atomic_write, digest, read_json, remove_stale_temps

MANIFEST = "bases.json"
FORMAT_VERSION = 1
FILES = [MANIFEST] + [f"bases_{k:02d}.npy" for k in range(1, 14)]
"""Every file a bases directory holds (atomic_write's stale temporaries of these are removed)."""


def _level_file(folder: Path, k: int) -> Path:
    return folder / f"bases_{k:02d}.npy"


def _manifest(folder: Path, num_cards: int) -> dict:
    """The directory's manifest (a new one when there is none), checked to be of ``num_cards``."""
    path = folder / MANIFEST
    if not path.exists():
        return {"format": FORMAT_VERSION, "num_cards": num_cards, "below_sha256": {}}
    manifest = read_json(path, "Goofspiel bases manifest", required=("format", "num_cards", "below_sha256"))
    if manifest["format"] != FORMAT_VERSION or manifest["num_cards"] != num_cards:
        raise ValueError(
            f"{folder} holds the bases of a {manifest['num_cards']}-card solve (format {manifest['format']}), "
            f"not of {num_cards} cards: give another --bases directory"
        )
    return manifest


def save_level(folder: Path, k: int, bases: np.ndarray, below: np.ndarray, num_cards: int) -> None:
    """Write level ``k``'s masks and record the digest of ``below`` (the values of level
    ``k - 1`` they were computed from) in the manifest, both atomically."""
    remove_stale_temps(folder, FILES)
    manifest = _manifest(folder, num_cards)
    with atomic_write(_level_file(folder, k)) as handle:
        np.save(handle, bases)
    manifest["below_sha256"][str(k)] = digest(np.ascontiguousarray(below))
    with atomic_write(folder / MANIFEST, "w") as handle:
        json.dump(manifest, handle, indent=1)


def load_level(folder: Path, k: int, below: np.ndarray, num_cards: int, shape: tuple[int, ...]) -> np.ndarray | None:
    """Level ``k``'s masks (memory-mapped, of ``shape``), or None when the directory has none for it (no
    solve wrote bases here, a level that a resumed solve did not recompute, or a file torn
    by an interruption). ``ValueError`` when the directory belongs to a solve of another
    size or its level ``k`` was computed from other values than ``below``."""
    if not (folder / MANIFEST).exists():
        return None
    expected = _manifest(folder, num_cards)["below_sha256"].get(str(k))
    file = _level_file(folder, k)
    if expected is None or not file.exists():
        return None
    if digest(np.ascontiguousarray(below)) != expected:
        raise ValueError(
            f"{file} was computed from other values of level {k - 1} than this solution's: "
            "these bases belong to another solve"
        )
    try:
        bases = np.load(file, mmap_mode="r")
    except (ValueError, OSError, EOFError):
        return None
    return bases if bases.dtype == np.uint32 and bases.shape == shape else None
