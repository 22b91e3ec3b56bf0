"""robots.txt ``Crawl-delay`` is honoured per host, up to the template's
``respect_crawl_delay_up_to_s`` (Heritrix's respectCrawlDelayUpToSeconds), in the user-agent group
that applies to us (issue 14). Politeness is otherwise off, so the spacing is the crawl delay's."""

from __future__ import annotations

from pathlib import Path

from crawlhelp import began, crawl_log, make_spec, run_crawl, tiny_site

from harvester.politeness import politeness_delay
from harvester.robots import RobotsCache

UA = "Mozilla/5.0 (compatible; netharvest/0.1; +http://localhost/netharvest-crawler)"
PAGES = {"/": b'<a href="/a">a</a> <a href="/b">b</a>', "/a": b"<p>a</p>", "/b": b"<p>b</p>"}


def _site(delay: str):  # type: ignore[no-untyped-def]
    robots = (
        f"User-agent: otherbot\nCrawl-delay: 1\nDisallow: /\n\n"
        f"User-agent: netharvest\nCrawl-delay: {delay}\nDisallow: /private/\n"
    ).encode()

    def answer(path: str, n: int) -> tuple[int, bytes]:
        if path == "/robots.txt":
            return 200, robots
        return (200, PAGES[path]) if path in PAGES else (404, b"none")

    return tiny_site(answer)


def _gaps(job: Path) -> list[float]:
    """Seconds between the fetch-began times of crawl.log's fetched lines, in order."""
    starts = sorted(began(f[8]) for f in crawl_log(job) if f[8] != "-")
    assert len(starts) == 5, crawl_log(job)  # robots.txt, /, /a, /b and the inferred /favicon.ico
    return [y - x for x, y in zip(starts, starts[1:], strict=False)]


def test_crawl_delay_spaces_the_fetches_of_a_host(tmp_path: Path) -> None:
    with _site("2") as base:
        result = run_crawl(tmp_path / "job", make_spec([base], job_id=1402, settings={"scope": "host"}))
    assert result["status"] == "DONE"
    assert min(_gaps(tmp_path / "job")) >= 1.99  # crawl.log's millisecond stamps


def test_a_huge_crawl_delay_is_capped_at_the_template_maximum(tmp_path: Path) -> None:
    settings = {"scope": "host", "respect_crawl_delay_up_to_s": 1}
    with _site("10000") as base:
        result = run_crawl(tmp_path / "job", make_spec([base], job_id=1403, settings=settings))
    assert result["status"] == "DONE"  # not parked for 10,000 s per page
    assert min(_gaps(tmp_path / "job")) >= 0.99  # but the capped delay is kept


def test_crawl_delay_is_read_from_our_user_agent_group() -> None:
    robots = RobotsCache(obey=True, user_agent=UA)
    robots.load("ours", "User-agent: otherbot\nCrawl-delay: 30\n\nUser-agent: netharvest\nCrawl-delay: 2\n")
    robots.load("theirs", "User-agent: otherbot\nCrawl-delay: 30\n")
    robots.load("star", "User-agent: *\nCrawl-delay: 4\n")
    assert robots.crawl_delay("ours") == 2.0
    assert robots.crawl_delay("theirs") is None
    assert robots.crawl_delay("star") == 4.0
    # Heritrix reads Crawl-delay whatever the robots policy: respect_crawl_delay_up_to_s governs it.
    ignoring = RobotsCache(obey=False, user_agent=UA)
    ignoring.load("star", "User-agent: *\nCrawl-delay: 4\nDisallow: /\n")
    assert ignoring.crawl_delay("star") == 4.0 and ignoring.allowed("star", "http://star/x")


def test_the_delay_is_the_longer_of_politeness_and_the_capped_crawl_delay() -> None:
    assert politeness_delay(1.0, 5.0, 0, 30000, crawl_delay_s=2.0, crawl_delay_up_to_s=300) == 5.0
    assert politeness_delay(0.1, 5.0, 0, 30000, crawl_delay_s=2.0, crawl_delay_up_to_s=300) == 2.0
    assert politeness_delay(0.1, 5.0, 0, 30000, crawl_delay_s=10000.0, crawl_delay_up_to_s=300) == 300.0
    assert politeness_delay(0.1, 5.0, 0, 30000, crawl_delay_s=10000.0, crawl_delay_up_to_s=0) == 0.5
