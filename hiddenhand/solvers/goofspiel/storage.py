"""What a Goofspiel solve keeps on disk: solution files and checkpoint directories.

A *solution file* (``.npz``) holds every level's values, one pattern of each mirror pair
(format 2; format 1, still read, held every pattern), with a checksum over the file
(:func:`hiddenhand.files.save_npz`) and one per level; its ``scoring`` (absent in files
from before win/loss solutions: point difference) says which solution class reads it. A
*checkpoint directory* holds each completed level of a solve in progress (written
atomically, then recorded with its checksum in ``manifest.json``), memory-mapped when a
solve resumes from it. The optimal bases a solve may keep beside them are
:mod:`~hiddenhand.solvers.goofspiel.bases`'.

Arrays in, arrays out: this module knows the formats, not the solution classes
(:mod:`~hiddenhand.solvers.goofspiel.solution`), which decide which rows a file keeps.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from hiddenhand.files import (
    atomic_write,
    check_writable,
    digest,
    load_npz,
    read_json,
    remove_stale_temps,
    save_npz,
)
from hiddenhand.validation import mismatch

FORMAT_VERSION = 2
"""Of solution files: format 2 stores one pattern of each mirror pair (:meth:`Indexer.halves`),
format 1 (still read) every pattern."""
CHECKPOINT_FORMAT = 1
"""Of checkpoint directories, which hold whole levels (memory-mapped while solving)."""
A_ONLY, B_ONLY, BOTH = 0, 1, 2
POINT_DIFFERENCE, WIN_LOSS = "point_difference", "win_loss"
"""The scorings the solver covers; a file or checkpoint records its own, so that neither is read as the other."""
SOLUTION_FILE = "Goofspiel solution file"


def write_solution(path: Path, num_cards: int, scoring: str, levels: list[np.ndarray]) -> Path:
    """Write the ``levels`` a solution file keeps (format 2) to ``path`` (already checked
    writable), atomically, with their checksums; return the path written."""
    sums = [digest(level) for level in levels]
    meta = {"format": FORMAT_VERSION, "num_cards": num_cards, "scoring": scoring, "sha256": sums}
    return save_npz(path, meta, {f"level_{k}": level for k, level in enumerate(levels)})


def read_solution(path: str | os.PathLike, num_cards: int | None = None) -> tuple[dict, list[np.ndarray]]:
    """The meta data and the levels, as stored, of a file written by :func:`write_solution`
    (or format 1); a truncated, corrupt or mismatched file is reported as such
    (``ValueError`` naming it), and so is one without its checksum, except a format-1 file
    from before whole-file checksums, verified by its per-level ones."""
    meta, arrays = load_npz(path, SOLUTION_FILE, ("format", "num_cards"), legacy=_level_sums)
    if meta["format"] not in (1, FORMAT_VERSION):
        raise ValueError(f"{path} has format {meta['format']!r}, this version reads 1 and {FORMAT_VERSION}")
    n = meta["num_cards"]
    if not isinstance(n, int) or not 1 <= n <= 13:
        raise ValueError(f"{path} is not a Goofspiel solution file: num_cards={n!r}")
    missing = [f"level_{k}" for k in range(n + 1) if f"level_{k}" not in arrays]
    if missing:
        raise ValueError(f"{path} is not a complete Goofspiel solution file: it lacks {', '.join(missing)}")
    if num_cards is not None and n != num_cards:
        raise ValueError(f"{path} solves {n} cards, not {num_cards}")
    return meta, [arrays[f"level_{k}"] for k in range(n + 1)]


def _level_sums(meta: dict, arrays: dict) -> bool | None:
    """Whether a solution file from before whole-file checksums matches its per-level sha256
    list (None: it is not such a file, so nothing verifies it). Only format 1 without a
    ``scoring`` was written so: format 2 and win/loss files came after whole-file checksums,
    and one of them without its checksum is damaged."""
    sums = meta.get("sha256")
    if meta.get("format") != 1 or "scoring" in meta or not isinstance(sums, list):
        return None
    names = [f"level_{k}" for k in range(len(sums))]
    return set(names) == set(arrays) and all(digest(arrays[name]) == s for name, s in zip(names, sums))


MANIFEST = "manifest.json"
CHECKPOINT_FILES = [MANIFEST] + [f"level_{k:02d}.npy" for k in range(1, 14)]
"""Every file a checkpoint directory holds (atomic_write's stale temporaries of these are removed on resume)."""


def _level_file(checkpoint: Path, k: int) -> Path:
    return checkpoint / f"level_{k:02d}.npy"


def _read_manifest(checkpoint: Path) -> dict:
    """The manifest (format, num_cards, sha256 per level) or a ``ValueError`` naming it."""
    path = checkpoint / MANIFEST
    try:
        manifest = read_json(path, "Goofspiel checkpoint manifest", required=("format", "num_cards", "sha256"))
        if not isinstance(manifest["sha256"], dict):
            raise ValueError(f"{path} is corrupt: its 'sha256' is not an object")
    except (ValueError, OSError) as err:  # OSError: unreadable (a disk error, or no permission)
        reason = str(err) if isinstance(err, ValueError) else f"{path} cannot be read ({err.strerror or err})"
        raise ValueError(f"{reason}; delete it to solve from the start") from None
    return manifest


def open_checkpoint(
    checkpoint: str | os.PathLike | None, shape, num_cards: int, scoring: str = POINT_DIFFERENCE
) -> tuple[Path | None, list[np.ndarray]]:
    """The checkpoint directory (checked writable and created; None without one) and the
    levels a solve starts from: level 0, then those completed in the directory (memory-mapped),
    in order, stopping at the first missing or damaged one (``shape(k)``: level k's expected
    shape). First removes the temporary files of writes killed midway (a kill -9 leaves
    them; each is up to a level's size)."""
    if checkpoint is None:
        return None, [np.zeros((1, 1))]
    folder = check_writable(checkpoint, "checkpoint directory", kind="dir")
    folder.mkdir(parents=True, exist_ok=True)
    return folder, _completed_levels(folder, shape, num_cards, scoring)


def _completed_levels(checkpoint: Path, shape, num_cards: int, scoring: str) -> list[np.ndarray]:
    remove_stale_temps(checkpoint, CHECKPOINT_FILES)
    for k in range(1, num_cards + 1):  # else writing the level would fail, after it was solved
        if _level_file(checkpoint, k).exists() and not _level_file(checkpoint, k).is_file():
            raise ValueError(_damaged(checkpoint, k, "is not a file"))
    if not (checkpoint / MANIFEST).exists():
        return [np.zeros((1, 1))]
    manifest = _read_manifest(checkpoint)
    if manifest["format"] != CHECKPOINT_FORMAT:
        raise ValueError(
            f"checkpoint {checkpoint} belongs to another solve: its format is {manifest['format']!r}, this version "
            f"reads {CHECKPOINT_FORMAT}; delete it to solve from the start"
        )
    found = {"num_cards": manifest["num_cards"], "scoring": manifest.get("scoring", POINT_DIFFERENCE)}
    wanted = {"num_cards": num_cards, "scoring": scoring}
    if found != wanted:
        raise ValueError(f"checkpoint {checkpoint} belongs to another solve: {mismatch(found, wanted)}")
    levels = [np.zeros((1, 1))]
    for k in range(1, num_cards + 1):
        expected = manifest["sha256"].get(str(k))
        if expected is None:  # the solve stopped before this level was recorded: resume here
            break
        levels.append(_recorded_level(checkpoint, k, shape(k), expected))
    return levels


def _recorded_level(checkpoint: Path, k: int, shape, expected: str) -> np.ndarray:
    """Level ``k``, which the manifest records, memory-mapped. Levels are written atomically
    and recorded after they are written, so one that is missing, unreadable, of the wrong
    shape or failing its checksum was damaged afterwards: a ``ValueError`` says so."""
    file = _level_file(checkpoint, k)
    if not file.exists():
        raise ValueError(_damaged(checkpoint, k, "is missing"))
    try:
        with open(file, "rb") as handle:  # else numpy takes it for a pickle, and says to load it unsafely
            if handle.read(len(np.lib.format.MAGIC_PREFIX)) != np.lib.format.MAGIC_PREFIX:
                raise ValueError("it does not start as a .npy array does: zeroed, overwritten or empty")
        level = np.load(file, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as err:
        reason = " ".join(str(err).split()) or type(err).__name__
        raise ValueError(_damaged(checkpoint, k, f"is truncated or not a level ({reason})")) from None
    if level.shape != tuple(shape):
        raise ValueError(_damaged(checkpoint, k, f"has shape {level.shape}, not {tuple(shape)}"))
    if digest(level) != expected:
        raise ValueError(_damaged(checkpoint, k, f"fails the checksum recorded in {MANIFEST}"))
    return level


def _damaged(checkpoint: Path, k: int, fault: str) -> str:
    """One line: which level file of ``checkpoint`` is damaged, and the two ways on."""
    file = _level_file(checkpoint, k)
    delete = f"delete {file.name} and " if os.path.lexists(file) else ""
    return (
        f"checkpoint {checkpoint} is damaged: {file.name} {fault}; delete the directory to solve from the start, "
        f"or {delete}take levels {k} and above out of its {MANIFEST} to solve again from level {k}"
    )


def save_level(
    checkpoint: Path, k: int, level: np.ndarray, num_cards: int, scoring: str = POINT_DIFFERENCE
) -> np.ndarray:
    """Write level k and record it in the manifest (both atomically); return it memory-mapped."""
    file = _level_file(checkpoint, k)
    with atomic_write(file) as handle:
        np.save(handle, level)
    manifest = (
        _read_manifest(checkpoint)
        if (checkpoint / MANIFEST).exists()
        else {"format": CHECKPOINT_FORMAT, "num_cards": num_cards, "scoring": scoring, "sha256": {}}
    )
    manifest["sha256"][str(k)] = digest(level)
    with atomic_write(checkpoint / MANIFEST, "w") as handle:
        json.dump(manifest, handle, indent=1)
    return np.load(file, mmap_mode="r")
