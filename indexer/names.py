"""What an archive file's name says: its job and harvest definition (docs/FORMATS.md, "Names").

The BnF chain derives sub-indexes per harvest definition (the collections' entry points in
Wayback) from the harvest id in each ARC file's name; ours are
``{job}-{harvest}-{YYYYmmddHHMMSS}-{serial:05d}-{host}.warc.gz`` and ``{job}-metadata-N.warc.gz`` (N = 1; a
continuous job's crawl.log segments 1, 2, …).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CONTENT = re.compile(
    r"^(?P<job>\d+)-(?P<harvest>\d+)-(?P<ts>\d{14})-(?P<serial>\d{5})-(?P<host>[A-Za-z0-9._-]+)"
    r"\.warc(?:\.gz)?$"
)
_METADATA = re.compile(r"^(?P<job>\d+)-metadata-(?P<n>\d+)\.warc(?:\.gz)?$")


@dataclass(frozen=True)
class ArchiveName:
    """A parsed file name. ``harvest`` is None for a metadata WARC (its name carries the job only)."""

    job: int
    harvest: int | None
    metadata: bool
    timestamp: str = ""
    serial: int = 0
    host: str = ""


def parse_archive_name(filename: str) -> ArchiveName:
    """Parse a netharvest WARC name; ``ValueError`` naming the file if it is not one."""
    m = _CONTENT.match(filename)
    if m:
        return ArchiveName(int(m["job"]), int(m["harvest"]), False, m["ts"], int(m["serial"]), m["host"])
    m = _METADATA.match(filename)
    if m:
        return ArchiveName(int(m["job"]), None, True, serial=int(m["n"]))
    raise ValueError(
        f"{filename!r} is not a netharvest archive file name "
        "({job}-{harvest}-{YYYYmmddHHMMSS}-{serial}-{host}.warc.gz or {job}-metadata-N.warc.gz)"
    )
