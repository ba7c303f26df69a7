"""Writing results so that an interruption never leaves a corrupt file, and reading them so
that damage is caught and reported, naming the file, instead of being loaded and played.

Every ``.npz`` this package writes (:func:`save_npz`) holds its arrays, a JSON ``meta`` entry
and a sha256 over both; JSON files that describe other files (a checkpoint manifest, a PPO
agent's ``agent.json``) record those files' sha256. Readers turn every failure into one
``ValueError`` line naming the file and what is wrong (``FileNotFoundError`` if it is
missing), never a json/numpy/zipfile traceback.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO

import numpy as np

META, CHECKSUM = "meta", "sha256"
"""The entries of every ``.npz`` this package writes besides its arrays."""
_UNVERIFIABLE = "written before hiddenhand checksummed its files (or damaged), so it cannot be verified; regenerate it"


def write_figure(fig, path: str | os.PathLike, dpi: int = 110) -> None:
    """Save a matplotlib figure as PNG atomically, and close it."""
    import io

    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    plt.close(fig)
    with atomic_write(path) as handle:
        handle.write(buffer.getvalue())


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "wb") -> Iterator[IO]:
    """Open a temporary file beside ``path``; on success it is renamed over ``path``.

    An exception (or a kill) before the end leaves the old ``path`` untouched. A kill -9
    leaves the temporary file too, so it is named ``.<name>.<pid>.<random>.tmp``: the pid
    tells :func:`remove_stale_temps` when its writer is gone, and each successful write
    removes the stale ones of its own target.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp")
    except OSError as err:
        raise _cannot_write(path, err) from None
    try:
        try:
            with os.fdopen(fd, mode) as handle:
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as err:
            if err.filename is not None:  # another file's error, which names it
                raise
            # The write itself failed (a full disk): say which file, and that its old content is kept.
            raise _cannot_write(path, err, f"; nothing was lost: {path} is as it was before") from None
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private; give it a normal file's mode
        try:
            os.replace(tmp, path)
        except OSError as err:  # e.g. ``path`` is a directory: name it, not the temporary file
            raise _cannot_write(path, err) from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    remove_stale_temps(path.parent, [path.name])


def _cannot_write(path: Path, err: OSError, note: str = "") -> OSError:
    """``err`` (of its own type) as one line naming the target, not the temporary file, then
    ``note``. An error without an errno is numpy's short write (``8785 requested and 4080
    written``), which says neither what was written nor why."""
    reason = err.strerror or (f"the write stopped short ({err}): the disk may be full" if err.errno is None else err)
    return type(err)(f"cannot write {path}: {reason}{note}")


def remove_stale_temps(directory: str | os.PathLike, names: Iterable[str] | None = None) -> list[Path]:
    """Delete the temporary files :func:`atomic_write` left in ``directory`` (for the targets
    ``names``, default any) when killed mid-write; return them. A solve killed again and again
    would otherwise pile up copies of its largest files. Only names of atomic_write's own
    pattern are touched, and only when their writer process is gone (a temporary file named
    before they carried the pid counts as gone): a live writer's file is kept."""
    names = None if names is None else list(names)
    if names == []:
        return []
    targets = ".+?" if names is None else "|".join(map(re.escape, names))
    pattern = re.compile(rf"\.(?:{targets})\.(?:(\d+)\.)?[a-z0-9_]{{8}}\.tmp")  # mkstemp: 8 of [a-z0-9_]
    removed = []
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        for entry in entries:
            match = pattern.fullmatch(entry.name)
            if match and entry.is_file(follow_symlinks=False) and not _process_alive(match[1]):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
    return removed


