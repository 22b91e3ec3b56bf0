"""Walk a WARC file record by record, yielding each record's headers, HTTP head, offset and length.

Why not warcio's ArchiveIterator: an index needs only the WARC header block and the HTTP head of
each record, plus where the record starts and how many (compressed) bytes it takes. warcio builds
a full record object and reads every payload through several Python stream layers; here each gzip
member is inflated in growing slices straight from a file buffer (with ISA-L's inflate when the
``isal`` package is installed, 2–3× zlib), the head is kept and the rest of the output is counted
and dropped. Memory stays bounded whatever the record size: at most one input slice, one bounded
output slice and the head (``MAX_HEAD`` bytes) are held at a time.

Offsets and lengths follow warcio (and so cdxj-indexer and pywb): for ``.warc.gz`` the length is
the whole gzip member, for an uncompressed ``.warc`` it runs to the end of the record block without
the blank lines between records. Errors name the file and the offset: a torn last record, a gzip
member holding several records (a whole-file gzip, not seekable by replay tools), or a file that
is not a WARC at all.
"""

from __future__ import annotations

import hashlib
import os
import re
import zlib
from base64 import b32encode
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

try:  # ISA-L's inflate is 2-3x zlib's; same API (decompressobj, unused_data, unconsumed_tail).
    from isal import isal_zlib as _inflate_lib
except ImportError:  # pragma: no cover - isal is a dependency; zlib keeps the indexer working without it
    _inflate_lib = zlib  # type: ignore[assignment]

#: What a corrupt deflate stream raises: ISA-L's IsalError is not a zlib.error subclass, so both are
#: named, or a corrupt member would escape as a raw traceback instead of naming file and offset.
_INFLATE_ERRORS: tuple[type[Exception], ...] = tuple({zlib.error, _inflate_lib.error})

#: Bytes of decompressed head (WARC header block + HTTP head) kept per record; beyond that the
#: HTTP head is treated as absent (warcio would read it, but no real server sends 1 MiB of headers).
MAX_HEAD = 1 << 20
#: Raw file read size and the largest compressed slice fed to the inflater at once.
READ_SIZE = 1 << 20
MAX_SLICE = 1 << 18
#: The first compressed slice fed to a member's inflater (doubling up to MAX_SLICE). At the end of a member
#: the inflater copies the rest of its slice out as ``unused_data``, so a first slice much larger than the
#: typical member (a request's is ~400 bytes, a page's a few KiB) costs a copy per record, and its larger
#: output is kept as the head: 2 KiB takes 8 % fewer instructions per file than 16 KiB did (valgrind,
#: docs/BENCHMARKS.md "Indexer").
FIRST_SLICE = 1 << 11
#: Output limit per inflate call, so a highly compressible body never inflates into a huge buffer.
MAX_OUT = 1 << 22
#: Whitespace tolerated after a record's block inside its gzip member (WARC ends records with CRLF CRLF).
MAX_TRAILER = 64

#: Records whose HTTP head is parsed (an index needs no request heads: not parsing them saves a third
#: of the per-record work on a harvester's WARCs, where every response has its request).
HTTP_RECORD_TYPES = frozenset({"response", "revisit"})


class WarcFormatError(ValueError):
    """The file is not a (well-formed, record-per-member) WARC; the message names file and offset."""


@dataclass(slots=True)
class WarcRecordHead:
    """One record as an index sees it. ``headers`` maps lower-cased WARC header names to the first
    value; ``http_headers`` likewise for the HTTP head of a response or revisit (None otherwise).
    A ``request`` record's headers hold only ``warc-type`` and ``content-length``: no index uses
    more, and they are half the records of a harvester's WARC."""

    offset: int
    length: int
    headers: dict[str, str]
    http_status_line: str | None = None
    http_headers: dict[str, str] | None = None
    payload_sha1: str | None = None  # computed only when the record lacks WARC-Payload-Digest
    content_length: int = 0

    @property
    def rec_type(self) -> str:
        return self.headers.get("warc-type", "")

    @property
    def target_uri(self) -> str:
        uri = self.headers.get("warc-target-uri", "")
        if uri.startswith("<") and uri.endswith(">"):  # WARC 1.0 drafts' bracketed form, as warcio strips it
            uri = uri[1:-1]
        return uri.replace(" ", "%20")  # as warcio does: a blank would break every index format

    @property
    def http_status(self) -> str | None:
        """The status code as warcio gives it (first token after the protocol)."""
        if self.http_status_line is None or not self.http_status_line:
            return None
        parts = self.http_status_line.split(" ", 1)
        if len(parts) < 2:
            return None
        return parts[1].split(" ", 1)[0] or None

    @property
    def payload_digest(self) -> str | None:
        """``sha1:<base32>`` from WARC-Payload-Digest, or computed from the payload if the header is absent."""
        return self.headers.get("warc-payload-digest") or self.payload_sha1


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("iso-8859-1")


