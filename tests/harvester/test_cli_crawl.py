"""``netharvest crawl``: the trial crawl through the real console script, and its usage errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from crawlhelp import FAST, REPO, crawl_log, tiny_site

NETHARVEST = [sys.executable, "-c", "import sys; from orchestrator.cli import main; main(sys.argv)"]


def netharvest(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*NETHARVEST, *args], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_trial_crawl_produces_a_jobs_files(tmp_path: Path, sites: Any) -> None:
    a, _ = sites
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(f"# the news section\n\n{a.url}news/\n")
    out = tmp_path / "trial"
    settings = json.dumps({**FAST, "scope": "path"})
    done = netharvest("crawl", "--seeds", str(seeds), "--settings", settings, "--out", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    assert "DOWNLOAD_COMPLETE" in done.stdout
    result = json.loads((out / "jobresult.json").read_text())
    assert result["status"] == "DONE"
    assert {f["kind"] for f in result["files"]} == {"warc", "metadata"}
    assert (out / "logs" / "crawl.log").read_text().count(" 200 ") >= 5
    assert (out / "reports" / "crawl-report.txt").is_file()
    again = netharvest("crawl", "--seeds", str(seeds), "--settings", settings, "--out", str(out))
    assert again.returncode == 2 and "already holds a finished crawl" in again.stderr


def test_bad_input_is_named(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://example.dk/\nftp://nope\n")
    out = str(tmp_path / "x")
    bad_seed = netharvest("crawl", "--seeds", str(seeds), "--template", "default", "--out", out)
    assert bad_seed.returncode == 2 and f"{seeds}:2" in bad_seed.stderr
    seeds.write_text("http://example.dk/\n")
    bad_key = netharvest("crawl", "--seeds", str(seeds), "--settings", '{"max_hopz": 3}', "--out", out)
    assert bad_key.returncode == 2 and "max_hopz" in bad_key.stderr
    no_template = netharvest("crawl", "--seeds", str(seeds), "--out", out)
    assert no_template.returncode == 2 and "--template" in no_template.stderr
    assert not Path(out).exists()  # nothing half-written


def test_an_out_that_cannot_be_a_job_directory_is_one_line(tmp_path: Path) -> None:
    """``--out /etc/passwd`` (a file) was a FileExistsError traceback."""
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://example.dk/\n")
    a_file = tmp_path / "passwd"
    a_file.write_text("root:x:0:0::/root:/bin/sh\n")
    for out, says in [
        (a_file, "exists and is not a directory"),
        (a_file / "job", "cannot create the job directory: Not a directory"),
    ]:
        done = netharvest("crawl", "--seeds", str(seeds), "--template", "default", "--out", str(out))
        assert done.returncode == 2
        assert done.stderr.splitlines() == [
            f"netharvest crawl: error: {out}: {says}"
            + (" (--out names the job directory to create)" if out == a_file else "")
        ]
    assert a_file.read_text() == "root:x:0:0::/root:/bin/sh\n"


def test_a_huge_seed_line_is_a_short_error(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_bytes(b"http://127.0.0.1:9/\n" + b"http://127.0.0.1:9/" + b"a" * (4 << 20) + b"\n")
    done = netharvest("crawl", "--seeds", str(seeds), "--template", "default", "--out", str(tmp_path / "x"))
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert (
        line.startswith(
            f"netharvest crawl: error: {seeds}:2: line longer than 16,384 bytes (4,194,323 bytes, "
            "starting 'http://127.0.0.1:9/aaa"
        )
        and len(line) < 300
    )


def _trapped_site(path: str, n: int) -> tuple[int, bytes]:
    pages = {
        "/": b'<a href="/a">a</a> <a href="/trap/1">deeper</a> <a href="/Trap/2">other</a>',
        "/a": b"<p>a</p>",
        "/trap/1": b'<a href="/trap/2">deeper</a>',
        "/Trap/2": b"<p>kept</p>",
    }
    return (200, pages[path]) if path in pages else (404, b"none")


def test_traps_file_blocks_uris_as_a_job_does(tmp_path: Path) -> None:
    traps = tmp_path / "traps.txt"
    traps.write_text("# the endless section\n\n.*/trap/.*\n")
    out = tmp_path / "trial"
    with tiny_site(_trapped_site) as base:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text(f"{base}\n")
        done = netharvest(
            "crawl",
            "--seeds",
            str(seeds),
            "--settings",
            json.dumps(FAST),
            "--traps",
            str(traps),
            "--out",
            str(out),
            "--quiet",
        )
    assert done.returncode == 0, done.stderr
    spec = json.loads((out / "jobspec.json").read_text())
    assert spec["global_traps"] == [".*/trap/.*"]
    status = {f[3].removeprefix(base): f[1] for f in crawl_log(out)}
    assert status["trap/1"] == "-5001"  # Heritrix's "blocked by a crawler trap", never fetched
    assert status["a"] == "200" and status["Trap/2"] == "200"  # whole-URI match, case-sensitive
    assert "trap/2" not in status


def test_bad_traps_are_named_by_file_and_line(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://example.dk/\n")
    traps = tmp_path / "traps.txt"
    traps.write_text("# comment (\n.*ok.*\n(?=x).*\n\n(\n")
    out = tmp_path / "x"
    done = netharvest("crawl", "--seeds", str(seeds), "--template", "default", "--traps", str(traps), "--out", str(out))
    assert done.returncode == 2
    errors = done.stderr.splitlines()
    assert len(errors) == 2, errors
    assert errors[0].startswith(f"netharvest crawl: error: {traps}:3: lookahead (?=…) is not supported")
    assert errors[1].startswith(f"netharvest crawl: error: {traps}:5: '(' is not a valid regular expression")
    missing = netharvest(
        "crawl",
        "--seeds",
        str(seeds),
        "--template",
        "default",
        "--traps",
        str(tmp_path / "none.txt"),
        "--out",
        str(out),
    )
    assert missing.returncode == 2 and f"{tmp_path / 'none.txt'}: traps file not found" in missing.stderr
    assert not out.exists()