def check_writable(path: str | os.PathLike, what: str, kind: str = "file") -> Path:
    """Refuse an output ``path`` before any work is done rather than after it: an empty path
    (which would mean the current directory), a ``kind="file"`` that is an existing directory
    or a ``kind="dir"`` that is an existing file, or a path this process cannot create or write
    in. Returns ``Path(path)``. Raises ``ValueError``, or the ``OSError`` of the step that
    failed (``PermissionError``, ``FileNotFoundError``...), naming ``what`` and the path as given.

    Writability is found by trying, not by ``os.access``, which is always true for root,
    although root cannot write under ``/proc`` or on a read-only mount: the missing
    directories are made, a temporary file is made and removed in the one that is to hold
    the output, and the directories made are removed again. The check leaves nothing behind,
    passed or failed, so work that fails after it leaves no empty directories either."""
    if kind not in ("file", "dir"):
        raise ValueError(f"kind={kind!r} must be 'file' or 'dir'")
    text = os.fspath(path)
    if not str(text).strip():
        raise ValueError(f"the {what} path is empty ({text!r}); name a {kind} (it would mean the current directory)")
    path = Path(text)
    if kind == "file" and path.is_dir():
        raise ValueError(f"{what} {str(text)!r} is an existing directory, not a file")
    if kind == "dir" and path.exists() and not path.is_dir():
        raise ValueError(f"{what} {str(text)!r} is an existing file, not a directory")
    holder = path if kind == "dir" else path.parent  # the directory the write creates an entry in
    missing, base = [], holder
    while not base.exists() and base != base.parent:
        missing.append(base)
        base = base.parent
    if not base.is_dir():
        raise ValueError(f"{what} {str(text)!r} cannot be created: {base} is a file, not a directory")
    made: list[Path] = []
    step = ""
    try:
        for directory in reversed(missing):
            step = f"making the directory {directory}"
            try:
                directory.mkdir()
            except FileExistsError:
                if directory.is_dir():  # made by another process meanwhile: theirs to keep
                    continue
                raise
            made.append(directory)
        step = f"making a file in {holder}"
        fd, probe = tempfile.mkstemp(dir=holder, prefix=f".{path.name or 'probe'}.{os.getpid()}.", suffix=".tmp")
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise type(err)(f"{what} {str(text)!r} cannot be written: {step} failed ({err.strerror or err})") from None
    finally:
        for directory in reversed(made):
            with contextlib.suppress(OSError):
                directory.rmdir()
    return path


# --------------------------------------------------------------------------- checksums
def digest(data: bytes | np.ndarray) -> str:
    """sha256 (hex) of bytes or of an array's bytes in C order."""
    return hashlib.sha256(np.ascontiguousarray(data).data if isinstance(data, np.ndarray) else data).hexdigest()


def file_digest(path: str | os.PathLike) -> str:
    """sha256 (hex) of a file's bytes, read in chunks."""
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            sha.update(chunk)
    return sha.hexdigest()


def verify_file_digest(path: str | os.PathLike, expected, recorded_in: str | os.PathLike) -> None:
    """``ValueError`` naming ``path`` unless its sha256 is ``expected``, the checksum recorded
    for it in the file ``recorded_in`` (``None``: none recorded, as in files from before checksums)."""
    if not isinstance(expected, str):
        raise ValueError(f"{recorded_in} records no checksum of {path}: {_UNVERIFIABLE}")
    if file_digest(path) != expected:
        raise ValueError(f"{path} fails the checksum recorded in {recorded_in}: it was damaged after it was written")


def _npz_checksum(meta_text: str, arrays: dict[str, np.ndarray]) -> str:
    """sha256 over the meta and every array's name, dtype, shape and bytes (sorted by name)."""
    layout = [[name, arrays[name].dtype.str, list(arrays[name].shape)] for name in sorted(arrays)]
    sha = hashlib.sha256(json.dumps([meta_text, layout]).encode())
    for name in sorted(arrays):
        sha.update(np.ascontiguousarray(arrays[name]).data)
    return sha.hexdigest()


# --------------------------------------------------------------------------- .npz files
def save_npz(path: str | os.PathLike, meta: dict, arrays: dict[str, np.ndarray], compress: bool = False) -> Path:
    """Write ``arrays`` and the JSON ``meta`` to ``path`` atomically, with a sha256 over both
    that :func:`load_npz` verifies: an edited, flipped or truncated file is refused, not used."""
    if META in arrays or CHECKSUM in arrays:
        raise ValueError(f"array names {META!r} and {CHECKSUM!r} are reserved")
    arrays = {name: np.asarray(array) for name, array in arrays.items()}
    meta_text = json.dumps(meta)
    entries = {META: np.array(meta_text), CHECKSUM: np.array(_npz_checksum(meta_text, arrays))}
    with atomic_write(path) as handle:
        (np.savez_compressed if compress else np.savez)(handle, **entries, **arrays)
    return Path(path)


