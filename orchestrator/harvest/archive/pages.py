"""A job's pages, for its page list: the HTML documents it fetched, seeds first, each with its title, status,
size and the capture replay opens.

The list comes from the job's crawl.log (orchestrator.harvest.jobs.jobfiles: the spool, then the metadata WARC),
streamed line by line and never held whole: it names every fetch with its MIME type, including the
duplicates the WARC holds as revisits (whose CDX line says only ``warc/revisit``), and marks seeds (discovery
path ``-``). Only one page of rows (and at most :data:`MAX_SEEDS` seeds) is kept while reading.

Titles are read lazily, for the rows shown, from the archived record itself (its offset from the capture
index, orchestrator.harvest.archive.captures; a revisit's from the original capture with the same digest): at most
:data:`TITLE_READ_BYTES` of the payload are inflated, and the result is cached, so a page list costs a few
short reads, whatever the size of the WARCs.
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from django.core.cache import cache
from warcio.archiveiterator import ArchiveIterator

from harvester.crawllog import LINE_RE
from indexer import objectstore
from orchestrator.harvest.archive.captures import Capture, captures_of, index_files
from orchestrator.harvest.jobs import jobfiles
from orchestrator.harvest.models import ArchiveFile, HarvestDefinition, Job

#: MIME types listed as pages.
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
#: Seeds listed first, at most (a broad crawl's seeds are listed among the other pages beyond this).
MAX_SEEDS = 1000
#: Bytes of a page's payload read to find its title.
TITLE_READ_BYTES = 64 * 1024
TITLE_MAX_CHARS = 300
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title\s*>", re.I | re.S)
_CHARSET = re.compile(rb"""charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.I)


@dataclass(frozen=True)
class Page:
    url: str
    status: int
    size: int | None  # payload bytes as crawl.log says, None if nothing was fetched
    fetched: str  # 14-digit UTC time of the fetch
    seed: bool
    duplicate: bool  # stored as a revisit of an earlier capture
    capture: Capture | None = None  # the capture replay opens (None: not in the index yet)
    title: str = ""
    visits: int = 1  # a continuous job's visits to the page (its row is the latest)


@dataclass
class PageList:
    pages: list[Page]
    total: int
    seeds: int
    source: str  # where the crawl.log was read from


def _rows(stream: io.BufferedIOBase) -> Iterator[Page]:
    for line in jobfiles.iter_lines(stream):
        m = LINE_RE.match(line)
        if m is None or m["mime"] not in HTML_TYPES or "willRetry" in m["annotations"].split(","):
            continue
        status = int(m["status"])
        if status <= 0:
            continue
        size = m["size"].strip()
        fetched = m["fetch"][:14] if m["fetch"] != "-" else re.sub(r"\D", "", m["logged"])[:14]
        yield Page(
            url=m["uri"],
            status=status,
            size=int(size) if size.isdigit() else None,
            fetched=fetched,
            seed=m["path"] == "-",
            duplicate="duplicate" in m["annotations"],
        )


def _latest_visits(rows: Iterator[Page]) -> Iterator[Page]:
    """A continuous job's crawl.log names a page at every visit: each page once, where it was first fetched, as
    its latest visit found it, with the number of visits (a newcomer saw the same page dozens of times). Holds
    one row per page: a continuous job's pages, not a broad crawl's."""
    latest: dict[str, Page] = {}
    for page in rows:
        before = latest.get(page.url)
        if before is not None:
            page = replace(page, seed=before.seed or page.seed, visits=before.visits + 1)
        latest[page.url] = page  # a dict keeps the first insertion's place
    yield from latest.values()


