"""A tiny authoritative-style DNS server on loopback for the preload's tests and benchmark.

It answers A queries from a rule (name → IPv4 or None), with NXDOMAIN for None, and NOERROR with no
data for other types and for names the rule marks ``"nodata"``; SERVFAIL for ``"servfail"``; silence
for ``"drop"``. It
builds answers from the query's bytes directly, so one Python process serves tens of thousands of
queries a second — enough to measure the client, not the server.

    python -m tests.preload.dns_server --port 5353 --rule bench   # as the benchmark starts it
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import threading
from collections import Counter
from collections.abc import Callable

Rule = Callable[[str], "str | None"]

A, AAAA = 1, 28


def _question(data: bytes) -> tuple[str, int, int] | None:
    """(lower-case name, qtype, offset past the question) or None when it is not a plain query."""
    pos, labels = 12, []
    while pos < len(data):
        length = data[pos]
        if length == 0:
            pos += 1
            break
        if length & 0xC0:
            return None
        labels.append(data[pos + 1 : pos + 1 + length].decode("ascii", "replace"))
        pos += 1 + length
    if pos + 4 > len(data):
        return None
    qtype = int.from_bytes(data[pos : pos + 2], "big")
    return ".".join(labels).lower(), qtype, pos + 4


def respond(data: bytes, rule: Rule) -> bytes | None:
    if len(data) < 12:
        return None
    question = _question(data)
    if question is None:
        return None
    name, qtype, end = question
    ip = rule(name)
    if ip == "drop":
        return None
    flags = 0x8180  # response, RD, RA
    answers = b""
    ancount = 0
    if ip == "servfail":
        flags |= 2
    elif ip == "nodata":
        pass  # the name exists (it has names below it) but has no address
    elif ip is None:
        flags |= 3  # NXDOMAIN
    elif qtype == A:
        ancount = 1
        answers = (
            b"\xc0\x0c"
            + A.to_bytes(2, "big")
            + b"\x00\x01"
            + (60).to_bytes(4, "big")
            + b"\x00\x04"
            + socket.inet_aton(ip)
        )
    header = data[:2] + flags.to_bytes(2, "big") + b"\x00\x01" + ancount.to_bytes(2, "big") + b"\x00\x00\x00\x00"
    return header + data[12:end] + answers


class _Protocol(asyncio.DatagramProtocol):
    def __init__(self, server: DNSServer) -> None:
        self.server = server

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        question = _question(data)
        if question:
            self.server.queries[question[0]] += 1
        reply = respond(data, self.server.rule)
        if reply is not None:
            self.transport.sendto(reply, addr)  # type: ignore[attr-defined]


class DNSServer:
    """``with DNSServer(rule) as server: server.port`` — served from a background thread."""

    def __init__(self, rule: Rule, port: int = 0) -> None:
        self.rule = rule
        self.port = port
        self.queries: Counter[str] = Counter()
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()

    def __enter__(self) -> DNSServer:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._started.wait(10)
        return self

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        transport, _ = self._loop.run_until_complete(
            self._loop.create_datagram_endpoint(lambda: _Protocol(self), local_addr=("127.0.0.1", self.port))
        )
        self.port = transport.get_extra_info("sockname")[1]
        self._started.set()
        self._loop.run_forever()
        transport.close()

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


def bench_rule(name: str) -> str | None:
    """The benchmark's world: names whose first label ends in 0 do not exist; the rest live on loopback."""
    first = name.split(".", 1)[0]
    if first == "www":
        first = name.split(".", 2)[1]
    return None if first.endswith("0") else "127.0.0.1"


def main() -> None:
    parser = argparse.ArgumentParser(description="a loopback DNS server for the preload benchmark")
    parser.add_argument("--port", type=int, default=5353)
    args = parser.parse_args()

    async def serve() -> None:
        server = DNSServer(bench_rule, args.port)
        loop = asyncio.get_running_loop()
        await loop.create_datagram_endpoint(lambda: _Protocol(server), local_addr=("127.0.0.1", args.port))
        print(f"serving DNS on 127.0.0.1:{args.port}", flush=True)
        await asyncio.Event().wait()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
