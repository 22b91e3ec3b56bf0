"""A continuous job follows at most ``max_uris_per_host`` URIs of a host: every URI it holds is revisited for
ever and kept in memory, so a site that makes up new links on every visit must not grow the job until it runs
out of memory. Beyond the limit a link is not followed (the first 100 of a host are logged -5003
``Q:maxUrisPerHost``, once each) and the job raises one alert per host; seeds are always taken. The limit's
default and validation are tested with the rest of the continuous section (test_arfrontier.py)."""

from __future__ import annotations

from pathlib import Path

from crawlhelp import continuous_spec, controlled_crawl, crawl_log, tiny_site, write_spec

from harvester.continuous import crawl_job_for
from harvester.contracts import JobSpec
from harvester.urimeta import UriMeta
from tests.changingsite import REVISIT_SECONDS


def _job(tmp_path: Path, **section: object):  # type: ignore[no-untyped-def]
    spec = continuous_spec(["http://127.0.0.1:9/", "http://127.0.0.2:9/"], **section)
    return crawl_job_for(JobSpec.from_dict(spec), tmp_path)


def test_links_beyond_a_hosts_limit_are_refused_once_with_one_alert(tmp_path: Path) -> None:
    job = _job(tmp_path, max_uris_per_host=4)
    refused: list[tuple[str, int, str]] = []
    job.reject = lambda url, nh, status, annotation="": refused.append((url, status, annotation))  # type: ignore[method-assign]
    parent = UriMeta(path="", domain="site-a", seed=True)
    # The host holds its seed and its robots.txt; two more links fit, the next ones are refused.
    taken = [job.discover(f"http://127.0.0.1:9/calendar/{i}", "L", parent, "http://127.0.0.1:9/") for i in range(6)]
    assert taken == [True, True, False, False, False, False]
    assert [(u.rsplit("/", 1)[1], s, a) for u, s, a in refused] == [
        (str(i), -5003, "Q:maxUrisPerHost") for i in (2, 3, 4, 5)
    ]
    assert len(job.alerts) == 1 and "127.0.0.1:9" in job.alerts[0] and "max_uris_per_host" in job.alerts[0]
    # A refused link seen again is silent; another host is not affected; a seed is always taken.
    assert not job.discover("http://127.0.0.1:9/calendar/5", "L", parent, "http://127.0.0.1:9/")
    assert job.discover("http://127.0.0.2:9/page", "L", parent, "http://127.0.0.2:9/")
    assert len(refused) == 4 and len(job.alerts) == 1
    job.change_seeds(["http://127.0.0.1:9/new-seed"], [])
    assert job.ar.entry_of("http://127.0.0.1:9/new-seed") is not None


def test_a_site_making_up_links_on_every_visit_stops_at_the_limit(tmp_path: Path) -> None:
    """A real continuous crawl of a host whose every page links to twenty pages never seen before (a calendar
    of the future): the job keeps crawling and revisiting within the limit, refuses the rest, and says so."""
    import json
    import time

    def answer(path: str, n: int) -> tuple[int, bytes]:
        if path == "/robots.txt":
            return 404, b""
        links = "".join(f'<a href="/day/{path.strip("/").replace("/", "-")}-{n}-{i}">d</a>' for i in range(20))
        return 200, f"<html><body>{links}</body></html>".encode()

    job_dir = tmp_path / "job"
    with tiny_site(answer) as base:
        settings = {"min_delay_ms": 20, "max_delay_ms": 20, "scope": "host"}
        revisit = {**REVISIT_SECONDS, "initial_wait_s": dict.fromkeys(("text", "image", "audio_video", "other"), 1)}
        write_spec(
            job_dir,
            continuous_spec(
                [base], 971, settings, revisit={**revisit, "max_wait_s": 10}, budget_per_s=30.0, max_uris_per_host=40
            ),
        )
        proc = controlled_crawl(job_dir)
        try:
            alerts: list[str] = []
            deadline = time.time() + 60
            while time.time() < deadline and not alerts:
                progress = job_dir / "progress.json"
                alerts = json.loads(progress.read_text()).get("alerts", []) if progress.exists() else []
                time.sleep(0.3)
            time.sleep(4)  # revisits go on at the limit
            assert proc.stdin is not None
            proc.stdin.write((json.dumps({"job_id": 971, "action": "stop", "argument": "", "id": 0}) + "\n").encode())
            proc.stdin.flush()
            assert proc.wait(60) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
    lines = crawl_log(job_dir)
    fetched = {f[3] for f in lines if f[1] == "200"}
    refused = [f for f in lines if f[1] == "-5003"]
    assert len(fetched) <= 40 and refused and all(f[-1] == "Q:maxUrisPerHost" for f in refused)
    assert len(refused) == len({f[3] for f in refused}) <= 100  # the first 100 refused links, once each
    revisits = len([f for f in lines if f[1] == "200"]) - len(fetched)
    assert revisits > 0  # the host's pages within the limit are still revisited
    result = json.loads((job_dir / "jobresult.json").read_text())
    assert result["status"] == "DONE"
    assert len(alerts) == 1 and "max_uris_per_host" in alerts[0]  # in the job's progress, on its page
