"""The dedup service: harvesters on any machine look up earlier captures over HTTP; the indexer chain feeds it.

    python -m indexer.dedupservice serve --store DIR [--bind 127.0.0.1:8095]
    python -m indexer.dedupservice load --url http://HOST:PORT SQLITE    # migrate an existing dedup.sqlite3

A small long-running process (``dedup`` in deploy/Procfile, a compose service on the internal network) over
one RocksDB store (:mod:`indexer.dedupstore`). The standard library's threading HTTP/1.1 server is enough:
each request is a batch (a page's outlinks, a WARC's captures), so the per-request overhead is paid once per
batch, and keep-alive spares a connection per lookup (figures in docs/BENCHMARKS.md, "Dedup service").

    GET  /health                                → {"ok": true, "keys": N, "sst_bytes": N}
    POST /lookup {"digests": [...], "urls": [...]} → {"digests": {d: capture}, "urls": {u: capture}}
    POST /add    {"captures": [capture, ...]}    → {"added": N}

A capture is the 8 fields of :class:`indexer.dedup.Capture` as a JSON list. A bad request gets a 400 with
one line saying what is wrong. SIGTERM (or SIGINT) drains: the service answers on while requests keep
coming, until none came for :data:`DRAIN_IDLE_S` (at most :data:`DRAIN_MAX_S`), then closes the store and
exits 0; a second signal stops it at once. A stack stops all its processes together (`netharvest up`'s
Ctrl-C, a compose stop): the harvesters end their crawls in those seconds, and a lookup refused then would
have stored a full copy of a page the archive already holds.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from indexer.dedupclient import DedupClient, DedupServiceError, capture_from_row, capture_row
from indexer.dedupstore import DedupStore

logger = logging.getLogger("netharvest.dedup")

DEFAULT_BIND = "127.0.0.1:8095"
#: The largest request body accepted (a 10,000-capture /add is about 2.5 MB).
MAX_BODY = 64 * 1024 * 1024
#: The most keys one /lookup may ask for.
MAX_KEYS = 100_000
#: After SIGTERM: stop once no request came for this long, or this long after the signal at the latest
#: (inside the 30 s `netharvest up` and docker-compose.yml give the service before SIGKILL).
DRAIN_IDLE_S = 1.5
DRAIN_MAX_S = 25.0


class BadRequest(Exception):
    pass


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: one connection per harvester
    # The headers and the body go out as two writes: with Nagle's algorithm the body waits for the client's
    # delayed ACK, 40 ms a lookup (measured: a 131-URI crawl took 9.4 s instead of 2.5 s).
    disable_nagle_algorithm = True
    wbufsize = 1 << 16  # and one write, not two: http.server flushes after each request
    server: DedupServer

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("%s " + format, self.address_string(), *args)

    def _write(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def parse_request(self) -> bool:
        """A request has come (its line and headers read; an idle keep-alive connection waiting for the next
        one is not a request): a draining service (:func:`serve`) stops only when none is under way or recent."""
        if not super().parse_request():
            return False
        if not self.server.enter():  # the store is about to close: say so rather than fail on it
            self.close_connection = True
            self._write(503, {"error": "the dedup service is stopping"})
            return False
        self._counted = True
        return True

    def finish(self) -> None:
        self._settle()
        super().finish()

    def _settle(self) -> None:
        if getattr(self, "_counted", False):
            self._counted = False
            self.server.leave()

    def _send(self, status: int, body: dict[str, Any]) -> None:
        try:
            self._write(status, body)
        finally:
            self._settle()

    def do_GET(self) -> None:
        if self.path != "/health":
            self._send(404, {"error": f"no such resource {self.path[:100]}"})
            return
        self._send(200, {"ok": True, **self.server.store.counts()})

    def do_POST(self) -> None:
        try:
            body = self._body()
            if self.path == "/lookup":
                self._send(200, self._lookup(body))
            elif self.path == "/add":
                self._send(200, self._add(body))
            else:
                self._send(404, {"error": f"no such resource {self.path[:100]}"})
        except BadRequest as exc:
            self._send(400, {"error": str(exc)})
        except Exception as exc:  # the store failed: say so, keep serving
            logger.exception("dedup service: %s failed", self.path)
            self._send(500, {"error": f"{type(exc).__name__}: {exc}"[:300]})

    def _body(self) -> dict[str, Any]:
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            raise BadRequest("a POST needs a Content-Length") from None
        if not 0 <= length <= MAX_BODY:
            self.close_connection = True
            raise BadRequest(f"body of {length} bytes: at most {MAX_BODY}")
        try:
            body = json.loads(self.rfile.read(length))
        except ValueError as exc:
            raise BadRequest(f"body is not JSON: {exc}") from None
        if not isinstance(body, dict):
            raise BadRequest("body must be a JSON object")
        return body

    def _lookup(self, body: dict[str, Any]) -> dict[str, Any]:
        digests, urls = body.get("digests", []), body.get("urls", [])
        if not (
            isinstance(digests, list)
            and isinstance(urls, list)
            and all(isinstance(k, str) for k in digests)
            and all(isinstance(k, str) for k in urls)
        ):
            raise BadRequest('"digests" and "urls" must be lists of strings')
        if len(digests) + len(urls) > MAX_KEYS:
            raise BadRequest(f"{len(digests) + len(urls)} keys: at most {MAX_KEYS} per lookup")
        store = self.server.store
        return {
            "digests": {k: capture_row(c) for k, c in store.by_digests(digests).items()},
            "urls": {k: capture_row(c) for k, c in store.by_urls(urls).items()},
        }

    def _add(self, body: dict[str, Any]) -> dict[str, Any]:
        rows = body.get("captures")
        if not isinstance(rows, list):
            raise BadRequest('"captures" must be a list')
        try:
            captures = [capture_from_row(r) for r in rows]
        except (ValueError, TypeError) as exc:
            raise BadRequest(f"capture {len(rows)}: {exc}") from None
        return {"added": self.server.store.add(captures)}


class DedupServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, bind: str, store: DedupStore) -> None:
        host, _, port = bind.rpartition(":")
        self.store = store
        self._lock = threading.Lock()
        self._active = 0
        self._last = time.monotonic()
        self._closing = False
        super().__init__((host or "127.0.0.1", int(port)), Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A harvester that went away mid-connection (a crawl process killed, a keep-alive connection reset)
        is one line, not socketserver's traceback, which read as if the dedup service had failed."""
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError):
            logger.info("connection from %s:%s ended by the client: %s", *client_address[:2], exc)
            return
        super().handle_error(request, client_address)

    def enter(self) -> bool:
        """A request begins; False once :meth:`close_requests` was called."""
        with self._lock:
            if self._closing:
                return False
            self._active += 1
            self._last = time.monotonic()
            return True

    def leave(self) -> None:
        with self._lock:
            self._active -= 1
            self._last = time.monotonic()

    def close_requests(self, timeout_s: float = 5.0) -> None:
        """Refuse new requests (503) and wait, at most ``timeout_s``, for those under way: the store may
        then close. ``shutdown()`` stops only the accept loop; the harvesters' keep-alive connections are
        served by threads of their own, which would otherwise reach a closed store."""
        with self._lock:
            self._closing = True
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                if self._active <= 0:
                    return
            time.sleep(0.05)

    def drained(self, idle_s: float) -> bool:
        """No request under way, and none for ``idle_s`` seconds."""
        with self._lock:
            return self._active == 0 and time.monotonic() - self._last >= idle_s

    def drain(self, idle_s: float = DRAIN_IDLE_S, max_s: float = DRAIN_MAX_S) -> None:
        """Serve on until :meth:`drained` (or ``max_s`` have passed), then stop ``serve_forever``."""
        deadline = time.monotonic() + max_s
        while not self.drained(idle_s) and time.monotonic() < deadline:
            time.sleep(0.1)
        self.shutdown()


