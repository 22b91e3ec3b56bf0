"""``netharvest crawl``: the trial crawl through the real console script, and its usage errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from crawlhelp import FAST, REPO

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
