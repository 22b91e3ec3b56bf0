"""DNS as a Heritrix-style prerequisite: ``dns:HOST`` fetched before a host's first URI.

Heritrix's ``PreconditionEnforcer`` schedules ``dns:HOST`` (discovery path ``P``, via the URI
that needed it) before anything of a host named by a DNS name is fetched, and again once the
lookup's TTL has expired; ``FetchDNS`` resolves it, logs it in crawl.log with status ``1`` and
MIME ``text/dns`` and the WARC writer stores it as a ``response`` record whose block is the fetch
time (14 digits) on the first line, then the answer records in zone-file form::

    20261123140000
    example.com.\t21600\tIN\tA\t93.184.216.34

A host given as an IP literal needs no lookup (Heritrix sets its IP at once, never expiring). A
lookup that fails is logged ``-1`` (retried like any network failure); once given up on, the
host's URIs are logged ``-6`` ("prerequisite domain-lookup failed, precluding fetch attempt",
glossary) and never fetched.

Resolution goes through the system resolver (``socket.getaddrinfo`` in Twisted's thread pool),
the resolver a crawl machine is configured with. getaddrinfo does not return TTLs, so every answer
gets :data:`harvester.defaults.DNS_TTL_S` (Heritrix's ``ipValidityDurationSeconds`` default, 6 h)
unless the Scrapy setting ``NH_DNS_TTL_S`` says otherwise; the same validity applies to a failed
lookup (negative caching). ``WARC-IP-Address`` is the first ``nameserver`` of
``/etc/resolv.conf`` (Heritrix records the DNS server it asked), omitted if there is none.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import socket
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.http import Response

from harvester.defaults import DNS_TTL_S, nh_setting
from harvester.fetch import S_DNS_FAILED, CannotResolveHostError, FetchSlots
from harvester.hosts import host_key, key_host

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

#: Heritrix ``FetchStatusCodes``: a successful lookup, and the code of a URI whose host's lookup failed.
S_DNS_SUCCESS = 1
S_DOMAIN_PREREQUISITE_FAILURE = -6
DNS_MIME = "text/dns"
#: Heritrix's StatisticsTracker counts every ``dns:`` URI under this pseudo-host in hosts-report.
DNS_HOST = "dns:"

UNKNOWN, PENDING, RESOLVED, FAILED = "unknown", "pending", "resolved", "failed"


def is_dns(url: str) -> bool:
    return url[:4].lower() == "dns:"


def dns_uri(host: str) -> str:
    return f"dns:{host}"


def dns_host(url: str) -> str:
    """``dns:example.com`` → ``example.com``."""
    return url[4:].lower()


def lookup_host(url: str) -> str | None:
    """The DNS name an http(s) URL needs resolved, or None (an IP literal, a dns: URI, no host)."""
    if is_dns(url):
        return None
    try:
        key = host_key(url)  # cached per URL (discovery asked it already)
    except ValueError:
        return None
    if key.count(":") > 1:  # an IPv6 literal (its port, if any, not told apart): nothing to resolve
        return None
    return _lookup_name(key_host(key))


@functools.lru_cache(maxsize=4096)
def _lookup_name(hostname: str) -> str | None:
    """``hostname`` as a DNS name, or None for an IP literal or nothing. Cached: asked for every URI
    issued, and answering a name costs an ``ip_address`` attempt and its exception (issue 14)."""
    host = hostname.rstrip(".").lower()
    if not host:
        return None
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return host
    return None


class DnsRequest(Request):
    """A Scrapy request for ``dns:HOST`` (Scrapy's Request wants ``scheme://`` in every URL)."""

    def _set_url(self, url: str) -> None:
        if isinstance(url, str) and is_dns(url):
            self._url = url
            return
        super()._set_url(url)


def zone_block(host: str, started: datetime, addresses: list[str], ttl_s: int) -> bytes:
    """The WARC block of a dns: record: 14-digit fetch time, then one zone-file line per answer."""
    lines = [f"{started.astimezone(UTC):%Y%m%d%H%M%S}"]
    for ip in addresses:
        rtype = "AAAA" if ":" in ip else "A"
        lines.append(f"{host}.\t{ttl_s}\tIN\t{rtype}\t{ip}")
    return ("\n".join(lines) + "\n").encode("ascii")


def system_resolver(path: str | Path = "/etc/resolv.conf") -> str | None:
    """The first ``nameserver`` the system resolver asks (None if it cannot be read)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "nameserver":
            return parts[1]
    return None


class DnsCache:
    """Per host name, for the job: pending, or resolved / failed until an expiry time."""

    def __init__(self) -> None:
        self._state: dict[str, tuple[str, float]] = {}
        self._lookups: dict[str, int] = {}

    def state(self, host: str, now: float) -> str:
        kind, expires = self._state.get(host, (UNKNOWN, 0.0))
        if kind in (RESOLVED, FAILED) and now >= expires:
            return UNKNOWN  # the TTL expired: look it up again
        return kind

    def mark_pending(self, host: str) -> int:
        """The host's lookup is queued; returns its ordinal (0 for the first) for the seen-set key."""
        self._state[host] = (PENDING, 0.0)
        n = self._lookups.get(host, 0)
        self._lookups[host] = n + 1
        return n

    def forget(self, host: str) -> None:
        """Not pending after all (its lookup could not be queued): the next URI of the host asks again."""
        self._state.pop(host, None)

    def resolved(self, host: str, ttl_s: float, now: float) -> None:
        self._state[host] = (RESOLVED, now + ttl_s)

    def failed(self, host: str, ttl_s: float, now: float) -> None:
        self._state[host] = (FAILED, now + ttl_s)

    def expires(self, host: str) -> float:
        """When the host's answer (or failure) expires and its next URI asks again (0: not known)."""
        return self._state.get(host, (UNKNOWN, 0.0))[1]

    def snapshot(self) -> dict[str, Any]:
        return {"state": {h: list(v) for h, v in self._state.items()}, "lookups": dict(self._lookups)}

    def restore(self, data: dict[str, Any]) -> None:
        for host, (kind, expires) in (data.get("state") or {}).items():
            self._state[host] = (str(kind), float(expires))
        self._lookups.update({h: int(n) for h, n in (data.get("lookups") or {}).items()})


@dataclass(slots=True)
class DnsCapture:
    """One lookup as archived (``request.meta["nh_capture"]`` for a dns: request)."""

    url: str
    host: str
    started: datetime
    thread: int = 0
    addresses: list[str] = field(default_factory=list)
    ttl_s: int = DNS_TTL_S
    block: bytes = b""
    resolver_ip: str | None = None
    duration_ms: int = 0
    status: int = S_DNS_SUCCESS

    @property
    def content_size(self) -> int:
        return len(self.block)

    @property
    def sha1(self) -> bytes:
        return hashlib.sha1(self.block).digest()

    def close(self) -> None:
        """Nothing spooled (the same interface as :class:`harvester.fetch.RawCapture`)."""


def _resolve(host: str) -> list[str]:
    infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    addresses: list[str] = []
    for family, _, _, _, sockaddr in infos:
        ip = str(sockaddr[0])
        if family in (socket.AF_INET, socket.AF_INET6) and ip not in addresses:
            addresses.append(ip)
    # A records before AAAA, as a zone file lists them.
    return [a for a in addresses if ":" not in a] + [a for a in addresses if ":" in a]


class DNSDownloadHandler:
    """Scrapy download handler for the ``dns`` scheme: ``DOWNLOAD_HANDLERS = {"dns": …}``.

    Returns a :class:`scrapy.http.Response` with status 1 and the zone block as body; raises
    Scrapy's ``CannotResolveHostError`` (``meta["nh_failure"] = -1``) when the name does not resolve.
    """

    lazy = False

    def __init__(self, crawler: Crawler) -> None:
        self.ttl_s = nh_setting(crawler.settings, "NH_DNS_TTL_S")
        self.resolver_ip = system_resolver()
        self.slots = FetchSlots.of(crawler)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DNSDownloadHandler:
        return cls(crawler)

    async def download_request(self, request: Request) -> Response:
        from scrapy.utils.defer import maybe_deferred_to_future
        from twisted.internet.threads import deferToThread

        host = dns_host(request.url)
        thread = self.slots.take()
        request.meta["nh_thread"] = thread
        started = datetime.now(UTC)
        t0 = time.monotonic()
        try:
            addresses = await maybe_deferred_to_future(deferToThread(_resolve, host))
        except (OSError, UnicodeError) as exc:
            request.meta["nh_failure"] = S_DNS_FAILED
            raise CannotResolveHostError(f"DNS lookup failed for {host}: {exc}") from exc
        finally:
            self.slots.give_back(thread)
        if not addresses:
            request.meta["nh_failure"] = S_DNS_FAILED
            raise CannotResolveHostError(f"DNS lookup failed for {host}: no address")
        capture = DnsCapture(
            url=request.url,
            host=host,
            started=started,
            thread=thread,
            addresses=addresses,
            ttl_s=self.ttl_s,
            block=zone_block(host, started, addresses, self.ttl_s),
            resolver_ip=self.resolver_ip,
            duration_ms=int((time.monotonic() - t0) * 1000),
        )
        request.meta["nh_capture"] = capture
        return Response(url=request.url, status=S_DNS_SUCCESS, headers={"Content-Type": DNS_MIME}, body=capture.block)

    async def close(self) -> None:
        return None
