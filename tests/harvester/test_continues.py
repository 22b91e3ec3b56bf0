"""A resubmitted job (``continues_job``) takes over the failed job's spool: it fetches nothing that
job finished before its last checkpoint, carries its WARCs in its own JobResult, and its crawl.log
and reports cover the whole harvest."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

from crawlhelp import crawl_log, make_spec, run_crawl, start_crawl, write_spec
from warcio.archiveiterator import ArchiveIterator

from harvester.contracts import JobSpec
from harvester.tasks import prepare_job_dir


def _kill_mid_crawl(job_dir: Path, spec: dict[str, Any]) -> set[str]:
    """Start the crawl, kill -9 it after a checkpoint; the URIs done at that checkpoint."""
    write_spec(job_dir, spec)
    proc = start_crawl(job_dir)
    log = job_dir / "logs" / "crawl.log"
    deadline = time.time() + 30
    while time.time() < deadline:
        if log.exists() and len(log.read_text().splitlines()) >= 25:
            break
        time.sleep(0.05)
    time.sleep(1.2)  # at least one checkpoint (every second) after those lines
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    db = sqlite3.connect(str(job_dir / "state" / "frontier.sqlite"))
    try:
        return {url for (url,) in db.execute("SELECT url FROM uris WHERE state=1")}
    finally:
        db.close()


def test_resubmitted_job_takes_over_the_failed_jobs_spool(tmp_path: Path, sites: Any) -> None:
    a, _ = sites
    old = make_spec([a.url], job_id=401, settings={"min_delay_ms": 60, "max_delay_ms": 60})
    done = _kill_mid_crawl(tmp_path / "401", old)
    assert len(done) >= 20
    old_warcs = {p.name.removesuffix(".open") for p in (tmp_path / "401" / "warcs").iterdir()}
    before = len(crawl_log(tmp_path / "401"))

    new = {**old, "job_id": 402, "continues_job": 401}
    job_dir = prepare_job_dir(JobSpec.from_dict(new), root=tmp_path)
    assert job_dir == tmp_path / "402"
    result = run_crawl(job_dir, new)
    assert result["status"] == "DONE"
    assert result["domains"][0]["stop_reason"] == "DOWNLOAD_COMPLETE"

    lines = crawl_log(job_dir)
    assert len(lines) > before  # the old job's lines, then this job's
    refetched = {f[3] for f in lines[before:] if not f[1].startswith("-")} & done
    assert not refetched, f"fetched again by the resubmitted job: {sorted(refetched)}"
    statuses = {f[3]: f[1] for f in lines}
    assert statuses[f"{a.url}news/article6.html"] == "200"
    assert statuses[f"{a.url}orphan.html"] == "200"

    # The failed job's WARCs (its unfinished one recovered) are this job's to deliver.
    names = {f["name"] for f in result["files"]}
    assert old_warcs and old_warcs <= names
    assert {n for n in names if n.startswith("402-7-")}
    assert not list((tmp_path / "401" / "warcs").glob("*.warc.gz*"))
    for f in result["files"]:
        with open(f["path"], "rb") as fh:
            assert next(iter(ArchiveIterator(fh))).rec_type == "warcinfo"

    # The reports count the whole harvest, as the JobResult does.
    report = json.loads((job_dir / "reports" / "domain-report.json").read_text())
    assert report["domains"]["site-a"]["objects"] == result["domains"][0]["objects"]
