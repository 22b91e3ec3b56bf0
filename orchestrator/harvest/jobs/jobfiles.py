"""Where a job's crawl.log and reports are, and reading them (docs/FORMATS.md).

A job's files live first in the harvester's spool (``<spool>/<job>/logs/crawl.log``,
``<spool>/<job>/reports/*``), then only inside its metadata WARC (``{job}-metadata-1.warc.gz``) once the
indexer chain has cleaned the spool. The metadata WARC is found by its ArchiveFile row: the spool path
the harvester reported, then each stored copy. Every reader says which source it used, so a page can tell
the user what the figures are based on. Nothing here writes.

What a reader tells the user (``str(source)``, the NotAvailable message) never holds a server path:
responses and pages show the spool-relative name or the metadata WARC's file name, and the places
looked in are logged for the operator.

Only the names in :data:`harvester.reports.REPORT_NAMES` and ``crawl.log`` are ever opened: a path is
never built from user input.
"""

from __future__ import annotations

import collections
import io
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from harvester.reports import REPORT_NAMES
from harvester.runtime import spool_dir
from indexer import objectstore
from orchestrator.harvest.chain import storage
from orchestrator.harvest.models import ArchiveFile, ArchiveFileCopy, Job

log = logging.getLogger(__name__)

CRAWL_LOG = "crawl.log"
#: A report larger than this is shown truncated (a hosts-report of a broad crawl can be huge).
MAX_REPORT_BYTES = 2 * 1024 * 1024


class NotAvailable(Exception):
    """None of the job's sources holds the file; the message lists where we looked."""


@dataclass(frozen=True)
class Source:
    """Where a file was read from: ``kind`` is "spool" or "metadata WARC"."""

    kind: str
    path: Path

    def __str__(self) -> str:
        """For users: the job-relative name in the spool, or the metadata WARC's file name."""
        shown = "/".join(self.path.parts[-2:]) if self.kind == "spool" else self.path.name
        return f"{self.kind} {shown}"


def reason(exc: Exception) -> str:
    """What a page says when a job file cannot be shown: NotAvailable's message, or an OSError's
    reason without its file name (a server path)."""
    if isinstance(exc, OSError):
        log.warning("a job file cannot be read: %s", exc)
        return f"the file cannot be read ({exc.strerror or type(exc).__name__})"
    return str(exc)


def _folder(name: str) -> str:
    if name == CRAWL_LOG:
        return "logs"
    if name in REPORT_NAMES:
        return "reports"
    raise ValueError(f"not a job file this page can show: {name!r}")


def job_dirs(job: Job) -> list[Path]:
    """The job's spool directories that exist: from its files' spool paths, then ``<spool>/<job id>``."""
    candidates: list[Path] = []
    for spool_path in (
        ArchiveFile.objects.filter(job=job).exclude(spool_path="").values_list("spool_path", flat=True)[:20]
    ):
        p = Path(spool_path)
        candidates.append(p.parent.parent if p.parent.name == "warcs" else p.parent)
    candidates.append(spool_dir() / str(job.pk))
    seen: list[Path] = []
    for c in candidates:
        if c not in seen and c.is_dir():
            seen.append(c)
    return seen


def metadata_warcs(job: Job) -> list[Path]:
    """The job's metadata WARC(s) that exist: spool path first, then stored copies (primary first). A copy in an
    object store is read through a local, verified cache (``<index>/cache/<name>``)."""
    paths: list[Path] = []
    for f in ArchiveFile.objects.filter(job=job, kind="metadata"):
        if f.spool_path and not objectstore.is_url(f.spool_path):
            paths.append(Path(f.spool_path))
        for p in ArchiveFileCopy.objects.filter(file=f).order_by("is_replica").values_list("path", flat=True):
            paths.append(_cached(p, f) if objectstore.is_url(p) else Path(p))
    return [p for p in dict.fromkeys(paths) if p.is_file()]