_REQUEST_HEAD = re.compile(rb"\nContent-Length:[ \t]*(\d+)[ \t]*\r?\n", re.IGNORECASE)


def _parse_header_lines(block: bytes) -> tuple[str, dict[str, str]]:
    """First line + headers (first value wins, names lower-cased), with folded continuation lines,
    LF-only line ends and lines without a colon tolerated exactly as warcio's parser does (UTF-8,
    falling back to ISO-8859-1 line by line)."""
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError:
        text = "\n".join(_decode(raw) for raw in block.split(b"\n"))
    lines = text.split("\n")
    first = lines[0].strip()
    headers: dict[str, str] = {}
    if "\n " not in text and "\n\t" not in text:  # the usual case: no folded lines
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if not colon:
                if not line.strip():
                    break
                continue
            name = name.rstrip(" \t").lower()
            if name not in headers:
                headers[name] = value.strip()
        return first, headers
    name: str | None = None
    value = ""
    for line in lines[1:]:
        if not line.strip():
            break
        if line[0] in " \t":
            if name is not None:
                value += line.rstrip()
            continue
        if name is not None and name not in headers:
            headers[name] = value
        n, colon, v = line.partition(":")
        name, value = (n.rstrip(" \t").lower(), v.strip()) if colon else (None, "")
    if name is not None and name not in headers:
        headers[name] = value
    return first, headers


def _head_end(buf: bytes | bytearray, start: int = 0) -> int:
    """Index just past the blank line that ends a head (CRLF CRLF or LF LF), or -1."""
    crlf = buf.find(b"\r\n\r\n", start)
    # LF-only heads are rare: look for one only before the CRLF end (a binary body may be long).
    lf = buf.find(b"\n\n", start, crlf + 3 if crlf >= 0 else len(buf))
    if crlf < 0 and lf < 0:
        return -1
    if lf < 0 or (crlf >= 0 and crlf + 2 <= lf):
        return crlf + 4
    return lf + 2


