"""Issue 14: where each URI came from and how each queue fared, as Heritrix records them —
source tags (crawl.log's source field, source-report.txt), the per-queue frontier-report.txt,
the inferred (I) /favicon.ico, and -7 for a URI no fetcher can take."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

from crawlhelp import crawl_log, make_spec, run_crawl

from harvester.contracts import JobSpec
from harvester.crawljob import CrawlJob
from harvester.reports import QUEUE_LEGEND
from harvester.scope import S_UNFETCHABLE_URI
from harvester.urimeta import UriMeta


def _two_seed_crawl(tmp_path: Path, sites: Any, tag: bool) -> tuple[Path, str, str]:
    a, b = sites
    seed_a, seed_b = f"{a.url}about.html", f"{b.url}contact.html"
    spec = make_spec(
        [seed_a, seed_b], job_id=1410 + tag, settings={"scope": "host", "max_hops": 1, "source_tag_seeds": tag}
    )
    assert run_crawl(tmp_path / "job", spec)["status"] == "DONE"
    return tmp_path / "job", seed_a, seed_b


def test_tagged_seeds_name_the_source_of_every_line_and_the_source_report(tmp_path: Path, sites: Any) -> None:
    job, seed_a, seed_b = _two_seed_crawl(tmp_path, sites, tag=True)
    lines = crawl_log(job)
    assert {f[10] for f in lines} == {seed_a, seed_b}  # every line, prerequisites included
    assert {f[10] for f in lines if f[3] == seed_a or f[3].startswith(seed_a.rsplit("/", 1)[0] + "/robots")} == {seed_a}
    report = (job / "reports" / "source-report.txt").read_text().splitlines()
    assert report[0] == "[source] [host] [#urls]"
    expected = {}
    for f in lines:
        if int(f[1]) > 0:
            expected[(f[10], "127.0.0.1")] = expected.get((f[10], "127.0.0.1"), 0) + 1
    assert {(s, h): int(n) for s, h, n in (r.split() for r in report[1:])} == expected
    assert set(s for s, _ in expected) == {seed_a, seed_b}


def test_untagged_crawl_has_no_source_and_a_bare_source_report(tmp_path: Path, sites: Any) -> None:
    job, _, _ = _two_seed_crawl(tmp_path, sites, tag=False)
    assert {f[10] for f in crawl_log(job)} == {"-"}
    assert (job / "reports" / "source-report.txt").read_text() == "[source] [host] [#urls]\n"


def test_frontier_report_has_one_line_per_queue(tmp_path: Path, sites: Any) -> None:
    a, b = sites
    job, _, _ = _two_seed_crawl(tmp_path, sites, tag=False)
    text = (job / "reports" / "frontier-report.txt").read_text()
    head, _, section = text.partition("\n -----===== EXHAUSTED QUEUES =====-----\n")
    assert head == "frontier empty\n"  # Heritrix's words for a finished crawl
    legend, *rows = section.splitlines()
    assert legend == QUEUE_LEGEND
    by_queue = {r.split()[0]: r.split() for r in rows}
    assert set(by_queue) == {f"127.0.0.1:{a.port}", f"127.0.0.1:{b.port}"}
    log = crawl_log(job)
    for queue, f in by_queue.items():
        size, enqueued, spent = int(f[2]), int(f[3]), int(f[9])
        assert size == 0 and enqueued == spent > 0
        assert f[13] in {line[3] for line in log if queue in line[3]}  # the last URI queued there
    # Both reports travel in the metadata WARC with the others.
    metadata = next((job / "warcs").glob("*-metadata-1.warc.gz"))
    with gzip.open(metadata, "rb") as fh:
        data = fh.read()
    assert b"/crawl/reports/frontier-report.txt?" in data and b"/crawl/reports/source-report.txt?" in data


def test_favicon_is_inferred_once_per_host(tmp_path: Path, sites: Any) -> None:
    a, b = sites
    job, _, _ = _two_seed_crawl(tmp_path, sites, tag=False)
    favicons = [f for f in crawl_log(job) if f[3].endswith("/favicon.ico")]
    assert sorted(f[3] for f in favicons) == sorted({f"{a.url}favicon.ico", f"{b.url}favicon.ico"})
    assert all(f[4].endswith("I") for f in favicons)  # Heritrix's ExtractorHTTP: Hop.INFERRED


def test_a_uri_no_fetcher_can_take_is_minus_7(tmp_path: Path) -> None:
    seed = "http://127.0.0.1:9/"
    job = CrawlJob(JobSpec.from_dict(make_spec([seed])), tmp_path)
    rejected: list[tuple[str, int]] = []
    job.reject = lambda url, nh, status, annotation="": rejected.append((url, status))  # type: ignore[method-assign]
    parent = UriMeta(path="", domain="site-a")
    job.discover("http://exa mple.com/logo.png", "E", parent, seed)  # an embed: in scope, unfetchable
    job.discover("http://127.0.0.1:0/logo.png", "E", parent, seed)
    assert rejected == [
        ("http://exa mple.com/logo.png", S_UNFETCHABLE_URI),
        ("http://127.0.0.1:0/logo.png", S_UNFETCHABLE_URI),
    ]
    queued = job.frontier.queued
    job.discover("http://exa mple.com/logo.png", "E", parent, seed)  # logged once
    assert len(rejected) == 2 and job.frontier.queued == queued
    job.frontier.close()