def _cached(url: str, f: ArchiveFile) -> Path:
    """A local copy of a stored object (fetched once, SHA-256 checked); a non-existent path if the store
    cannot give it now."""
    cache = storage.index_dir() / "cache" / f.name
    try:
        return objectstore.download_verified(url, cache, f.sha256)
    except Exception as exc:  # the store is down, the object damaged: `index verify` says which
        log.warning("%s cannot be read from the object store: %s", url, exc)
        return cache


def locate(job: Job, name: str) -> Source:
    """The first source that has ``name``; raises NotAvailable (saying where it looked) otherwise."""
    folder = _folder(name)
    dirs = job_dirs(job)
    for d in dirs:
        path = d / folder / name
        if path.is_file():
            return Source("spool", path)
    warcs = metadata_warcs(job)
    for w in warcs:
        if _has_record(w, folder, name):
            return Source("metadata WARC", w)
    looked = [str(d / folder / name) for d in dirs] + [str(w) for w in warcs]
    log.info("%s of job %s is in none of: %s", name, job.pk, ", ".join(looked) or "(nothing to look in)")
    if not looked:
        raise NotAvailable(f"{name} of job {job.pk}: no spool directory and no metadata WARC recorded for this job")
    raise NotAvailable(
        f"{name} of job {job.pk} is neither in its spool directory nor in its metadata WARC "
        f"({len(looked)} place(s) looked in)"
    )


def _matches(record: object, folder: str, name: str) -> bool:
    uri = record.rec_headers.get_header("WARC-Target-URI") or ""  # type: ignore[attr-defined]
    return record.rec_type == "metadata" and uri.split("?", 1)[0].endswith(f"/crawl/{folder}/{name}")  # type: ignore[attr-defined]


def _has_record(warc: Path, folder: str, name: str) -> bool:
    with open(warc, "rb") as f:
        return any(_matches(r, folder, name) for r in ArchiveIterator(f))


@contextmanager
def open_binary(job: Job, name: str) -> Iterator[tuple[Source, io.BufferedIOBase]]:
    """``(source, stream)`` of one job file, streamed (a crawl.log of millions of lines is never loaded)."""
    source = locate(job, name)
    if source.kind == "spool":
        with open(source.path, "rb") as f:
            yield source, f
        return
    folder = _folder(name)
    with open(source.path, "rb") as f:
        for record in ArchiveIterator(f):
            if _matches(record, folder, name):
                yield source, record.content_stream()  # type: ignore[misc]
                return
    raise NotAvailable(f"{name} disappeared from {source}")


def read_text(job: Job, name: str, limit: int = MAX_REPORT_BYTES) -> tuple[Source, str, bool]:
    """A report's text (at most ``limit`` bytes), its source, and whether it was cut."""
    with open_binary(job, name) as (source, stream):
        data = stream.read(limit + 1)
    return source, data[:limit].decode("utf-8", "replace"), len(data) > limit


def iter_lines(stream: io.BufferedIOBase) -> Iterator[str]:
    """Decoded lines without their end, from a file or a WARC record stream."""
    while True:
        line = stream.readline()
        if not line:
            return
        yield line.decode("utf-8", "replace").rstrip("\r\n")


def tail(job: Job, lines: int = 100) -> tuple[Source, list[str]]:
    """The last ``lines`` lines of crawl.log: seeks from the end of a spool file, streams a WARC record."""
    with open_binary(job, CRAWL_LOG) as (source, stream):
        if source.kind == "spool":
            return source, _tail_file(source.path, lines)
        return source, list(collections.deque(iter_lines(stream), maxlen=lines))


def _tail_file(path: Path, lines: int) -> list[str]:
    block = 64 * 1024
    with open(path, "rb") as f:
        f.seek(0, io.SEEK_END)
        end = f.tell()
        data = b""
        while end > 0 and data.count(b"\n") <= lines:
            start = max(0, end - block)
            f.seek(start)
            data = f.read(end - start) + data
            end = start
    text = data.decode("utf-8", "replace").splitlines()
    return text[-lines:]
