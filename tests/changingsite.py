"""A small web that changes on a schedule, for continuous-crawl tests.

Time on the site is a virtual clock: ``site.now()`` is seconds since the site started, times
``speed`` (a test scales the definition's time constants to seconds and the site's change periods
alike). Every request is logged server-side with its start and end (``site.log``), so politeness and
the fetch budget are checked from the server's point of view, not the crawler's word.

Pages (text/html, each links to every other page of its host):

``/`` the index; ``/fast`` changes every ``fast_period`` virtual seconds; ``/slow`` every
``slow_period``; ``/static`` never (with a fixed ETag and Last-Modified, so the mid-fetch filter can
stop after its headers); ``/clock`` shows the current time in ``<span class="clock">…</span>`` and is
otherwise static (a strip regex removes the clock); ``/liar`` changes every ``fast_period`` but keeps
one ETag (a server whose validators lie); ``/new-N`` exist for seeds added while a crawl runs.

``/robots.txt`` is 404 unless a test sets ``robots`` (its body, served 200); with ``robots_hang_s`` it
answers only after that many seconds (a robots.txt that times out); both may change while a crawl runs.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PAGES = ("/", "/fast", "/slow", "/static", "/clock", "/liar")
STATIC_ETAG = '"static-v1"'
STATIC_LM = "Tue, 01 Jan 2030 00:00:00 GMT"
CLOCK_STRIP = r'<span class="clock">[^<]*</span>'
#: Heritrix's revisit policy with its time constants in seconds, for a crawl of this site in accelerated time.
REVISIT_SECONDS = {
    "policy": "heritrix",
    "initial_wait_s": {"text": 2, "image": 2, "audio_video": 2, "other": 2},
    "min_wait_s": 1,
    "max_wait_s": 20,
    "default_wait_s": 2,
    "strip": [CLOCK_STRIP],
}


@dataclass
class Hit:
    path: str
    start: float
    end: float = 0.0
    status: int = 0


@dataclass
class ChangingSite:
    fast_period: float = 3.0
    slow_period: float = 30.0
    speed: float = 1.0
    t0: float = field(default_factory=time.time)
    log: list[Hit] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: Any = None
    robots: str | None = None
    robots_hang_s: float = 0.0

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def now(self) -> float:
        return (time.time() - self.t0) * self.speed

    def version(self, path: str) -> int:
        period = {"/fast": self.fast_period, "/liar": self.fast_period, "/slow": self.slow_period}.get(path)
        return int(self.now() // period) if period else 0

    def body(self, path: str) -> bytes:
        links = "".join(f'<a href="{p}">{p}</a> ' for p in PAGES if p != path)
        extra = ""
        if path == "/clock":
            extra = f'<span class="clock">{self.now():.3f}</span>'
        elif path in ("/fast", "/slow", "/liar"):
            extra = f"<p>version {self.version(path)}</p>"
        return f"<html><body><h1>{self.port}{path}</h1>{extra}<p>{links}</p></body></html>".encode()

    def hits(self, path: str | None = None) -> list[Hit]:
        with self.lock:
            return [h for h in self.log if path is None or h.path == path]

    def start(self) -> ChangingSite:
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                hit = Hit(self.path, time.time())
                with site.lock:
                    site.log.append(hit)
                if self.path == "/robots.txt" and site.robots_hang_s:
                    time.sleep(site.robots_hang_s)
                if self.path == "/robots.txt" and site.robots is not None:
                    status, body, headers = 200, site.robots.encode(), {"Content-Type": "text/plain"}
                elif self.path == "/robots.txt" or not (self.path in PAGES or self.path.startswith("/new-")):
                    status, body, headers = 404, b"not here", {"Content-Type": "text/plain"}
                else:
                    status, body, headers = 200, site.body(self.path), {"Content-Type": "text/html"}
                    if self.path == "/static":
                        headers.update({"ETag": STATIC_ETAG, "Last-Modified": STATIC_LM})
                    elif self.path == "/liar":
                        headers["ETag"] = '"liar-forever"'
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                try:
                    self.end_headers()
                    self.wfile.write(body)
                    self.wfile.flush()
                except OSError:  # the crawler stopped after the headers (mid-fetch filter), or timed out
                    status = 0 if self.path == "/robots.txt" else status
                hit.end = time.time()
                hit.status = status
                self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def shutdown(self) -> None:
        self.server.shutdown()
        self.server.server_close()
