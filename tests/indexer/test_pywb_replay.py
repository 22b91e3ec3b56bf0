"""pywb replays harvested pages from our CDX (or CDXJ) and PATH index: the whole indexing path a
job's WARCs take (choose a location, verified copy + replica, CDX per WARC, PATH lines, merge into
master files) and then an independent replay tool reading only those files.

pywb runs from its own virtual environment (``.venv/tools/pywb``, made by ``deploy/dev.py
install``): pywb 2.10 pins ``redis==2.10.6``, which Celery's Redis transport (``redis>=4.5``)
cannot share an environment with, so it cannot be in the ``test`` extra. It is started as a
subprocess on 127.0.0.1 with a config naming our files.
"""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from indexer.cdx import CDX_HEADER, iter_cdx_lines, write_cdx, write_cdxj
from indexer.merge import merge_sorted
from indexer.pathindex import path_line, write_path_file
from indexer.transfer import Location, choose_location, copy_verified, sha256_file
from tests.conftest import free_port
from tests.replayhelp import pywb_tool

REPO = Path(__file__).resolve().parents[2]
WAYBACK = REPO / ".venv" / "tools" / "pywb" / "bin" / "wayback"


@pytest.fixture(scope="module")
def wayback_bin() -> Path:
    return pywb_tool(WAYBACK)


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def store_and_index(warcs: list[Path], root: Path, cdxj: bool) -> tuple[Path, Path, dict[str, Path]]:
    """The chain's transfer, backup, index and merge steps for these WARCs; returns the master index,
    the master PATH file and each WARC's primary copy."""
    locations = [
        Location("store1", root / "store1"),
        Location("store2", root / "store2"),
        Location("backup", root / "backup", replica=True),
    ]
    for loc in locations:
        loc.path.mkdir(parents=True)
    day = root / "day"
    index_files, path_lines, primary = [], [], {}
    for warc in warcs:
        size, sha = warc.stat().st_size, sha256_file(warc)
        loc = choose_location(locations, size)
        backup = choose_location(locations, size, replica=True)
        primary[warc.name] = copy_verified(warc, loc.path / warc.name, sha)
        copy_verified(warc, backup.path, sha)
        path_lines.append(path_line(warc.name, loc.path, backup.path))
        out = day / (warc.name + (".cdxj" if cdxj else ".cdx"))
        (write_cdxj if cdxj else write_cdx)(primary[warc.name], out)
        index_files.append(out)
    day_path = day / "day.path"
    write_path_file(path_lines, day_path)
    master = root / "index" / ("master.cdxj" if cdxj else "master.cdx")
    merge_sorted(index_files, master, header=None if cdxj else CDX_HEADER)
    master_path = root / "index" / "master.path"
    merge_sorted([day_path], master_path)
    return master, master_path, primary


def start_wayback(binary: Path, root: Path, index: Path, path_index: Path) -> tuple[subprocess.Popen[bytes], str]:
    (root / "config.yaml").write_text(
        "enable_auto_colls: false\nframed_replay: false\n"
        f"collections:\n  nh:\n    index_paths: {index}\n    archive_paths: {path_index}\n"
    )
    port = free_port()
    log = open(root / "wayback.log", "wb")
    proc = subprocess.Popen(
        [str(binary), "-b", "127.0.0.1", "-p", str(port), "-d", str(root)],
        cwd=root,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):  # up to 60 s for pywb to start (a loaded CI machine)
        if proc.poll() is not None:
            raise AssertionError((root / "wayback.log").read_text())
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, base
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError("pywb did not start: " + (root / "wayback.log").read_text())


@pytest.mark.parametrize("cdxj", [False, True], ids=["cdx11", "cdxj"])
def test_pywb_replays_from_our_index_and_path_file(two_jobs, wayback_bin, tmp_path, cdxj):
    master, master_path, primary = store_and_index(two_jobs.all_warcs, tmp_path, cdxj)
    proc, base = start_wayback(wayback_bin, tmp_path, master, master_path)
    try:
        home = two_jobs.site_urls[0]
        job1_lines = [ln.split(b" ") for w in two_jobs.job1 for ln in iter_cdx_lines(w)]
        ts1 = next(f[1] for f in job1_lines if f[2] == home.encode()).decode()
        status, body = get(f"{base}/nh/{ts1}id_/{home}")
        live = get(home)[1]
        assert status == 200 and body == live

        # A revisit of job 2 replays with job 1's payload: pywb resolved it through our index.
        revisit = next(
            ln.split(b" ")
            for w in two_jobs.job2
            for ln in iter_cdx_lines(w)
            if b" warc/revisit 200 " in ln and ln.split(b" ")[2].endswith(b".html")
        )
        url, ts2 = revisit[2].decode(), revisit[1].decode()
        status, body = get(f"{base}/nh/{ts2}id_/{url}")
        assert status == 200 and body == get(url)[1]

        # A lost primary copy: the PATH line's replica serves the same capture.
        for copy in primary.values():
            copy.unlink()
        status, body = get(f"{base}/nh/{ts1}id_/{home}")
        assert status == 200 and body == live

        # Not archived: pywb says so rather than serving anything.
        assert get(f"{base}/nh/{ts1}id_/http://never-crawled.example/")[0] == 404
    finally:
        proc.terminate()
        proc.wait(10)
