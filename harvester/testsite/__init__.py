"""A small bundled website to crawl: ``python -m harvester.testsite --port 8001 [--peer-port 8002]``.

Static pages under ``site/`` (links, images with ``srcset``, CSS with ``url()`` and ``@import``,
an iframe, a robots.txt disallowing ``/private/`` with a ``Sitemap:`` line, a sitemap listing an
orphan page) plus dynamic routes a static directory cannot give:

* ``/old-page`` → ``301`` to ``/about.html`` (a redirect, path letter ``R``);
* ``/missing.html`` → ``404``;
* ``/calendar?month=YYYY-MM`` → a calendar page linking the previous and next month, forever
  (a crawler trap, bounded by hops, budgets or a trap regex);
* ``/busy`` → ``503`` with ``Retry-After: 1`` the first time, then ``200`` (retries);
* ``/fidelity/`` (reached through robots.txt's second ``Sitemap:``) → a sitemap index listing
  ``pages.xml.gz`` (``FILE.gz`` is any ``FILE`` gzipped, served as ``application/x-gzip``), whose
  pages are linked from nowhere else: one with a ``<title>`` never closed above its links, and a
  stylesheet with a ``url()`` in a comment (which must not be fetched);
* ``/hostile/`` (linked from nowhere else) → what must never kill a job: a redirect loop, a
  latin-1 page and one with invalid UTF-8 (each linking on), a gzip bomb (64 MiB of zeros in
  64 KiB), ever-deeper paths, and a page linking itself under a new session id every time.

* ``/live/`` (a seed of the continuous demo only, linked from nowhere else) → pages that change while a
  continuous harvest watches them, on the wall clock: ``bulletin.html`` every 2 minutes (a publisher's
  clock), ``ticker.html`` at irregular minutes (about one change in three minutes), ``clock.html`` whose only
  change is a clock the demo's strip regex removes, ``about.html`` never; each with an ETag and a
  Last-Modified (the clock page with none, as a dynamic page) and answering conditional requests with 304.

``{{PORT}}`` and ``{{PEER}}`` in the files become the server's port and its sister site's port,
so several servers on 127.0.0.1 stand for several hosts that link to each other. The server is
the stdlib's threading HTTP server: enough for tests and the README demo (the benchmark uses its
own faster server).
"""

from __future__ import annotations

import gzip
import itertools
import re
import sys
import threading
import time
import zlib
from datetime import UTC
from email.utils import formatdate, parsedate_to_datetime
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

SITE_DIR = Path(__file__).with_name("site")
_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_SESSIONS = itertools.count(1)
_BOMB: list[bytes] = []

HOSTILE_INDEX = b"""<!DOCTYPE html><html><head><title>Hostile</title></head><body>
<a href="/hostile/loop-a">loop</a> <a href="/hostile/latin1.html">latin-1</a>
<a href="/hostile/bad-utf8.html">bad utf-8</a> <a href="/hostile/bomb.html">bomb</a>
<a href="/hostile/deep/">deep</a> <a href="/hostile/session?page=1&amp;jsessionid=0">session</a>
</body></html>"""


#: The live pages' clocks (seconds): the bulletin's period, the ticker's slots (a change starts a slot one time
#: in three, by a hash of the slot: irregular, and the same for every process serving the site).
BULLETIN_S = 120
TICKER_SLOT_S = 60
LIVE_INDEX = b"""<!DOCTYPE html><html><head><title>Live pages</title></head><body><h1>Live pages</h1>
<p>Pages that change while a continuous harvest revisits them.</p><ul>
<li><a href="bulletin.html">Bulletin</a>: a new edition every 2 minutes</li>
<li><a href="ticker.html">Ticker</a>: changes at irregular minutes</li>
<li><a href="clock.html">Clock</a>: only its clock changes (the demo's strip regex removes it)</li>
<li><a href="about.html">About</a>: never changes</li></ul></body></html>"""
_STILL = 1_793_000_000  # the unchanging pages' Last-Modified (2026-10-26)


def _ticker_changed(slot: int) -> bool:
    return zlib.crc32(f"ticker {slot}".encode()) % 3 == 0


