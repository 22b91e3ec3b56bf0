"""A Scrapy download handler that records the exact bytes on the wire (docs/FORMATS.md, "WARC").

Scrapy's own HTTP/1.1 handler (Twisted's ``Agent``) hands a parsed response to Scrapy: the status
reason, header order, repeated headers and chunk framing are gone by then, and an archive must
keep them. :class:`RawHTTPDownloadHandler` speaks HTTP/1.1 itself over a Twisted TCP (or TLS)
connection and keeps, in a :class:`RawCapture` attached as ``request.meta["nh_capture"]``:

* the request exactly as sent (request line, ``Host`` first, then Scrapy's headers in order);
* the response head exactly as received (status line with its own reason, headers in order with
  repeats, ``Content-Length`` / ``Transfer-Encoding`` / ``Content-Encoding`` untouched);
* the body as transferred (chunk framing and gzip/br kept) in a ``SpooledTemporaryFile``, so a
  large body goes to disk rather than sitting in memory twice, with its SHA-1 (WARC payload digest)
  and the SHA-1 of head + body (WARC block digest) computed while the bytes arrive;
* the peer IP, fetch start (UTC), duration, and why the body was cut short, if it was
  (``"length"``: ``NH_MAX_DOCUMENT_BYTES`` reached; ``"time"``: ``DOWNLOAD_TIMEOUT`` mid-body;
  ``"disconnect"``: the server closed mid-body) — as in WARC-Truncated.

The :class:`scrapy.http.Response` it returns has the body de-chunked but still content-encoded, so
Scrapy's ``HttpCompressionMiddleware`` decodes it as usual; this handler never decompresses
(a gzip bomb costs it only the compressed bytes, bounded by the document limit).

Failures before a usable response raise Scrapy's download errors (so ``RetryMiddleware`` works)
and set ``request.meta["nh_failure"]`` to the Heritrix status code: -1 DNS lookup failed, -2
connect failed (refused, unreachable, connect timeout), -3 connection broken before a complete
response head, -4 timeout waiting for the response head, -404 the server closed the connection
cleanly without sending a byte (the glossary's "Empty HTTP response interpreted as a 404"; retried as -3 is).

A continuous job may put a callable in ``meta["nh_midfetch"]``: given the capture once its head is
parsed (a 2xx), True stops the download there (``RawCapture.mid_fetch_abort``; the connection is
aborted, nothing of the body is read), as Heritrix's mid-fetch filter does.

Settings: ``NH_MAX_DOCUMENT_BYTES`` (-1: no limit), ``DOWNLOAD_TIMEOUT`` (whole fetch, also per
request via ``meta["download_timeout"]``), ``NH_CONNECT_TIMEOUT`` (seconds, default 20),
``NH_SPOOL_MEMORY_BYTES`` (body bytes kept in memory before spooling to disk, default 1 MiB).
TLS uses Scrapy's context factory (``DOWNLOADER_CLIENTCONTEXTFACTORY``), which does not verify
certificates, as crawlers do.

Connections are persistent (HTTP/1.1 keep-alive, RFC 9112 section 9): a :class:`ConnectionPool` keeps
each finished connection idle per (scheme, host, port) for ``NH_KEEPALIVE_IDLE_S`` seconds (default 4;
0 turns keep-alive off and every request says ``Connection: close``), so a host's queue reuses as
many connections as its valence lets it have in flight, never more. A connection goes back to the pool
only after a message whose end its framing says (``Content-Length``, chunked, or a response that has no
body), with nothing after it, not truncated, and the server did not refuse (HTTP/1.1 without
``Connection: close``; HTTP/1.0 only with ``Connection: keep-alive``); anything else is closed as before.
The record is the same either way: each fetch's capture holds only its own request and response bytes.
A server that closes an idle connection just as a request is written on it (the keep-alive race)
gets the request again once on a fresh connection, without a failed attempt; a connection lost after
any response byte is a failure (-3) as on a fresh one. No pipelining: one request in flight per
connection. ``NH_KEEPALIVE_MAX_IDLE`` (default 256) bounds the idle connections of a whole crawl
(the least recently used is closed first), so a broad crawl does not hoard sockets.
"""

from __future__ import annotations

