"""Binary search of a SURT key in a sorted CDX file, against a linear scan: random files (keys sharing
prefixes, lines of every length, the CDX header) and a real merged index of two crawls."""

from __future__ import annotations

import random
from pathlib import Path

from indexer.cdx import CDX_HEADER, surt_key, write_cdx
from indexer.cdxsearch import iter_key
from indexer.merge import merge_sorted


def scan(path: Path, key: str) -> list[bytes]:
    prefix = key.encode() + b" "
    return [line.rstrip(b"\n") for line in path.read_bytes().splitlines(keepends=True) if line.startswith(prefix)]


def test_finds_exactly_the_lines_of_a_key(tmp_path: Path) -> None:
    rng = random.Random(7)
    for trial in range(200):
        keys = {f"k{rng.randint(0, 60)}" for _ in range(rng.randint(0, 25))}
        lines = sorted(
            {
                f"{k} {rng.randint(0, 99):02d} {'x' * rng.randint(0, 300)}".encode()
                for k in keys
                for _ in range(rng.randint(1, 4))
            }
        )
        path = tmp_path / f"{trial}.cdx"
        path.write_bytes((CDX_HEADER if trial % 2 else b"") + b"".join(line + b"\n" for line in lines))
        for key in [f"k{i}" for i in range(62)] + ["a", "zz", "k"]:
            assert list(iter_key(path, key)) == scan(path, key), (trial, key)
    assert list(iter_key(path, "")) == []  # the header is no key's line


def test_real_merged_index(two_jobs, tmp_path: Path) -> None:
    parts = []
    for i, warc in enumerate(two_jobs.all_warcs):
        parts.append(tmp_path / f"{i}.cdx")
        write_cdx(warc, parts[-1])
    master = tmp_path / "master.cdx"
    merge_sorted(parts, master, header=CDX_HEADER)
    keys = {line.split(b" ", 1)[0].decode() for line in master.read_bytes().splitlines()[1:]}
    for key in keys:
        assert list(iter_key(master, key)) == scan(master, key)
    home = surt_key(two_jobs.site_urls[0])
    assert len(list(iter_key(master, home))) == 2  # one capture per job
