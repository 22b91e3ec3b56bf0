"""The preload's DNS wire handling against dnspython's encoder, and redirect-target rules."""

import dns.flags
import dns.message
import dns.rcode
import dns.rrset
import pytest

from orchestrator.preload.redirects import Probe
from orchestrator.preload.resolver import decode_reply, encode_query, parse_nameserver


def reply_to(query: bytes, *answers: tuple[str, str, str], rcode: int = 0, tc: bool = False) -> bytes:
    message = dns.message.make_response(dns.message.from_wire(query))
    message.set_rcode(rcode)
    if tc:
        message.flags |= dns.flags.TC
    for name, kind, value in answers:
        message.answer.append(dns.rrset.from_text(name, 60, "IN", kind, value))
    return message.to_wire()


def test_a_query_dnspython_reads_and_a_reply_after_a_cname_chain():
    query = encode_query(4242, "Example.fr", 1)
    parsed = dns.message.from_wire(query)
    assert parsed.id == 4242 and str(parsed.question[0].name) == "Example.fr." and parsed.flags & dns.flags.RD
    wire = reply_to(query, ("Example.fr.", "CNAME", "host.cdn.net."), ("host.cdn.net.", "A", "192.0.2.7"))
    reply = decode_reply(wire, query[12:], 1)
    assert (reply.rcode, reply.address, reply.truncated) == (0, "192.0.2.7", False)


def test_aaaa_nxdomain_truncation():
    query = encode_query(1, "example.fr", 28)
    assert (
        decode_reply(reply_to(query, ("example.fr.", "AAAA", "2001:db8::1")), query[12:], 28).address == "2001:db8::1"
    )
    assert decode_reply(reply_to(query, rcode=dns.rcode.NXDOMAIN), query[12:], 28).rcode == dns.rcode.NXDOMAIN
    assert decode_reply(reply_to(query, tc=True), query[12:], 28).truncated


def test_a_reply_to_another_question_or_garbage_is_ignored():
    query = encode_query(7, "example.fr", 1)
    other = encode_query(7, "example.com", 1)
    assert decode_reply(reply_to(other, ("example.com.", "A", "192.0.2.1")), query[12:], 1) is None
    assert decode_reply(query, query[12:], 1) is None  # a query, not a reply
    assert decode_reply(b"\x00\x07\x81\x80\x00\x01\x00\x05" + query[8:], query[12:], 1) is None  # cut short


def test_names_that_cannot_be_asked_are_refused():
    with pytest.raises(ValueError):
        encode_query(1, "a" * 64 + ".fr", 1)
    with pytest.raises(ValueError):
        encode_query(1, "a..fr", 1)


def test_nameserver_syntax():
    assert parse_nameserver("127.0.0.1") == ("127.0.0.1", 53)
    assert parse_nameserver("127.0.0.1:5353") == ("127.0.0.1", 5353)
    assert parse_nameserver("[::1]:5353") == ("::1", 5353)


def test_redirect_targets():
    assert Probe("http://a.fr/", 301, "http://www.b.com/x").target_domain == "b.com"
    assert Probe("http://a.fr/", 302, "/elsewhere").target_domain is None  # relative: same host
    assert Probe("http://a.fr/", 301, "https://www.a.fr/").target_domain is None  # same domain
    assert Probe("http://a.fr/", 200, "http://b.com/").target_domain is None  # not a redirect
    assert Probe("http://a.fr/", 307, "ftp://b.com/").target_domain is None
    assert Probe("http://a.co.uk/", 308, "http://shop.b.co.uk/").target_domain == "b.co.uk"


def test_lookups_over_ipv4_and_ipv6_nameservers_and_timeouts_are_errors():
    import asyncio
    import socket

    from orchestrator.preload.resolver import ERROR, FAILED, OK, Resolver, ResolverConfig
    from tests.preload.dns_server import DNSServer

    def rule(name):
        return {"live.fr": "127.0.0.1", "slow.fr": "drop", "www.wwwonly.fr": "127.0.0.1", "wwwonly.fr": "nodata"}.get(
            name
        )

    async def ask(port):
        # A second nameserver that never answers (nothing listens): retries go to the live one.
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as dead:
            dead.bind(("::1", 0))
            config = ResolverConfig(
                nameservers=(("127.0.0.1", port), ("::1", dead.getsockname()[1])), timeout=0.3, retries=1, sockets=2
            )
            async with Resolver(config) as resolver:
                return [await resolver.check(n) for n in ("live.fr", "gone.fr", "slow.fr", "wwwonly.fr")]

    with DNSServer(rule) as server:
        live, gone, slow, wwwonly = asyncio.run(ask(server.port))
    assert (live.status, live.address) == (OK, "127.0.0.1")
    assert (gone.status, gone.reason) == (FAILED, "NXDOMAIN")
    assert (slow.status, slow.reason) == (ERROR, "timeout")
    assert (wwwonly.status, wwwonly.address) == (OK, "127.0.0.1")