import functools
import hashlib
import heapq
import ipaddress
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from tempfile import SpooledTemporaryFile
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured
from scrapy.http import Headers
from scrapy.responsetypes import responsetypes
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet import defer
from twisted.internet import error as txerror
from twisted.internet.protocol import Factory, Protocol
from twisted.python.failure import Failure

from harvester.defaults import nh_setting
from harvester.percrawl import PerCrawl

try:  # Scrapy >= 2.14 names its download errors; older versions retry on Twisted's own.
    from scrapy.exceptions import (
        CannotResolveHostError,
        DownloadConnectionRefusedError,
        DownloadFailedError,
        DownloadTimeoutError,
    )
except ImportError:  # pragma: no cover - depends on the installed Scrapy
    CannotResolveHostError = txerror.DNSLookupError  # type: ignore[misc,assignment]
    DownloadConnectionRefusedError = txerror.ConnectionRefusedError  # type: ignore[misc,assignment]
    DownloadFailedError = txerror.ConnectionLost  # type: ignore[misc,assignment]
    DownloadTimeoutError = txerror.TimeoutError  # type: ignore[misc,assignment]

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

#: Heritrix status codes for fetch failures (glossary, "Status codes").
S_DNS_FAILED = -1
S_CONNECT_FAILED = -2
S_CONNECT_LOST = -3
S_TIMEOUT = -4
S_EMPTY_RESPONSE = -404

MAX_HEAD_BYTES = 1024 * 1024
_NO_BODY_STATUSES = frozenset({204, 304})


def status_line_parts(line: bytes) -> tuple[str, int, str] | None:
    """``HTTP/1.1 200 OK`` → (version, status, reason); None when the line is not an HTTP status line."""
    parts = line.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
        return None
    return parts[0].decode("latin-1"), int(parts[1]), parts[2].decode("latin-1") if len(parts) > 2 else ""


def header_fields(lines: list[bytes]) -> list[tuple[bytes, bytes]]:
    """(name, value) of each header line, in order, as sent; an obsolete folded line continues the
    previous value, a line without a colon is dropped."""
    headers: list[tuple[bytes, bytes]] = []
    for raw in lines:
        line = raw.rstrip(b"\r")
        if not line:
            continue
        if line[:1] in (b" ", b"\t") and headers:  # obsolete line folding
            name, value = headers[-1]
            headers[-1] = (name, value + b" " + line.strip())
            continue
        name, sep, value = line.partition(b":")
        if sep:
            headers.append((name.strip(), value.strip()))
    return headers


def response_headers(fields: list[tuple[bytes, bytes]]) -> Headers:
    """``Headers(fields)`` for the response, filled at the dict level: each name title-cased (Scrapy's
    ``normkey`` of a bytes name) with its values in order, repeats appended (its ``normvalue`` of a bytes
    value is ``[value]``); the same object, without two normalising calls per field (issue 14).
    tests/harvester/test_fetch.py holds the two equal."""
    merged: dict[bytes, list[bytes]] = {}
    for name, value in fields:
        merged.setdefault(name.title(), []).append(value)
    headers = Headers()
    dict.update(headers, merged)
    return headers


def body_framing(headers: list[tuple[bytes, bytes]]) -> tuple[bool, int | None]:
    """(chunked, Content-Length) of a response: chunked when it is the last transfer coding (it then
    wins over a length); the first Content-Length, when it is a number; neither: read until close."""
    te = b""
    length: bytes | None = None
    for name, value in headers:
        lname = name.lower()
        if lname == b"transfer-encoding":
            te = value.lower()
        elif lname == b"content-length" and length is None:
            length = value
    if te and te.rsplit(b",", 1)[-1].strip() == b"chunked":
        return True, None
    if length is not None and length.strip().isdigit():
        return False, int(length)
    return False, None


