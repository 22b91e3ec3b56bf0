"""A real continuous crawl with the adaptive policy replanning every few seconds (issue 12): the replan runs in
slices between the fetches (``ContinuousCrawlJob._replan_slices``, Twisted's cooperator), and the crawl goes on
through it.

In one call a replan held the crawl for 10 s at 100,000 URIs and 90 s at 1,000,000 (docs/BENCHMARKS.md,
"Continuous crawl at scale"). Here, on a small changing site in accelerated time, each replan must end (the
next one starts after it), the URIs it moves must be fetched at their new times, its plan must reach the
journal, and a restart after kill -9 must go on with that plan."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from crawlhelp import continuous_spec, controlled_crawl, crawl_log, write_spec

from harvester.process import ENGINE_LOG
from tests.changingsite import CLOCK_STRIP, ChangingSite

REPLAN = re.compile(
    r"replan of (\d+) URIs: (\d+) moved; planning [0-9.]+ s in slices of at most [0-9.]+ ms over [0-9.]+ s"
)
ADAPTIVE_SECONDS = {
    "policy": "adaptive",
    "initial_wait_s": {"text": 2, "image": 2, "audio_video": 2, "other": 2},
    "min_wait_s": 1,
    "max_wait_s": 20,
    "replan_interval_s": 3,
    "strip": [CLOCK_STRIP],
}


@pytest.fixture
def site() -> Any:
    s = ChangingSite(fast_period=2.0, slow_period=8.0).start()
    yield s
    s.shutdown()


def _wait_for(predicate: Any, timeout: float) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError("timed out")


def _replans(job_dir: Path) -> list[tuple[int, int]]:
    log = job_dir / ENGINE_LOG
    text = log.read_text(errors="replace") if log.exists() else ""
    return [(int(m[1]), int(m[2])) for m in REPLAN.finditer(text)]


def _plan(job_dir: Path) -> dict[str, Any]:
    con = sqlite3.connect(job_dir / "state" / "frontier.sqlite")
    try:
        row = con.execute("SELECT v FROM kv WHERE k = 'ar_plan'").fetchone()
        return json.loads(row[0]) if row else {}
    finally:
        con.close()


def test_the_crawl_goes_on_while_it_replans_and_a_restart_goes_on_with_the_plan(tmp_path: Path, site: Any) -> None:
    job_dir = tmp_path / "job"
    spec = continuous_spec(
        [site.url],
        job_id=961,
        settings={"min_delay_ms": 200, "max_delay_ms": 200},
        revisit=ADAPTIVE_SECONDS,
        budget_per_s=4.0,
        warc_rotate_s=5,
        pinned={},
    )
    write_spec(job_dir, spec)
    proc = controlled_crawl(job_dir)
    try:
        _wait_for(lambda: len(_replans(job_dir)) >= 4, 60)  # each replan ends: the next one comes after it
        _wait_for(lambda: _plan(job_dir).get("mu") is not None, 10)
        plan = _plan(job_dir)
    finally:
        proc.kill()  # kill -9, mid-crawl
        proc.wait(10)
    replans = _replans(job_dir)
    assert all(uris >= 6 for uris, _ in replans) and any(moved for _, moved in replans), replans
    visits_before = len(crawl_log(job_dir))
    assert visits_before > 12  # every page, and revisits, fetched through the replans

    proc = controlled_crawl(job_dir)
    try:
        _wait_for(lambda: len(crawl_log(job_dir)) > visits_before + 6, 60)  # fetching again
        _wait_for(lambda: len(_replans(job_dir)) > len(replans) + 1, 30)  # and replanning again
        proc.stdin.write(json.dumps({"job_id": 961, "action": "stop", "argument": "", "id": 0}).encode() + b"\n")
        proc.stdin.flush()
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    log = (job_dir / ENGINE_LOG).read_text(errors="replace")
    assert "the replan failed" not in log and "Traceback" not in log
    assert json.loads((job_dir / "jobresult.json").read_text())["status"] == "DONE"
    assert _plan(job_dir)["next_replan_at"] > plan["next_replan_at"]  # the last plan, journalled at the end
