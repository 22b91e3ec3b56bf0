"""Binary search in a sorted CDX file: the lines of one SURT key, as pywb and Wayback find them.

A CDX file is sorted in ``LC_ALL=C`` byte order (indexer.merge), so every line of a key sits in one run that
a binary search over byte offsets finds in O(log size) reads, whatever the size of the master index: seek to
the middle, skip to the next line start, compare, halve. Only the lines of the key are read after that.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


def _line_at_or_after(f: BinaryIO, pos: int) -> tuple[int, bytes]:
    """The first line starting at or after byte ``pos`` (its offset, its bytes without the newline)."""
    if pos:
        f.seek(pos - 1)
        f.readline()  # the rest of the line ``pos - 1`` is in (just its newline if ``pos`` starts a line)
    else:
        f.seek(0)
    start = f.tell()
    return start, f.readline().rstrip(b"\r\n")


def iter_key(path: str | Path, key: str | bytes) -> Iterator[bytes]:
    """The lines (without newline) of the CDX file ``path`` whose first field is ``key`` (a SURT key)."""
    if not key:
        return  # no line has an empty key (the `` CDX …`` header starts with a blank)
    prefix = (key.encode("utf-8") if isinstance(key, str) else key) + b" "
    with open(path, "rb") as f:
        f.seek(0, 2)
        lo, hi = 0, f.tell()
        while lo < hi:  # the smallest position whose next line sorts at or after the prefix
            mid = (lo + hi) // 2
            start, line = _line_at_or_after(f, mid)
            if not line and f.tell() == start or line >= prefix:
                hi = mid
            else:
                lo = mid + 1
        start, line = _line_at_or_after(f, lo)
        while line.startswith(prefix):
            yield line
            line = f.readline().rstrip(b"\r\n")
