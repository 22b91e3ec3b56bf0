"""Where a job's crawl.log and reports are, and reading them (docs/FORMATS.md).

A job's files live first in the harvester's spool (``<spool>/<job>/logs/crawl.log``,
``<spool>/<job>/reports/*``), then only inside its metadata WARC (``{job}-metadata-1.warc.gz``) once the
indexer chain has cleaned the spool. A continuous job has several, ``-metadata-1`` … ``-metadata-N``: its
crawl.log in segments, archived while it ran, the reports in the last (:mod:`harvester.crawllogsegments`);
its crawl.log is their crawl.log records read in turn. The metadata WARCs are found by their ArchiveFile
rows: the spool path the harvester reported, then each stored copy. Every reader says which source it used,
so a page can tell the user what the figures are based on. Nothing here writes.

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

from harvester.linereader import last_lines
from harvester.reports import REPORT_NAMES
from harvester.runtime import spool_dir
from indexer import objectstore
from indexer.names import parse_archive_name
from orchestrator.harvest.chain import storage
from orchestrator.harvest.models import ArchiveFile, Job

log = logging.getLogger(__name__)

CRAWL_LOG = "crawl.log"
#: A report larger than this is shown truncated (a hosts-report of a broad crawl can be huge).
MAX_REPORT_BYTES = 2 * 1024 * 1024


class NotAvailable(Exception):
    """None of the job's sources holds the file; the message lists where we looked."""


@dataclass(frozen=True)
class Source:
    """Where a file was read from: ``kind`` is "spool" or "metadata WARC"; ``paths``, a crawl.log read
    from several metadata WARCs in turn (a continuous job's segments), all of them."""

    kind: str
    path: Path
    paths: tuple[Path, ...] = ()

    def __str__(self) -> str:
        """For users: the job-relative name in the spool, or the metadata WARC's file name(s)."""
        if len(self.paths) > 1:
            return f"metadata WARCs {self.paths[0].name} to {self.paths[-1].name} ({len(self.paths)})"
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


def metadata_files(job: Job) -> list[ArchiveFile]:
    """The job's metadata WARC rows in the order of their N: a continuous job's crawl.log segments, the one
    written at its end last (their copies fetched with them)."""
    rows = ArchiveFile.objects.filter(job=job, kind="metadata").prefetch_related("copies")
    return sorted(rows, key=lambda f: _number(f.name))


def readable(f: ArchiveFile) -> Path | None:
    """One place a metadata WARC can be read from: the spool path, else the first stored copy (primary first)
    that exists; a copy in an object store through a local, verified cache (``<index>/cache/<name>``)."""
    places = [f.spool_path] if f.spool_path and not objectstore.is_url(f.spool_path) else []
    places += [c.path for c in sorted(f.copies.all(), key=lambda c: c.is_replica)]
    for place in places:
        path = _cached(place, f) if objectstore.is_url(place) else Path(place)
        if path.is_file():
            return path
    return None


def _crawl_log_files(job: Job) -> list[ArchiveFile]:
    """The metadata WARCs that hold a job's crawl.log, in order: those of the failed job it resubmits (its
    crawl.log segments handed over while it ran; the crawl.log on this job's spool starts with their lines),
    then its own."""
    chain = [job.pk]
    while (previous := Job.objects.filter(pk=chain[-1]).values_list("continues_id", flat=True).first()) is not None:
        chain.append(previous)
    rows = ArchiveFile.objects.filter(job_id__in=chain, kind="metadata").prefetch_related("copies")
    return sorted(rows, key=lambda f: _number(f.name))  # a segment recorded under the job carrying on keeps its place


def _number(name: str) -> tuple[int, int]:
    """(job, N) of a metadata WARC's name (a taken-over job's segments come before this job's own)."""
    try:
        parsed = parse_archive_name(name)
    except ValueError:
        return (1 << 62, 0)
    return parsed.job, parsed.serial


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
    files = _crawl_log_files(job) if name == CRAWL_LOG else list(reversed(metadata_files(job)))
    warcs: list[Path] = []
    for f in files:  # a report is in the last metadata WARC: looked for from there
        path = readable(f)
        if path is None and name == CRAWL_LOG:  # a crawl.log with a hole would not say so
            raise NotAvailable(f"crawl.log of job {job.pk}: its part in {f.name} cannot be read now")
        if path is not None:
            warcs.append(path)
            if name != CRAWL_LOG and _has_record(path, folder, name):
                return Source("metadata WARC", path)
    if name == CRAWL_LOG:
        holding = tuple(w for w in warcs if _has_record(w, folder, name))
        if holding:
            return Source("metadata WARC", holding[0], holding)
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
    if len(source.paths) > 1:
        yield source, _Chained(_record_streams(source.paths, folder, name))  # type: ignore[misc]
        return
    with open(source.path, "rb") as f:
        for record in ArchiveIterator(f):
            if _matches(record, folder, name):
                yield source, record.content_stream()  # type: ignore[misc]
                return
    raise NotAvailable(f"{name} disappeared from {source}")


def _record_streams(warcs: tuple[Path, ...], folder: str, name: str) -> Iterator[io.BufferedIOBase]:
    """The content of the ``name`` record of each WARC in turn, each file open only while it is read."""
    for warc in warcs:
        with open(warc, "rb") as f:
            for record in ArchiveIterator(f):
                if _matches(record, folder, name):
                    yield record.content_stream()
                    break


class _Chained:
    """Several record streams read as one (``read`` and ``readline``, as the readers here use them)."""

    def __init__(self, streams: Iterator[io.BufferedIOBase]) -> None:
        self.streams = streams
        self.current: io.BufferedIOBase | None = next(streams, None)

    def _next(self) -> bool:
        self.current = next(self.streams, None)
        return self.current is not None

    def read(self, size: int = -1) -> bytes:
        while self.current is not None:
            data = self.current.read(size)
            if data:
                return data
            self._next()
        return b""

    def readline(self) -> bytes:
        while self.current is not None:
            line = self.current.readline()
            if line:
                return line
            self._next()
        return b""


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
            return source, last_lines(source.path, lines)
        return source, list(collections.deque(iter_lines(stream), maxlen=lines))
