"""Deduplication decisions: when a fetch becomes a WARC ``revisit`` record, and what it refers to.

Three sources, in Heritrix's order of precedence:

1. **server-not-modified**: a conditional request (If-None-Match / If-Modified-Since taken from the
   dedup index's URL table) answered ``304``: the revisit refers to the earlier capture of the
   same URL and carries its payload digest (Heritrix's FetchHistoryProcessor copies it forward).
   Conditional requests are sent **only** for URLs whose earlier capture is of a type the link
   extractor never reads (:func:`harvester.links.parser_for` answers ""): a 304 has no body, so a
   304 for an HTML page, a stylesheet, a sitemap or robots.txt would hide its links and end the
   crawl at the seeds. Those are fetched in full; an unchanged one still becomes an
   identical-payload-digest revisit (3.), so the bytes stored are saved all the same.
2. **identical-payload-digest within the job**: the payload digest was already stored earlier in
   this job (any URL); the revisit refers to that first capture, record ID included.
3. **identical-payload-digest against the dedup index** (earlier jobs).

The index is the dedup service (:mod:`indexer.dedupservice`, when the JobSpec's ``dedup_index`` is an
``http://`` address) or, on a single machine, the SQLite file itself. The service is asked in batches: a
page's new outlinks in one ``/lookup`` as they are queued (:meth:`Deduplicator.prefetch`), so the
conditional-GET decision costs no round trip. When the service cannot answer, the job goes on deduplicating
within itself (2.), retries the service every :data:`SERVICE_RETRY_S` seconds, and says so in its alerts and
in crawl-report.txt: an outage costs stored duplicates, never a stalled or failed job.

Only complete (not truncated), non-empty payloads are deduplicated: an empty body (every redirect)
or a cut-short one is never "the same" as anything worth pointing at.

A 304 the crawl did not ask for (:func:`hides_links`: a server or cache answering 304 to an
unconditional GET) leaves a document unread: the crawl counts it against the domain, whose stop
reason then cannot be DOWNLOAD_COMPLETE (harvester/budget.py), and crawl.log annotates the line.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from harvester.links import parser_for
from indexer.dedup import Capture, DedupIndex
from indexer.dedupclient import DedupClient, DedupServiceError, is_service_url

logger = logging.getLogger(__name__)

PROFILE_IDENTICAL = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
PROFILE_NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
#: crawl.log annotation of a 304 whose document (and so its links) the crawl never saw.
LINKS_UNSEEN = "linksUnseen:304"
#: After a failed call, the service is left alone this long (then one call tries again).
SERVICE_RETRY_S = 30.0
#: Prefetched URL answers kept for requests not yet issued (the oldest are dropped beyond it).
PREFETCH_MAX = 50_000


def hides_links(status: int, conditional: Capture | None) -> bool:
    """True when an answer leaves a document's links unread: a 304 to a request that was not a
    conditional one of ours (those are only sent for types without links, see the module docstring)."""
    return status == 304 and conditional is None


@dataclass(frozen=True, slots=True)
class Referent:
    """What a revisit record points at."""

    profile: str
    target_uri: str
    date: str  # WARC date (ISO 8601 UTC) of the earlier capture
    payload_digest: str
    record_id: str | None = None  # WARC-Refers-To, when known (same job)
    annotation: str = "duplicate:digest"

    @property
    def short_profile(self) -> str:
        return "server-not-modified" if self.profile == PROFILE_NOT_MODIFIED else "identical-payload-digest"


def cdx_to_warc_date(timestamp: str) -> str:
    """``20261122183012`` → ``2026-11-22T18:30:12Z`` (dedup index timestamps are CDX's 14 digits)."""
    t = (timestamp + "00000000000000")[:14]
    return f"{t[0:4]}-{t[4:6]}-{t[6:8]}T{t[8:10]}:{t[10:12]}:{t[12:14]}Z"


class Deduplicator:
    """Remembers this job's stored digests and consults the (read-only) dedup index."""

    def __init__(self, enabled: bool, index_path: str | Path | None) -> None:
        self.enabled = enabled
        self.seen: dict[str, Referent] = {}
        #: With both set, the job's captures live in the crawl's journal (the frontier's SQLite file)
        #: instead of :attr:`seen`: ``journal(digest, [url, date, record_id])`` records a new one,
        #: ``journal_get(digest)`` finds it. Memory then stays flat however many captures a job
        #: stores, and a resumed job still deduplicates against what it stored before the crash.
        self.journal: Callable[[str, list[str]], None] | None = None
        self.journal_get: Callable[[str], list[str] | None] | None = None
        self.index: DedupIndex | None = None
        #: The dedup service, when ``index_path`` is its address.
        self.remote: DedupClient | None = None
        self.service_url = ""
        #: URL → its latest capture (None: none), fetched ahead by :meth:`prefetch`.
        self.prefetched: dict[str, Capture | None] = {}
        self._down_until = 0.0
        #: Outage bookkeeping for the report: how many outages, lookups skipped, when the first began.
        self.outages = 0
        self.skipped = 0
        self.first_outage = ""
        self.last_error = ""
        if enabled and is_service_url(str(index_path or "")):
            self.service_url = str(index_path)
            try:
                self.remote = DedupClient(self.service_url, read_timeout_s=2.0)
            except DedupServiceError as exc:
                self._failed(exc)
        elif enabled and index_path:
            try:
                self.index = DedupIndex(index_path, readonly=True)
            except Exception as exc:
                logger.warning("dedup index %s unavailable: %s", index_path, exc)

    @property
    def consulted(self) -> bool:
        """Whether earlier jobs' captures are consulted at all (a file or the service)."""
        return self.index is not None or bool(self.service_url)

    # -- the service, and what happens when it is away ----------------------------------------
    def _service_up(self) -> bool:
        if self.remote is None:
            return False
        if self._down_until and time.monotonic() < self._down_until:
            self.skipped += 1
            return False
        return True

    def _failed(self, exc: Exception) -> None:
        if not self._down_until:
            self.outages += 1
            self.first_outage = self.first_outage or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            logger.warning("%s; deduplicating within this job only, retrying every %d s", exc, SERVICE_RETRY_S)
        self.last_error = str(exc)
        self.skipped += 1
        self._down_until = time.monotonic() + SERVICE_RETRY_S

    def _answered(self) -> None:
        if self._down_until:
            logger.warning("dedup service %s answers again", self.service_url)
            self._down_until = 0.0

    def _remote_lookup(
        self, digests: list[str], urls: list[str]
    ) -> tuple[dict[str, Capture], dict[str, Capture]] | None:
        if not self._service_up():
            return None
        assert self.remote is not None
        try:
            answer = self.remote.lookup(digests, urls)
        except DedupServiceError as exc:
            self._failed(exc)
            return None
        self._answered()
        return answer

    @property
    def alert(self) -> str | None:
        """The operator's line while (or after) the service was away, for the job's alerts."""
        if not self.outages:
            return None
        state = "unreachable" if self._down_until else "was unreachable"
        return (
            f"dedup service {self.service_url} {state} ({self.outages} outage(s) since "
            f"{self.first_outage}, {self.skipped} lookups skipped): duplicates of earlier jobs are stored "
            "in full, within-job dedup goes on"
        )

    def report_lines(self) -> list[str]:
        """Lines for crawl-report.txt (none when the service always answered)."""
        alert = self.alert
        return [alert, f"dedup service last error: {self.last_error}"] if alert else []

    def prefetch(self, urls: Iterable[str]) -> None:
        """Ask the service, in one batch, for the latest captures of URLs just queued: their conditional-GET
        decision then costs no round trip when they are issued."""
        if self.remote is None:
            return
        wanted = [u for u in dict.fromkeys(urls) if u not in self.prefetched]
        if not wanted:
            return
        answer = self._remote_lookup([], wanted)
        if answer is None:
            return
        found = answer[1]
        for u in wanted:
            self.prefetched[u] = found.get(u)
        excess = len(self.prefetched) - PREFETCH_MAX
        if excess > 0:
            for u in list(islice(self.prefetched, excess)):
                del self.prefetched[u]

    def _by_url(self, url: str) -> Capture | None:
        if self.index is not None:
            return self.index.by_url(url)
        if url in self.prefetched:
            return self.prefetched.pop(url)
        answer = self._remote_lookup([], [url])
        return answer[1].get(url) if answer else None

    def _by_digest(self, digest: str) -> Capture | None:
        if self.index is not None:
            return self.index.by_digest(digest)
        answer = self._remote_lookup([digest], [])
        return answer[0].get(digest) if answer else None

    def conditional_headers(
        self, url: str, path: str = "", javascript: bool = False
    ) -> tuple[dict[bytes, bytes], Capture | None]:
        """Validators for a conditional GET of ``url`` (discovery ``path``) from its latest indexed
        capture, only when that capture's type is one the link extractor never reads (``javascript``:
        the job extracts links from scripts). No capture, no validators or a link-bearing or unknown
        type: ``({}, None)``, a full GET."""
        if not self.consulted:
            return {}, None
        try:
            capture = self._by_url(url)
        except Exception as exc:
            logger.warning("dedup index lookup failed for %s: %s", url, exc)
            return {}, None
        if capture is None or not (capture.etag or capture.last_modified):
            return {}, None
        if parser_for(url, path, capture.mime, javascript):
            return {}, None  # its links are read from the body: a 304 would hide them
        headers = {}
        if capture.etag:
            headers[b"If-None-Match"] = capture.etag.encode("latin-1", "replace")
        if capture.last_modified:
            headers[b"If-Modified-Since"] = capture.last_modified.encode("latin-1", "replace")
        return headers, capture

    def not_modified(self, capture: Capture) -> Referent:
        return Referent(
            PROFILE_NOT_MODIFIED,
            capture.url,
            cdx_to_warc_date(capture.timestamp),
            capture.digest,
            None,
            "duplicate:server-not-modified",
        )

    def lookup(self, digest: str) -> Referent | None:
        """An earlier capture with this payload digest, or ``None`` (the payload is novel)."""
        if not self.enabled:
            return None
        hit = self.seen.get(digest)
        if hit is not None:
            return hit
        if self.journal_get is not None:
            stored = self.journal_get(digest)
            if stored:
                url, date, record_id = stored
                return Referent(PROFILE_IDENTICAL, url, date, digest, record_id)
        if self.consulted:
            try:
                capture = self._by_digest(digest)
            except Exception as exc:
                logger.warning("dedup index lookup failed for %s: %s", digest, exc)
                return None
            if capture is not None:
                return Referent(PROFILE_IDENTICAL, capture.url, cdx_to_warc_date(capture.timestamp), digest)
        return None

    def remember(self, digest: str, url: str, date: str, record_id: str) -> None:
        """Note a full capture stored in this job (the first one of a digest stays the referent)."""
        if not self.enabled:
            return
        if self.journal is not None and self.journal_get is not None:
            self.journal(digest, [url, date, record_id])  # the journal keeps the first per digest
        elif digest not in self.seen:
            self.seen[digest] = Referent(PROFILE_IDENTICAL, url, date, digest, record_id)

    def close(self) -> None:
        if self.remote is not None:
            self.remote.close()
        if self.index is not None:
            self.index.close()
            self.index = None
