"""Persistent connections in the raw download handler (issue 14): a host's pages share a connection,
and the WARC records are byte for byte what a fresh connection per page records.

A raw socket server that counts the TCP connections it accepts answers in one of several ways
(Content-Length or chunked framing, ``Connection: close``, HTTP/1.0 with and without keep-alive, a
server that drops a kept-alive connection as the next request arrives, one that closes idle
connections quickly); the crawls are real: the crawl child (``python -m harvester.process``) for the
valence test, and test_fetch.py's Scrapy crawl through RawHTTPDownloadHandler for the others.
"""

from __future__ import annotations

import glob
import socket
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from crawlhelp import LoopbackTCPServer, crawl_log, make_spec, run_crawl
from test_fetch import all_records, by_uri, crawl, records

PAGES = {
    "/": b'<html><body><a href="/p/1">1</a> <a href="/p/2">2</a> <a href="/p/3">3</a> '
    b'<a href="/p/4">4</a></body></html>',
    **{f"/p/{n}": b"<html><body><p>page %d</p>%s</body></html>" % (n, b"x" * 300 * n) for n in range(1, 5)},
}
MODES = ("length", "chunked", "close-header", "http10", "http10-keepalive", "race", "idle-close")


def response_bytes(mode: str, path: str) -> bytes:
    """The exact bytes the server sends for ``path`` (deterministic, so two crawls can be compared)."""
    status, body = (b"200 OK", PAGES[path]) if path in PAGES else (b"404 Not Found", b"not here")
    version = b"HTTP/1.0" if mode.startswith("http10") else b"HTTP/1.1"
    head = [version + b" " + status, b"Content-Type: text/html", b"X-Served-As: " + mode.encode()]
    if mode == "close-header":
        head.append(b"Connection: close")
    elif mode == "http10-keepalive":
        head.append(b"Connection: keep-alive")
    if mode == "chunked":
        head.append(b"Transfer-Encoding: chunked")
        half = len(body) // 2
        framed = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:half], body[half:]))
        return b"\r\n".join(head) + b"\r\n\r\n" + framed + b"0\r\n\r\n"
    head.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join(head) + b"\r\n\r\n" + body


class CountingHandler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        srv: CountingServer = self.server  # type: ignore[assignment]
        sock: socket.socket = self.request
        with srv.lock:
            srv.connections += 1
        sock.settimeout(0.2 if srv.mode == "idle-close" else 10)
        buf = b""
        answered = 0
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    chunk = sock.recv(65536)
                    if not chunk:
                        return
                    buf += chunk
                head, _, buf = buf.partition(b"\r\n\r\n")
                request = head + b"\r\n\r\n"
                path = request.split(b" ", 2)[1].decode()
                with srv.lock:
                    srv.requests.append((path, request))
                if srv.mode == "race" and answered:
                    return  # the server had timed this connection out just as the request came
                sock.sendall(response_bytes(srv.mode, path))
                answered += 1
                if srv.mode in ("close-header", "http10"):
                    return
        except OSError:  # idle-close: the 0.2 s idle timeout, then close without a word
            return
        finally:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class CountingServer(LoopbackTCPServer):
    def __init__(self, mode: str) -> None:
        super().__init__(CountingHandler)
        self.mode = mode
        self.connections = 0
        self.requests: list[tuple[str, bytes]] = []
        self.lock = threading.Lock()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def site(request: Any) -> Iterator[CountingServer]:
    srv = CountingServer(request.param)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


def _sequential(tmp_path: Path, srv: CountingServer, **settings: Any) -> dict[str, Any]:
    """The five pages fetched one after another, no retries (a failed attempt would show)."""
    urls = [{"url": srv.base + p, "meta": {"dont_retry": True}} for p in PAGES]
    tmp_path.mkdir(parents=True, exist_ok=True)
    return crawl(tmp_path, urls, CONCURRENT_REQUESTS=1, RETRY_TIMES=0, NH_DEDUP=False, **settings)


