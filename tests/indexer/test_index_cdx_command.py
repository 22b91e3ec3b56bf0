"""`netharvest index cdx WARC…`: sorted CDX on stdout, header first; errors name the file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from indexer.cdx import CDX_HEADER, iter_cdx_lines
from tests.indexer.warcs import build_warc, corrupt_deflate

REPO = Path(__file__).resolve().parents[2]
NETHARVEST = Path(sys.executable).with_name("netharvest")


def run(*args: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    return subprocess.run([str(NETHARVEST), "index", "cdx", *args], capture_output=True, cwd=REPO, env=env)


def test_prints_sorted_cdx_of_several_files(tmp_path):
    a = build_warc(tmp_path / "a.warc.gz")
    b = build_warc(tmp_path / "b.warc", gzip=False)
    result = run(str(a), str(b))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines(keepends=True)
    assert lines[0] == CDX_HEADER
    assert lines[1:] == sorted([*iter_cdx_lines(a), *iter_cdx_lines(b)])
    assert len(lines) == 17


def test_cdxj_option(tmp_path):
    a = build_warc(tmp_path / "a.warc.gz")
    result = run("--cdxj", str(a))
    assert result.returncode == 0 and result.stdout.startswith(b"com,example)/again ")


def test_errors_name_the_file_and_print_nothing(tmp_path):
    good = build_warc(tmp_path / "good.warc.gz")
    result = run(str(good), str(tmp_path / "missing.warc.gz"))
    assert result.returncode == 1 and result.stdout == b""
    assert b"missing.warc.gz: no such file" in result.stderr
    junk = tmp_path / "junk.warc.gz"
    junk.write_bytes(b"<html>not a warc</html>")
    result = run(str(good), str(junk))
    assert result.returncode == 1 and result.stdout == b""
    assert b"junk.warc.gz: not a WARC file" in result.stderr
    assert run().returncode == 2


def test_corrupt_deflate_data_is_one_line_naming_file_and_offset(tmp_path):
    """ISA-L's IsalError is no zlib.error: it escaped as a raw traceback."""
    bad = build_warc(tmp_path / "bad.warc.gz")
    offset = corrupt_deflate(bad)
    result = run(str(bad))
    assert result.returncode == 1 and result.stdout == b""
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"netharvest index cdx: {bad}: corrupt gzip data in the member at offset {offset}: ")


def test_overview_mentions_it():
    out = subprocess.run([str(NETHARVEST), "--help"], capture_output=True, cwd=REPO).stdout
    assert b"index cdx WARC" in out


def test_unsorted_keeps_file_order(tmp_path):
    a = build_warc(tmp_path / "a.warc.gz")
    result = run("--unsorted", str(a))
    assert result.returncode == 0
    assert result.stdout == CDX_HEADER + b"".join(iter_cdx_lines(a))