def serve(store_dir: str | Path, bind: str = DEFAULT_BIND) -> int:
    """Run until SIGTERM/SIGINT; then stop accepting, close the store (flushing RocksDB) and return 0."""
    store = DedupStore(store_dir)
    server = DedupServer(bind, store)

    signals = []

    def stop(signum: int, _frame: Any) -> None:
        signals.append(signum)
        if len(signals) == 1:
            logger.info("dedup service: signal %d, stopping when the harvesters' lookups have ended", signum)
            threading.Thread(target=server.drain, daemon=True).start()  # shutdown() waits for serve_forever
        else:
            logger.info("dedup service: signal %d again, stopping now", signum)
            threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    host, port = server.server_address[:2]
    print(f"dedup service on http://{host}:{port}/ over {store_dir}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.close_requests()
        server.server_close()
        store.close()
    print("dedup service stopped", flush=True)
    return 0


def load_sqlite(client: DedupClient, sqlite_path: str | Path) -> int:
    """Send every capture of an existing SQLite dedup index (:mod:`indexer.dedup`) to the service: both of
    its tables, so the service gives the same answers. Idempotent: loading twice changes nothing."""
    import sqlite3

    from indexer.dedup import Capture

    path = Path(sqlite_path)
    if not path.is_file():
        raise DedupServiceError(f"{path}: no such dedup index")
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        has_mime = any(r[1] == "mime" for r in db.execute("PRAGMA table_info(by_url)"))
        mime = "mime" if has_mime else "''"
        # The digest table first, then the URL table. Every digest row's URL has a URL row at least as recent
        # (both tables see every capture), so the URL rows replace what the digest rows wrote for their URLs
        # (latest wins, ties too), and never a digest's referent (only a strictly earlier capture does).
        digests = (
            Capture(d, u, ts, f, o, m)
            for d, u, ts, f, o, m in db.execute("SELECT digest, url, timestamp, filename, offset, mime FROM by_digest")
        )
        n = client.add(digests)
        urls = (
            Capture(d, u, ts, f, o, m, e, lm)
            for u, d, ts, f, o, e, lm, m in db.execute(
                f"SELECT url, digest, timestamp, filename, offset, etag, last_modified, {mime} FROM by_url"
            )
        )
        return n + client.add(urls)
    finally:
        db.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m indexer.dedupservice", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="run the service")
    s.add_argument("--store", required=True, help="the RocksDB directory (made if missing)")
    s.add_argument("--bind", default=DEFAULT_BIND, help=f"host:port (default {DEFAULT_BIND})")
    ld = sub.add_parser("load", help="load an existing SQLite dedup index into the service")
    ld.add_argument("--url", required=True, help="the service, http://host:port")
    ld.add_argument("sqlite", help="the dedup.sqlite3 file")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    if args.command == "serve":
        return serve(args.store, args.bind)
    try:
        n = load_sqlite(DedupClient(args.url), args.sqlite)
    except DedupServiceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"loaded {n} captures from {args.sqlite} into {args.url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