def load_npz(
    path: str | os.PathLike,
    what: str,
    required_meta: Iterable[str] = (),
    required_arrays: Iterable[str] = (),
    legacy: Callable[[dict, dict], bool | None] | None = None,
) -> tuple[dict, dict]:
    """``(meta, arrays)`` of a file written by :func:`save_npz`, verified against its checksum
    and holding the ``required_meta`` keys and ``required_arrays``.

    A missing file raises ``FileNotFoundError``; anything else wrong (not an ``.npz``,
    truncated, no or bad meta, a failed or missing checksum, a missing key) one ``ValueError``
    naming ``path`` and the fault. A file without a checksum is refused unless ``legacy``
    verifies it its own way: ``legacy(meta, arrays)`` is True (verified), False (damaged) or
    None (nothing to verify it by).
    """
    meta_text, meta, checksum, arrays = _read_npz(path, what, with_arrays=True)
    if checksum is None:
        verified = legacy(meta, arrays) if legacy is not None else None
        if verified is None:
            raise ValueError(f"{path} has no checksum: it was {_UNVERIFIABLE}")
    else:
        verified = checksum == _npz_checksum(meta_text, arrays)
    if not verified:
        raise ValueError(f"{path} fails its checksum: it is corrupt (damaged after it was written); regenerate it")
    missing = [f"meta {k!r}" for k in required_meta if k not in meta]
    missing += [f"array {k!r}" for k in required_arrays if k not in arrays]
    if missing:
        raise ValueError(f"{path} is not a {what}: it lacks {', '.join(missing)}")
    return meta, arrays


def read_npz_meta(path: str | os.PathLike, what: str = "hiddenhand file") -> dict:
    """Only the JSON ``meta`` of such a file (the arrays stay on disk, nothing is verified):
    enough to tell what a file is. Failures as in :func:`load_npz`."""
    return _read_npz(path, what, with_arrays=False)[1]


def _read_npz(path: str | os.PathLike, what: str, with_arrays: bool) -> tuple[str, dict, str | None, dict]:
    """``(meta text, meta, checksum or None, arrays)``; every way of failing made one line."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no {what} at {path}")
    if path.is_dir():
        raise ValueError(f"{path} is a directory, not a {what}")
    problem = f"{path} is truncated, corrupt or not a {what}"
    with open(path, "rb") as handle:
        head = handle.read(4)
    if head not in (b"PK\x03\x04", b"PK\x05\x06"):  # not a zip: numpy would try to unpickle it
        raise ValueError(f"{problem}: {'it is empty' if not head else 'it is not an .npz (zip) archive'}")
    try:
        with np.load(path, allow_pickle=False) as data:
            entry = {name: str(data[name]) for name in (META, CHECKSUM) if name in data.files}
            arrays = {n: data[n] for n in data.files if n not in (META, CHECKSUM)} if with_arrays else {}
    except Exception as err:  # zip, CRC, header or object-array errors: all mean a damaged or foreign file
        text = " ".join(str(err).split()) or type(err).__name__
        raise ValueError(f"{problem}: {'it holds pickled objects' if 'allow_pickle' in text else text}") from None
    if META not in entry:
        raise ValueError(f"{problem}: it has no {META!r} entry")
    try:
        meta = json.loads(entry[META])
    except json.JSONDecodeError as err:
        raise ValueError(f"{problem}: its meta is not JSON ({err})") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{problem}: its meta is a JSON {type(meta).__name__}, not an object")
    return entry[META], meta, entry.get(CHECKSUM), arrays


# --------------------------------------------------------------------------- JSON files
def read_json(path: str | os.PathLike, what: str, required: Iterable[str] = ()) -> dict:
    """The JSON object in ``path`` (a manifest, an agent's description), holding the
    ``required`` keys. ``FileNotFoundError`` if it is missing, else one ``ValueError`` naming
    the file and the fault (empty, not JSON, not an object, a missing key) instead of json's
    message, which names no file."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no {what} at {path}")
    problem = f"{path} is truncated, corrupt or not a {what}"
    if path.is_dir():
        raise ValueError(f"{path} is a directory, not a {what}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{problem}: it is not UTF-8 text") from None
    if not text.strip():
        raise ValueError(f"{problem}: it is empty")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{problem}: it is not valid JSON ({err})") from None
    if not isinstance(value, dict):
        raise ValueError(f"{problem}: it holds a JSON {type(value).__name__}, not an object")
    missing = [key for key in required if key not in value]
    if missing:
        raise ValueError(f"{problem}: it lacks {', '.join(map(repr, missing))}")
    return value


def _process_alive(pid: str | None) -> bool:
    if pid is None:  # a temporary file named before they carried the writer's pid
        return False
    try:
        os.kill(int(pid), 0)
    except (ProcessLookupError, OverflowError):
        return False
    except OSError:  # e.g. another user's process
        return True
    return True


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
