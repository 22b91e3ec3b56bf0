"""Small file-system helpers shared by the index writers and the storage copier."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


def fsync_dir(directory: str | Path) -> None:
    """Make a rename or link durable: fsync the directory that holds the new name."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - some platforms cannot open directories
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def atomic_output(path: str | Path) -> Iterator[BinaryIO]:
    """Write ``path`` all or nothing: the caller writes to a temporary file in the same directory,
    which is fsynced and renamed over ``path`` when the block ends without an exception (readers see
    the old file or the new one, never a part), and deleted otherwise."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb", buffering=1 << 20) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        fsync_dir(path.parent)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
