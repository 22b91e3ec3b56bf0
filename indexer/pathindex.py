"""PATH index lines: where each archived file physically is, so replay can open it.

The format is pywb's *path index* (``archive_paths: path-index.txt`` in a collection's config),
which is also the BnF's PATH file: one line per file, tab-separated, sorted by file name in
``LC_ALL=C`` byte order (pywb binary-searches it), ``filename<TAB>full path[<TAB>another full
path…]``. Each path is the file's full path (or URL), not just its directory: pywb opens the path
as given, trying each in turn, so a replica listed after the primary copy is a fallback for free.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from indexer.merge import write_sorted

_FORBIDDEN = ("\t", "\n", "\r", "/")


def _full_path(directory: str | Path, filename: str) -> str:
    text = str(directory)
    if "://" in text:  # a URL prefix (pywb loads http(s):// paths with range requests)
        return text.rstrip("/") + "/" + filename
    return str(Path(text) / filename)


def path_line(filename: str, directory: str | Path, *replicas: str | Path) -> bytes:
    """``filename<TAB>directory/filename[<TAB>replica/filename…]\\n``: the file's line in the PATH
    index, primary copy first. ``filename`` is exactly the name in the CDX ``g`` field."""
    if not filename or any(c in filename for c in _FORBIDDEN):
        raise ValueError(f"PATH index: invalid file name {filename!r} (empty, or contains a tab, newline or '/')")
    paths = [_full_path(d, filename) for d in (directory, *replicas)]
    for p in paths:
        if any(c in p for c in "\t\n\r"):
            raise ValueError(f"PATH index: location {p!r} for {filename} contains a tab or newline")
    return ("\t".join([filename, *paths]) + "\n").encode("utf-8")


def write_path_file(lines: Iterable[bytes], out: str | Path) -> int:
    """Write PATH lines sorted and de-duplicated, replacing ``out`` atomically; returns the line count."""
    return write_sorted(lines, out)


def lookup(path_index: str | Path, filename: str) -> list[str]:
    """The paths the index gives for ``filename`` (a linear scan: for checks and the CLI, not replay)."""
    key = filename.encode("utf-8") + b"\t"
    with open(path_index, "rb") as f:
        for line in f:
            if line.startswith(key):
                return [p.decode("utf-8") for p in line.rstrip(b"\r\n").split(b"\t")[1:]]
    return []