def live_page(path: str, now: float) -> tuple[bytes, float | None, str | None] | None:
    """(body, Last-Modified, ETag) of a live page at ``now``, or None for no such page."""
    if path == "/live/bulletin.html":
        edition = int(now // BULLETIN_S)
        body = f"<html><head><title>Bulletin {edition}</title></head><body><h1>Edition {edition}</h1></body></html>"
        return body.encode(), edition * BULLETIN_S, f'"bulletin-{edition}"'
    if path == "/live/ticker.html":
        slot = int(now // TICKER_SLOT_S)
        last = next((k for k in range(slot, slot - 240, -1) if _ticker_changed(k)), slot - 240)
        body = f"<html><head><title>Ticker</title></head><body><p>Story {last}</p></body></html>"
        return body.encode(), last * TICKER_SLOT_S, f'"ticker-{last}"'
    if path == "/live/clock.html":
        clock = time.strftime("%H:%M:%S", time.gmtime(now))
        body = f'<html><head><title>Clock</title></head><body><p>It is <span class="clock">{clock}</span></p>'
        return (body + "</body></html>").encode(), None, None
    if path == "/live/about.html":
        body = b"<html><head><title>About the live pages</title></head><body><p>Unchanged.</p></body></html>"
        return body, _STILL, '"about-1"'
    if path in ("/live/", "/live/index.html"):
        return LIVE_INDEX, _STILL, '"live-1"'
    return None


def _bomb() -> bytes:
    """64 MiB of zeros, gzipped once per process (about 64 KiB)."""
    if not _BOMB:
        _BOMB.append(gzip.compress(b"\0" * (64 * 1024 * 1024), compresslevel=9, mtime=0))
    return _BOMB[0]


def _not_modified(match: str | None, since: str | None, etag: str | None, modified: float | None) -> bool:
    """RFC 9110 §13.1: If-None-Match (``*``, a list, weak tags compared weakly) decides when present; else
    If-Modified-Since against Last-Modified."""
    if match is not None:
        tags = {t.strip().removeprefix("W/") for t in match.split(",")}
        return etag is not None and ("*" in tags or etag.removeprefix("W/") in tags)
    if since is None or modified is None:
        return False
    try:
        when = parsedate_to_datetime(since)
    except (TypeError, ValueError):
        return False
    if when.tzinfo is None:  # "-0000": UTC with no zone said
        when = when.replace(tzinfo=UTC)
    return modified <= when.timestamp()


def _shift(month: str, delta: int) -> str:
    m = _MONTH.match(month)
    year, mon = (int(m.group(1)), int(m.group(2))) if m else (2026, 1)
    index = year * 12 + (mon - 1) + delta
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


class Handler(SimpleHTTPRequestHandler):
    server_version = "netharvest-testsite/1"
    protocol_version = "HTTP/1.1"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, directory=str(SITE_DIR), **kwargs)

    def log_message(self, format: str, *args: Any) -> None:
        if getattr(self.server, "verbose", False):
            super().log_message(format, *args)

    def _send(
        self, status: int, body: bytes, ctype: str = "text/html; charset=utf-8", headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _substitute(self, data: bytes) -> bytes:
        port = str(self.server.server_address[1])
        peer = str(getattr(self.server, "peer_port", None) or port)
        return data.replace(b"{{PORT}}", port.encode()).replace(b"{{PEER}}", peer.encode())

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        path = parts.path
        if path == "/old-page":
            return self._send(301, b"<a href='/about.html'>moved</a>", headers={"Location": "/about.html"})
        if path == "/calendar":
            month = parse_qs(parts.query).get("month", ["2026-01"])[0]
            body = (
                f"<!DOCTYPE html><html><head><title>Calendar {month}</title></head><body>"
                f"<h1>{month}</h1><a href='/calendar?month={_shift(month, -1)}'>previous</a> "
                f"<a href='/calendar?month={_shift(month, 1)}'>next</a></body></html>"
            ).encode()
            return self._send(200, body)
        if path == "/busy":
            with self.server.lock:  # type: ignore[attr-defined]
                first = not self.server.busy_served  # type: ignore[attr-defined]
                self.server.busy_served = True  # type: ignore[attr-defined]
            if first:
                return self._send(503, b"busy", headers={"Retry-After": "1"})
            return self._send(200, b"<html><body>not busy now</body></html>")
        if path.startswith("/hostile/"):
            return self._hostile(path)
        if path.startswith("/live/"):
            return self._live(path)
        target = (SITE_DIR / path.lstrip("/")).resolve()
        if target.is_dir():
            target = target / "index.html"
        gzipped = path.endswith(".gz") and not target.is_file()
        if gzipped:
            target = target.with_suffix("")
        if SITE_DIR.resolve() not in target.parents or not target.is_file():
            return self._send(404, b"<html><body>Not found</body></html>")
        data = target.read_bytes()
        if target.suffix in (".html", ".xml", ".css", ".txt", ".js"):
            data = self._substitute(data)
        if gzipped:  # FILE.gz: FILE gzipped, as a file (no Content-Encoding), the way sitemap.xml.gz is served
            return self._send(200, gzip.compress(data, mtime=0), "application/x-gzip")
        return self._send(200, data, self.guess_type(str(target)))

    def _live(self, path: str) -> None:
        page = live_page(path, time.time())
        if page is None:
            return self._send(404, b"<html><body>Not found</body></html>")
        body, modified, etag = page
        headers = {"Cache-Control": "no-cache"}
        if etag:
            headers["ETag"] = etag
        if modified is not None:
            headers["Last-Modified"] = formatdate(modified, usegmt=True)
        if _not_modified(self.headers.get("If-None-Match"), self.headers.get("If-Modified-Since"), etag, modified):
            self.send_response(304)  # no body and no Content-Length (RFC 9110 §15.4.5)
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            return None
        return self._send(200, body, headers=headers)

    def _hostile(self, path: str) -> None:
        if path == "/hostile/":
            return self._send(200, HOSTILE_INDEX)
        if path in ("/hostile/loop-a", "/hostile/loop-b"):
            other = "/hostile/loop-b" if path.endswith("a") else "/hostile/loop-a"
            return self._send(302, b"", headers={"Location": other})
        if path == "/hostile/latin1.html":
            body = (
                "<html><body><p>Caf\u00e9 \u00e0 la cr\u00e8me</p>"
                "<a href='/hostile/after-latin1.html'>on</a></body></html>"
            ).encode("latin-1")
            return self._send(200, body, "text/html; charset=iso-8859-1")
        if path == "/hostile/bad-utf8.html":
            body = b"<html><body><p>\xff\xfe\xc3(</p><a href='/hostile/after-bad-utf8.html'>on</a></body></html>"
            return self._send(200, body)
        if path == "/hostile/bomb.html":
            return self._send(200, _bomb(), headers={"Content-Encoding": "gzip"})
        if path.startswith("/hostile/deep/"):
            return self._send(200, b"<html><body><a href='x/'>deeper</a></body></html>")
        if path == "/hostile/session":
            sid = next(_SESSIONS)
            return self._send(
                200,
                f"<html><body><a href='/hostile/session?page=1&amp;jsessionid={sid}'>again</a></body></html>".encode(),
            )
        if path.startswith("/hostile/after-"):
            return self._send(200, b"<html><body>reached</body></html>")
        return self._send(404, b"<html><body>Not found</body></html>")

    do_HEAD = do_GET


class TestSiteServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int = 0, peer_port: int | None = None, verbose: bool = False) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.peer_port = peer_port
        self.verbose = verbose
        self.lock = threading.Lock()
        self.busy_served = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that goes away is no error: a continuous crawl stops a download once the headers say the page
        did not change (the mid-fetch filter), and the stdlib printed a traceback for each, in `netharvest up`'s
        output, where a newcomer reads a crash."""
        if isinstance(sys.exc_info()[1], ConnectionResetError | BrokenPipeError | ConnectionAbortedError):
            return
        super().handle_error(request, client_address)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"


def serve_in_thread(port: int = 0, peer_port: int | None = None) -> TestSiteServer:
    """Start a server on 127.0.0.1 in a daemon thread (tests); ``.shutdown()`` stops it."""
    server = TestSiteServer(port, peer_port)
    threading.Thread(target=server.serve_forever, daemon=True, name=f"testsite-{server.port}").start()
    return server
