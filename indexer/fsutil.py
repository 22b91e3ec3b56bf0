"""Small file-system helpers shared by the index writers and the storage copier."""

from __future__ import annotations

import os
from pathlib import Path


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
