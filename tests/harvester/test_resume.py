"""kill -9 of the crawl child mid-job, then a re-run on the same spool directory resumes: nothing
finished before the last checkpoint is fetched again, and every WARC left behind is valid."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from crawlhelp import crawl_log, kill_mid_crawl, make_spec, run_crawl
from warcio.archiveiterator import ArchiveIterator

from harvester.urimeta import UriMeta


def test_kill_9_then_rerun_resumes(tmp_path: Path, sites: Any) -> None:
    a, _ = sites
    job_dir = tmp_path / "job"
    # A little politeness so the crawl is still running when it is killed.
    spec = make_spec([a.url], job_id=201, settings={"min_delay_ms": 60, "max_delay_ms": 60})
    done = kill_mid_crawl(job_dir, spec)
    assert not (job_dir / "jobresult.json").exists()
    before = len(crawl_log(job_dir))
    assert len(done) >= 20

    result = run_crawl(job_dir, spec)
    assert result["status"] == "DONE"
    assert result["domains"][0]["stop_reason"] == "DOWNLOAD_COMPLETE"
    after = crawl_log(job_dir)[before:]
    refetched = {f[3] for f in after if not f[1].startswith("-")} & done
    assert not refetched, f"fetched again after resume: {sorted(refetched)}"
    assert after, "the resumed crawl did nothing"
    # The union covers the whole site as a single run would.
    statuses = {f[3]: f[1] for f in crawl_log(job_dir)}
    assert statuses[f"{a.url}news/article6.html"] == "200"
    assert statuses[f"{a.url}orphan.html"] == "200"
    # Every WARC valid (the .open file of the killed run was recovered), none left open.
    warcs = sorted((job_dir / "warcs").iterdir())
    assert warcs and not [p for p in warcs if p.name.endswith(".open")]
    for path in warcs:
        with open(path, "rb") as fh:
            records = list(ArchiveIterator(fh))
        assert records[0].rec_type == "warcinfo"
    names = {f["name"] for f in result["files"]}
    assert {p.name for p in warcs} == names
    # The reports' tallies were journalled with the frontier: they cover both runs.
    report = json.loads((job_dir / "reports" / "domain-report.json").read_text())
    assert report["domains"]["site-a"]["objects"] == result["domains"][0]["objects"]
    json.dumps(result)


def test_finished_job_rerun_is_a_no_op_resume(tmp_path: Path, sites: Any) -> None:
    """A re-run of a finished job's directory finds nothing left to do and fetches nothing."""
    a, _ = sites
    job_dir = tmp_path / "job"
    spec = make_spec([f"{a.url}news/"], job_id=202, settings={"scope": "path"})
    first = run_crawl(job_dir, spec)
    n = len(crawl_log(job_dir))
    (job_dir / "jobresult.json").unlink()
    second = run_crawl(job_dir, spec)
    assert len(crawl_log(job_dir)) == n
    assert second["domains"][0]["objects"] == first["domains"][0]["objects"]


def test_a_robots_txt_awaited_in_a_spilled_queue_tail_is_still_awaited_after_a_resume(tmp_path, monkeypatch):
    """Politeness per registrable domain puts two hosts in one queue; the second host's robots.txt is
    queued after the first host's URIs, so a reopened queue has it in the part kept on disk only. A resumed job must
    still hold the second host's URIs back until its robots.txt is in (it used to crawl without rules).
    No fetch happens here: the CrawlJob's own state, journalled and reopened as after a kill -9."""
    import functools

    from harvester import crawljob
    from harvester.contracts import JobSpec
    from harvester.frontier import Frontier

    monkeypatch.setattr(crawljob, "Frontier", functools.partial(Frontier, head_max=3))
    domain = {
        "name": "example.com",
        "configuration": "default",
        "seeds": ["http://a.example.com/"],
        "max_objects": -1,
        "max_bytes": -1,
        "traps": [],
    }
    spec = JobSpec.from_dict(
        make_spec([], job_id=611, domains=[domain], settings={"scope": "domain", "politeness_scope": "domain"})
    )
    job = crawljob.CrawlJob(spec, tmp_path)
    seed = UriMeta(path="", domain="example.com")
    for i in range(5):
        job.discover(f"http://a.example.com/page{i}", "L", seed, "http://a.example.com/")
    job.discover("http://b.example.com/other", "L", seed, "http://a.example.com/")
    assert job.robots.pending("b.example.com")
    job.checkpoint()
    job.frontier.close()

    resumed = crawljob.CrawlJob(spec, tmp_path)
    queue = resumed.frontier.queues["example.com"]
    # Reread with the prerequisites first: the late robots.txt, in the part kept on disk in id order, is back in
    # front of the URIs that wait for it (and the refill of the tail does not read it a second time).
    urls = [e.url for e in queue.items]
    assert urls.index("http://b.example.com/robots.txt") < urls.index("http://a.example.com/") and queue.spilled
    robots_id = next(e.id for e in queue.items if e.url == "http://b.example.com/robots.txt")
    assert robots_id in queue.off_sequence
    assert resumed.resumed and resumed.robots.pending("b.example.com")
    resumed.frontier.close()


def test_a_resumed_jobs_first_rates_count_only_what_it_does(tmp_path: Path, sites: Any) -> None:
    """The rates of a resumed (or continuing) job's first heartbeat: the URIs done before it are not URIs done in
    the first seconds of this process (a continuing job's rate chart began with a spike of 110 URI/s)."""
    from harvester.contracts import JobSpec
    from harvester.crawljob import CrawlJob

    a, _ = sites
    job_dir = tmp_path / "job"
    spec = make_spec([f"{a.url}news/"], job_id=203, settings={"scope": "path"})
    run_crawl(job_dir, spec)
    job = CrawlJob(JobSpec.from_dict(spec), job_dir)
    assert job.resumed and job.frontier.done > 5
    progress = job.progress()
    assert progress.uris_done == job.frontier.done and progress.uri_rate == 0 and progress.kb_rate == 0
    job.frontier.close()
