"""A small world on loopback for the preload: a DNS server that knows a few names, and an HTTP server
that answers for them by Host header (some with redirects)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.preload.dns_server import DNSServer

LIVE = {
    "a.fr",
    "www.a.fr",
    "b.fr",
    "www.b.fr",
    "old.fr",
    "www.old.fr",
    "moved.fr",
    "www.moved.fr",
    "www.wwwonly.fr",
    "www.c.fr",
    "target.com",
    "www.target.com",
}
for i in range(40):
    LIVE.add(f"n{i:02d}.dk")
SERVFAIL = {"servfail.fr"}

# Host → (status, Location)
REDIRECTS = {
    "moved.fr": (301, "http://www.target.com/welcome"),  # another domain: target.com is discovered
    "www.moved.fr": (302, "http://moved.fr/"),  # same domain: nothing new
    "b.fr": (308, "https://b.fr/"),
    "a.fr": (200, ""),
}


def rule(name: str) -> str | None:
    if name in SERVFAIL:
        return "servfail"
    if name in LIVE:
        return "127.0.0.1"
    return "nodata" if any(live.endswith("." + name) for live in LIVE) else None


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        host = (self.headers.get("Host") or "").split(":")[0]
        self.server.hosts.append(host)  # type: ignore[attr-defined]
        status, location = REDIRECTS.get(host, (200, ""))
        self.send_response(status)
        if location:
            self.send_header("Location", location)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def dns_server() -> Iterator[DNSServer]:
    with DNSServer(rule) as server:
        yield server


@pytest.fixture
def http_server() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.hosts = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
