"""A rotating WARC 1.1 writer: gzip member per record, ``.open`` while written, resumable after kill -9.

Why not warcio's writer: warcio re-parses and re-serialises the HTTP head it is given (so a header
without a blank after the colon, or an odd reason phrase, would not survive byte for byte), reads a
payload twice to digest it, and compresses at level 9. Here records are serialised directly: the
block is exactly the bytes handed in (the raw request, or the response head + body as received),
digests are computed once upstream while the bytes arrive, and every record is one gzip member, so
any reader (warcio, in our tests) can seek to a record's offset. warcio stays the independent reader.

Files are named ``{job}-{harvest}-{YYYYmmddHHMMSS}-{serial:05d}-{host}.warc.gz`` (ARCHITECTURE.md),
start with a ``warcinfo`` record, are written as ``<name>.open`` and renamed when closed, and rotate
once they reach ``max_bytes`` (checked before each group of records, so a request/response pair
never straddles two files). :func:`recover_open_files` cuts a ``.open`` file left by a crash back to
its last complete gzip member and closes it; a new writer then continues with the next serial.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import socket
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

import harvester

WARC_VERSION = "WARC/1.1"
CONFORMS_TO = "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"
SOFTWARE = f"netharvest/{harvester.__version__}"
OPEN_SUFFIX = ".open"
_CHUNK = 256 * 1024


#: Every pair of base32 digits (RFC 4648 alphabet), indexed by the 10 bits they stand for.
_B32_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_B32_PAIRS = tuple(a + b for a in _B32_DIGITS for b in _B32_DIGITS)
_B32_SHIFTS = tuple(range(150, -1, -10))  # 160 bits: 16 pairs, 32 digits, no padding


def sha1_b32(raw_digest: bytes) -> str:
    """``sha1:<base32>`` as in WARC-Payload-Digest, from a raw 20-byte SHA-1 digest.

    Three per capture: a 20-byte digest is 16 table look-ups, a third of ``base64.b32encode``'s
    time (pure Python in 3.11; ~2 % of a crawl's CPU, issue 14). tests/harvester/test_warcwriter.py
    holds the two equal."""
    if len(raw_digest) != 20:
        return "sha1:" + base64.b32encode(raw_digest).decode("ascii")
    n = int.from_bytes(raw_digest, "big")
    return "sha1:" + "".join([_B32_PAIRS[(n >> shift) & 1023] for shift in _B32_SHIFTS])


def new_record_id() -> str:
    """``<urn:uuid:…>`` of a random (version 4) UUID, formatted as ``str(uuid.uuid4())`` is.

    Built from the 16 random bytes directly (version and variant bits set as RFC 9562 says, as
    ``uuid4`` does): ``uuid.UUID``'s constructor and ``__str__`` are pure Python, twice per capture,
    more than half the cost (issue 14). tests/harvester/test_warcwriter.py checks the form."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"<urn:uuid:{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}>"


def warc_date(when: datetime) -> str:
    """WARC 1.1 date, UTC, with microseconds (as warcio writes WARC/1.1)."""
    when = when.astimezone(UTC)
    return f"{when:%Y-%m-%dT%H:%M:%S}.{when.microsecond:06d}Z"


def this_host() -> str:
    """The machine's host name, made safe for a file name."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname()) or "localhost"


@dataclass
class WarcRecord:
    """One record to write. ``parts`` are bytes or seekable binary files whose lengths add up to
    ``length``; the writer neither hashes nor alters them."""

    type: str
    headers: list[tuple[str, str]]
    parts: Sequence[bytes | BinaryIO]
    length: int
    content_type: str = ""
    record_id: str = field(default_factory=new_record_id)


@dataclass(frozen=True)
class RecordLocation:
    """Where a record landed: file name, offset of its gzip member, and the member's length."""

    filename: str
    offset: int
    length: int


def _serialise_head(record: WarcRecord, warcinfo_id: str | None) -> bytes:
    lines = [WARC_VERSION, f"WARC-Type: {record.type}", f"WARC-Record-ID: {record.record_id}"]
    for name, value in record.headers:
        lines.append(f"{name}: {value}")
        if name == "WARC-Date" and warcinfo_id:
            lines.append(f"WARC-Warcinfo-ID: {warcinfo_id}")
    if record.content_type:
        lines.append(f"Content-Type: {record.content_type}")
    lines.append(f"Content-Length: {record.length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8")


def write_member(out: BinaryIO, record: WarcRecord, warcinfo_id: str | None, level: int) -> int:
    """Write one record as one gzip member (streaming its parts); return the member's length."""
    comp = zlib.compressobj(level, zlib.DEFLATED, 31)
    write = out.write
    n = write(comp.compress(_serialise_head(record, warcinfo_id)))
    for part in record.parts:
        if isinstance(part, bytes | bytearray | memoryview):
            n += write(comp.compress(part))
        else:
            part.seek(0)
            while chunk := part.read(_CHUNK):
                n += write(comp.compress(chunk))
    n += write(comp.compress(b"\r\n\r\n"))
    return n + write(comp.flush())


def warcinfo_block(fields: Iterable[tuple[str, str]]) -> bytes:
    """An ``application/warc-fields`` block; values are kept on one line each."""
    out = []
    for name, value in fields:
        if value is None or value == "":
            continue
        value = str(value).replace("\r", " ").replace("\n", " ")
        out.append(f"{name}: {value}\r\n")
    return "".join(out).encode("utf-8")


def warcinfo_record(filename: str, fields: Sequence[tuple[str, str]]) -> WarcRecord:
    """The ``warcinfo`` record that opens every file: who wrote it, how, for which job."""
    block = warcinfo_block(
        [
            ("software", SOFTWARE),
            ("hostname", socket.gethostname()),
            ("format", "WARC File Format 1.1"),
            ("conformsTo", CONFORMS_TO),
            *fields,
        ]
    )
    return WarcRecord(
        type="warcinfo",
        headers=[("WARC-Date", warc_date(datetime.now(UTC))), ("WARC-Filename", filename)],
        parts=[block],
        length=len(block),
        content_type="application/warc-fields",
    )


def write_warc_file(
    path: str | Path, records: Iterable[WarcRecord], warcinfo: Sequence[tuple[str, str]], compresslevel: int = 6
) -> Path:
    """Write a whole small WARC (warcinfo + ``records``) under ``<path>.open``, then rename it.

    Used for the metadata WARC; replaces an existing file of the same name atomically.
    """
    path = Path(path)
    tmp = path.with_name(path.name + OPEN_SUFFIX)
    with open(tmp, "wb") as out:
        info = warcinfo_record(path.name, warcinfo)
        write_member(out, info, None, compresslevel)
        for record in records:
            write_member(out, record, info.record_id, compresslevel)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)
    return path