class _RecordParser:
    """Accumulates a record's decompressed bytes: keeps the head, hashes the payload when needed,
    counts the rest. Shared by the gzip and the plain path."""

    __slots__ = (
        "head",
        "head_done",
        "headers",
        "warc_len",
        "block_len",
        "total",
        "http_start",
        "status_line",
        "http_headers",
        "want_http",
        "hasher",
        "payload_start",
        "trailer",
        "path",
        "offset",
        "first_line",
    )

    def __init__(self, path: Path, offset: int) -> None:
        self.path = path
        self.offset = offset
        self.head: bytes | bytearray = b""
        self.head_done = False
        self.headers: dict[str, str] | None = None
        self.warc_len = 0  # WARC header block length incl. its blank line
        self.block_len = 0
        self.total = 0
        self.status_line: str | None = None
        self.http_headers: dict[str, str] | None = None
        self.want_http = False
        self.hasher: hashlib._Hash | None = None
        self.payload_start = 0  # offset in the decompressed record where the payload begins
        self.trailer = b""  # bytes after the block inside the member (bounded; empty in a good WARC)
        self.first_line = ""

    def feed(self, out: bytes | bytearray) -> None:
        start = self.total
        self.total += len(out)
        if not self.head_done:
            if not self.head:  # the first output slice, kept as it is (most records' heads are whole in it)
                self.head = out
            else:
                if not isinstance(self.head, bytearray):  # appending to bytes would copy it every time
                    self.head = bytearray(self.head)
                self.head += out
            self._try_head()
            if not self.head_done and len(self.head) > MAX_HEAD and self.headers is not None:
                self.payload_start = self.warc_len  # an absurd HTTP head: index the record without it
                self._finish_head()
            return
        if self.hasher is not None:
            self._hash(out, start)
        end = self.warc_len + self.block_len
        if self.total > end and len(self.trailer) <= MAX_TRAILER:
            cut = max(0, end - start)
            self.trailer += out[cut : cut + MAX_TRAILER + 1]

    def _hash(self, data: bytes | bytearray, start: int) -> None:
        """Hash the part of ``data`` (which begins at record offset ``start``) inside the payload."""
        lo = max(self.payload_start, start)
        hi = min(self.warc_len + self.block_len, start + len(data))
        if hi > lo:
            self.hasher.update(memoryview(data)[lo - start : hi - start])  # type: ignore[union-attr]

    def _try_head(self) -> None:
        if self.headers is None:
            if len(self.head) >= 5 and not self.head.startswith(b"WARC/"):
                raise WarcFormatError(
                    f"{self.path}: not a WARC record at offset {self.offset} "
                    f"(starts with {bytes(self.head[:20])!r}; ARC files are not supported)"
                )
            end = _head_end(self.head)
            if end < 0:
                if len(self.head) > MAX_HEAD:
                    raise WarcFormatError(f"{self.path}: no end of WARC headers at offset {self.offset}")
                return
            head = self.head
            m = _REQUEST_HEAD.search(head, 0, end) if head.find(b"\nWARC-Type: request\r", 0, end) >= 0 else None
            if m:  # no index needs a request's headers: half the records of a harvester's WARC
                self.first_line, self.headers = "WARC/", {"warc-type": "request", "content-length": m.group(1).decode()}
            else:
                self.first_line, self.headers = _parse_header_lines(bytes(head[:end]))
            if not self.first_line.startswith("WARC/"):
                raise WarcFormatError(
                    f"{self.path}: not a WARC record at offset {self.offset} "
                    f"(starts with {bytes(self.head[:20])!r}; ARC files are not supported)"
                )
            self.warc_len = end
            try:
                self.block_len = int(self.headers.get("content-length", ""))
            except ValueError:
                raise WarcFormatError(
                    f"{self.path}: record at offset {self.offset} has no valid Content-Length"
                ) from None
            rec_type = self.headers.get("warc-type", "")
            uri = self.headers.get("warc-target-uri", "").lstrip("<")
            self.want_http = (
                self.block_len > 0 and rec_type in HTTP_RECORD_TYPES and uri.startswith(("http:", "https:"))
            )
            self.payload_start = end
            if not self.want_http:
                self._finish_head()
                return
        block_end = self.warc_len + self.block_len
        end = _head_end(self.head, self.warc_len)
        if end < 0 or end > block_end:
            if len(self.head) >= block_end:  # the block ends without a blank line: all of it is the head
                self._set_http(bytes(self.head[self.warc_len : block_end]) + b"\r\n")
                self.payload_start = block_end
                self._finish_head()
            return
        self._set_http(bytes(self.head[self.warc_len : end]))
        self.payload_start = end
        self._finish_head()

    def _set_http(self, raw: bytes) -> None:
        status, headers = _parse_header_lines(raw)
        if not status and not headers:
            return
        self.status_line, self.http_headers = status, headers

    def _finish_head(self) -> None:
        assert self.headers is not None
        self.head_done = True
        if not self.headers.get("warc-payload-digest") and self.headers.get("warc-type") != "request":
            self.hasher = hashlib.sha1()
            self._hash(self.head, 0)
        end = self.warc_len + self.block_len
        if len(self.head) > end:  # a small record's whole member came in one slice: keep what follows it
            self.trailer += self.head[end : end + MAX_TRAILER + 1]
        self.head = b""  # nothing of the head is needed any more; free it

    def result(self, length: int, block_present: bool = False) -> WarcRecordHead:
        """The record; ``block_present`` says the caller checked that the whole block is in the file
        (the uncompressed path seeks past blocks instead of reading them)."""
        if self.headers is None:
            raise WarcFormatError(f"{self.path}: truncated record at offset {self.offset} (no complete WARC headers)")
        if not self.head_done:
            self._finish_head()
        if not block_present and self.total < self.warc_len + self.block_len:
            raise WarcFormatError(
                f"{self.path}: truncated record at offset {self.offset}: Content-Length "
                f"{self.block_len}, only {self.total - self.warc_len} bytes present"
            )
        if self.trailer.strip():
            raise WarcFormatError(
                f"{self.path}: the gzip member at offset {self.offset} holds more than one record "
                "(a whole-file gzip is not indexable: replay needs one gzip member per record; "
                "`warcio recompress` fixes such a file)"
            )
        digest = None
        if self.hasher is not None:
            digest = "sha1:" + b32encode(self.hasher.digest()).decode("ascii")
        return WarcRecordHead(
            self.offset, length, self.headers, self.status_line, self.http_headers, digest, self.block_len
        )


