"""Heritrix-style reports: names, header lines, figures."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from functools import partial

from harvester.reports import (
    DUPLICATE,
    NOT_MODIFIED,
    REPORT_NAMES,
    CrawlStats,
    format_bytes,
    format_duration,
    frontier_summary_report,
    parse_duration,
    write_reports,
)


def sample() -> CrawlStats:
    s = CrawlStats(started=datetime(2026, 1, 1, tzinfo=UTC))
    s.ended = s.started + timedelta(seconds=41, milliseconds=968)
    s.add_seed("http://www.kaarefc.dk/")
    s.add_seed("http://never.dk/")
    kaarefc = partial(s.record_fetch, host="www.kaarefc.dk", domain="kaarefc.dk")  # the seed host's fetches
    kaarefc(
        status=301,
        mime="text/html",
        content_size=300,
        payload=100,
        seed="http://www.kaarefc.dk/",
        redirect="http://www.kaarefc.dk/index.html",
    )
    kaarefc(status=200, mime="text/html", content_size=1731, payload=1403)
    kaarefc(status=200, mime="image/png", content_size=129391, payload=129079, kind=DUPLICATE)
    s.record_fetch(
        host="www.w3.org", domain="w3.org", status=304, mime="no-type", content_size=90, payload=0, kind=NOT_MODIFIED
    )
    s.record_unfetched(host="www.w3.org", domain="w3.org", status=-9998)
    s.record_unfetched(host="www.w3.org", domain="w3.org", status=-2)
    return s


def test_number_formats_follow_heritrix():
    assert format_bytes(0) == "0 B"
    assert format_bytes(7405) == "7.2 KiB"
    assert format_bytes(153399) == "150 KiB"
    assert format_bytes(5 * 1024**3) == "5.0 GiB"
    assert format_duration(41968) == "41s968ms"
    assert format_duration(5618651) == "1h33m38s651ms"
    assert format_duration(0) == "0ms"
    # read back, as the continuous job's URI history reads the wt:/ov: annotations of crawl.log
    for ms in (0, 41968, 5618651, 3 * 86_400_000 + 61_001):
        assert parse_duration(format_duration(ms)) == ms
    assert [parse_duration(t) for t in ("45s0ms", "4m", "12x", "1h-3m", "")] == [45000, 240000, None, None, None]


def test_write_reports(tmp_path):
    paths = write_reports(
        tmp_path,
        sample(),
        crawl_name="h1",
        stop_reasons={"w3.org": "OBJECT_LIMIT"},
        domains=["kaarefc.dk", "w3.org", "empty.dk"],
    )
    assert [p.name for p in paths] == list(REPORT_NAMES)
    crawl = (tmp_path / "crawl-report.txt").read_text()
    assert crawl.startswith("crawl name: h1\ncrawl status: Finished\nduration: 41s968ms\n\n")
    assert "seeds crawled: 1\nseeds uncrawled: 1\n" in crawl
    assert "URIs processed: 6\nURI successes: 4\nURI failures: 1\nURI disregards: 1\n" in crawl
    assert "duplicate-by-hash URIs: 1\nnot-modified URIs: 1\n" in crawl
    assert "duplicate-by-hash crawled bytes: 129391 (126 KiB) \n" in crawl
    hosts = (tmp_path / "hosts-report.txt").read_text().splitlines()
    assert hosts[0] == (
        "[#urls] [#bytes] [host] [#robots] [#remaining] [#novel-urls] [#novel-bytes] "
        "[#dup-by-hash-urls] [#dup-by-hash-bytes] [#not-modified-urls] [#not-modified-bytes]"
    )
    assert hosts[1] == "3 131422 www.kaarefc.dk 0 0 2 2031 1 129391 0 0 "
    assert hosts[2] == "1 90 www.w3.org 1 0 0 0 0 0 1 90 "
    seeds = (tmp_path / "seeds-report.txt").read_text().splitlines()
    assert seeds == [
        "[code] [status] [seed] [redirect]",
        "0 NOTCRAWLED http://never.dk/",
        "301 CRAWLED http://www.kaarefc.dk/ http://www.kaarefc.dk/index.html",
    ]
    assert (tmp_path / "mimetype-report.txt").read_text().splitlines()[0] == "[#urls] [#bytes] [mime-types]"
    codes = (tmp_path / "responsecode-report.txt").read_text().splitlines()
    assert codes == ["[#urls] [rescode]", "2 200", "1 301", "1 304"]
    domains = json.loads((tmp_path / "domain-report.json").read_text())["domains"]
    assert domains["w3.org"]["stop_reason"] == "OBJECT_LIMIT"
    assert domains["kaarefc.dk"]["objects"] == 3 and domains["kaarefc.dk"]["bytes"] == 131422
    assert domains["empty.dk"]["objects"] == 0 and domains["empty.dk"]["stop_reason"] == "DOWNLOAD_COMPLETE"
    assert not list(tmp_path.glob("*.tmp"))


def test_frontier_summary_from_text_or_numbers():
    assert frontier_summary_report("as the engine wrote it", job_name="j") == "as the engine wrote it\n"
    text = frontier_summary_report({"queued": 5, "discovered": 20, "exhausted": 2}, job_name="h1", stats=sample())
    assert text.startswith("Frontier report - ")
    assert (" Job being crawled: h1\n\n -----===== STATS =====-----\n Discovered:    20\n Queued:        5\n") in text
    assert "          Exhausted queues: 2\n" in text


def test_stats_survive_a_json_round_trip(tmp_path):
    """What the frontier journals at each checkpoint gives back the same reports on resume."""
    original = sample()
    restored = CrawlStats.from_state(json.loads(json.dumps(original.to_state())))
    restored.ended = original.ended
    write_reports(tmp_path / "a", original, crawl_name="h1")
    write_reports(tmp_path / "b", restored, crawl_name="h1")
    for name in REPORT_NAMES:
        assert (tmp_path / "a" / name).read_text() == (tmp_path / "b" / name).read_text(), name
