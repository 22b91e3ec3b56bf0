"""The adaptive policy's replan in a continuous crawl (issue 12): it runs in slices between the fetches
(``ContinuousCrawlJob._replan_slices``, Twisted's cooperator).

In one call a replan held the crawl for 10 s at 100,000 URIs and 90 s at 1,000,000 (docs/BENCHMARKS.md,
"Continuous crawl at scale"). A real crawl of a small changing site in accelerated time replans every 3 s
through a kill -9 and a stop (each replan ends, so the next one comes; the plan reaches the journal); the
reactor runs between a replan's slices; a checkpoint or a failed lookup between a plan and its moves loses
nothing."""

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
from tests.changingsite import REVISIT_SECONDS, ChangingSite
from tests.conftest import wait_for

REPLAN = re.compile(
    r"replan of (\d+) URIs: (\d+) moved; planning [0-9.]+ s in slices of at most [0-9.]+ ms over [0-9.]+ s"
)
ADAPTIVE_SECONDS = {**REVISIT_SECONDS, "policy": "adaptive", "replan_interval_s": 3}


@pytest.fixture
def site() -> Any:
    s = ChangingSite(fast_period=2.0, slow_period=8.0).start()
    yield s
    s.shutdown()


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


def test_a_real_crawl_replans_again_and_again_through_a_kill_and_a_stop(tmp_path: Path, site: Any) -> None:
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
        wait_for(lambda: len(_replans(job_dir)) >= 4, 60, "four replans")  # each ends: the next comes after it
        wait_for(lambda: _plan(job_dir).get("mu") is not None, 10, "a plan in the journal")
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
        wait_for(lambda: len(crawl_log(job_dir)) > visits_before + 6, 60, "fetches after the restart")
        wait_for(lambda: len(_replans(job_dir)) > len(replans) + 1, 30, "replans after the restart")
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


# -- the replan's slices in the job, driven by hand or by a reactor -------------------------------------------
def _crawled_job(tmp_path: Path, n: int) -> tuple[Any, float]:
    """A continuous job (no crawl) whose ``n`` URIs were each visited once, and a time after those visits."""
    from harvester.continuous import ContinuousCrawlJob
    from harvester.contracts import JobSpec
    from harvester.revisit.policy import Visit
    from harvester.urimeta import UriMeta

    revisit = {**ADAPTIVE_SECONDS, "initial_wait_s": {"text": 600}, "replan_interval_s": 3600}
    job = ContinuousCrawlJob(
        JobSpec.from_dict(continuous_spec(["http://a.example/"], revisit=revisit, budget_per_s=1.0)), tmp_path
    )
    f, t = job.ar, time.time() - 100
    for i in range(n):
        url = f"http://a.example/p{i}"
        f.add(url, url, UriMeta(path="", domain="a.example"))
    for i, entry in enumerate(list(f.entries.values())):
        t += 0.5
        f.out.add(entry.id)
        at = job.policy.visited(entry.url, Visit(200, "text/html", 10, 0.1, None, None, f"sha1:{i}"), t)
        f.planned(entry, at)
        f.finished(entry, t, 0.0)
    job.checkpoint()
    return job, t + 1


def test_a_replans_plan_is_journalled_once_its_moves_are_in_the_frontier_and_a_time_set_meanwhile_stays(
    tmp_path: Path,
) -> None:
    """Review: between the policy's plan and the last of its moves in the frontier the crawl goes on. A checkpoint
    then must not journal the plan (a kill -9 would leave a restart that does not replan, with the moves lost for
    six hours), and a URI whose time the frontier set meanwhile (a failed DNS lookup's retry in a minute) keeps
    it instead of the plan's."""
    from harvester.revisit.policy import Visit

    job, now = _crawled_job(tmp_path, 30)
    f, policy = job.ar, job.policy
    before = policy.next_replan_at
    job._replan, f.plan_pending = "running", True  # as _start_replan does
    slices = job._replan_slices(now)
    while policy.next_replan_at == before:
        next(slices)  # the policy's part
    job.checkpoint()  # a checkpoint between the plan and its moves in the frontier
    assert _plan(tmp_path).get("next_replan_at") != policy.next_replan_at
    retried = f.entries[f.by_url["http://a.example/p3"]]
    policy.visited(retried.url, Visit(-6, None, 0, 0.0, None, None, None), now + 1)  # its DNS lookup failed
    f.reschedule(retried.url, now + 60)  # the frontier retries it in a minute
    for _ in slices:
        pass
    assert f.next_at[retried.id] == now + 60
    others = [e for e in f.entries.values() if e is not retried and e.url in policy.uris]
    assert len(others) >= 30 and all(f.next_at[e.id] == policy.uris[e.url].next_at for e in others)  # the moves
    job.checkpoint()
    assert _plan(tmp_path)["next_replan_at"] == policy.next_replan_at  # now whole: journalled