@dataclass(slots=True)
class RawCapture:
    """The wire-level record of one fetch (``request.meta["nh_capture"]``)."""

    url: str
    request_bytes: bytes
    started: datetime
    thread: int = 0
    response_head: bytes = b""
    status: int = 0
    reason: str = ""
    http_version: str = "HTTP/1.1"
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    body: Any = None  # SpooledTemporaryFile of the body as transferred
    body_length: int = 0
    payload_sha1: bytes = b""  # raw SHA-1 of the body as transferred
    block_sha1: bytes = b""  # raw SHA-1 of response head + body
    peer_ip: str | None = None
    duration_ms: int = 0
    truncated: str | None = None  # WARC-Truncated reason
    malformed: str | None = None  # e.g. "chunked": framing broken, body kept as received
    #: The download stopped after the response head because ``meta["nh_midfetch"]`` said the headers
    #: show the document unchanged (continuous harvests: Heritrix's HTTPMidFetchUnchangedFilter).
    mid_fetch_abort: bool = False

    @property
    def content_size(self) -> int:
        """Status line + headers + body, as Heritrix's ``content-size`` annotation counts."""
        return len(self.response_head) + self.body_length

    def header(self, name: str) -> str | None:
        """First value of a response header (case-insensitive), decoded as Latin-1."""
        key = name.lower().encode("latin-1")
        for k, v in self.headers:
            if k.lower() == key:
                return v.decode("latin-1")
        return None

    def close(self) -> None:
        """Release the spooled body (after it has been written to the WARC)."""
        if self.body is not None:
            self.body.close()
            self.body = None


def build_request_bytes(request: Request, keep_alive: bool = False) -> bytes:
    """The request as it goes on the wire: request line, Host, Scrapy's headers in order, then
    ``Connection: keep-alive`` (which HTTP/1.0 servers need to keep one open) or ``close``."""
    parsed = urlparse_cached(request)
    target = parsed.path or "/"
    if parsed.params:
        target += ";" + parsed.params
    if parsed.query:
        target += "?" + parsed.query
    lines = [f"{request.method} {target} HTTP/1.1".encode("latin-1")]
    host = request.headers.get(b"Host")
    if host is None:
        host = parsed.netloc.rpartition("@")[2].encode("ascii")
        default = ":443" if parsed.scheme == "https" else ":80"
        if host.endswith(default.encode()):
            host = host[: -len(default)]
    lines.append(b"Host: " + host)
    # dict.items: the stored (normalised name, list of values) pairs, which Headers.items() would give
    # after normalising each name again.
    for name, values in dict.items(request.headers):
        lname = name.lower()
        if lname in (b"host", b"connection", b"content-length"):
            continue
        for value in values:
            lines.append(name + b": " + value)
    if request.body or request.method in ("POST", "PUT", "PATCH"):
        lines.append(b"Content-Length: " + str(len(request.body)).encode())
    lines.append(b"Connection: keep-alive" if keep_alive else b"Connection: close")
    return b"\r\n".join(lines) + b"\r\n\r\n" + (request.body or b"")


