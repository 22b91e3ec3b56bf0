"""A real continuous crawl (issue 12) over HTTP against a changing site, in accelerated time: the
definition's time constants are seconds (initial wait 2 s, min 1 s, max 20 s; WARCs closed every 3 s).

One crawl child, as the Celery task runs it (``--control-stdin``), is driven through its life: it
revisits by the Heritrix policy, writes revisit records for unchanged pages and full records for
changed ones, keeps per-host politeness and the global fetch budget (checked from the server's own
log), hands closed WARCs over while it runs, takes a seed added on the fly, survives kill -9 (the
restarted crawl carries on each URI's schedule: visits and waits continue, nothing starts from
scratch), pauses and resumes, and stops cleanly on a stop control. The WARCs are read with warcio.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from crawlhelp import REPO, began, controlled_crawl, crawl_log, make_spec, write_spec
from warcio.archiveiterator import ArchiveIterator

from harvester.revisit import PROFILE_IDENTICAL, PROFILE_NOT_MODIFIED
from tests.changingsite import REVISIT_SECONDS, ChangingSite
from tests.conftest import wait_for

JOB = 951
BUDGET = 4.0
POLITENESS_S = 0.3
AR = re.compile(r"wt:(?:(\d+)m)?(?:(\d+)s)?(\d+)ms,(\d+)vis,(\d+)ver,ov:")
REVISIT = REVISIT_SECONDS


@pytest.fixture
def site_pair() -> Any:
    a, b = ChangingSite().start(), ChangingSite().start()
    yield a, b
    a.shutdown()
    b.shutdown()


def _send(proc: subprocess.Popen[bytes], action: str, argument: str = "") -> None:
    assert proc.stdin is not None
    proc.stdin.write((json.dumps({"job_id": JOB, "action": action, "argument": argument, "id": 0}) + "\n").encode())
    proc.stdin.flush()


def _visits(job_dir: Path) -> dict[str, list[tuple[float, int, int, int, list[str]]]]:
    """URI → its visits in crawl.log order: (fetch began, wait ms, visits, versions, annotations)."""
    out: dict[str, list[tuple[float, int, int, int, list[str]]]] = defaultdict(list)
    for f in crawl_log(job_dir):
        m = AR.search(f[-1])
        if m:
            wait = int(m[1] or 0) * 60000 + int(m[2] or 0) * 1000 + int(m[3])
            out[f[3]].append((began(f[8]), wait, int(m[4]), int(m[5]), f[-1].split(",")))
    return out


def _records(job_dir: Path) -> dict[str, list[tuple[str, str | None, str | None]]]:
    """URI → (record type, revisit profile, payload digest) of its response/revisit records, in order."""
    out: dict[str, list[tuple[str, str | None, str | None]]] = defaultdict(list)
    for path in sorted((job_dir / "warcs").glob("*.warc.gz")):
        with open(path, "rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_type in ("response", "revisit"):
                    h = rec.rec_headers
                    out[h.get_header("WARC-Target-URI")].append(
                        (rec.rec_type, h.get_header("WARC-Profile"), h.get_header("WARC-Payload-Digest"))
                    )
    return out


def test_a_continuous_crawl_end_to_end(tmp_path: Path, site_pair: Any) -> None:
    a, b = site_pair
    job_dir = tmp_path / "job"
    spec = make_spec(
        [a.url, b.url],
        job_id=JOB,
        settings={"min_delay_ms": int(POLITENESS_S * 1000), "max_delay_ms": int(POLITENESS_S * 1000)},
    )
    spec["kind"] = "continuous"
    spec["continuous"] = {"revisit": REVISIT, "budget_per_s": BUDGET, "warc_rotate_s": 3, "pinned": {}}
    write_spec(job_dir, spec)
    listed = job_dir / "files-closed.jsonl"

    # -- phase 1: runs, hands WARCs over while running, takes a seed added on the fly ----------------
    proc = controlled_crawl(job_dir)
    try:
        wait_for(lambda: listed.exists() and len(listed.read_text().splitlines()) >= 2, 30, "two WARCs handed over")
        assert proc.poll() is None  # files handed over while the crawl runs
        time.sleep(6)
        _send(proc, "seeds", json.dumps({"add": [f"{b.url}new-1"], "remove": []}))
        wait_for(lambda: b.hits("/new-1"), 15, "the added seed fetched")
        time.sleep(3)
        progress = json.loads((job_dir / "progress.json").read_text())
    finally:
        proc.kill()  # kill -9, mid-crawl
        proc.wait(10)
    assert not (job_dir / "jobresult.json").exists()
    before = _visits(job_dir)
    lines_before = len(crawl_log(job_dir))

    # -- phase 2: restart on the same spool; the schedule carries on; then a clean stop --------------
    proc = controlled_crawl(job_dir)
    try:
        wait_for(lambda: len(crawl_log(job_dir)) > lines_before, 60, "fetches after the restart (late when loaded)")
        time.sleep(5)
        _send(proc, "pause")  # as for any job: nothing is issued while paused
        time.sleep(0.8)  # what was in flight ends
        during = len(a.hits()) + len(b.hits())
        time.sleep(2.5)
        assert len(a.hits()) + len(b.hits()) == during
        _send(proc, "resume")
        wait_for(lambda: len(a.hits()) + len(b.hits()) > during, 10, "fetches after resume")
        time.sleep(2)
        _send(proc, "stop")
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    result = json.loads((job_dir / "jobresult.json").read_text())
    assert result["status"] == "DONE"
    visits = _visits(job_dir)

    # Revisit intervals follow the Heritrix policy: /static never changes (×1.5 from 2 s), /fast does.
    # A visit made after the last checkpoint before the kill is made again after the restart (same
    # visit number): keyed by visit number, the schedule is the policy's, without a gap or a restart.
    static = visits[f"{a.url}static"]
    by_visit = {v: w for _, w, v, _, _ in static}
    assert sorted(by_visit) == list(range(1, len(by_visit) + 1)), [v for _, _, v, _, _ in static]
    expected = [2000]
    while len(expected) < len(by_visit):
        expected.append(min(int(expected[-1] * 1.5), 20000))
    assert len(by_visit) >= 4 and [by_visit[v] for v in sorted(by_visit)] == expected, static
    assert len(static) - len(by_visit) <= 1
    assert {ver for _, _, _, ver, _ in static} == {1}
    for uri, seen in visits.items():
        for (t0, wait, v0, *_), (t1, _, v1, *_) in zip(seen, seen[1:], strict=False):
            # Never before its time (politeness and the budget may only delay it); 30 ms of clock slack.
            # (Not for a visit made again after the kill: the first one's state was lost with it.)
            if v1 == v0 + 1:
                assert t1 - t0 >= wait / 1000 - 0.03, (uri, t0, wait, t1)
    fast = visits[f"{a.url}fast"]
    assert max(ver for *_, ver, _ in fast) >= 3  # its changes were seen
    assert any(w < 2000 for _, w, _, _, _ in fast)  # and its wait shrank (÷1.5 on a change)

    # Unchanged → revisit records, changed → full responses (read with warcio).
    records = _records(job_dir)
    clock = records[f"{a.url}clock"]
    assert clock[0][0] == "response" and len(clock) >= 3
    assert all(r == ("revisit", PROFILE_IDENTICAL, clock[0][2]) for r in clock[1:])  # the clock is stripped
    st = records[f"{a.url}static"]
    assert st[0][0] == "response" and all(r[:2] == ("revisit", PROFILE_NOT_MODIFIED) for r in st[1:])
    assert all("midFetchAbort" in notes and "unchanged" in notes for *_, notes in static[1:])
    fast_responses = [r for r in records[f"{a.url}fast"] if r[0] == "response"]
    # Each version stored once (a visit redone after the kill may store its version again: one at most).
    assert len(fast_responses) - 1 <= len({r[2] for r in fast_responses}) >= 3
    liar = visits[f"{a.url}liar"]  # its ETag lies: the filter believes it, as Heritrix's does
    assert any("midFetchAbort" in notes for *_, notes in liar)

    # Politeness per host and the global budget, from the server's own log.
    hits = sorted(a.hits() + b.hits(), key=lambda h: h.start)
    for site in (a, b):
        own = sorted(site.hits(), key=lambda h: h.start)
        for prev, nxt in zip(own, own[1:], strict=False):
            assert nxt.start - prev.end >= POLITENESS_S - 0.01, (prev, nxt)
    starts = [h.start for h in hits]
    for i, t in enumerate(starts):
        in_window = sum(1 for s in starts[i:] if s < t + 1.0)
        assert in_window <= BUDGET + 1, (t, in_window)
    assert progress["continuous"]["budget_per_s"] == BUDGET
    assert 0 < progress["continuous"]["fetch_rate"] <= BUDGET

    # kill -9 + restart: every page visited twice before the kill carries on with its visit count
    # (at most the visits after the last one-second checkpoint are done again), none restarts at 1.
    after_restart = {uri: seen[len(before.get(uri, [])) :] for uri, seen in visits.items()}
    carried = 0
    for uri, old in before.items():
        new = after_restart.get(uri)
        if len(old) >= 2 and new:
            assert new[0][2] >= old[-1][2], (uri, old[-1], new[0])
            carried += 1
    assert carried >= 5
    assert len(crawl_log(job_dir)) > lines_before

    # The added seed was crawled, and survived the restart.
    assert len(visits[f"{b.url}new-1"]) >= 2

    # Files: every WARC handed over while running is whole and listed; the result lists all of them.
    handed = [json.loads(line)["name"] for line in listed.read_text().splitlines()]
    assert len(handed) >= 4 and len(set(handed)) == len(handed)
    warcs = sorted((job_dir / "warcs").glob("*.warc.gz"))
    assert not list((job_dir / "warcs").glob("*.open"))
    assert set(handed) <= {f["name"] for f in result["files"]} == {p.name for p in warcs}
    for path in warcs:
        with open(path, "rb") as fh:
            assert next(iter(ArchiveIterator(fh))).rec_type == "warcinfo"
    # crawl.log archived while running: each closed WARC came with a metadata WARC of the lines since the last,
    # and the last metadata WARC holds the rest: read in the order of N they are the spool's crawl.log, byte for
    # byte, through a kill -9 (nothing archived twice, nothing left out).
    kinds = [json.loads(line)["kind"] for line in listed.read_text().splitlines()]
    assert kinds.count("metadata") >= 2 and kinds.count("warc") >= 4
    metadata = [f for f in result["files"] if f["kind"] == "metadata"]
    numbers = [int(f["name"].rsplit("-", 1)[1].split(".")[0]) for f in metadata]
    assert numbers == list(range(1, len(metadata) + 1)) and metadata[-1] == result["files"][-1]
    assert {f["name"] for f in metadata[:-1]} <= set(handed) and metadata[-1]["name"] not in handed
    archived, holding = b"", []
    for f in metadata:
        with open(f["path"], "rb") as fh:
            for rec in ArchiveIterator(fh):
                uri = rec.rec_headers.get_header("WARC-Target-URI") or ""
                if rec.rec_type == "metadata":
                    holding.append((f["name"], uri.split("?")[0].rsplit("/", 1)[1]))
                    if "/crawl/logs/crawl.log?" in uri:
                        archived += rec.content_stream().read()
    assert archived == (job_dir / "logs" / "crawl.log").read_bytes()
    assert {name for f, name in holding if f == metadata[-1]["name"]} >= {"crawl.log", "crawl-report.txt", "seeds.txt"}
    assert {name for f, name in holding if f != metadata[-1]["name"]} == {"crawl.log"}

    cont = json.loads((job_dir / "progress.json").read_text())["continuous"]
    assert cont["visits"] > 20 and cont["unchanged"] > 5 and cont["changed"] > 5 and cont["header_skipped"] > 2
    assert cont["warcs_closed"] >= 4 and set(cont["queues"]) == {"ready", "snoozed", "busy", "empty"}
    assert {h["host"] for h in cont["hosts"]} == {f"127.0.0.1:{a.port}", f"127.0.0.1:{b.port}"}
    assert cont["due_next"] and {"uri", "at", "wait_s", "visits", "versions"} == set(cont["due_next"][0])


def test_the_next_job_after_a_done_one_keeps_the_uri_states_not_the_tallies(tmp_path: Path, site_pair: Any) -> None:
    """Review of issue 12: a continuous definition deactivated (its job DONE) and activated again made a job
    whose statistics counted the first job's captures again (its crawl.log and tallies were taken over).
    After a DONE job only the URI states carry on: the visits of each URI continue, the rest is fresh."""
    from harvester.contracts import JobSpec
    from harvester.runjob import prepare_job_dir

    a, b = site_pair
    spec = make_spec([a.url, b.url], job_id=JOB, settings={"min_delay_ms": 100, "max_delay_ms": 100})
    spec["kind"] = "continuous"
    spec["continuous"] = {"revisit": REVISIT, "budget_per_s": BUDGET, "warc_rotate_s": 3, "pinned": {}}
    results = []
    for job_id in (JOB, JOB + 1):
        this = {**spec, "job_id": job_id, **({"continues_job": JOB, "continues_done": True} if job_id != JOB else {})}
        job_dir = prepare_job_dir(JobSpec.from_dict(this), root=tmp_path)
        proc = subprocess.Popen(
            [sys.executable, "-m", "harvester.process", str(job_dir), "--control-stdin"],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            # Crawling for ~6 s, counted from its first fetch: a loaded machine may take seconds to start it.
            log = job_dir / "logs" / "crawl.log"
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and not (log.exists() and log.read_text().strip()):
                time.sleep(0.2)
            time.sleep(6)
            assert proc.stdin is not None
            proc.stdin.write(
                (json.dumps({"job_id": job_id, "action": "stop", "argument": "", "id": 0}) + "\n").encode()
            )
            proc.stdin.flush()
            assert proc.wait(60) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
        results.append(json.loads((job_dir / "jobresult.json").read_text()))
    first, second = results
    assert first["status"] == second["status"] == "DONE"
    one, two = tmp_path / str(JOB), tmp_path / str(JOB + 1)
    first_end = max(began(f[8]) for f in crawl_log(one))
    lines = crawl_log(two)
    assert lines and all(began(f[8]) > first_end for f in lines), "job 1's crawl.log lines were carried over"
    objects = sum(d["objects"] for d in second["domains"])
    assert 0 < objects <= len(lines), (objects, len(lines))  # job 2 counts its own captures only
    assert second["started"] >= first["ended"]  # its own start time (to the second), not job 1's
    # Each URI's schedule carries on: its first visit in job 2 is numbered after its last one in job 1.
    before, after = _visits(one), _visits(two)
    both = set(before) & set(after)
    assert both
    for uri in both:
        assert after[uri][0][2] > before[uri][-1][2], uri
    # The revisit figures are in each job's crawl-report (archived with its metadata), job 2's its own only.
    for job_dir, visits in ((one, before), (two, after)):
        report = (job_dir / "reports" / "crawl-report.txt").read_text()
        figures = dict(line.rsplit(": ", 1) for line in report.splitlines() if ": " in line)
        assert int(figures["revisit visits"]) == sum(len(v) for v in visits.values()), report
        assert 0 < int(figures["visits finding a change"]) <= int(figures["revisit visits"]), report
        assert "validator misses" in figures and "failed visits" in figures
