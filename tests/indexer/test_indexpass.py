"""The index step's single pass: its CDX and dedup captures equal the two separate passes' outputs, byte for
byte, on hand-built and real harvester WARCs; the file is opened once; the capture spool keeps order when it
spills; a bad WARC still fails with file and offset and leaves no CDX."""

from __future__ import annotations

import builtins
from pathlib import Path

import pytest

from indexer import indexpass
from indexer.cdx import write_cdx
from indexer.dedup import DedupIndex
from indexer.dedupfeed import add_warc, iter_captures
from indexer.indexpass import CaptureSpool, index_warc
from indexer.warcscan import WarcFormatError
from tests.indexer.warcs import build_warc, corrupt_deflate


def opens_of(monkeypatch: pytest.MonkeyPatch, target: Path) -> list[str]:
    """Record every ``open`` of ``target`` (any module, any mode) from now on."""
    seen: list[str] = []
    real_open = builtins.open

    def counting_open(file, *args, **kwargs):  # type: ignore[no-untyped-def]
        if isinstance(file, (str, Path)) and Path(file).resolve() == target.resolve():
            seen.append(str(args[0] if args else kwargs.get("mode", "r")))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    return seen


def dump(index_path: Path) -> list[tuple]:
    with DedupIndex(index_path) as idx:
        return (
            idx.db.execute("SELECT * FROM by_digest ORDER BY digest").fetchall()
            + idx.db.execute("SELECT * FROM by_url ORDER BY url").fetchall()
        )


def assert_one_pass_equals_two(warc: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    two_cdx = tmp / f"{warc.name}.two.cdx"
    expected_records = write_cdx(warc, two_cdx, filename="spool-name.warc.gz")
    expected_captures = list(iter_captures(warc, "spool-name.warc.gz"))
    with DedupIndex(tmp / f"{warc.name}.two.sqlite") as idx:
        add_warc(idx, warc, "spool-name.warc.gz")

    monkeypatch.setattr(indexpass, "SPOOL_BATCH", 3)  # spill to the temporary file several times
    opens = opens_of(monkeypatch, warc)
    one_cdx = tmp / f"{warc.name}.one.cdx"
    result = index_warc(warc, one_cdx, filename="spool-name.warc.gz")
    monkeypatch.undo()
    assert opens == ["rb"]  # the WARC is read once for both outputs
    with result.captures, DedupIndex(tmp / f"{warc.name}.one.sqlite") as idx:
        assert result.records == expected_records
        assert list(result.captures) == expected_captures
        assert idx.add(result.captures) == len(expected_captures)
    assert one_cdx.read_bytes() == two_cdx.read_bytes()
    assert dump(tmp / f"{warc.name}.one.sqlite") == dump(tmp / f"{warc.name}.two.sqlite")


@pytest.mark.parametrize("gzip", [True, False])
def test_one_pass_equals_the_two_passes_on_built_warcs(tmp_path, monkeypatch, gzip):
    warc = build_warc(tmp_path / ("a.warc.gz" if gzip else "a.warc"), gzip=gzip)
    assert_one_pass_equals_two(warc, tmp_path, monkeypatch)


def test_one_pass_equals_the_two_passes_on_harvester_warcs(two_jobs, tmp_path, monkeypatch):
    for warc in two_jobs.all_warcs:
        assert_one_pass_equals_two(warc, tmp_path, monkeypatch)


def test_no_captures_for_a_metadata_warc_and_the_same_cdx(tmp_path):
    warc = build_warc(tmp_path / "a.warc.gz")
    result = index_warc(warc, tmp_path / "a.cdx", captures=False)
    write_cdx(warc, tmp_path / "b.cdx")
    assert len(result.captures) == 0 and list(result.captures) == []
    assert (tmp_path / "a.cdx").read_bytes() == (tmp_path / "b.cdx").read_bytes()


def test_a_bad_warc_names_file_and_offset_and_writes_no_cdx(tmp_path):
    warc = build_warc(tmp_path / "a.warc.gz")
    offset = corrupt_deflate(warc)
    with pytest.raises(WarcFormatError, match=rf"{warc}.*offset {offset}"):
        index_warc(warc, tmp_path / "a.cdx")
    assert not (tmp_path / "a.cdx").exists()


def test_the_spool_keeps_arrival_order_across_spills_and_rereads():
    from indexer.dedup import Capture

    caps = [Capture(f"sha1:{i}", f"http://e.com/{i}", "20260101000000", "f", i) for i in range(10)]
    with CaptureSpool(batch=4) as spool:
        for c in caps:
            spool.append(c)
        assert spool.spill is not None and len(spool.pending) == 2  # two batches on disk, two in memory
        assert list(spool) == caps and list(spool) == caps and len(spool) == 10