def file_sha1(f: BinaryIO) -> tuple[bytes, int]:
    """SHA-1 and length of a seekable file's whole content (streamed)."""
    h = hashlib.sha1()
    f.seek(0)
    size = 0
    while chunk := f.read(_CHUNK):
        h.update(chunk)
        size += len(chunk)
    return h.digest(), size


class RotatingWarcWriter:
    """Writes groups of records into ``{prefix}-{timestamp}-{serial}-{host}.warc.gz`` files.

    ``prefix`` is ``{job}-{harvest}``. ``warcinfo`` holds the fields every file's warcinfo record
    carries (operator, job, harvest, robots policy…); software, hostname, format and conformsTo are
    added here. Opening a writer on a directory first recovers any ``.open`` file of this prefix.
    """

    def __init__(
        self,
        directory: str | Path,
        prefix: str,
        *,
        max_bytes: int,
        warcinfo: Sequence[tuple[str, str]] = (),
        host: str | None = None,
        compresslevel: int = 6,
        max_age_s: float = 0,
    ) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.prefix = prefix
        self.max_bytes = max_bytes
        self.host = host or this_host()
        self.level = compresslevel
        self.warcinfo_fields = list(warcinfo)
        self.recovered = recover_open_files(self.directory, prefix)
        self.serial = next_serial(self.directory, prefix)
        self.closed_files: list[Path] = []
        #: Close a file once it has been open this long (0: only on size), checked on each write and by
        #: :meth:`rotate_if_old` (a continuous crawl's timer): a crawl that never ends hands its files over.
        self.max_age_s = max_age_s
        #: Called with each file's final path right after it is closed (renamed from ``.open``).
        self.on_close: Callable[[Path], None] | None = None
        self._opened_at = 0.0
        self._file: BinaryIO | None = None
        self._path: Path | None = None
        self._warcinfo_id: str | None = None
        #: Bytes written to the current file, counted: ``BufferedWriter.tell()`` is an ``lseek`` system
        #: call, and the offsets of a group's records were asked five times per capture (issue 14).
        self._size = 0

    # -- files -------------------------------------------------------------------------------
    def _open(self) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S")
        name = f"{self.prefix}-{stamp}-{self.serial:05d}-{self.host}.warc.gz"
        self.serial += 1
        self._path = self.directory / (name + OPEN_SUFFIX)
        self._file = open(self._path, "xb")
        self._opened_at = time.time()
        info = warcinfo_record(name, self.warcinfo_fields)
        self._size = write_member(self._file, info, None, self.level)
        self._warcinfo_id = info.record_id
        self._file.flush()

    def _close_current(self) -> None:
        if self._file is None or self._path is None:
            return
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        final = self._path.with_name(self._path.name[: -len(OPEN_SUFFIX)])
        os.replace(self._path, final)
        self.closed_files.append(final)
        self._file = None
        self._path = None
        if self.on_close is not None:
            self.on_close(final)

    def rotate_if_old(self, now: float | None = None) -> bool:
        """Close the current file if it has been open ``max_age_s`` or longer; True if one was closed."""
        if self._file is None or not self.max_age_s:
            return False
        if (now if now is not None else time.time()) - self._opened_at < self.max_age_s:
            return False
        self._close_current()
        return True

    # -- records -----------------------------------------------------------------------------
    def write(self, records: Sequence[WarcRecord]) -> list[RecordLocation]:
        """Write ``records`` into one file (rotating first if the current one is full)."""
        if self._file is not None and self._size >= self.max_bytes:
            self._close_current()
        self.rotate_if_old()
        if self._file is None:
            self._open()
        assert self._file is not None and self._path is not None
        name = self._path.name[: -len(OPEN_SUFFIX)]
        locations = []
        for record in records:
            start = self._size
            try:
                length = write_member(self._file, record, self._warcinfo_id, self.level)
            except BaseException:
                self._size = self._file.tell()  # what did reach the file (a disk full): rotation stays right
                raise
            self._size = start + length
            locations.append(RecordLocation(name, start, length))
        # Hand the bytes to the OS after every group: a kill -9 then loses at most a partial member.
        self._file.flush()
        return locations

    def close(self) -> list[Path]:
        """Close (and rename) the current file; returns every file this writer closed."""
        self._close_current()
        return list(self.closed_files)


