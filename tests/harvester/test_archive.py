"""ArchiveMiddleware without a network: failure codes, retry-aware logging, rejections, stats."""

from __future__ import annotations

import hashlib
import io
from datetime import UTC, datetime

import pytest
from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler
from twisted.internet import error as txerror

from harvester.archive import ArchiveMiddleware
from harvester.contracts import JobSpec
from harvester.crawllog import LINE_RE
from harvester.failures import exception_code as _exception_code
from harvester.fetch import RawCapture
from harvester.revisit import cdx_to_warc_date
from harvester.urimeta import UriMeta


@pytest.fixture
def mw(tmp_path):
    crawler = get_crawler(
        settings_dict={
            "NH_JOBSPEC": JobSpec.from_dict(
                {
                    "version": 1,
                    "job_id": 1,
                    "harvest_id": 2,
                    "harvest_name": "h",
                    "harvest_run": 1,
                    "kind": "selective",
                    "channel": "focused",
                    "template": "default",
                    "settings": {},
                    "domains": [{"name": "a.dk", "configuration": "default", "seeds": ["http://a.dk/"]}],
                }
            ),
            "NH_OUT_DIR": str(tmp_path),
            "NH_DEDUP": True,
            "RETRY_TIMES": 2,
        }
    )
    middleware = ArchiveMiddleware.from_crawler(crawler)
    assert ArchiveMiddleware.of(crawler) is middleware
    yield middleware
    middleware.finish()


def log_lines(mw):
    mw.crawllog._file.flush()
    return [LINE_RE.match(line) for line in mw.crawllog.path.read_text().splitlines()]


def nh(domain="a.dk", path="L", via="http://a.dk/", seed=False):
    return {"nh": UriMeta(path=path, via=via, hops=1, domain=domain, seed=seed)}


def test_exception_codes():
    from scrapy.exceptions import CannotResolveHostError, DownloadTimeoutError

    assert _exception_code(CannotResolveHostError("x")) == -1
    assert _exception_code(txerror.DNSLookupError("x")) == -1
    assert _exception_code(txerror.ConnectionRefusedError()) == -2
    assert _exception_code(DownloadTimeoutError("x")) == -4
    assert _exception_code(txerror.ConnectionLost()) == -3
    assert _exception_code(ValueError("x")) == -5
    # Classified by type: Scrapy's own handler's mid-response failures, a subclass of a known failure.
    from twisted.web.client import ResponseFailed

    assert _exception_code(ResponseFailed([])) == -3
    assert _exception_code(type("Refused", (txerror.ConnectionRefusedError,), {})()) == -2


def test_failures_logged_once_when_retries_are_exhausted(mw):
    from scrapy.exceptions import DownloadTimeoutError

    request = Request("http://a.dk/slow", meta=nh())
    assert mw.process_exception(request, DownloadTimeoutError("t")) is None  # Retry will retry
    request.meta["retry_times"] = 2
    mw.process_exception(request, DownloadTimeoutError("t"))
    (line,) = log_lines(mw)
    assert line["status"] == "   -4" and line["annotations"] == "3t" and line["path"] == "L"
    assert line["fetch"] == "-" and line["mime"] == "unknown"
    mw.process_exception(Request("http://a.dk/x"), IgnoreRequest())  # the engine reports these
    assert len(log_lines(mw)) == 1
    assert mw.stats_for("a.dk")["failed"] == 1


def test_handler_failure_code_wins(mw):
    request = Request("http://a.dk/", meta={**nh(seed=True), "nh_failure": -2, "dont_retry": True})
    mw.process_exception(request, RuntimeError("boom"))
    (line,) = log_lines(mw)
    assert line["status"] == "   -2" and line["path"] == "L"


def test_rejections(mw):
    mw.on_uri_rejected(request=Request("http://b.dk/p", meta=nh("b.dk", "LLL")), status=-4001, annotation="")
    mw.on_uri_rejected(request=Request("http://a.dk/", meta=nh(seed=True)), status=-9998, annotation="")
    lines = log_lines(mw)
    assert [m["status"] for m in lines] == ["-4001", "-9998"]
    assert mw.stats_for("b.dk")["disregarded"] == 1
    assert mw.stats_for_host("a.dk")["robots"] == 1
    assert mw.stats.seeds["http://a.dk/"].status == -9998


