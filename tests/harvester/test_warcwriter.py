"""The rotating WARC writer: names, warcinfo first, rotation, .open handling, crash recovery."""

from __future__ import annotations

import hashlib
import io
import random
import re
import zlib
from datetime import UTC, datetime

import pytest
from warcio.archiveiterator import ArchiveIterator

from harvester.warcwriter import (
    RotatingWarcWriter,
    WarcRecord,
    complete_members_end,
    next_serial,
    recover_open_files,
    sha1_b32,
    warc_date,
)


def resource(i: int, size: int = 2000) -> WarcRecord:
    body = f"record {i} ".encode() + random.Random(i).randbytes(size)  # incompressible
    return WarcRecord(
        type="resource",
        headers=[
            ("WARC-Date", warc_date(datetime.now(UTC))),
            ("WARC-Target-URI", f"http://x/{i}"),
            ("WARC-Block-Digest", sha1_b32(hashlib.sha1(body).digest())),
        ],
        parts=[io.BytesIO(body)],
        length=len(body),
        content_type="text/plain",
    )


def read_all(path):
    with open(path, "rb") as f:
        out = []
        for rec in ArchiveIterator(f, check_digests=True):
            rec.content_stream().read()
            assert rec.digest_checker.passed is not False
            out.append(
                (
                    rec.rec_type,
                    rec.rec_headers.get_header("WARC-Target-URI"),
                    rec.rec_headers.get_header("WARC-Warcinfo-ID"),
                )
            )
        return out


def test_names_warcinfo_first_and_rotation(tmp_path):
    w = RotatingWarcWriter(tmp_path, "12-34", max_bytes=3000, warcinfo=[("operator", "ops")], host="crawler1")
    for i in range(6):
        w.write([resource(i)])
        assert len(list(tmp_path.glob("*.open"))) == 1  # being written under a temporary name
    files = w.close()
    assert not list(tmp_path.glob("*.open"))
    assert len(files) >= 3
    serials = []
    for path in files:
        m = re.fullmatch(r"12-34-(\d{14})-(\d{5})-crawler1\.warc\.gz", path.name)
        assert m, path.name
        serials.append(int(m.group(2)))
        recs = read_all(path)
        assert recs[0][0] == "warcinfo"
        assert all(r[2] for r in recs[1:])  # every record names its file's warcinfo
    assert serials == list(range(len(files)))
    total = [r for p in files for r in read_all(p) if r[0] == "resource"]
    assert [r[1] for r in total] == [f"http://x/{i}" for i in range(6)]


def test_a_group_never_straddles_files(tmp_path):
    w = RotatingWarcWriter(tmp_path, "1-1", max_bytes=1, host="h")
    locs = w.write([resource(1), resource(2)])
    assert locs[0].filename == locs[1].filename
    assert locs[1].offset == locs[0].offset + locs[0].length
    w.close()


@pytest.mark.parametrize("cut", [1, 10, 200])
def test_recovery_cuts_a_killed_file_back_to_its_last_whole_record(tmp_path, cut):
    w = RotatingWarcWriter(tmp_path, "5-6", max_bytes=10**9, host="h")
    locs = [w.write([resource(i, 5000)])[0] for i in range(3)]
    w._file.flush()  # simulate kill -9: the file stays .open, the last member is torn
    open_path = w._path
    w._file.close()
    data = open_path.read_bytes()
    open_path.write_bytes(data[: len(data) - cut])
    assert complete_members_end(open_path) == locs[1].offset + locs[1].length

    w2 = RotatingWarcWriter(tmp_path, "5-6", max_bytes=10**9, host="h")
    assert [p.name for p in w2.recovered] == [open_path.name[: -len(".open")]]
    recovered = read_all(w2.recovered[0])
    assert [r[1] for r in recovered if r[0] == "resource"] == ["http://x/0", "http://x/1"]
    w2.write([resource(9)])
    files = w2.close()
    assert re.search(r"-00001-h\.warc\.gz$", files[0].name)  # continues with the next serial
    assert not list(tmp_path.glob("*.open"))


def test_recovery_removes_a_file_without_any_whole_record(tmp_path):
    (tmp_path / "5-6-20260101000000-00000-h.warc.gz.open").write_bytes(b"\x1f\x8b\x08\x00garbage")
    assert recover_open_files(tmp_path, "5-6") == []
    assert not list(tmp_path.iterdir())
    assert next_serial(tmp_path, "5-6") == 0


def test_next_serial_ignores_other_jobs(tmp_path):
    (tmp_path / "5-6-20260101000000-00004-h.warc.gz").write_bytes(b"")
    (tmp_path / "5-61-20260101000000-00009-h.warc.gz").write_bytes(b"")
    assert next_serial(tmp_path, "5-6") == 5


def test_sha1_b32_is_base32_of_the_digest() -> None:
    import base64

    from harvester.warcwriter import sha1_b32

    rng = random.Random(14)
    digests = [hashlib.sha1(b"").digest(), bytes(20), b"\xff" * 20, b"\x00" * 19 + b"\x01", b"short"]
    digests += [rng.randbytes(20) for _ in range(2000)]
    for d in digests:
        assert sha1_b32(d) == "sha1:" + base64.b32encode(d).decode("ascii")
    assert sha1_b32(hashlib.sha1(b"").digest()) == "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"


def test_record_ids_are_random_version_4_uuids_in_uuid4s_form() -> None:
    """new_record_id builds the UUID from os.urandom itself (issue 14): the form, version and variant
    must be those of ``str(uuid.uuid4())``, and ids must not repeat."""
    import uuid

    from harvester.warcwriter import new_record_id

    ids = [new_record_id() for _ in range(5000)]
    assert len(set(ids)) == len(ids)
    for rid in ids:
        assert rid.startswith("<urn:uuid:") and rid.endswith(">")
        parsed = uuid.UUID(rid[len("<urn:uuid:") : -1])
        assert str(parsed) == rid[len("<urn:uuid:") : -1]
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
    # every non-fixed bit takes both values: the 122 random bits are really random
    ints = [uuid.UUID(rid[10:-1]).int for rid in ids]
    fixed = (0xF << 76) | (0x3 << 62)
    varying = 0
    for n in ints:
        varying |= n ^ ints[0]
    assert varying == ((1 << 128) - 1) & ~fixed


def test_record_locations_are_the_members_offsets_in_the_files(tmp_path):
    """The writer counts its bytes instead of asking the file (issue 14): every location is where its
    gzip member really starts and ends, across rotations and records streamed from files."""
    w = RotatingWarcWriter(tmp_path, "7-8", max_bytes=6000, host="h")
    locs = []
    for i in range(9):
        spooled = io.BytesIO(random.Random(i).randbytes(3000))
        streamed = WarcRecord(
            type="resource", headers=[("WARC-Target-URI", f"http://y/{i}")], parts=[b"x", spooled], length=3001
        )
        locs += w.write([resource(i, 1500 * (i % 3)), streamed])
    files = w.close()
    assert len(files) > 2
    by_name = {p.name: p.read_bytes() for p in files}
    for loc in locs:
        data = by_name[loc.filename]
        member = data[loc.offset : loc.offset + loc.length]
        d = zlib.decompressobj(31)
        d.decompress(member)
        assert d.eof and d.unused_data == b""  # exactly one whole member
        assert (
            loc.offset + loc.length == len(data)
            or data[loc.offset + loc.length : loc.offset + loc.length + 2] == b"\x1f\x8b"
        )