# -- crash recovery ---------------------------------------------------------------------------
def complete_members_end(path: str | Path) -> int:
    """Offset just past the last complete gzip member of ``path`` (0 if there is none).

    Decompresses in bounded steps (output discarded), so a highly compressible record does not
    balloon in memory; corrupt data ends the walk at the last good member.
    """
    end = 0
    member_start = 0
    fed = 0
    d = zlib.decompressobj(31)
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            data = chunk
            while data:
                try:
                    d.decompress(data, 1 << 20)
                except zlib.error:
                    return end
                if d.eof:
                    fed += len(data) - len(d.unused_data)
                    end = member_start + fed
                    member_start, fed = end, 0
                    data = d.unused_data
                    d = zlib.decompressobj(31)
                else:
                    tail = d.unconsumed_tail
                    fed += len(data) - len(tail)
                    data = tail
    return end


def recover_open_files(directory: str | Path, prefix: str = "") -> list[Path]:
    """Close ``.open`` WARCs left by a crash: cut each back to its last complete record, then
    rename it; a file with no complete record is removed. Returns the recovered files."""
    recovered = []
    pattern = f"{prefix}-*.warc.gz{OPEN_SUFFIX}" if prefix else f"*.warc.gz{OPEN_SUFFIX}"
    for path in sorted(Path(directory).glob(pattern)):
        end = complete_members_end(path)
        if end == 0:
            path.unlink()
            continue
        with open(path, "rb+") as f:
            f.truncate(end)
            f.flush()
            os.fsync(f.fileno())
        final = path.with_name(path.name[: -len(OPEN_SUFFIX)])
        os.replace(path, final)
        recovered.append(final)
    return recovered


_SERIAL_RE = re.compile(r"-\d{14}-(\d{5,})-")


def next_serial(directory: str | Path, prefix: str) -> int:
    """One past the highest serial already used by ``prefix`` in ``directory`` (0 for none)."""
    highest = -1
    for path in Path(directory).glob(f"{prefix}-*.warc.gz*"):
        match = _SERIAL_RE.search(path.name[len(prefix) :])
        if match:
            highest = max(highest, int(match.group(1)))
    return highest + 1
