"""Feed the dedup index from a WARC, as each job is indexed (incremental, no per-job rebuild).

Which captures become referents: ``response`` records of http(s) URLs with a 2xx status, a
non-empty and complete payload (no ``WARC-Truncated``), exactly the payloads the harvester itself
deduplicates (harvester/revisit/__init__.py). A 404 page or an empty redirect body must never become what a
later 200 "revisits". Revisit records are not fed: a revisit refers to an original capture, and a
later revisit must refer to that original too, never to another revisit.

Per capture: payload digest → URL, 14-digit timestamp, file name, offset, MIME; and URL → the
latest capture's digest and its validators (ETag, Last-Modified), which the harvester turns into
``If-None-Match`` / ``If-Modified-Since``. :meth:`DedupIndex.add` keeps the earliest capture per
digest and the latest per URL in one transaction per WARC, so feeding a file twice (a re-run after
a crash) changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from indexer.cdx import record_mime, timestamp14
from indexer.dedup import Capture, DedupIndex
from indexer.warcscan import WarcRecordHead, iter_records

#: sha1 of the empty payload: nothing to deduplicate.
EMPTY_SHA1 = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"


def capture_of(rec: WarcRecordHead, filename: str) -> Capture | None:
    """The dedup referent one record gives, or None (see the module docstring for which records qualify).
    One place for the choice, used by the dedup-only feed and by the chain's one-pass index step."""
    if rec.rec_type != "response" or rec.http_headers is None:
        return None
    url = rec.target_uri
    if not url.startswith(("http:", "https:")):
        return None
    status = rec.http_status or ""
    digest = rec.payload_digest
    if not status.startswith("2") or not digest or digest == EMPTY_SHA1 or "warc-truncated" in rec.headers:
        return None
    return Capture(
        digest=digest,
        url=url,
        timestamp=timestamp14(rec.headers.get("warc-date", "")),
        filename=filename,
        offset=rec.offset,
        mime=record_mime(rec) or "",
        etag=rec.http_headers.get("etag", ""),
        last_modified=rec.http_headers.get("last-modified", ""),
    )


def iter_captures(warc_path: str | Path, filename: str) -> Iterator[Capture]:
    """The dedup referents of one WARC, in file order."""
    for rec in iter_records(warc_path):
        capture = capture_of(rec, filename)
        if capture is not None:
            yield capture


def add_warc(index: DedupIndex, warc_path: str | Path, filename: str) -> int:
    """Add a WARC's captures to ``index`` (one transaction); returns how many captures were fed."""
    return index.add(iter_captures(warc_path, filename))
