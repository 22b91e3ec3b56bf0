"""CDX (and CDXJ) lines for a WARC file: where each capture is, so replay can seek straight to it.

The 11-field ``CDX N b a m s k r M S V g`` format Wayback, OpenWayback and pywb read:

====  ==============================================================================
N     SURT key (``surt.surt``, as cdxj-indexer and pywb compute it)
b     14-digit UTC timestamp from WARC-Date
a     original URL (WARC-Target-URI)
m     MIME type: the HTTP Content-Type for response records, ``warc/revisit`` for revisits,
      the record's Content-Type for resource/metadata records; cut at ``;`` or blank
s     HTTP status, ``-`` where the record has none
k     payload digest, base32 without the ``sha1:`` prefix (computed when the header is missing)
r     redirect: a 3xx response's Location, resolved against the URL; ``-`` otherwise
M     meta tags (robots ``noindex``/``nofollow`` from the page are not parsed): ``-``
S     record length in the file (the gzip member for ``.warc.gz``)
V     record offset in the file
g     file name
====  ==============================================================================

One line per response, revisit, resource and metadata record, as cdxj-indexer chooses them
(it skips resource/metadata records whose Content-Type is ``application/warc-fields``, which hold
no capture). Fields never contain blanks: whitespace inside a URL becomes ``%20``-style escapes,
an empty value becomes ``-``, so every line splits into exactly 11 fields.

Sorting is ``LC_ALL=C`` byte order (what ``sort`` and binary search over CDX files assume);
``write_cdx`` sorts in bounded memory (:func:`indexer.merge.write_sorted`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urljoin

from indexer.merge import write_sorted
from indexer.surtkey import surt_key
from indexer.warcscan import WarcRecordHead, iter_records

__all__ = ["CDX_HEADER", "cdx_line", "iter_cdx_lines", "iter_cdxj_lines", "surt_key", "write_cdx", "write_cdxj"]

CDX_HEADER = b" CDX N b a m s k r M S V g\n"
INDEXED_TYPES = frozenset({"response", "revisit", "resource", "metadata"})

_MIME_CUT = re.compile(r"[;\s]")
_WS = re.compile(r"\s")
_WS_BUT_SPACE = re.compile(r"[^\S ]")
_TS_CHARS = str.maketrans("", "", "-:TZ.")


def _escape(value: str) -> str:
    """No blanks inside a field: whitespace is percent-encoded (Wayback's indexers do the same)."""
    if _WS.search(value):
        return _WS.sub(lambda m: quote(m.group(0), safe=""), value)
    return value


def timestamp14(warc_date: str) -> str:
    """``2026-11-22T18:30:12.345678Z`` → ``20261122183012``; shorter dates are padded as warcio pads them."""
    digits = warc_date.translate(_TS_CHARS)
    if len(digits) >= 14 and digits[:14].isdigit():
        return digits[:14]
    from warcio.timeutils import iso_date_to_timestamp

    return iso_date_to_timestamp(warc_date)


def record_mime(rec: WarcRecordHead) -> str | None:
    rtype = rec.rec_type
    if rtype == "revisit":
        return "warc/revisit"
    if rtype in ("response", "request"):
        value = rec.http_headers.get("content-type") if rec.http_headers else None
    else:
        value = rec.headers.get("content-type")
    if value:
        value = _MIME_CUT.split(value, 1)[0].strip()
    return value or None


def _status(rec: WarcRecordHead) -> str | None:
    if rec.rec_type in ("response", "revisit") and rec.http_headers is not None:
        return rec.http_status
    return None


def _redirect(rec: WarcRecordHead, url: str, status: str) -> str | None:
    if status.startswith("3") and rec.http_headers:
        location = rec.http_headers.get("location")
        if location:
            try:
                return urljoin(url, location.strip())
            except ValueError:
                return location.strip()
    return None


def is_indexed(rec: WarcRecordHead) -> bool:
    """The records a CDX lists (cdxj-indexer's default choice)."""
    rtype = rec.rec_type
    if rtype not in INDEXED_TYPES:
        return False
    if rtype in ("resource", "metadata") and rec.headers.get("content-type") == "application/warc-fields":
        return False
    return True


def cdx_line(rec: WarcRecordHead, name: str) -> bytes:
    """The CDX line of one indexed record (:func:`is_indexed`); ``name`` is the escaped ``g`` field.

    The fields are joined first and escaped only when the line shows whitespace other than its ten
    separators (rare: a blank in a URL, MIME type or Location): one scan of the line instead of one
    per field, the same line either way."""
    url = rec.target_uri
    status = _status(rec) or "-"
    digest = rec.payload_digest
    key = surt_key(url)
    mime = record_mime(rec) or "-"
    redirect = _redirect(rec, url, status) or "-"
    stamp = timestamp14(rec.headers.get("warc-date", ""))
    digest = digest.split(":")[-1] if digest else "-"
    line = f"{key} {stamp} {url or '-'} {mime} {status} {digest} {redirect} - {rec.length} {rec.offset} {name}\n"
    if line.count(" ") != 10 or _WS_BUT_SPACE.search(line, 0, len(line) - 1):
        fields = (
            _escape(key),
            stamp,
            _escape(url) or "-",
            _escape(mime),
            status,
            digest,
            _escape(redirect),
            "-",
            str(rec.length),
            str(rec.offset),
            name,
        )
        line = " ".join(fields) + "\n"
    return line.encode("utf-8", "surrogateescape")


def cdx_name(warc_path: str | Path, filename: str | None = None) -> str:
    """The ``g`` field: ``filename`` (e.g. the name a spool file will have in the archive) or the file's name."""
    return _escape(filename if filename is not None else os.path.basename(warc_path))


def iter_cdx_lines(warc_path: str | Path, filename: str | None = None) -> Iterator[bytes]:
    """One CDX line per indexed record, in file order (not sorted). ``filename`` overrides the
    ``g`` field (e.g. the name a spool file will have in the archive)."""
    name = cdx_name(warc_path, filename)
    for rec in iter_records(warc_path):
        if is_indexed(rec):
            yield cdx_line(rec, name)


def iter_cdxj_lines(warc_path: str | Path, filename: str | None = None) -> Iterator[bytes]:
    """pywb's CDXJ: ``<surt> <timestamp> {json}`` with cdxj-indexer's keys and order (url, mime,
    status, digest, length, offset, filename), so pywb's own tools read it unchanged."""
    name = filename if filename is not None else os.path.basename(warc_path)
    for rec in iter_records(warc_path):
        if not is_indexed(rec):
            continue
        url = rec.target_uri
        data: dict[str, str] = {"url": url}
        mime = record_mime(rec)
        if mime is not None:
            data["mime"] = mime
        status = _status(rec)
        if status is not None:
            data["status"] = status
        digest = rec.payload_digest
        if digest:
            data["digest"] = digest
        data["length"] = str(rec.length)
        data["offset"] = str(rec.offset)
        data["filename"] = name
        key = _escape(surt_key(url))
        line = f"{key} {timestamp14(rec.headers.get('warc-date', ''))} {json.dumps(data)}\n"
        yield line.encode("utf-8", "surrogateescape")


def write_cdx(warc_path: str | Path, out_path: str | Path, filename: str | None = None) -> int:
    """Write the sorted CDX of one WARC (header first); returns the number of lines (without the
    header). The file appears complete or not at all."""
    return write_sorted(iter_cdx_lines(warc_path, filename), out_path, CDX_HEADER)


def write_cdxj(warc_path: str | Path, out_path: str | Path, filename: str | None = None) -> int:
    """Write the sorted CDXJ of one WARC for pywb (no header line); returns the number of lines."""
    return write_sorted(iter_cdxj_lines(warc_path, filename), out_path, None)
