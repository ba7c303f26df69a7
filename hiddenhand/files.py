"""Writing results so that an interruption never leaves a corrupt file."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator

import numpy as np


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

    An exception (or a kill) before the end leaves the old ``path`` untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private; give it a normal file's mode
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def load_npz(path: str | os.PathLike, what: str) -> tuple[dict, dict]:
    """``(meta, arrays)`` of an ``.npz`` this package wrote (a JSON ``meta`` entry beside the
    arrays). A missing file raises ``FileNotFoundError``; a truncated, corrupt or foreign
    one ``ValueError`` naming ``what`` was expected."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no {what} at {path}")
    try:
        with np.load(path) as data:
            meta = json.loads(str(data["meta"]))
            arrays = {name: data[name] for name in data.files if name != "meta"}
    except Exception as err:  # zip, pickle, JSON or key errors: all mean a damaged file
        raise ValueError(f"{path} is truncated, corrupt or not a {what}: {err}") from err
    return meta, arrays


def read_npz_meta(path: str | os.PathLike) -> dict:
    """Only the JSON ``meta`` of such a file (the arrays stay on disk); ``ValueError`` if
    it has none or cannot be read."""
    try:
        with np.load(path) as data:
            return json.loads(str(data["meta"]))
    except Exception as err:
        raise ValueError(f"{path} is not a readable hiddenhand file: {err}") from err


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
