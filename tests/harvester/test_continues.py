"""A resubmitted job (``continues_job``) takes over the failed job's spool: it fetches nothing that
job finished before its last checkpoint, carries its WARCs in its own JobResult, and its crawl.log
and reports cover the whole harvest."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from crawlhelp import crawl_log, kill_mid_crawl, make_spec, run_crawl
from warcio.archiveiterator import ArchiveIterator

from harvester.contracts import JobSpec
from harvester.runjob import prepare_job_dir


def test_resubmitted_job_takes_over_the_failed_jobs_spool(tmp_path: Path, sites: Any) -> None:
    a, _ = sites
    old = make_spec([a.url], job_id=401, settings={"min_delay_ms": 60, "max_delay_ms": 60})
    done = kill_mid_crawl(tmp_path / "401", old)
    assert len(done) >= 20
    old_warcs = {p.name.removesuffix(".open") for p in (tmp_path / "401" / "warcs").iterdir()}
    before = len(crawl_log(tmp_path / "401"))

    db = sqlite3.connect(str(tmp_path / "401" / "state" / "frontier.sqlite"))
    with db:  # the failed job had been paused: its successor must not inherit that
        db.execute("INSERT OR REPLACE INTO kv (k, v) VALUES ('paused', 'true')")
    db.close()
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
