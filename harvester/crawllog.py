"""Heritrix 3's crawl.log, byte for byte (docs/FORMATS.md, "crawl.log").

One line per archived fetch attempt: a URI's final disposal (fetched, or given up on), and also each
attempt that wrote WARC records and will be retried (a 503 or 429 answered), annotated ``willRetry``,
so crawl.log and the WARC agree on every record (issue 14; Heritrix only retries attempts that got no
response, so it never has such a line: a tool counting URIs should skip ``willRetry`` lines). Attempts
after the first carry the ``Nt`` annotation (N = attempts), as Heritrix's ``CrawlURI.aboutToLog`` adds it.
Eleven space-separated fields, in the layout of Heritrix's ``UriProcessingFormatter``::

    2026-11-22T18:30:12.345Z   200       1403 http://example.dk/ - - text/html #028 \
        20261122183012100+65 sha1:SRUX… - content-size:1731

(one line; broken here only for width)

1. log time, ISO 8601 UTC with milliseconds (24 characters);
2. status code, right-aligned in 5 characters (longer codes such as -9998 simply widen it);
3. size (payload bytes, "-" if nothing was fetched), right-aligned in 10 characters;
4. the URI; 5. discovery path ("-" for a seed); 6. via ("-" if none);
7. MIME type cut at the first ``;``, ``,`` or blank (Heritrix's ``MimetypeUtils.truncate``):
   ``no-type`` for a response without one, ``unknown`` for a URI never fetched (as Heritrix 3 logs);
8. ``#`` + fetcher slot ("toe thread") number, zero-padded to 3 digits;
9. fetch start as 17 digits + ``+`` + duration in ms, or "-";
10. payload digest ``sha1:<base32>`` or "-"; 11. source tag: the seed the URI descends from when
    the template tags seeds (Heritrix's ``sourceTagSeeds``), else "-";
12. annotations, comma-separated, or "-".

Writes are line-buffered and flushed per line, so a ``kill -9`` loses at most the line being written.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from harvester.urimeta import UriMeta

#: Heritrix's truncation rule for MIME types (``^([^\s;,]+).*``).
_MIME_RE = re.compile(r"^([^\s;,]+)")

#: A regex for one line, derived from the format above (used by tests and by readers of the log).
LINE_RE = re.compile(
    r"^(?P<logged>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) "
    r"(?P<status> *-?\d+) "
    r"(?P<size> *(?:\d+|-)) "
    r"(?P<uri>\S+) (?P<path>\S+) (?P<via>\S+) (?P<mime>\S+) "
    r"#(?P<thread>\d{3,}) "
    r"(?P<fetch>\d{17}\+\d+|-) "
    r"(?P<digest>\S+) (?P<source>\S+) (?P<annotations>\S+)$"
)

#: Heritrix's names for truncated fetches (``FetchErrors``), keyed by WARC-Truncated reason.
TRUNCATION_ANNOTATIONS = {
    "length": "lenTrunc",
    "time": "timeTrunc",
    "disconnect": "midFetchTrunc",
    "header": "headerTrunc",
    "unspecified": "unspecifiedTrunc",
}


def source_of(meta: Mapping[str, object]) -> str | None:
    """The source tag a request carries (``meta["nh"].source``, set by the crawl engine when
    the template's ``source_tag_seeds`` is on), or None."""
    nh = meta.get("nh")
    return nh.source if isinstance(nh, UriMeta) else None


def log_timestamp(when: datetime) -> str:
    """``2026-11-22T18:30:12.345Z`` (Heritrix ``ArchiveUtils.getLog17Date``)."""
    when = when.astimezone(UTC)
    return f"{when:%Y-%m-%dT%H:%M:%S}.{when.microsecond // 1000:03d}Z"


def date17(when: datetime) -> str:
    """``20261122183012345``: Heritrix's 17-digit date (``ArchiveUtils.get17DigitDate``)."""
    when = when.astimezone(UTC)
    return f"{when:%Y%m%d%H%M%S}{when.microsecond // 1000:03d}"


def fetch_timestamp(began: datetime, duration_ms: int) -> str:
    """``20261122183012345+123``: 17-digit fetch start and duration in milliseconds."""
    return f"{date17(began)}+{max(0, int(duration_ms))}"


def truncate_mime(content_type: str | None) -> str:
    """Heritrix's ``MimetypeUtils.truncate``; ``None`` means never fetched (``unknown``)."""
    if content_type is None:
        return "unknown"
    match = _MIME_RE.match(content_type)
    return match.group(1) if match else "no-type"


def format_line(
    *,
    status: int,
    uri: str,
    size: int | None = None,
    path: str = "",
    via: str | None = None,
    mime: str | None = None,
    thread: int = 0,
    fetch_began: datetime | None = None,
    duration_ms: int | None = None,
    digest: str | None = None,
    source_tag: str | None = None,
    annotations: Iterable[str] = (),
    logged_at: datetime | None = None,
) -> str:
    """One crawl.log line, newline included. ``mime`` is the raw Content-Type value ("" if the
    response had none, ``None`` if nothing was fetched)."""
    logged = log_timestamp(logged_at or datetime.now(UTC))
    fetch = fetch_timestamp(fetch_began, duration_ms or 0) if fetch_began is not None else "-"
    notes = ",".join(a for a in annotations if a)
    return (
        f"{logged} {status:>5} {('-' if size is None else str(size)):>10} {uri} "
        f"{path or '-'} {via or '-'} {truncate_mime(mime)} #{thread:03d} {fetch} "
        f"{digest or '-'} {source_tag or '-'} {notes or '-'}\n"
    )


def line_end(path: Path, size: int) -> int:
    """The end of the last whole line in the first ``size`` bytes of a log (0 if none is whole)."""
    with open(path, "rb") as f:
        pos = size
        while pos > 0:
            step = min(4096, pos)
            f.seek(pos - step)
            nl = f.read(step).rfind(b"\n")
            if nl >= 0:
                return pos - step + nl + 1
            pos -= step
    return 0


class CrawlLog:
    """An append-only crawl.log; reopening an existing one (a resumed job) appends to it."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._repair_tail()
        # buffering=1: line buffered, so every line reaches the OS when written.
        self._file: TextIO | None = open(self.path, "a", encoding="utf-8", newline="\n", buffering=1)
        self.lines = 0

    def _repair_tail(self) -> None:
        """A kill -9 mid-write can leave a partial last line: cut it off so the log stays parseable."""
        if not self.path.exists():
            return
        size = self.path.stat().st_size
        end = line_end(self.path, size)
        if end < size:
            with open(self.path, "rb+") as f:
                f.truncate(end)

    def write(self, line: str) -> None:
        if self._file is None:
            raise ValueError("crawl.log is closed")
        self._file.write(line)
        self.lines += 1

    def log(self, **fields: object) -> str:
        """Format (see :func:`format_line`) and write one line; returns it."""
        line = format_line(**fields)  # type: ignore[arg-type]
        self.write(line)
        return line

    def close(self) -> None:
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None

    @property
    def closed(self) -> bool:
        return self._file is None