@functools.lru_cache(maxsize=4096)
def _ip_address(peer: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The peer as Scrapy's ``Response.ip_address`` wants it (parsed once per address: 5 % of
    ``_complete``)."""
    try:
        return ipaddress.ip_address(peer)
    except ValueError:
        return None


class _Dechunker:
    """Incremental chunked-transfer decoder that tells where the message ends in the raw stream."""

    __slots__ = ("state", "line", "remaining", "done", "broken")

    SIZE, DATA, CRLF, TRAILER = range(4)

    def __init__(self) -> None:
        self.state = self.SIZE
        self.line = bytearray()
        self.remaining = 0
        self.done = False
        self.broken = False

    def feed(self, data: bytes, out: bytearray) -> int:
        """Decode ``data`` into ``out``; return how many bytes of ``data`` belong to the message."""
        i, n = 0, len(data)
        while i < n and not self.done and not self.broken:
            if self.state == self.DATA:
                take = min(self.remaining, n - i)
                out += data[i : i + take]
                self.remaining -= take
                i += take
                if self.remaining == 0:
                    self.state = self.CRLF
                continue
            j = data.find(b"\n", i)
            if j < 0:
                self.line += data[i:]
                if len(self.line) > 8192:
                    self.broken = True
                return n
            self.line += data[i:j]
            i = j + 1
            line = bytes(self.line).strip()
            self.line.clear()
            if self.state == self.SIZE:
                try:
                    size = int(line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    self.broken = True
                    break
                if size < 0:
                    self.broken = True
                    break
                if size == 0:
                    self.state = self.TRAILER
                else:
                    self.remaining = size
                    self.state = self.DATA
            elif self.state == self.CRLF:
                if line:
                    self.broken = True
                    break
                self.state = self.SIZE
            elif not line:  # TRAILER: an empty line ends the message
                self.done = True
        return n if self.broken else i


class _RawHTTPClient(Protocol):
    """One TCP (or TLS) connection: carries one fetch at a time (no pipelining) and waits idle in
    the :class:`ConnectionPool` between fetches."""

    HEAD, BODY, DONE = range(3)

    def __init__(self, fetch: _Fetch, pool: ConnectionPool | None, key: tuple[str, str, int]) -> None:
        self.fetch: _Fetch | None = fetch
        self.pool = pool
        self.key = key
        self.lost = False
        self.idle_since = 0.0

    def connectionMade(self) -> None:
        if self.fetch is not None:
            self.fetch.attach(self)

    def dataReceived(self, data: bytes) -> None:
        if self.fetch is None:  # bytes nobody asked for on an idle connection: never reuse it
            if self.pool is not None:
                self.pool.discard(self)
            self.transport.abortConnection()  # type: ignore[union-attr]
            return
        self.fetch.data_received(data)

    def connectionLost(self, reason: Failure = txerror.ConnectionDone) -> None:  # type: ignore[assignment]
        self.lost = True
        if self.pool is not None:
            self.pool.discard(self)
        fetch, self.fetch = self.fetch, None
        if fetch is not None:
            fetch.connection_lost(reason)


class ConnectionPool:
    """Idle persistent connections of one crawl, per (scheme, host, port), least recently used first.

    A connection is here only between two fetches; how many a host has is bounded by how many of its
    fetches were in flight at once, i.e. by its queue's valence (harvester/frontier.py).
    """

    def __init__(self, idle_s: float, max_idle: int) -> None:
        self.idle_s = idle_s
        self.max_idle = max(1, max_idle)
        self._idle: dict[tuple[str, str, int], list[_RawHTTPClient]] = {}
        self._order: dict[_RawHTTPClient, None] = {}  # insertion order = least recently used first
        self._sweeper: Any = None  # one LoopingCall while anything is idle (a timer per release cost 1 %)

    @staticmethod
    def of(crawler: Crawler) -> ConnectionPool | None:
        """The crawl's pool (shared by its http and https handlers); None when keep-alive is off."""

        def make() -> ConnectionPool | None:
            idle_s = nh_setting(crawler.settings, "NH_KEEPALIVE_IDLE_S")
            return ConnectionPool(idle_s, nh_setting(crawler.settings, "NH_KEEPALIVE_MAX_IDLE")) if idle_s > 0 else None

        return _POOLS.setdefault(crawler, make)

    def take(self, key: tuple[str, str, int]) -> _RawHTTPClient | None:
        """The most recently used idle connection to ``key`` (the least likely to be closed by now)."""
        conns = self._idle.get(key)
        if not conns:
            return None
        conn = conns.pop()
        if not conns:
            del self._idle[key]
        del self._order[conn]
        return conn

    def release(self, conn: _RawHTTPClient) -> None:
        if conn.lost:
            return
        conn.idle_since = time.monotonic()
        self._idle.setdefault(conn.key, []).append(conn)
        self._order[conn] = None
        while len(self._order) > self.max_idle:
            self.expire(next(iter(self._order)))
        if self._sweeper is None:
            from twisted.internet.task import LoopingCall

            self._sweeper = LoopingCall(self.sweep)
            self._sweeper.start(max(0.05, self.idle_s / 4), now=False)

    def sweep(self) -> None:
        """Close the connections idle for ``idle_s`` or more (within a quarter of it)."""
        oldest = time.monotonic() - self.idle_s
        for conn in list(self._order):
            if conn.idle_since > oldest:
                break
            self.expire(conn)
        if not self._order and self._sweeper is not None:
            if self._sweeper.running:
                self._sweeper.stop()
            self._sweeper = None

    def discard(self, conn: _RawHTTPClient) -> None:
        """Forget ``conn`` if it is idle here (it was lost or is being closed)."""
        if conn not in self._order:
            return
        del self._order[conn]
        conns = self._idle[conn.key]
        conns.remove(conn)
        if not conns:
            del self._idle[conn.key]

    def expire(self, conn: _RawHTTPClient) -> None:
        self.discard(conn)
        if conn.transport is not None:
            conn.transport.loseConnection()

    def close_all(self) -> None:
        for conn in list(self._order):
            self.expire(conn)
        if self._sweeper is not None and self._sweeper.running:
            self._sweeper.stop()
        self._sweeper = None

    def __len__(self) -> int:
        return len(self._order)


