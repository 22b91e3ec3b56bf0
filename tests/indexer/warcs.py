"""Test WARCs: small ones built with warcio (edge cases) and real ones from a crawl of the bundled
test site by the harvester's own child process (what the indexer chain will really see)."""

from __future__ import annotations

import base64
import hashlib
import io
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from tests.harvester.crawlhelp import make_spec, run_crawl

REVISIT_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"


def http(status: str, headers: list[tuple[str, str]]) -> StatusAndHeaders:
    return StatusAndHeaders(status, headers, protocol="HTTP/1.1")


def build_warc(path: Path, gzip: bool = True) -> Path:
    """A WARC with every record kind an index meets: warcinfo, responses (HTML, a redirect, no
    Content-Type, a URL with a space), request, revisit, resource, metadata (text and warc-fields)."""
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=gzip)
        w.write_record(w.create_warcinfo_record(path.name, {"software": "tests"}))
        for i in range(3):
            body = b"<html>page %d</html>" % i
            rec = w.create_warc_record(
                f"http://example.com/p{i}?b=2&a=1",
                "response",
                payload=io.BytesIO(body),
                http_headers=http("200 OK", [("Content-Type", "text/html; charset=utf-8"), ("ETag", f'"e{i}"')]),
            )
            w.write_record(rec)
            w.write_record(
                w.create_warc_record(
                    f"http://example.com/p{i}?b=2&a=1",
                    "request",
                    payload=io.BytesIO(b""),
                    http_headers=StatusAndHeaders("GET /p HTTP/1.1", [("Host", "x")], is_http_request=True),
                )
            )
        w.write_record(
            w.create_warc_record(
                "http://example.com/old",
                "response",
                payload=io.BytesIO(b""),
                http_headers=http("301 Moved", [("Location", "/p1?b=2&a=1")]),
            )
        )
        w.write_record(
            w.create_warc_record(
                "http://Example.com:80/no type",
                "response",
                payload=io.BytesIO(b"x" * 5000),
                http_headers=http("200 OK", []),
            )
        )
        rv = w.create_revisit_record(
            "http://example.com/again",
            digest="sha1:" + "A" * 32,
            refers_to_uri="http://example.com/p0",
            refers_to_date="2020-01-01T00:00:00Z",
            http_headers=http("200 OK", [("Content-Type", "text/html")]),
        )
        w.write_record(rv)
        w.write_record(
            w.create_warc_record(
                "http://example.com/res", "resource", payload=io.BytesIO(b"resource"), warc_content_type="text/plain"
            )
        )
        w.write_record(
            w.create_warc_record(
                "metadata://example/crawl.log", "metadata", payload=io.BytesIO(b"log"), warc_content_type="text/plain"
            )
        )
        w.write_record(
            w.create_warc_record(
                "metadata://example/fields",
                "metadata",
                payload=io.BytesIO(b"a: b\r\n"),
                warc_content_type="application/warc-fields",
            )
        )
    return path


def one_response(path: Path, date: str, etag: str, body: bytes = b"same body") -> Path:
    """A WARC of one 200 response for http://example.com/x, dated ``date``, with this ETag and body."""
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True)
        head = http("200 OK", [("ETag", etag), ("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")])
        rec = w.create_warc_record("http://example.com/x", "response", payload=io.BytesIO(body), http_headers=head)
        rec.rec_headers.replace_header("WARC-Date", date)
        w.write_record(rec)
    return path


def cdxj_indexer_cdx11(*paths: Path) -> list[bytes]:
    """cdxj-indexer's CDX 11 lines for the files (header dropped), in its order."""
    out = subprocess.run(
        [sys.executable, "-m", "cdxj_indexer.main", "-11", *map(str, paths)], check=True, capture_output=True
    ).stdout
    return [line for line in out.splitlines(keepends=True) if not line.startswith(b" CDX")]


@contextmanager
def crawl_two_jobs(root: Path) -> Iterator[tuple[list[Path], list[Path], Path, list[str]]]:
    """Crawl the bundled test site (two sister hosts) twice with the real harvester child process:
    job 1, then its WARCs fed into a dedup index, then job 2 consulting that index (so its
    duplicates become revisits of job 1's captures). Yields both jobs' WARC paths, the index and
    the site URLs; the site keeps serving until the block ends."""
    from harvester.testsite import serve_in_thread
    from indexer.dedup import DedupIndex
    from indexer.dedupfeed import add_warc

    a = serve_in_thread(0)
    b = serve_in_thread(0, peer_port=a.port)
    a.peer_port = b.port
    index = root / "dedup.sqlite"
    try:
        jobs = []
        for job_id in (1, 2):
            spec = make_spec([a.url], job_id=job_id, settings={"max_hops": 3})
            if job_id == 2:
                spec["dedup_index"] = str(index)
            job_dir = root / f"job{job_id}"
            run_crawl(job_dir, spec)
            warcs = sorted((job_dir / "warcs").glob("*.warc.gz"), key=lambda p: ("metadata" in p.name, p.name))
            jobs.append(warcs)
            if job_id == 1:
                with DedupIndex(index) as idx:
                    for w in warcs:
                        add_warc(idx, w, w.name)
        yield jobs[0], jobs[1], index, [a.url, b.url]
    finally:
        a.shutdown()
        b.shutdown()


def assert_reads_back(warc: Path, cdx_lines: list[bytes]) -> None:
    """warcio, given only a CDX line's offset and length, finds exactly one record there: the one
    the line names (URL, date, revisit or not) with the line's digest, recomputed from the payload
    (response: after the HTTP head; metadata/resource without a payload digest header: the block)."""
    data = warc.read_bytes()
    for line in cdx_lines:
        f = line.rstrip(b"\n").split(b" ")
        length, offset = int(f[8]), int(f[9])
        records = ArchiveIterator(io.BytesIO(data[offset : offset + length]))
        rec = next(records)
        assert rec.rec_headers.get_header("WARC-Target-URI") == f[2].decode()
        date = rec.rec_headers.get_header("WARC-Date")
        assert "".join(c for c in date if c.isdigit())[:14] == f[1].decode()
        assert (rec.rec_type == "revisit") == (f[3] == b"warc/revisit")
        header = rec.rec_headers.get_header("WARC-Payload-Digest")
        if rec.rec_type == "revisit":
            assert header == "sha1:" + f[5].decode()
        else:
            payload = rec.raw_stream.read()
            assert base64.b32encode(hashlib.sha1(payload).digest()).decode() == f[5].decode()
            if header:
                assert header == "sha1:" + f[5].decode()
        assert next(records, None) is None, f"more than one record at {warc.name}:{offset}"


def corrupt_deflate(path: Path, member: int = 1) -> int:
    """Scramble the compressed data of the ``member``-th gzip member of ``path`` in place (its gzip
    header and trailer stay intact, so only the deflate stream is bad); return the member's offset."""
    from indexer.warcscan import iter_records

    record = list(iter_records(path))[member]
    data = bytearray(path.read_bytes())
    for i in range(record.offset + 12, record.offset + record.length - 8):
        data[i] ^= 0x55
    path.write_bytes(bytes(data))
    return record.offset
