"""Many DNS lookups at once over a few UDP sockets, for the preload's liveness check.

A resolver that opens a socket per query (as ``dns.asyncresolver`` does) spends more time on socket
set-up than on DNS; a broad crawl checks millions of names. Here a handful of sockets each carry up
to thousands of queries in flight, told apart by their 16-bit id *and* their question (so a late
answer to an earlier attempt, or a spoofed one, is never taken for another name's). The wire format
is read and written here directly, only as far as this check needs (rcode, truncation, the first
A/AAAA of the answer section, after any CNAME chain): dnspython's message objects cost more CPU than
the round trip. dnspython reads /etc/resolv.conf and names the rcodes.

What counts as "failed" follows the BnF's rule (shared/seeds/001…, 2.2.2): only a name that
certainly has no address — NXDOMAIN, or an answer with no A/AAAA for the domain and none for
``www.`` + domain. A timeout, SERVFAIL or REFUSED says nothing about the site, so those are "error"
and the domain is kept.
"""

from __future__ import annotations

import asyncio
import random
import socket
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass

import dns.rcode
import dns.rdatatype

from orchestrator.preload.concurrency import unordered_map

OK, FAILED, ERROR = "ok", "failed", "error"
WWW_ONLY = "only www. has an address"


@dataclass(frozen=True)
class ResolverConfig:
    nameservers: tuple[tuple[str, int], ...] = (("127.0.0.1", 53),)
    concurrency: int = 500
    timeout: float = 2.0
    retries: int = 2
    sockets: int = 4


@dataclass(frozen=True)
class Answer:
    """The outcome for one name: OK with an address, FAILED (certainly no address) or ERROR."""

    status: str
    address: str = ""
    reason: str = ""


def parse_nameserver(value: str) -> tuple[str, int]:
    """``IP`` or ``IP:PORT`` (``[IPv6]:PORT``) → (ip, port); raises ValueError saying why."""
    value = value.strip()
    host, port = value, 53
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        if rest:
            port = int(rest.lstrip(":"))
    elif value.count(":") == 1:
        host, _, p = value.partition(":")
        port = int(p)
    import ipaddress

    ipaddress.ip_address(host)
    if not 0 < port < 65536:
        raise ValueError(f"port {port} out of range")
    return host, port


def system_nameservers() -> tuple[tuple[str, int], ...]:
    """The nameservers of /etc/resolv.conf, as dnspython reads them."""
    import dns.resolver

    resolver = dns.resolver.Resolver()
    return tuple((ns, 53) for ns in resolver.nameservers)


def encode_query(qid: int, name: str, rdtype: int) -> bytes:
    """A recursion-desired query for one question, built directly (dnspython's message objects cost
    more than the network round trip at these rates)."""
    labels = name.rstrip(".").encode("ascii").split(b".")
    if any(not 0 < len(label) < 64 for label in labels):
        raise ValueError(f"{name!r} is not a DNS name (empty label or one over 63 characters)")
    qname = b"".join(bytes([len(label)]) + label for label in labels) + b"\0"
    return (
        qid.to_bytes(2, "big")
        + b"\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
        + qname
        + rdtype.to_bytes(2, "big")
        + b"\x00\x01"
    )


def _skip_name(data: bytes, pos: int) -> int:
    while True:
        length = data[pos]
        if length == 0:
            return pos + 1
        if length & 0xC0 == 0xC0:
            return pos + 2  # a compression pointer ends the name
        pos += 1 + length


@dataclass(frozen=True)
class Reply:
    rcode: int
    truncated: bool
    address: str  # the first record of the asked type in the answer section (after any CNAME chain)


def decode_reply(data: bytes, question: bytes, rdtype: int) -> Reply | None:
    """The rcode and first address of a reply to ``question`` (the query's bytes from offset 12), or None
    when ``data`` is not a well-formed reply to that very question."""
    try:
        flags = int.from_bytes(data[2:4], "big")
        if not flags & 0x8000 or int.from_bytes(data[4:6], "big") != 1:
            return None
        end = 12 + len(question)
        if data[12:end].lower() != question.lower():  # DNS names compare case-insensitively
            return None
        pos, address = end, ""
        for _ in range(int.from_bytes(data[6:8], "big")):
            pos = _skip_name(data, pos)
            rtype = int.from_bytes(data[pos : pos + 2], "big")
            rdlength = int.from_bytes(data[pos + 8 : pos + 10], "big")
            rdata = data[pos + 10 : pos + 10 + rdlength]
            pos += 10 + rdlength
            if rtype == rdtype and len(rdata) == rdlength:
                family = socket.AF_INET if rdtype == dns.rdatatype.A else socket.AF_INET6
                address = socket.inet_ntop(family, rdata)
                break
        return Reply(flags & 0xF, bool(flags & 0x0200), address)
    except (IndexError, ValueError, OSError):
        return None