def _iter_gzip(f: BinaryIO, path: Path) -> Iterator[WarcRecordHead]:
    buf = f.read(READ_SIZE)
    view = memoryview(buf)
    pos = 0  # position in buf
    base = 0  # file offset of buf[0]
    while True:
        if pos >= len(buf):
            buf, base, pos = f.read(READ_SIZE), base + len(buf), 0
            if not buf:
                return
            view = memoryview(buf)
        offset = base + pos
        d = _inflate_lib.decompressobj(31)
        parser = _RecordParser(path, offset)
        step = FIRST_SLICE
        consumed = 0
        while True:
            if pos >= len(buf):
                buf, base, pos = f.read(READ_SIZE), base + len(buf), 0
                if not buf:
                    raise WarcFormatError(f"{path}: truncated gzip member at offset {offset} (end of file)")
                view = memoryview(buf)
            piece = view[pos : pos + step]
            try:
                out = d.decompress(piece, MAX_OUT)
                parser.feed(out)
                while d.unconsumed_tail and not d.eof:
                    out = d.decompress(d.unconsumed_tail, MAX_OUT)
                    parser.feed(out)
            except _INFLATE_ERRORS as exc:
                if offset == 0 and consumed == 0:
                    raise WarcFormatError(f"{path}: not a gzip-compressed WARC ({exc})") from None
                raise WarcFormatError(f"{path}: corrupt gzip data in the member at offset {offset}: {exc}") from None
            if d.eof:
                used = len(piece) - len(d.unused_data)
                pos += used
                consumed += used
                break
            pos += len(piece)
            consumed += len(piece)
            step = min(step * 2, MAX_SLICE)
        yield parser.result(consumed)
        if pos < len(buf) and buf[pos] != 0x1F:
            _check_only_padding(f, buf[pos:], path, base + pos)
            return


def _check_only_padding(f: BinaryIO, rest: bytes, path: Path, offset: int) -> None:
    """Bytes after the last gzip member: NULs or blank lines (some tools pad) are tolerated, anything
    else is an error rather than silently unindexed data."""
    while rest:
        if rest.strip(b"\0\r\n \t"):
            raise WarcFormatError(f"{path}: data that is not a gzip member at offset {offset}")
        rest = f.read(READ_SIZE)


def _iter_plain(f: BinaryIO, path: Path) -> Iterator[WarcRecordHead]:
    offset = 0
    size = os.fstat(f.fileno()).st_size  # a closed WARC does not grow under the indexer
    while True:
        f.seek(offset)
        # skip blank lines between records (not part of the previous record's length, as in warcio)
        line = f.readline()
        while line and not line.strip():
            offset += len(line)
            line = f.readline()
        if not line:
            return
        parser = _RecordParser(path, offset)
        parser.feed(line)
        while parser.headers is None:
            chunk = f.readline()
            if not chunk:
                break
            parser.feed(chunk)
            if parser.total > MAX_HEAD:
                break
        if parser.headers is None:
            raise WarcFormatError(f"{path}: truncated record at offset {offset} (no complete WARC headers)")
        end = parser.warc_len + parser.block_len
        # Read the HTTP head (and the payload, only when its digest must be computed); seek past the rest.
        while parser.total < end and (not parser.head_done or parser.hasher is not None):
            chunk = f.read(min(1 << 16, end - parser.total))
            if not chunk:
                break
            parser.feed(chunk)
        present = offset + end <= size
        yield parser.result(end, block_present=present)
        offset += end


def iter_records(path: str | Path) -> Iterator[WarcRecordHead]:
    """Every record of a ``.warc`` or ``.warc.gz`` (record-per-member) file, in file order."""
    path = Path(path)
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise WarcFormatError(f"{path}: is a directory, not a WARC file") from None
    with f:
        magic = f.read(5)
        f.seek(0)
        if not magic:
            raise WarcFormatError(f"{path}: empty file, not a WARC")
        if magic[:2] == b"\x1f\x8b":
            yield from _iter_gzip(f, path)
        elif magic == b"WARC/":
            yield from _iter_plain(f, path)
        else:
            raise WarcFormatError(f"{path}: not a WARC file (starts with {magic!r}; ARC files are not supported)")
