"""Small file-system helpers shared by the index writers and the storage copier.

File modes: every archive file and index is created with the mode a plain ``open()`` gives,
``0o666 & ~umask``, so the operator's umask decides who may read the archive (umask 027 and a shared
group let a replay service running as another user read WARCs and indexes; README, "File
permissions"). ``tempfile.mkstemp`` alone makes 0600 files, which only the writing user can read:
:func:`mkstemp_shared` is mkstemp (same unique, exclusive creation) with that mode.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


def current_umask() -> int:
    """The process umask, read without changing it (``os.umask`` can only be read by setting it, which
    for a moment would apply to files other threads create)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):  # pragma: no cover - not Linux, or a kernel before 4.7
        pass
    mask = os.umask(0o022)  # pragma: no cover
    os.umask(mask)  # pragma: no cover
    return mask  # pragma: no cover


def mkstemp_shared(directory: str | Path, prefix: str, suffix: str) -> tuple[int, str]:
    """``tempfile.mkstemp`` in ``directory``, the file's mode set to ``0o666 & ~umask`` (not 0600):
    the temporary file becomes the archived or index file by rename or link, mode and all."""
    fd, name = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=directory)
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
    except BaseException:
        os.close(fd)
        os.unlink(name)
        raise
    return fd, name


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
    the old file or the new one, never a part), and deleted otherwise. The file's mode follows the umask."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = mkstemp_shared(path.parent, prefix=f".{path.name}.", suffix=".tmp")
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