class _Fetch:
    """State of one fetch; separate from the protocol so timeouts can reach it before connect."""

    def __init__(self, request: Request, capture: RawCapture, max_bytes: int, spool_memory: int, reactor: Any) -> None:
        self.request = request
        self.capture = capture
        self.max_bytes = max_bytes
        self.spool_memory = spool_memory
        self.reactor = reactor
        self.finished: defer.Deferred[Response] = defer.Deferred()
        self.transport: Any = None
        self.conn: _RawHTTPClient | None = None
        self.pool: ConnectionPool | None = None
        self.reused = False  # on a connection that carried an earlier fetch
        self.retried = False  # already sent again on a fresh connection after a keep-alive race
        self.reconnect: Any = None  # () -> None: connect afresh (set by the handler)
        self.connecting: defer.Deferred | None = None
        self.leftover = False  # bytes after the end of the message: the connection is not reusable
        self.state = _RawHTTPClient.HEAD
        self.head = bytearray()
        self.decoded = bytearray()
        self.framing = "close"
        self.remaining = 0
        self.dechunker: _Dechunker | None = None
        self.payload_hash = hashlib.sha1()
        self.block_hash = hashlib.sha1()
        self.t0 = time.monotonic()
        self.received_any = False
        self.head_time: float | None = None

    # -- connection events ---------------------------------------------------------------------
    def attach(self, conn: _RawHTTPClient) -> None:
        """Send this fetch's request on ``conn`` (new, or idle from the pool)."""
        conn.fetch = self
        self.conn = conn
        self.connection_made(conn.transport)

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        try:
            self.capture.peer_ip = transport.getPeer().host
        except Exception:
            self.capture.peer_ip = None
        transport.write(self.capture.request_bytes)

    def data_received(self, data: bytes) -> None:
        if self.state == _RawHTTPClient.DONE:
            return
        self.received_any = True
        if self.state == _RawHTTPClient.HEAD:
            self.head += data
            end, sep = self._find_head_end()
            if end < 0:
                if len(self.head) > MAX_HEAD_BYTES:
                    self._fail(DownloadFailedError(f"response head over {MAX_HEAD_BYTES} bytes"), S_CONNECT_LOST)
                return
            rest = bytes(self.head[end + sep :])
            head = bytes(self.head[: end + sep])
            del self.head[:]
            self.leftover = bool(rest)  # what a body-less response (HEAD, 204, 304) leaves unread
            if not self._parse_head(head):
                return
            if self.state == _RawHTTPClient.HEAD:  # an interim 1xx head: wait for the real one
                if rest:
                    self.data_received(rest)
                return
            if self.state == _RawHTTPClient.DONE:
                return
            data = rest
            if not data:
                return
        self._body(data)

    def connection_lost(self, reason: Failure) -> None:
        if self.state == _RawHTTPClient.DONE:
            return
        if (
            self.state == _RawHTTPClient.HEAD
            and self.reused
            and not self.received_any
            and not self.retried
            and self.reconnect is not None
        ):
            self._retry_fresh()
            return
        if self.state == _RawHTTPClient.HEAD:
            if not self.received_any and reason.check(txerror.ConnectionDone):  # a clean close; a reset is -3
                self._fail(
                    DownloadFailedError(
                        f"empty response (connection closed before any byte): {reason.getErrorMessage()}"
                    ),
                    S_EMPTY_RESPONSE,
                )
                return
            self._fail(
                DownloadFailedError(f"connection lost inside the response head: {reason.getErrorMessage()}"),
                S_CONNECT_LOST,
            )
            return
        if self.framing == "close" or self.capture.malformed:
            self._complete()
        else:
            self._complete(truncated="disconnect")

    def _retry_fresh(self) -> None:
        """The server closed a kept-alive connection as our request went out (it had timed the
        connection out): send the request once more on a new connection. Not a failed attempt —
        nothing of a response was received, nothing is archived for the lost try."""
        self.retried = True
        self.reused = False
        self.conn = None
        self.transport = None
        self.t0 = time.monotonic()
        self.capture.started = datetime.now(UTC)
        self.reconnect()

    def timed_out(self) -> None:
        """DOWNLOAD_TIMEOUT elapsed: keep what we have of a body, else fail with -4 (-2 connecting)."""
        if self.state == _RawHTTPClient.DONE:
            return
        if self.state == _RawHTTPClient.BODY:
            self._complete(truncated="time")
        else:
            code = S_TIMEOUT if self.transport is not None else S_CONNECT_FAILED
            self._fail(DownloadTimeoutError(f"Getting {self.request.url} timed out"), code)

    # -- parsing -------------------------------------------------------------------------------
    def _find_head_end(self) -> tuple[int, int]:
        end = self.head.find(b"\r\n\r\n")
        lf = self.head.find(b"\n\n")
        if lf >= 0 and (end < 0 or lf < end):
            return lf, 2
        return end, 4 if end >= 0 else 0

    def _parse_head(self, head: bytes) -> bool:
        """A complete response head: the status line, the headers, then how the body is framed.
        False when it is not HTTP (the fetch has failed); an interim 1xx is skipped."""
        lines = head.split(b"\n")
        first = lines[0].rstrip(b"\r")
        status_line = status_line_parts(first)
        if status_line is None:
            self._fail(DownloadFailedError(f"not an HTTP response: {first[:80]!r}"), S_CONNECT_LOST)
            return False
        version, status, reason = status_line
        if 100 <= status < 200 and status != 101:
            return True  # interim response (103 Early Hints…): not archived, keep reading
        cap = self.capture
        cap.http_version, cap.status, cap.reason = version, status, reason
        cap.headers = header_fields(lines[1:])
        cap.response_head = head
        self._start_body(head, status)
        return True

    def _start_body(self, head: bytes, status: int) -> None:
        """After the head: a body that cannot or need not be read completes the fetch now; else the
        body's framing (chunked, a length, or until the connection closes)."""
        cap = self.capture
        self.block_hash.update(head)
        self.head_time = time.monotonic()
        self.request.meta["download_latency"] = self.head_time - self.t0
        cap.body = SpooledTemporaryFile(max_size=self.spool_memory)
        self.state = _RawHTTPClient.BODY
        if self.request.method == "HEAD" or status in _NO_BODY_STATUSES:
            self.framing = "none"
            self._complete()
            return
        decide = self.request.meta.get("nh_midfetch")
        if decide is not None and 200 <= status < 300 and decide(cap):
            cap.mid_fetch_abort = True  # 002 §6.4: "cause the FetchHTTP processor to abort the downloading"
            self._complete()
            return
        chunked, length = body_framing(cap.headers)
        if chunked:
            self.framing = "chunked"
            self.dechunker = _Dechunker()
        elif length is not None:
            self.framing = "length"
            self.remaining = length
            if self.remaining == 0:
                self._complete()

    def _body(self, data: bytes) -> None:
        cap = self.capture
        if self.framing == "chunked" and self.dechunker is not None:
            used = self.dechunker.feed(data, self.decoded)
            if self.dechunker.broken:
                cap.malformed = "chunked"
                self.framing = "close"  # keep what arrives, as it arrives, until the server closes
            self.leftover = used < len(data)
            data = data[:used]
        elif self.framing == "length":
            self.leftover = len(data) > self.remaining
            data = data[: self.remaining]
            self.remaining -= len(data)
        done_by_framing = (self.framing == "length" and self.remaining == 0) or (
            self.dechunker is not None and self.dechunker.done
        )
        truncated = None
        if self.max_bytes >= 0 and cap.body_length + len(data) > self.max_bytes:
            data = data[: self.max_bytes - cap.body_length]
            truncated = "length"
        if data:
            cap.body.write(data)
            cap.body_length += len(data)
            self.payload_hash.update(data)
            self.block_hash.update(data)
            if self.framing != "chunked" and not cap.malformed:
                self.decoded += data
        if truncated:
            del self.decoded[self.max_bytes :]
            self._complete(truncated=truncated)
        elif done_by_framing:
            self._complete()

    # -- endings -------------------------------------------------------------------------------
    def _finish_capture(self, truncated: str | None) -> None:
        cap = self.capture
        self.state = _RawHTTPClient.DONE
        cap.truncated = truncated
        cap.payload_sha1 = self.payload_hash.digest()
        cap.block_sha1 = self.block_hash.digest()
        cap.duration_ms = int((time.monotonic() - self.t0) * 1000)
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.fetch = None
            if truncated or cap.mid_fetch_abort:
                conn.transport.abortConnection()
            elif self.pool is not None and not conn.lost and self._reusable():
                self.pool.release(conn)
            else:
                conn.transport.loseConnection()

    def _reusable(self) -> bool:
        """May the connection carry another request (RFC 9112 section 9.3)? Only after a message
        whose end its framing told, with nothing after it, from a server that did not refuse."""
        cap = self.capture
        if self.leftover or cap.malformed or cap.status == 101 or self.framing not in ("length", "chunked", "none"):
            return False
        tokens: set[bytes] = set()
        for name, value in cap.headers:
            if name.lower() == b"connection":
                tokens.update(t.strip().lower() for t in value.split(b","))
        if cap.http_version == "HTTP/1.1":
            return b"close" not in tokens
        return cap.http_version == "HTTP/1.0" and b"keep-alive" in tokens and b"close" not in tokens

    def _complete(self, truncated: str | None = None) -> None:
        self._finish_capture(truncated)
        cap = self.capture
        headers = response_headers(cap.headers)
        body = bytes(self.decoded)
        self.decoded = bytearray()
        respcls = responsetypes.from_args(headers=headers, url=self.request.url, body=body)
        ip = _ip_address(cap.peer_ip) if cap.peer_ip else None
        flags = ["truncated"] if truncated else None
        response = respcls(
            url=self.request.url, status=cap.status, body=body, flags=flags, ip_address=ip, protocol=cap.http_version
        )
        # Handed over, not passed to the constructor: Response() copies any mapping it is given into a new
        # Headers (every name and value normalised again), where the setter keeps a Headers as it is (issue 14).
        response.headers = headers
        self.finished.callback(response)

    def _fail(self, exc: Exception, code: int) -> None:
        self.state = _RawHTTPClient.DONE
        self.capture.duration_ms = int((time.monotonic() - self.t0) * 1000)
        self.capture.close()
        self.request.meta["nh_failure"] = code
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.fetch = None
            conn.transport.abortConnection()
        if not self.finished.called:
            self.finished.errback(Failure(exc))