REACTOR_SCRIPT = """
import json, sys, types
from twisted.internet import asyncioreactor
asyncioreactor.install()
from twisted.internet import reactor, task
sys.path.insert(0, {tests!r})
import test_continuous_replan as t
from pathlib import Path
job, now = t._crawled_job(Path({tmp!r}), {n})
job.crawler = types.SimpleNamespace(engine=None)
job.policy._strategy.next_replan_at = 0.0  # due
ticks = {{"during": 0, "after": 0}}
def tick():
    ticks["during" if job.ar.plan_pending else "after"] += 1
    if job._replan is None and not job.ar.plan_pending and ticks["after"] > 3:
        reactor.stop()
task.LoopingCall(tick).start(0.001)
reactor.callWhenRunning(job.checkpoint)
reactor.run()
print(json.dumps({{**ticks, "planned": job.policy.next_replan_at > 0}}))
"""


def test_the_reactor_runs_between_the_slices_of_a_replan(tmp_path: Path) -> None:
    """In the crawl the replan is a Twisted cooperative task: between its slices the reactor runs everything else
    (fetches, the checkpoint, the progress heartbeat). Here a timer ticks every millisecond while the job replans
    5,000 URIs under the crawl's asyncio reactor: it ticks during the replan (made in one call, as before, it
    never would), and the replan ends with its plan."""
    import subprocess
    import sys

    script = REACTOR_SCRIPT.format(tests=str(Path(__file__).parent), tmp=str(tmp_path), n=5000)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    ticks = json.loads(out.stdout.strip().splitlines()[-1])
    assert ticks["during"] >= 3 and ticks["planned"], ticks


def test_a_crawl_that_ends_during_a_replan_gives_it_up_and_journals_every_move(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review: a crawl stopped or interrupted during a replan left its generator suspended with Python's cyclic
    collector off for the rest of the process (the reports and WARCs written at the end), and its last checkpoint
    (the interrupt's runs with the reactor still going) journalled only a few thousand moves. ``closing()`` gives
    the replan up (the collector on again, no plan journalled: the next run replans), starts none, and the last
    checkpoint journals every move."""
    import gc

    import harvester.arfrontier as arfrontier

    monkeypatch.setattr(arfrontier, "MOVED_PER_CHECKPOINT", 4)
    job, now = _crawled_job(tmp_path, 30)
    f, policy = job.ar, job.policy

    class Task:  # stands in for Twisted's CooperativeTask
        stopped = False

        def stop(self) -> None:
            self.stopped = True

    task, slices = Task(), job._replan_slices(now)
    job._replan, job._replan_slices_running, f.plan_pending = task, slices, True  # as _start_replan does
    for _ in range(3):
        next(slices)  # planning, the collector paused
    assert not gc.isenabled()
    for url in [f"http://a.example/p{i}" for i in range(10)]:  # moves of the replan still to journal
        f.reschedule(url, now + 500)
    plan_before = _plan(tmp_path)
    job.closing()
    assert gc.isenabled() and task.stopped and job._replan is None
    policy._strategy.next_replan_at = 0.0  # due: none is started at the last checkpoint
    job.checkpoint()
    assert job._replan is None and not f._moved  # all ten, in one checkpoint
    assert _plan(tmp_path) == plan_before
