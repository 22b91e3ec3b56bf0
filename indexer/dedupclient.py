"""The client of the dedup service (:mod:`indexer.dedupservice`): what harvesters and the indexer chain use.

One keep-alive HTTP connection per client (the standard library's ``http.client``: it sends a request's
headers and body in one write, where urllib3 sends two, and each syscall counts at this scale: 0.1-0.5 ms a
lookup on a loaded machine), JSON bodies, batches: one
``/lookup`` answers any number of digests and URLs (the harvester prefetches a page's outlinks in one), one
``/add`` takes up to :data:`ADD_CHUNK` captures. Every failure (refused, timed out, a 5xx, a garbled
answer) is one :class:`DedupServiceError` with a one-line reason: the caller decides what an outage means
(a harvester deduplicates within its job and says so; the chain retries the step).
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterable, Sequence
from itertools import islice
from typing import Any
from urllib.parse import urlsplit

from indexer.dedup import Capture

#: Captures per ``/add`` request (about 2.5 MB of JSON).
ADD_CHUNK = 10_000
#: Keys per ``/lookup`` request.
LOOKUP_CHUNK = 5_000
#: A lookup waits this long at most: a harvester must never stall on a sick service.
CONNECT_TIMEOUT_S = 1.0
READ_TIMEOUT_S = 5.0
#: Feeding a large batch takes longer than a lookup.
ADD_TIMEOUT_S = 120.0


class DedupServiceError(Exception):
    """The service could not answer (one line: what and where)."""


def is_service_url(value: str | None) -> bool:
    """Whether a JobSpec's ``dedup_index`` names the service (``http(s)://host:port``) rather than a file."""
    return bool(value) and str(value).startswith(("http://", "https://"))


def capture_row(c: Capture) -> list[Any]:
    return [c.digest, c.url, c.timestamp, c.filename, c.offset, c.mime, c.etag, c.last_modified]


def capture_from_row(row: Any) -> Capture:
    if not isinstance(row, list) or len(row) != 8:
        raise ValueError(f"a capture is a list of 8 fields, got {str(row)[:80]}")
    digest, url, ts, filename, offset, mime, etag, last_modified = row
    return Capture(str(digest), str(url), str(ts), str(filename), int(offset), str(mime), str(etag), str(last_modified))


class DedupClient:
    def __init__(self, url: str, read_timeout_s: float = READ_TIMEOUT_S) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise DedupServiceError(f"dedup service address {url!r}: expected http://host:port")
        self.url = url.rstrip("/")
        self.read_timeout_s = read_timeout_s
        self._host, self._port = parts.hostname, parts.port
        self._https = parts.scheme == "https"
        self._conn: http.client.HTTPConnection | None = None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _connection(self, timeout_s: float) -> http.client.HTTPConnection:
        if self._conn is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            self._conn = cls(self._host, self._port, timeout=CONNECT_TIMEOUT_S)
            self._conn.connect()
        assert self._conn.sock is not None
        self._conn.sock.settimeout(timeout_s)
        return self._conn

    def _call(self, method: str, path: str, body: Any = None, timeout_s: float | None = None) -> Any:
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        for attempt in (1, 2):  # a kept-alive connection the service closed meanwhile: once more, anew
            reused = self._conn is not None
            try:
                conn = self._connection(timeout_s or self.read_timeout_s)
                conn.request(method, path, body=data, headers=headers)
                resp = conn.getresponse()
                payload = resp.read()
                break
            except (OSError, http.client.HTTPException) as exc:  # refused, reset, timed out
                self.close()
                if attempt == 1 and reused and not isinstance(exc, TimeoutError):
                    continue
                raise DedupServiceError(f"dedup service {self.url} unreachable: {type(exc).__name__}: {exc}") from exc
        if resp.status != 200:
            reason = payload[:200].decode("utf-8", "replace").strip()
            raise DedupServiceError(f"dedup service {self.url}{path} answered {resp.status}: {reason}")
        try:
            return json.loads(payload)
        except ValueError as exc:
            raise DedupServiceError(f"dedup service {self.url}{path}: not JSON ({exc})") from exc

    def health(self) -> dict[str, Any]:
        return dict(self._call("GET", "/health"))

    def lookup(
        self, digests: Sequence[str] = (), urls: Sequence[str] = ()
    ) -> tuple[dict[str, Capture], dict[str, Capture]]:
        """Earlier captures by digest (earliest) and by URL (latest), for every key known to the service."""
        by_digest: dict[str, Capture] = {}
        by_url: dict[str, Capture] = {}
        digests, urls = list(digests), list(urls)
        while digests or urls:
            d, digests = digests[:LOOKUP_CHUNK], digests[LOOKUP_CHUNK:]
            u, urls = urls[: LOOKUP_CHUNK - len(d)], urls[LOOKUP_CHUNK - len(d) :]
            answer = self._call("POST", "/lookup", {"digests": d, "urls": u})
            try:
                by_digest.update((k, capture_from_row(v)) for k, v in answer["digests"].items())
                by_url.update((k, capture_from_row(v)) for k, v in answer["urls"].items())
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise DedupServiceError(f"dedup service {self.url}/lookup: unexpected answer ({exc})") from exc
        return by_digest, by_url

    def add(self, captures: Iterable[Capture]) -> int:
        """Feed captures, :data:`ADD_CHUNK` per request; the service keeps today's rules (earliest per
        digest, latest per URL) and a capture sent twice changes nothing, so a retried feed is safe."""
        count = 0
        it = iter(captures)
        while chunk := list(islice(it, ADD_CHUNK)):
            answer = self._call("POST", "/add", {"captures": [capture_row(c) for c in chunk]}, timeout_s=ADD_TIMEOUT_S)
            count += int(answer.get("added", 0))
        return count
