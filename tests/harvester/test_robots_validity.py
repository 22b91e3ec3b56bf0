"""robots.txt holds for ``robots_validity_s`` (Heritrix's robotsValidityDurationSeconds, 1 day), then the
host's next URI waits for it to be fetched again; the cache's times survive a checkpoint. The crawl over
HTTP is in test_continuous_prerequisites.py."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from crawlhelp import continuous_spec, make_spec

from harvester.contracts import JobSpec
from harvester.crawljob import CrawlJob
from harvester.defaults import ROBOTS_VALIDITY_S
from harvester.robots import RobotsCache

UA = "netharvest-test"


def test_rules_expire_after_the_validity_and_a_renewal_waits_for_the_new_ones() -> None:
    robots = RobotsCache(obey=True, user_agent=UA, validity_s=100)
    assert robots.ask("h") == 0 and robots.pending("h")  # the first time: queued under its URL's key
    robots.load("h", "User-agent: *\nDisallow: /old\n", now=1000.0)  # its fetch came back
    assert not robots.expired("h", 1099.0) and robots.expired("h", 1100.0)
    assert not robots.expired("unknown", 5000.0)  # never asked: the first fetch is not a renewal
    assert robots.ask("h") == 1 and robots.pending("h") and not robots.expired("h", 9999.0)
    robots.load("h", "User-agent: *\nDisallow: /new\n", now=1200.0)
    assert robots.allowed("h", "http://h/old") and not robots.allowed("h", "http://h/new")
    assert not robots.expired("h", 1299.0) and robots.ask("h") == 2


def test_the_times_and_renewals_survive_a_checkpoint_and_an_old_checkpoint_is_valid_from_now() -> None:
    robots = RobotsCache(obey=True, user_agent=UA, validity_s=100)
    robots.ask("h")
    robots.load("h", "", now=1000.0)
    robots.ask("h")
    robots.load("h", "", now=1050.0)
    again = RobotsCache(obey=True, user_agent=UA, validity_s=100)
    again.restore(robots.snapshot())
    assert again.expired("h", 1150.0) and not again.expired("h", 1149.0)
    assert again.ask("h") == 2  # the next renewal's seen-set key is a new one
    old = RobotsCache(obey=True, user_agent=UA, validity_s=100)
    old.restore({"bodies": {"h": ""}, "pending": []})
    assert old.known("h") and not old.expired("h", 0.0) and old.ask("h") == 1


def test_a_crawl_job_fetches_an_expired_robots_txt_before_the_hosts_next_uri(tmp_path: Path) -> None:
    seed = "http://127.0.0.1:9/page"
    job = CrawlJob(JobSpec.from_dict(make_spec([seed])), tmp_path)
    first = job.issue(0.0)
    assert first is not None and first.url == "http://127.0.0.1:9/robots.txt"
    job.robots.load("127.0.0.1:9", "User-agent: *\nDisallow:\n", now=0.0)
    job.frontier.finished(first.meta["nh_entry"], 0.0, 0.0)
    later = ROBOTS_VALIDITY_S + 1.0
    renewal = _next(job, later)
    assert renewal.url == "http://127.0.0.1:9/robots.txt"  # not the page: it waits
    assert renewal.meta["nh"].path.endswith("P") and renewal.meta["nh"].via == seed
    assert job.robots.pending("127.0.0.1:9")
    job.robots.load("127.0.0.1:9", "User-agent: *\nDisallow:\n", now=later)
    job.frontier.finished(renewal.meta["nh_entry"], later, 0.0)
    page = _next(job, later)
    assert page.url == seed
    # A host whose robots.txt was forgotten (its DNS lookup failed meanwhile) asks for it again the same way:
    # robots.txt ahead of the URI in the host's queue, not behind it.
    job.robots.forget("127.0.0.1:9")
    job.frontier.schedule(page.meta["nh_entry"], later)
    assert _next(job, later).url == "http://127.0.0.1:9/robots.txt"


def _next(job: CrawlJob, now: float) -> Any:
    """The next request the job issues from ``now`` on (a URI waiting for a prerequisite is snoozed briefly)."""
    for step in range(50):
        request = job.issue(now + step * 0.1)
        if request is not None:
            return request
    raise AssertionError("nothing issued")


def test_a_continuous_job_keeps_an_excluded_seed_and_disregards_an_excluded_link(tmp_path: Path) -> None:
    """robots.txt excluding everything (a day of maintenance): the seed stays in the crawl as a failed visit,
    due again after its wait; a link it never fetched is disregarded, as in Heritrix."""
    from harvester.continuous import crawl_job_for
    from harvester.urimeta import UriMeta

    seed, link = "http://127.0.0.1:9/", "http://127.0.0.1:9/section/page"
    job = crawl_job_for(JobSpec.from_dict(continuous_spec([seed])), tmp_path)
    job.discover(link, "L", UriMeta(path="", domain="site-a", seed=True), seed)
    now = time.time()  # the frontier's clock: the URIs were added due now
    robots = _next(job, now)
    assert robots.url == "http://127.0.0.1:9/robots.txt"
    job.robots.load("127.0.0.1:9", "User-agent: *\nDisallow: /\n", now=now)
    job.frontier.finished(robots.meta["nh_entry"], now, 0.0)
    for step in range(20):  # both come due and are excluded; nothing is fetched
        assert job.issue(now + step * 0.1) is None
    assert job.ar.entry_of(seed) is not None and job.ar.entry_of(link) is None
    assert job.policy.uris[seed].failed_at is not None and link not in job.policy.uris
    assert job.counts["errors"] == 0  # an exclusion is the site's wish, not an error


def test_every_name_of_a_site_gets_its_own_robots_txt(tmp_path: Path) -> None:
    """The seen-set key of a URL drops ``www``: example.com, www.example.com and www2.example.com share it. Each
    host still has its robots.txt fetched (a review found the third crawled with none, as if it allowed all)."""
    domain = {"name": "example.com", "configuration": "default", "max_objects": -1, "max_bytes": -1, "traps": []}
    seeds = {**domain, "seeds": ["http://example.com/"]}
    job = CrawlJob(JobSpec.from_dict(make_spec([], domains=[seeds])), tmp_path)  # asks for example.com's
    hosts = ["example.com", "www.example.com", "www2.example.com"]
    for host in hosts[1:]:
        job._ensure_robots(f"http://{host}/", "", None, "example.com")
    assert all(job.robots.pending(h) and not job.robots.known(h) for h in hosts)
    queued = [e.url for q in job.frontier.queues.values() for e in q.items if e.url.endswith("/robots.txt")]
    assert sorted(queued) == sorted(f"http://{h}/robots.txt" for h in hosts)
