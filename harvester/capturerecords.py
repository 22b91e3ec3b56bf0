"""The WARC records of one capture: what a fetch becomes in the archive.

An HTTP fetch is a ``response`` record (head + body as transferred), or a ``revisit`` (the head only) when
it refers to an earlier capture (a duplicate payload or a 304), and always the ``request`` record that
produced it, linked by ``WARC-Concurrent-To``. A ``dns:`` lookup is one ``response`` record of type
``text/dns``, as Heritrix writes it. Pure functions of the capture: deciding *whether* it is a revisit is
:mod:`harvester.revisit`'s job, writing them :mod:`harvester.warcwriter`'s, and
:class:`harvester.archive.ArchiveMiddleware` puts the three together.
"""

from __future__ import annotations

import hashlib

from harvester.dns import DNS_MIME, DnsCapture
from harvester.fetch import RawCapture
from harvester.revisit import Referent
from harvester.warcwriter import WarcRecord, sha1_b32

HTTP_RESPONSE = "application/http; msgtype=response"
HTTP_REQUEST = "application/http; msgtype=request"


def common_headers(date: str, url: str, ip: str | None) -> list[tuple[str, str]]:
    """The headers every record of a capture starts with."""
    headers = [("WARC-Date", date), ("WARC-Target-URI", url)]
    if ip:
        headers.append(("WARC-IP-Address", ip))
    return headers


def response_record(common: list[tuple[str, str]], capture: RawCapture, digest: str) -> WarcRecord:
    """The full response as transferred (``digest``: the payload's, base32)."""
    return WarcRecord(
        type="response",
        headers=[
            *common,
            ("WARC-Payload-Digest", digest),
            ("WARC-Block-Digest", sha1_b32(capture.block_sha1)),
            *([("WARC-Truncated", capture.truncated)] if capture.truncated else []),
        ],
        parts=[capture.response_head, capture.body],
        length=capture.content_size,
        content_type=HTTP_RESPONSE,
    )


def revisit_record(common: list[tuple[str, str]], capture: RawCapture, referent: Referent) -> WarcRecord:
    """The response head only, referring to the capture that holds the payload."""
    head_digest = sha1_b32(hashlib.sha1(capture.response_head).digest())
    refers = [("WARC-Refers-To", referent.record_id)] if referent.record_id else []
    return WarcRecord(
        type="revisit",
        headers=[
            *common,
            ("WARC-Profile", referent.profile),
            ("WARC-Refers-To-Target-URI", referent.target_uri),
            ("WARC-Refers-To-Date", referent.date),
            *refers,
            ("WARC-Payload-Digest", referent.payload_digest),
            ("WARC-Block-Digest", head_digest),
        ],
        parts=[capture.response_head],
        length=len(capture.response_head),
        content_type=HTTP_RESPONSE,
    )


def request_record(common: list[tuple[str, str]], capture: RawCapture, concurrent_to: str) -> WarcRecord:
    """The request bytes as sent, concurrent to the response (or revisit) record."""
    return WarcRecord(
        type="request",
        headers=[
            *common,
            ("WARC-Concurrent-To", concurrent_to),
            ("WARC-Block-Digest", sha1_b32(hashlib.sha1(capture.request_bytes).digest())),
        ],
        parts=[capture.request_bytes],
        length=len(capture.request_bytes),
        content_type=HTTP_REQUEST,
    )


def http_records(
    capture: RawCapture, url: str, date: str, digest: str, referent: Referent | None
) -> tuple[WarcRecord, WarcRecord]:
    """(response or revisit, request) of an HTTP capture."""
    common = common_headers(date, url, capture.peer_ip)
    if referent is None:
        response = response_record(common, capture, digest)
    else:
        response = revisit_record(common, capture, referent)
    return response, request_record(common, capture, response.record_id)


def dns_record(capture: DnsCapture, url: str, date: str, digest: str) -> WarcRecord:
    """A ``dns:`` lookup as Heritrix's WARC writer stores it: Content-Type ``text/dns``, the zone block
    (no HTTP head, so the payload is the block), WARC-IP-Address the resolver."""
    headers = common_headers(date, url, capture.resolver_ip)
    headers += [("WARC-Payload-Digest", digest), ("WARC-Block-Digest", digest)]
    return WarcRecord(
        type="response", headers=headers, parts=[capture.block], length=capture.content_size, content_type=DNS_MIME
    )