class _Endpoint(asyncio.DatagramProtocol):
    """One UDP socket and the queries in flight on it, by id."""

    def __init__(self) -> None:
        self.pending: dict[int, tuple[bytes, int, asyncio.Future[Reply]]] = {}
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        entry = self.pending.get(int.from_bytes(data[:2], "big")) if len(data) >= 12 else None
        if entry is None:
            return
        question, rdtype, future = entry
        reply = decode_reply(data, question, rdtype)
        if reply is not None and not future.done():  # garbage or a stray reply: keep waiting
            future.set_result(reply)

    def error_received(self, exc: Exception) -> None:  # e.g. ICMP port unreachable: the timeout handles it
        pass


def _expire(future: asyncio.Future[Reply]) -> None:
    if not future.done():
        future.set_exception(TimeoutError())


class Resolver:
    """``async with Resolver(config) as r: await r.check("example.fr")``."""

    def __init__(self, config: ResolverConfig) -> None:
        self.config = config
        self.endpoints: list[_Endpoint] = []
        self.queries = 0
        self._rng = random.SystemRandom()
        self._by_family: dict[bool, list[_Endpoint]] = {}

    async def __aenter__(self) -> Resolver:
        loop = asyncio.get_running_loop()
        # At least one socket per address family in use.
        families = {":" in host for host, _ in self.config.nameservers}
        count = max(len(families), self.config.sockets)
        for i in range(count):
            v6 = sorted(families)[i % len(families)]
            _, endpoint = await loop.create_datagram_endpoint(_Endpoint, local_addr=("::" if v6 else "0.0.0.0", 0))
            self.endpoints.append(endpoint)
            self._by_family.setdefault(v6, []).append(endpoint)
        return self

    async def __aexit__(self, *exc: object) -> None:
        for endpoint in self.endpoints:
            if endpoint.transport:
                endpoint.transport.close()

    async def query(self, name: str, rdtype: int = dns.rdatatype.A) -> Reply | None:
        """One question, retried on timeout on another socket and the next nameserver; None if no answer."""
        loop = asyncio.get_running_loop()
        nameservers = self.config.nameservers
        start = self._rng.randrange(len(nameservers))
        for attempt in range(self.config.retries + 1):
            ns = nameservers[(start + attempt) % len(nameservers)]  # each retry asks the next nameserver
            sockets = self._by_family[":" in ns[0]]
            endpoint = sockets[self._rng.randrange(len(sockets))]
            qid = self._rng.randrange(65536)
            while qid in endpoint.pending:
                qid = self._rng.randrange(65536)
            wire = encode_query(qid, name, rdtype)
            future: asyncio.Future[Reply] = loop.create_future()
            endpoint.pending[qid] = (wire[12:], rdtype, future)
            timer = loop.call_later(self.config.timeout, _expire, future)
            try:
                assert endpoint.transport is not None
                endpoint.transport.sendto(wire, ns)
                self.queries += 1
                return await future
            except (TimeoutError, OSError):
                continue
            finally:
                timer.cancel()
                endpoint.pending.pop(qid, None)
        return None

    async def address(self, name: str) -> Answer:
        """A, then AAAA: OK with the first address, FAILED on NXDOMAIN/no data, ERROR otherwise."""
        nodata_reason = ""
        for rdtype in (dns.rdatatype.A, dns.rdatatype.AAAA):
            try:
                reply = await self.query(name, rdtype)
            except ValueError as exc:
                return Answer(FAILED, reason=f"not a DNS name ({exc})")
            if reply is None:
                return Answer(ERROR, reason="timeout")
            if reply.rcode == dns.rcode.NXDOMAIN:
                return Answer(FAILED, reason="NXDOMAIN")
            if reply.rcode != dns.rcode.NOERROR:
                return Answer(ERROR, reason=dns.rcode.to_text(reply.rcode))
            if reply.address:
                return Answer(OK, address=reply.address)
            if reply.truncated:
                return Answer(OK, reason="truncated answer")  # too many records to fit: the name exists
            nodata_reason = "no address"
        return Answer(FAILED, reason=nodata_reason)

    async def check(self, domain: str) -> Answer:
        """Is there any address for the domain or its www host? (Many domains answer only on www.)"""
        answer = await self.address(domain)
        if answer.status != FAILED or answer.reason == "NXDOMAIN" or answer.reason.startswith("not a DNS"):
            return answer
        www = await self.address(f"www.{domain}")
        if www.status == OK:
            return Answer(OK, www.address, WWW_ONLY)
        return answer if www.status == FAILED else www


async def check_all(
    resolver: Resolver, domains: Iterable[str], concurrency: int | None = None
) -> AsyncIterator[tuple[str, Answer]]:
    """(domain, Answer) as they complete, at most ``concurrency`` lookups in flight, streaming the input."""
    async for item in unordered_map(resolver.check, domains, concurrency or resolver.config.concurrency):
        yield item