def capture_for(
    url: str, status: int = 200, body: bytes = b"<html>hi</html>", headers: bytes = b"Content-Type: text/html\r\n"
) -> RawCapture:
    head = f"HTTP/1.1 {status} X\r\n".encode() + headers + f"Content-Length: {len(body)}\r\n\r\n".encode()
    cap = RawCapture(
        url=url,
        request_bytes=b"GET / HTTP/1.1\r\nHost: a.dk\r\n\r\n",
        started=datetime.now(UTC),
        response_head=head,
        status=status,
        reason="X",
        headers=[(b"Content-Type", b"text/html")],
        body=io.BytesIO(body),
        body_length=len(body),
        payload_sha1=hashlib.sha1(body).digest(),
        block_sha1=hashlib.sha1(head + body).digest(),
        peer_ip="10.0.0.1",
        duration_ms=12,
        thread=3,
    )
    return cap


def test_responses_are_archived_and_every_archived_attempt_logged(mw):
    request = Request(
        "http://a.dk/",
        meta={
            **nh(seed=True, path=""),
        },
    )
    request.meta["nh_capture"] = capture_for(request.url)
    response = HtmlResponse(request.url, body=b"<html>hi</html>", request=request)
    assert mw.process_response(request, response) is response
    again = Request("http://a.dk/copy", meta=nh())
    again.meta["nh_capture"] = capture_for(again.url)
    mw.process_response(again, HtmlResponse(again.url, body=b"<html>hi</html>", request=again))
    failing = Request("http://a.dk/err", meta=nh())
    failing.meta["nh_capture"] = capture_for(failing.url, status=503, body=b"busy")
    mw.process_response(failing, HtmlResponse(failing.url, status=503, request=failing))
    lines = log_lines(mw)
    assert [m["uri"] for m in lines] == ["http://a.dk/", "http://a.dk/copy", "http://a.dk/err"]
    assert lines[0]["thread"] == "003" and lines[0]["path"] == "-"
    assert lines[1]["annotations"] == "duplicate:digest,content-size:78"
    assert lines[2]["annotations"].endswith(",willRetry")  # archived, and the frontier will retry it
    stats = mw.stats_for("a.dk")
    assert stats["objects"] == 3 and stats["revisits"] == 1 and stats["bytes_saved"] == 78
    assert stats["status_codes"] == {"200": 2, "503": 1}  # the reports count what crawl.log says
    files = mw.finish()
    assert mw.finish() is files
    assert [f.kind for f in files] == ["warc", "metadata"]


def test_cdx_dates():
    assert cdx_to_warc_date("20250102030405") == "2025-01-02T03:04:05Z"


def test_in_job_digests_live_in_the_journal_and_survive_a_restart(tmp_path):
    from harvester.frontier import Frontier, Politeness
    from harvester.revisit import Deduplicator
    from harvester.scope import host_key

    def dedup_on(frontier: Frontier) -> Deduplicator:
        d = Deduplicator(True, None)
        d.journal = lambda digest, capture: frontier.journal_add("digest", digest, capture)
        d.journal_get = lambda digest: frontier.journal_get("digest", digest)
        return d

    db = tmp_path / "frontier.sqlite"
    first_frontier = Frontier(db, Politeness(), host_key)
    first = dedup_on(first_frontier)
    first.remember("sha1:X", "http://a.dk/1", "2026-01-01T00:00:00Z", "<urn:uuid:1>")
    first.remember("sha1:X", "http://a.dk/2", "2026-01-01T00:00:05Z", "<urn:uuid:2>")  # not the referent
    assert first.lookup("sha1:X").record_id == "<urn:uuid:1>"  # found before the checkpoint too
    assert not first.seen  # nothing kept in memory
    first_frontier.checkpoint()
    del first_frontier  # as after kill -9

    resumed = dedup_on(Frontier(db, Politeness(), host_key))
    hit = resumed.lookup("sha1:X")
    assert hit is not None and hit.target_uri == "http://a.dk/1" and hit.record_id == "<urn:uuid:1>"
    assert resumed.lookup("sha1:Y") is None
