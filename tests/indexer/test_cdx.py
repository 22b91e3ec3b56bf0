"""CDX lines judged by independent tools: cdxj-indexer derives the same fields from the same
WARCs, and warcio reads back exactly the indexed record at each line's offset and length."""

from __future__ import annotations

import gzip
import io
import subprocess
import sys
from pathlib import Path

import pytest

from indexer.cdx import CDX_HEADER, iter_cdx_lines, iter_cdxj_lines, write_cdx
from indexer.warcscan import WarcFormatError, iter_records
from tests.indexer.warcs import assert_reads_back, build_warc

R = 6  # the redirect field: cdxj-indexer always writes '-' there; we give a 3xx's Location


def fields(line: bytes) -> list[bytes]:
    parts = line.rstrip(b"\n").split(b" ")
    assert len(parts) == 11, line
    return parts


def cdxj_indexer(*args: str) -> bytes:
    return subprocess.run([sys.executable, "-m", "cdxj_indexer.main", *args], check=True, capture_output=True).stdout


@pytest.mark.parametrize("gz", [True, False], ids=["warc.gz", "warc"])
def test_agrees_with_cdxj_indexer_field_by_field(tmp_path, gz):
    warc = build_warc(tmp_path / ("edge.warc.gz" if gz else "edge.warc"), gzip=gz)
    ours = list(iter_cdx_lines(warc))
    theirs = [ln for ln in cdxj_indexer("-11", str(warc)).splitlines(keepends=True) if not ln.startswith(b" CDX")]
    assert len(ours) == len(theirs) == 8  # 3 pages, redirect, no-type, revisit, resource, metadata (not warc-fields)
    for mine, ref in zip(ours, theirs, strict=True):
        a, b = fields(mine), fields(ref)
        assert a[:R] + a[R + 1 :] == b[:R] + b[R + 1 :], (mine, ref)
    by_url = {fields(ln)[2]: fields(ln) for ln in ours}
    assert by_url[b"http://example.com/old"][R] == b"http://example.com/p1?b=2&a=1"
    assert by_url[b"http://example.com/old"][4] == b"301"
    assert by_url[b"http://example.com/again"][3] == b"warc/revisit"
    assert by_url[b"http://example.com/again"][5] == b"A" * 32
    assert by_url[b"http://example.com/p0?b=2&a=1"][0] == b"com,example)/p0?a=1&b=2"
    # a blank in a URL is escaped so that the line still has 11 fields
    assert b"http://Example.com:80/no%20type" in by_url


@pytest.mark.parametrize("gz", [True, False], ids=["warc.gz", "warc"])
def test_cdxj_lines_are_cdxj_indexers(tmp_path, gz):
    warc = build_warc(tmp_path / ("edge.warc.gz" if gz else "edge.warc"), gzip=gz)
    assert b"".join(iter_cdxj_lines(warc)) == cdxj_indexer(str(warc))


@pytest.mark.parametrize("gz", [True, False], ids=["warc.gz", "warc"])
def test_offset_and_length_read_back_exactly_that_record(tmp_path, gz):
    warc = build_warc(tmp_path / ("edge.warc.gz" if gz else "edge.warc"), gzip=gz)
    assert_reads_back(warc, list(iter_cdx_lines(warc)))


def test_write_cdx_sorted_with_header_and_atomic(tmp_path):
    warc = build_warc(tmp_path / "edge.warc.gz")
    out = tmp_path / "out" / "edge.cdx"
    n = write_cdx(warc, out)
    lines = out.read_bytes().splitlines(keepends=True)
    assert lines[0] == CDX_HEADER and n == len(lines) - 1 == 8
    sorted_by_sort = subprocess.run(
        ["sort"], input=b"".join(lines[1:]), capture_output=True, check=True, env={"LC_ALL": "C"}
    ).stdout
    assert b"".join(lines[1:]) == sorted_by_sort
    assert [p.name for p in out.parent.iterdir()] == ["edge.cdx"]  # no temp file left


def test_write_cdx_spills_sorted_runs(tmp_path, monkeypatch):
    import indexer.merge

    monkeypatch.setattr(indexer.merge, "SORT_RUN_LINES", 2)
    warc = build_warc(tmp_path / "edge.warc.gz")
    out = tmp_path / "edge.cdx"
    assert write_cdx(warc, out) == 8
    body = out.read_bytes().splitlines(keepends=True)[1:]
    assert body == sorted(iter_cdx_lines(warc))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edge.cdx", "edge.warc.gz"]


def test_filename_override(tmp_path):
    warc = build_warc(tmp_path / "spool.warc.gz.open")
    assert all(fields(ln)[10] == b"final.warc.gz" for ln in iter_cdx_lines(warc, "final.warc.gz"))


