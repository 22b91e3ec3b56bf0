"""Every archived fetch attempt has its crawl.log line (issue 14): a URI answered 503 twice, then
200, leaves three response records and three crawl.log lines (the first two annotated
``willRetry``); the reports count the lines, the budget counts the object once."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from crawlhelp import crawl_log, make_spec, run_crawl
from warcio.archiveiterator import ArchiveIterator


class _Flaky(BaseHTTPRequestHandler):
    """``/flaky`` answers 503 (no Retry-After) twice, then 200; robots.txt is missing."""

    protocol_version = "HTTP/1.0"
    served: Counter[str] = Counter()

    def do_GET(self) -> None:
        self.served[self.path] += 1
        if self.path == "/flaky":
            status, body = (503, b"busy") if self.served[self.path] <= 2 else (200, b"<html>fine</html>")
        else:
            status, body = 404, b"none"
        self.send_response(status)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def flaky() -> Iterator[ThreadingHTTPServer]:
    _Flaky.served = Counter()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def test_each_archived_attempt_has_its_crawl_log_line(tmp_path: Path, flaky: ThreadingHTTPServer) -> None:
    url = f"http://127.0.0.1:{flaky.server_address[1]}/flaky"
    job = tmp_path / "job"
    result = run_crawl(job, make_spec([url], job_id=1401, max_objects=10,
                                      settings={"retry_delay_s": 0, "max_retries": 2}))
    assert result["status"] == "DONE"

    records = []
    for warc in (job / "warcs").glob("1401-7-*.warc.gz"):
        with open(warc, "rb") as fh:
            records += [r.http_headers.get_statuscode() for r in ArchiveIterator(fh)
                        if r.rec_type == "response" and r.rec_headers.get_header("WARC-Target-URI") == url]
    assert sorted(records) == ["200", "503", "503"]

    lines = [f for f in crawl_log(job) if f[3] == url]
    assert [f[1] for f in lines] == ["503", "503", "200"]
    notes = [f[11].split(",") for f in lines]
    assert "willRetry" in notes[0] and "willRetry" in notes[1]
    assert "willRetry" not in notes[2]
    assert "2t" in notes[1] and "3t" in notes[2]  # Heritrix's attempts annotation

    # The reports count what crawl.log says: every line, by status.
    codes = Counter(f[1] for f in crawl_log(job))
    report = (job / "reports" / "responsecode-report.txt").read_text().splitlines()[1:]
    assert {int(code): int(n) for n, code in (line.split() for line in report)} == \
        {int(c): n for c, n in codes.items() if int(c) > 0}
    host = f"127.0.0.1:{flaky.server_address[1]}"
    hosts = {f[2]: int(f[0]) for f in (line.split() for line in
                                        (job / "reports" / "hosts-report.txt").read_text().splitlines()[1:])}
    assert hosts["127.0.0.1"] == sum(1 for f in crawl_log(job) if host in f[3] and int(f[1]) > 0)

    # The budget: one object for the URI (and one for its robots.txt prerequisite), not three.
    domain = result["domains"][0]
    assert domain["objects"] == 2
    assert domain["stop_reason"] == "DOWNLOAD_COMPLETE"