@pytest.mark.parametrize("site", ["length", "chunked"], indirect=True)
def test_five_pages_of_one_host_take_one_connection_at_valence_1(site: CountingServer, tmp_path: Path) -> None:
    job = tmp_path / "job"
    spec = make_spec([site.base + "/"], job_id=1414, settings={"scope": "host", "robots": "ignore", "host_valence": 1})
    assert run_crawl(job, spec)["status"] == "DONE"
    log = {f[3]: f[1] for f in crawl_log(job)}
    assert all(log[site.base + p] == "200" for p in PAGES), log
    assert site.connections == 1, (site.connections, [p for p, _ in site.requests])
    recs = [r for path in glob.glob(str(job / "warcs" / "*.warc.gz")) for r in records(Path(path))]
    sent = dict(site.requests)
    for path in PAGES:
        assert by_uri(recs, site.base + path, "response")["block"] == response_bytes(site.mode, path)
        assert by_uri(recs, site.base + path, "request")["block"] == sent[path]
        assert sent[path].endswith(b"\r\nConnection: keep-alive\r\n\r\n")
    assert all(r["passed"] is not False for r in recs)


@pytest.mark.parametrize("site", ["length", "chunked", "http10-keepalive"], indirect=True)
def test_records_on_a_kept_alive_connection_equal_a_fresh_connection_s(site: CountingServer, tmp_path: Path) -> None:
    kept = all_records(_sequential(tmp_path / "kept", site))
    assert site.connections == 1
    fresh = all_records(_sequential(tmp_path / "fresh", site, NH_KEEPALIVE_IDLE_S=0))
    assert site.connections == 1 + len(PAGES)
    for path in PAGES:
        uri = site.base + path
        assert (
            by_uri(kept, uri, "response")["block"]
            == by_uri(fresh, uri, "response")["block"]
            == response_bytes(site.mode, path)
        )
        assert by_uri(fresh, uri, "request")["block"].endswith(b"\r\nConnection: close\r\n\r\n")
        for recs in (kept, fresh):
            assert by_uri(recs, uri, "response")["passed"] is not False


@pytest.mark.parametrize(
    ("site", "connections", "requests"),
    [
        ("close-header", 5, 5),  # Connection: close is honoured: never a second request on it
        ("http10", 5, 5),  # an HTTP/1.0 answer without keep-alive ends its connection
        ("race", 5, 9),  # four requests lost to the server's close, each sent again once, fresh
    ],
    indirect=["site"],
)
def test_connections_the_server_ends_are_not_reused_and_cost_no_failed_attempt(
    site: CountingServer, connections: int, requests: int, tmp_path: Path
) -> None:
    result = _sequential(tmp_path, site)
    assert "failures" not in result, result.get("failures")
    assert result["statuses"] == {site.base + p: 200 for p in PAGES}
    assert (site.connections, len(site.requests)) == (connections, requests)
    recs = all_records(result)
    for path in PAGES:
        assert by_uri(recs, site.base + path, "response")["block"] == response_bytes(site.mode, path)
    log = (tmp_path / "job" / "logs" / "crawl.log").read_text().splitlines()
    assert len(log) == len(PAGES) and all(line.split()[1] == "200" for line in log), log


@pytest.mark.parametrize("site", ["idle-close"], indirect=True)
def test_a_connection_the_server_closed_while_idle_is_replaced(site: CountingServer, tmp_path: Path) -> None:
    # 0.5 s between fetches, the server drops a connection after 0.2 s idle: each fetch needs a new one.
    result = _sequential(tmp_path, site, DOWNLOAD_DELAY=0.5, RANDOMIZE_DOWNLOAD_DELAY=False)
    assert "failures" not in result, result.get("failures")
    assert result["statuses"] == {site.base + p: 200 for p in PAGES}
    assert site.connections == len(PAGES)
    assert len(site.requests) in range(len(PAGES), 2 * len(PAGES))  # a race may resend, never fail


@pytest.mark.parametrize("site", ["length"], indirect=True)
def test_our_idle_connections_are_closed_after_the_keepalive_time(site: CountingServer, tmp_path: Path) -> None:
    # NH_KEEPALIVE_IDLE_S=0.2 and 0.6 s between fetches: the pool closes each connection before reuse.
    result = _sequential(tmp_path, site, DOWNLOAD_DELAY=0.6, RANDOMIZE_DOWNLOAD_DELAY=False, NH_KEEPALIVE_IDLE_S=0.2)
    assert result["statuses"] == {site.base + p: 200 for p in PAGES}
    assert (site.connections, len(site.requests)) == (len(PAGES), len(PAGES))