def test_errors_name_the_file(tmp_path):
    missing = tmp_path / "missing.warc.gz"
    with pytest.raises(FileNotFoundError, match="missing.warc.gz"):
        list(iter_cdx_lines(missing))
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(WarcFormatError, match="notes.txt: not a WARC"):
        list(iter_cdx_lines(text))
    empty = tmp_path / "empty.warc.gz"
    empty.write_bytes(b"")
    with pytest.raises(WarcFormatError, match="empty"):
        list(iter_cdx_lines(empty))
    plain_gz = tmp_path / "plain.gz"
    plain_gz.write_bytes(gzip.compress(b"just some text\n"))
    with pytest.raises(WarcFormatError, match="not a WARC record at offset 0"):
        list(iter_cdx_lines(plain_gz))


def test_torn_last_record_is_an_error_with_its_offset(tmp_path):
    warc = build_warc(tmp_path / "edge.warc.gz")
    offsets = [r.offset for r in iter_records(warc)]
    torn = tmp_path / "torn.warc.gz"
    data = warc.read_bytes()
    torn.write_bytes(data[:-10])
    with pytest.raises(WarcFormatError, match=f"offset {offsets[-1]}"):
        list(iter_cdx_lines(torn))


def test_whole_file_gzip_is_refused(tmp_path):
    plain = build_warc(tmp_path / "edge.warc", gzip=False)
    whole = tmp_path / "whole.warc.gz"
    whole.write_bytes(gzip.compress(plain.read_bytes()))
    with pytest.raises(WarcFormatError, match="more than one record"):
        list(iter_cdx_lines(whole))


def test_large_record_memory_is_bounded(tmp_path):
    """A 64 MiB body of zeros (1000:1 compressible) indexes without inflating it into memory."""

    from warcio.warcwriter import WARCWriter

    from tests.indexer.warcs import http

    class Zeros(io.RawIOBase):
        def __init__(self, n: int) -> None:
            self.left = n

        def readable(self) -> bool:
            return True

        def readinto(self, b) -> int:  # type: ignore[no-untyped-def]
            n = min(len(b), self.left)
            b[:n] = bytes(n)
            self.left -= n
            return n

    path = tmp_path / "big.warc.gz"
    size = 64 << 20
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True)
        w.write_record(
            w.create_warc_record(
                "http://example.com/zeros",
                "response",
                payload=Zeros(size),
                length=size + 38,
                http_headers=http(
                    "200 OK", [("Content-Type", "application/octet-stream"), ("Content-Length", str(size))]
                ),
            )
        )
    # In a fresh process: ru_maxrss is a process's all-time peak, which earlier tests here may have set.
    code = (
        "import resource, sys\nfrom indexer.cdx import iter_cdx_lines\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "(line,) = list(iter_cdx_lines(sys.argv[1]))\n"
        "sys.stdout.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) + '\\n')\n"
        "sys.stdout.buffer.write(line)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        check=True,
        capture_output=True,
        cwd=Path(__file__).resolve().parents[2],
    ).stdout
    grown, line = out.split(b"\n", 1)
    assert fields(line)[4] == b"200" and int(fields(line)[8]) == path.stat().st_size
    assert int(grown) < 32 * 1024  # KiB: far less than the 64 MiB body


def test_cli_module_is_importable_without_django():
    code = "import sys, indexer.cdx, indexer.merge, indexer.warcscan; sys.exit('django' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2]).returncode == 0


def test_odd_http_heads_as_the_harvester_keeps_them(tmp_path):
    """Heads archived as received: LF-only line ends, folded headers, no reason phrase, a head with
    no blank line, a non-UTF-8 header byte: cdxj-indexer (warcio's parser) is the judge."""
    from warcio.warcwriter import WARCWriter

    raw = {
        "http://example.com/lf": b"HTTP/1.1 200 OK\nContent-Type: text/plain\n\nok",
        "http://example.com/folded": b"HTTP/1.1 302 Found\r\nLocation: /a\r\nContent-Type: text/html;\r\n"
        b" charset=utf-8\r\n\r\nx",
        "http://example.com/noreason": b"HTTP/1.1 204\r\n\r\n",
        "http://example.com/headonly": b"HTTP/1.1 200 OK\r\nContent-Type: image/gif",
        "http://example.com/latin1": b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Name: caf\xe9\r\n\r\nbody",
    }
    path = tmp_path / "odd.warc.gz"
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True)
        for url, block in raw.items():
            rec = w.create_warc_record(
                url,
                "response",
                payload=io.BytesIO(block),
                length=len(block),
                warc_content_type="application/http; msgtype=response",
            )
            w.write_record(rec)
    ours = list(iter_cdx_lines(path))
    theirs = [ln for ln in cdxj_indexer("-11", str(path)).splitlines(keepends=True) if not ln.startswith(b" CDX")]
    assert len(ours) == len(theirs) == len(raw)
    for mine, ref in zip(ours, theirs, strict=True):
        a, b = fields(mine), fields(ref)
        assert a[:R] + a[R + 1 :] == b[:R] + b[R + 1 :], (mine, ref)
    folded = fields(ours[1])
    assert folded[3] == b"text/html" and folded[4] == b"302" and folded[R] == b"http://example.com/a"
    assert b"".join(iter_cdxj_lines(path)) == cdxj_indexer(str(path))
