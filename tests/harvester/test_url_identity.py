"""URL identity: the seen-set keys URLs by Heritrix 3's default canonicalisation, which never
reorders a query (issue 14); a template may ask for more; a resumed job keeps the keys its seen-set
was made with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crawlhelp import fetched, make_spec, run_crawl

from harvester.contracts import JobSpec
from harvester.crawljob import CrawlJob
from harvester.frontier import Frontier, Politeness
from harvester.scope import CANON_HERITRIX, CANON_HERITRIX_SORTED, CANON_LEGACY, host_key, legacy_key
from harvester.urimeta import UriMeta

MONTH_FIRST = "calendar?month=2026-03&view=list"
VIEW_FIRST = "calendar?view=list&month=2026-03"


def _calendar_fetches(job_dir: Path, base: str) -> set[str]:
    return {
        u
        for u, status in fetched(job_dir).items()
        if u.startswith(base + "calendar?") and "view=" in u and status == "200"
    }


def test_query_order_makes_two_urls(tmp_path: Path, sites: Any) -> None:
    a, _ = sites
    spec = make_spec([f"{a.url}query-order.html"], job_id=1401, settings={"scope": "host", "max_hops": 1})
    assert run_crawl(tmp_path / "job", spec)["status"] == "DONE"
    assert _calendar_fetches(tmp_path / "job", a.url) == {a.url + MONTH_FIRST, a.url + VIEW_FIRST}


def test_template_may_collapse_query_order(tmp_path: Path, sites: Any) -> None:
    a, _ = sites
    spec = make_spec(
        [f"{a.url}query-order.html"],
        job_id=1402,
        settings={"scope": "host", "max_hops": 1, "canonicalize_query_order": True},
    )
    assert run_crawl(tmp_path / "job", spec)["status"] == "DONE"
    assert _calendar_fetches(tmp_path / "job", a.url) == {a.url + MONTH_FIRST}  # the first found


def test_a_job_resumed_across_the_upgrade_keeps_its_keys(tmp_path: Path) -> None:
    """A frontier journalled before the scheme was recorded holds legacy keys: the resumed job
    keeps judging with them, so what it saw is not fetched again."""
    seed = "http://127.0.0.1:9/"
    spec = JobSpec.from_dict(make_spec([seed]))
    old = Frontier(tmp_path / "state" / "frontier.sqlite", Politeness(), host_key)
    old.add(seed, legacy_key(seed), UriMeta(path="", domain="site-a", seed=True))
    old.mark_seen(legacy_key(seed + "Page?b=2&a=1"))
    old.close()
    job = CrawlJob(spec, tmp_path)
    assert job.frontier.kv["canonicalization"] == CANON_LEGACY
    assert job.frontier.was_seen(job.canonical_key(seed + "Page?a=1&b=2"))
    job.frontier.close()
    assert CrawlJob(spec, tmp_path).frontier.kv["canonicalization"] == CANON_LEGACY


def test_a_new_job_records_its_scheme(tmp_path: Path) -> None:
    plain = CrawlJob(JobSpec.from_dict(make_spec(["http://127.0.0.1:9/"])), tmp_path / "a")
    assert plain.frontier.kv["canonicalization"] == CANON_HERITRIX
    plain.frontier.close()
    sorted_ = CrawlJob(
        JobSpec.from_dict(make_spec(["http://127.0.0.1:9/"], settings={"canonicalize_query_order": True})),
        tmp_path / "b",
    )
    assert sorted_.frontier.kv["canonicalization"] == CANON_HERITRIX_SORTED
    sorted_.frontier.close()
