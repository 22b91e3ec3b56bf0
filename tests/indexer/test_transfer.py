"""Locations by free space, verified copies that leave nothing behind, immutable names."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from contextlib import contextmanager
from pathlib import Path

import pytest

from indexer import transfer
from indexer.merge import write_sorted
from indexer.transfer import (
    ChecksumMismatch,
    Location,
    NameConflict,
    NoSpaceError,
    choose_location,
    copy_verified,
    sha256_file,
    verify_copy,
)


def make_file(path: Path, data: bytes = b"WARC/1.1\r\n" * 1000) -> tuple[Path, str]:
    path.write_bytes(data)
    return path, hashlib.sha256(data).hexdigest()


def test_sha256_file_streams(tmp_path):
    src, digest = make_file(tmp_path / "a.warc.gz", b"x" * (3 << 20))
    assert sha256_file(src) == digest


def test_choose_location_most_free_among_primary(tmp_path, monkeypatch):
    dirs = {n: tmp_path / n for n in ("small", "big", "backup", "gone")}
    for n, d in dirs.items():
        if n != "gone":
            d.mkdir()
    free = {"small": 10_000, "big": 50_000, "backup": 10**9}
    monkeypatch.setattr(Location, "free_bytes", lambda self: free[self.name])
    locs = [
        Location("small", dirs["small"]),
        Location("big", dirs["big"]),
        Location("backup", dirs["backup"], replica=True),
        Location("gone", dirs["gone"]),
    ]
    assert choose_location(locs, 5_000).name == "big"
    assert choose_location(locs, 5_000, exclude=["big"]).name == "small"
    assert choose_location(locs, 5_000, replica=True).name == "backup"
    with pytest.raises(NoSpaceError) as err:
        choose_location(locs, 60_000)
    msg = str(err.value)
    assert "60000 bytes" in msg and "big" in msg and "50000 bytes free" in msg and "gone" in msg and "missing" in msg
    assert "backup" not in msg  # replicas are never primary candidates
    with pytest.raises(NoSpaceError, match="none configured"):
        choose_location([], 1)


def test_choose_location_real_free_space(tmp_path):
    loc = Location("local", tmp_path)
    assert choose_location([loc], 1) == loc
    with pytest.raises(NoSpaceError):
        choose_location([loc], shutil.disk_usage(tmp_path).total * 2)


def test_copy_verified_and_idempotent(tmp_path):
    src, digest = make_file(tmp_path / "job1.warc.gz")
    dest_dir = tmp_path / "store" / "2026"
    final = copy_verified(src, dest_dir / src.name, digest)
    assert final == dest_dir / "job1.warc.gz" and final.read_bytes() == src.read_bytes()
    assert final.stat().st_mtime_ns == src.stat().st_mtime_ns
    inode = final.stat().st_ino
    assert copy_verified(src, dest_dir, digest) == final  # a directory destination, and a repeat
    assert final.stat().st_ino == inode
    assert sorted(p.name for p in dest_dir.iterdir()) == ["job1.warc.gz"]
    assert verify_copy(final, digest) == "ok"


def test_corrupt_source_is_not_copied(tmp_path):
    src, digest = make_file(tmp_path / "job1.warc.gz")
    src.write_bytes(b"bit rot" + src.read_bytes()[7:])
    dest = tmp_path / "store"
    with pytest.raises(ChecksumMismatch, match="job1.warc.gz"):
        copy_verified(src, dest / src.name, digest)
    assert list(dest.iterdir()) == []


def test_bad_copy_is_removed(tmp_path, monkeypatch):
    """A copy whose read-back differs (a failing disk) is deleted and reported."""
    src, digest = make_file(tmp_path / "job1.warc.gz")
    real = transfer.sha256_file
    monkeypatch.setattr(transfer, "sha256_file", lambda p, *tick: "0" * 64 if ".part" in str(p) else real(p))
    dest = tmp_path / "store"
    with pytest.raises(ChecksumMismatch, match="read back"):
        copy_verified(src, dest / src.name, digest)
    assert list(dest.iterdir()) == []


def test_different_file_same_name_is_refused(tmp_path):
    src, digest = make_file(tmp_path / "job1.warc.gz")
    dest = tmp_path / "store"
    dest.mkdir()
    (dest / "job1.warc.gz").write_bytes(b"another file")
    with pytest.raises(NameConflict, match="refusing"):
        copy_verified(src, dest, digest)
    assert (dest / "job1.warc.gz").read_bytes() == b"another file"
    assert verify_copy(dest / "job1.warc.gz", digest) == "corrupt"
    assert verify_copy(dest / "nope.warc.gz", digest) == "missing"


def test_full_disk_leaves_nothing(tmp_path, monkeypatch):
    src, digest = make_file(tmp_path / "job1.warc.gz")
    dest = tmp_path / "store"
    dest.mkdir()

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(transfer.os, "fsync", full)
    with pytest.raises(OSError, match="No space"):
        copy_verified(src, dest, digest)
    assert list(dest.iterdir()) == []


@contextmanager
def umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_copies_and_indexes_take_the_umask_mode_not_0600(tmp_path, mask, mode):
    """Stored WARCs and indexes were 0600 (tempfile.mkstemp), unreadable to a replay service running
    as another user whatever the operator's umask."""
    src = tmp_path / "job1.warc.gz"
    src.write_bytes(b"warc bytes")
    with umask(mask):
        copied = copy_verified(src, tmp_path / "store", sha256_file(src))
        write_sorted([b"b\n", b"a\n"], tmp_path / "index" / "master.cdx", header=b" CDX\n")
    assert stat.S_IMODE(copied.stat().st_mode) == mode
    assert stat.S_IMODE((tmp_path / "index" / "master.cdx").stat().st_mode) == mode