def job_pages(job: Job, offset: int = 0, limit: int = 50) -> PageList:
    """Rows ``offset`` to ``offset + limit`` of the job's pages (seeds first, then in crawl order; a continuous
    job's pages once each, :func:`_latest_visits`)."""
    seeds: list[Page] = []
    window: list[tuple[int, Page]] = []  # (index among non-seeds, page): only those that may be shown
    others = 0
    with jobfiles.open_binary(job, jobfiles.CRAWL_LOG) as (source, stream):
        rows = _rows(stream)
        if job.harvest.kind == HarvestDefinition.CONTINUOUS:
            rows = _latest_visits(rows)
        for page in rows:
            if page.seed and len(seeds) < MAX_SEEDS:
                seeds.append(page)
                continue
            # Non-seed i is row len(seeds) + i overall, and len(seeds) <= MAX_SEEDS: keep what may be shown.
            if offset - MAX_SEEDS <= others < offset + limit:
                window.append((others, page))
            others += 1
    shown = seeds[offset : offset + limit]
    first_other = max(0, offset - len(seeds))
    shown += [p for i, p in window if first_other <= i < first_other + limit - len(shown)]
    files = index_files()
    return PageList([with_capture(job, p, files) for p in shown], len(seeds) + others, len(seeds), str(source))


def with_capture(job: Job, page: Page, files: list[Path] | None = None) -> Page:
    """``page`` with the capture of it this job made (nearest its fetch time) and its title."""
    found = captures_of(page.url, files=files)
    mine = [c for c in found if c.job_id == job.pk] or found
    if not mine:
        return page
    capture = min(mine, key=lambda c: abs(int(c.timestamp) - int(page.fetched)))
    payload = capture
    if capture.revisit:
        payload = next((c for c in reversed(found) if not c.revisit and c.digest == capture.digest), capture)
    return replace(page, capture=capture, title=title_of(payload))


def title_of(capture: Capture) -> str:
    """The <title> of an archived HTML capture ("" if none, or the record cannot be read); cached."""
    key = f"nh-title:{capture.filename}:{capture.offset}"
    cached = cache.get(key)
    if cached is not None:
        return cached
    path = _stored_path(capture.filename)
    title = ""
    if path is not None and not capture.revisit:
        try:
            title = _read_title(path, capture.offset)
        except (OSError, ValueError, EOFError):
            return ""  # unreadable now (a copy being moved): try again next time, nothing cached
    cache.set(key, title, 24 * 3600)
    return title


def _stored_path(filename: str) -> Path | str | None:
    """A verified stored copy (a file, or an object's ``s3://`` URL), else the spool copy, else None."""
    f = ArchiveFile.objects.filter(name=filename).first()
    if f is None:
        return None
    for copy in f.copies.filter(verified_ok=True).order_by("is_replica"):
        if objectstore.is_url(copy.path):
            return copy.path
        if Path(copy.path).is_file():
            return Path(copy.path)
    return Path(f.spool_path) if f.spool_path and Path(f.spool_path).is_file() else None


def _open_at(path: Path | str, offset: int) -> Any:
    if isinstance(path, str) and objectstore.is_url(path):
        return objectstore.open_at(path, offset)  # a ranged GET: the record, not the whole WARC
    f = open(path, "rb")
    f.seek(offset)
    return f


def _read_title(path: Path | str, offset: int) -> str:
    with closing(_open_at(path, offset)) as f:
        record = next(iter(ArchiveIterator(f)), None)
        if record is None or record.rec_type != "response":
            return ""
        head = record.content_stream().read(TITLE_READ_BYTES)
        content_type = (record.http_headers.get_header("content-type") or "") if record.http_headers else ""
    m = _TITLE.search(head)
    if not m:
        return ""
    charset = _CHARSET.search(content_type.encode("latin-1", "replace")) or _CHARSET.search(head[: m.start()])
    encoding = charset.group(1).decode("ascii") if charset else "utf-8"
    try:
        text = m.group(1).decode(encoding, "replace")
    except LookupError:  # an unknown charset name
        text = m.group(1).decode("utf-8", "replace")
    return " ".join(html.unescape(text).split())[:TITLE_MAX_CHARS]