class FetchSlots:
    """Fetch slot numbers (Heritrix's toe-thread numbers, crawl.log's ``#NNN``): the lowest free one
    is taken for each fetch. One set per crawl, shared by every download handler of it."""

    def __init__(self) -> None:
        self._free: list[int] = []
        self._next = 0

    @staticmethod
    def of(crawler: Crawler) -> FetchSlots:
        return _SLOTS.setdefault(crawler, FetchSlots)

    def take(self) -> int:
        if self._free:
            return heapq.heappop(self._free)
        self._next += 1
        return self._next - 1

    def give_back(self, slot: int) -> None:
        heapq.heappush(self._free, slot)


class _OneShotFactory(Factory):
    """Builds the connection for one fetch (which may later carry others, from the pool)."""

    noisy = False  # no "Starting/Stopping factory" log lines per connection (4 % of the CPU)

    def __init__(self, fetch: _Fetch, pool: ConnectionPool | None, key: tuple[str, str, int]) -> None:
        self.fetch = fetch
        self.pool = pool
        self.key = key

    def buildProtocol(self, addr: Any) -> Protocol:
        return _RawHTTPClient(self.fetch, self.pool, self.key)


class RawHTTPDownloadHandler:
    """Scrapy download handler for ``http`` and ``https`` that records the wire bytes.

    ``DOWNLOAD_HANDLERS = {"http": "harvester.fetch.RawHTTPDownloadHandler",
    "https": "harvester.fetch.RawHTTPDownloadHandler"}``.
    """

    lazy = False

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        if not settings.getbool("TWISTED_REACTOR_ENABLED", True):
            raise NotConfigured("RawHTTPDownloadHandler needs the Twisted reactor")
        self.crawler = crawler
        self.max_bytes = nh_setting(settings, "NH_MAX_DOCUMENT_BYTES")
        self.default_timeout = settings.getfloat("DOWNLOAD_TIMEOUT")
        self.connect_timeout = float(nh_setting(settings, "NH_CONNECT_TIMEOUT"))
        self.spool_memory = nh_setting(settings, "NH_SPOOL_MEMORY_BYTES")
        self._context_factory: Any = None
        self.slots = FetchSlots.of(crawler)
        self.pool = ConnectionPool.of(crawler)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RawHTTPDownloadHandler:
        return cls(crawler)

    def _tls_policy(self) -> Any:
        if self._context_factory is None:
            from scrapy.core.downloader import contextfactory

            loader = getattr(contextfactory, "_load_context_factory_from_settings", None)
            if loader is not None:
                self._context_factory = loader(self.crawler)
            else:  # pragma: no cover - older Scrapy
                self._context_factory = contextfactory.load_context_factory_from_settings(
                    self.crawler.settings, self.crawler
                )
        return self._context_factory

    async def download_request(self, request: Request) -> Response:
        from twisted.internet import reactor

        thread = self.slots.take()
        request.meta["nh_thread"] = thread
        pool = self.pool
        capture = RawCapture(
            url=request.url,
            request_bytes=build_request_bytes(request, pool is not None),
            started=datetime.now(UTC),
            thread=thread,
        )
        request.meta["nh_capture"] = capture
        fetch = _Fetch(request, capture, self.max_bytes, self.spool_memory, reactor)
        fetch.pool = pool
        timeout = float(request.meta.get("download_timeout") or self.default_timeout)
        timer = reactor.callLater(timeout, fetch.timed_out)
        parsed = urlparse_cached(request)
        key = (parsed.scheme, parsed.hostname or "", parsed.port or (443 if parsed.scheme == "https" else 80))
        connect_timeout = min(timeout, self.connect_timeout)
        conn = pool.take(key) if pool is not None else None
        if conn is not None:
            fetch.reused = True
            fetch.reconnect = lambda: self._connect(key, fetch, connect_timeout, reactor)
            fetch.attach(conn)
        else:
            self._connect(key, fetch, connect_timeout, reactor)
        try:
            return await maybe_deferred_to_future(fetch.finished)
        finally:
            if timer.active():
                timer.cancel()
            connecting = fetch.connecting
            if connecting is not None and not connecting.called:
                connecting.cancel()
            # The closure refers to the fetch: drop it, so the fetch, its request and its capture are freed by
            # reference counting now rather than as a cycle by the collector (issue 14: ~27 objects a page).
            fetch.reconnect = None
            self.slots.give_back(thread)

    def _connect(self, key: tuple[str, str, int], fetch: _Fetch, timeout: float, reactor: Any) -> None:
        """Open a new connection for ``fetch`` (``fetch.connecting`` is its Deferred)."""
        from twisted.internet.endpoints import TCP4ClientEndpoint, TCP6ClientEndpoint, wrapClientTLS

        scheme, host, port = key
        try:
            is_v6 = ipaddress.ip_address(host).version == 6
        except ValueError:
            is_v6 = False
        endpoint: Any = (TCP6ClientEndpoint if is_v6 else TCP4ClientEndpoint)(
            reactor, host, port, timeout=max(1, int(round(timeout)))
        )
        if scheme == "https":
            creator = self._tls_policy().creatorForNetloc(host.encode("idna"), port)
            endpoint = wrapClientTLS(creator, endpoint)
        d = endpoint.connect(_OneShotFactory(fetch, self.pool, key))

        def failed(failure: Failure) -> None:
            if fetch.state == _RawHTTPClient.DONE or failure.check(defer.CancelledError):
                return None
            if failure.check(txerror.DNSLookupError):
                fetch._fail(CannotResolveHostError(str(failure.value)), S_DNS_FAILED)
            elif failure.check(txerror.ConnectionRefusedError):
                fetch._fail(DownloadConnectionRefusedError(str(failure.value)), S_CONNECT_FAILED)
            elif failure.check(txerror.TimeoutError):
                fetch._fail(DownloadTimeoutError(f"connect to {host}:{port} timed out"), S_CONNECT_FAILED)
            else:
                fetch._fail(
                    DownloadFailedError(f"connect to {host}:{port} failed: {failure.getErrorMessage()}"),
                    S_CONNECT_FAILED,
                )
            return None

        d.addErrback(failed)
        fetch.connecting = d

    async def close(self) -> None:
        if self.pool is not None:
            self.pool.close_all()


#: The pool shared by a crawl's http and https handlers, and the fetch slots shared with its dns handler.
_POOLS: PerCrawl[ConnectionPool | None] = PerCrawl()
_SLOTS: PerCrawl[FetchSlots] = PerCrawl()
