"""A second harvest of an unchanged site captures the whole site (issue 11).

The site is served by the standard library's ``http.server`` (Last-Modified, If-Modified-Since
answered 304), crawled by the real crawl child, its WARCs fed into the dedup index as the indexer
chain feeds it, then crawled again consulting that index. Before the fix the second crawl sent
conditional GETs for every page, got bodyless 304s, found no links and ended at the seed with
DOWNLOAD_COMPLETE.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from crawlhelp import crawl_log, kill_mid_crawl, make_spec, run_crawl, start_crawl, write_spec
from warcio.archiveiterator import ArchiveIterator

from harvester.contracts import JobSpec
from harvester.runjob import prepare_job_dir
from indexer.dedup import DedupIndex
from indexer.dedupclient import DedupClient
from indexer.dedupfeed import add_warc, iter_captures
from tests.conftest import wait_for
from tests.dedupsvc import ServiceProcess
from tests.staticsite import StaticServer, write_site

IDENTICAL = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"


@pytest.fixture()
def site(tmp_path: Path) -> Iterator[tuple[StaticServer, set[str]]]:
    paths = write_site(tmp_path / "site", pages=60)
    server = StaticServer(tmp_path / "site")
    yield server, {server.url + p.lstrip("/") for p in paths}
    server.shutdown()


def warc_records(job_dir: Path) -> dict[str, tuple[str, str, str]]:
    """URI → (record type, revisit profile or "", HTTP status) of the job's response/revisit records."""
    out = {}
    for path in sorted((job_dir / "warcs").glob("*.warc.gz")):
        if path.name.endswith("-metadata-1.warc.gz"):
            continue
        with open(path, "rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_type in ("response", "revisit"):
                    out[rec.rec_headers.get_header("WARC-Target-URI")] = (
                        rec.rec_type,
                        rec.rec_headers.get_header("WARC-Profile") or "",
                        rec.http_headers.get_statuscode() if rec.http_headers else "",
                    )
    return out


def feed(index: Path, job_dir: Path) -> None:
    """What the indexer chain does with a finished job's WARCs."""
    with DedupIndex(index) as idx:
        for w in sorted((job_dir / "warcs").glob("*.warc.gz")):
            if not w.name.endswith("-metadata-1.warc.gz"):
                add_warc(idx, w, w.name)


def crawl(tmp_path: Path, job_id: int, seed: str, index: Path | str) -> tuple[Path, dict[str, Any]]:
    spec = make_spec([seed], job_id=job_id)
    spec["dedup_index"] = str(index)
    job_dir = tmp_path / f"job{job_id}"
    return job_dir, run_crawl(job_dir, spec)


def test_second_harvest_of_an_unchanged_site_captures_all_of_it(tmp_path: Path, site: Any) -> None:
    server, expected = site
    index = tmp_path / "dedup.sqlite"
    first_dir, first = crawl(tmp_path, 1, server.url, index)
    first_uris = {f[3] for f in crawl_log(first_dir)}
    assert first_uris == expected
    feed(index, first_dir)

    second_dir, second = crawl(tmp_path, 2, server.url, index)
    assert {f[3] for f in crawl_log(second_dir)} == first_uris
    records = warc_records(second_dir)
    assert set(records) == first_uris
    # HTML and the stylesheet were fetched in full (their links are read) and stored as revisits of
    # the first capture; images and PDFs were asked conditionally and answered 304.
    assert records[server.url + "p59.html"] == ("revisit", IDENTICAL, "200")
    assert records[server.url + "site.css"] == ("revisit", IDENTICAL, "200")
    assert records[server.url + "img/i59.png"] == ("revisit", NOT_MODIFIED, "304")
    assert records[server.url + "doc50.pdf"] == ("revisit", NOT_MODIFIED, "304")
    assert records[server.url + "robots.txt"][0] == "revisit"
    assert all(kind == "revisit" for kind, _, _ in records.values())
    (domain,) = second["domains"]
    assert domain["stop_reason"] == "DOWNLOAD_COMPLETE"
    report = json.loads((second_dir / "reports" / "domain-report.json").read_text())["domains"]["site-a"]
    assert report["stop_reason"] == "DOWNLOAD_COMPLETE"
    assert report["revisits"] == len(first_uris) and report["novel_urls"] == 0


def test_a_resubmitted_reharvest_captures_all_of_it(tmp_path: Path, site: Any) -> None:
    """The second harvest's job dies mid-crawl and is resubmitted (``continues_job``): the job that
    carries on (taking over the frontier, harvester/takeover.py) fetches through the same dedup path,
    and between them the two reach every URI the first harvest reached."""
    server, expected = site
    index = tmp_path / "dedup.sqlite"
    first_dir, _ = crawl(tmp_path, 11, server.url, index)
    assert {f[3] for f in crawl_log(first_dir)} == expected
    feed(index, first_dir)

    polite = make_spec([server.url], job_id=12, settings={"min_delay_ms": 30, "max_delay_ms": 30})
    polite["dedup_index"] = str(index)
    done = kill_mid_crawl(tmp_path / "12", polite)
    assert 0 < len(done) < len(expected)
    carry_on = {**polite, "job_id": 13, "continues_job": 12}
    job_dir = prepare_job_dir(JobSpec.from_dict(carry_on), root=tmp_path)
    result = run_crawl(job_dir, carry_on)
    assert {f[3] for f in crawl_log(job_dir)} == expected  # the failed job's lines, then this job's
    assert result["domains"][0]["stop_reason"] == "DOWNLOAD_COMPLETE"
    revisits = warc_records(job_dir)
    assert revisits[server.url + "p59.html"] == ("revisit", IDENTICAL, "200")
    assert revisits[server.url + "img/i59.png"] == ("revisit", NOT_MODIFIED, "304")


def test_a_304_nobody_asked_for_is_never_download_complete(tmp_path: Path) -> None:
    """A server (or cache) answering 304 to an unconditional GET hides that page's links: the crawl
    says so in crawl.log, and the domain ends DOWNLOAD_UNFINISHED, not DOWNLOAD_COMPLETE."""
    write_site(tmp_path / "site", pages=10)
    server = StaticServer(tmp_path / "site", always_304=frozenset({"/p4.html"}))
    try:
        job_dir, result = crawl(tmp_path, 3, server.url, tmp_path / "no-index.sqlite")
    finally:
        server.shutdown()
    lines = {f[3]: f for f in crawl_log(job_dir)}
    assert lines[server.url + "p4.html"][1] == "304"
    assert "linksUnseen:304" in lines[server.url + "p4.html"][11]
    assert server.url + "p5.html" not in lines  # only p4 links to it (p5 to p9 are lost)
    assert result["domains"][0]["stop_reason"] == "DOWNLOAD_UNFINISHED"
    report = json.loads((job_dir / "reports" / "domain-report.json").read_text())["domains"]["site-a"]
    assert report["stop_reason"] == "DOWNLOAD_UNFINISHED"


def test_reharvest_through_the_dedup_service_and_a_crawl_that_loses_it_midway(tmp_path: Path, site: Any) -> None:
    """Issue 15: harvesters consult the dedup service over the network. The second harvest gets its revisits
    through it; the third loses it midway (kill -9) and still completes, deduplicating within the job and
    saying so in crawl-report.txt."""
    server, expected = site
    service = ServiceProcess(tmp_path / "dedup.rocksdb")
    try:
        first_dir, _ = crawl(tmp_path, 21, server.url, service.url)
        client = DedupClient(service.url)
        for w in sorted((first_dir / "warcs").glob("*.warc.gz")):  # what the chain's index step sends
            if not w.name.endswith("-metadata-1.warc.gz"):
                client.add(iter_captures(w, w.name))
        client.close()

        second_dir, second = crawl(tmp_path, 22, server.url, service.url)
        records = warc_records(second_dir)
        assert set(records) == expected and all(kind == "revisit" for kind, _, _ in records.values())
        assert records[server.url + "p59.html"] == ("revisit", IDENTICAL, "200")
        assert records[server.url + "img/i59.png"] == ("revisit", NOT_MODIFIED, "304")
        assert second["domains"][0]["stop_reason"] == "DOWNLOAD_COMPLETE"

        # Two identical new images, linked from the last page only: fetched once the service is gone.
        root = tmp_path / "site"
        for name in ("twin1.png", "twin2.png"):
            (root / "img" / name).write_bytes(b"\x89PNG twins")
        page = root / "p59.html"
        page.write_text(
            page.read_text().replace("</body>", '<img src="/img/twin1.png"><img src="/img/twin2.png"></body>')
        )
        spec = make_spec([server.url], job_id=23, settings={"min_delay_ms": 10, "max_delay_ms": 10})
        spec["dedup_index"] = service.url
        job_dir = tmp_path / "job23"
        write_spec(job_dir, spec)
        proc = start_crawl(job_dir)
        log = job_dir / "logs" / "crawl.log"
        wait_for(lambda: log.exists() and len(log.read_text().splitlines()) >= 20, 30, "20 crawl.log lines")
        service.stop(signal.SIGKILL)
        assert proc.wait(90) == 0
    finally:
        service.stop(signal.SIGKILL)
    twins = {server.url + "img/twin1.png", server.url + "img/twin2.png"}
    assert {f[3] for f in crawl_log(job_dir)} == expected | twins
    third = warc_records(job_dir)
    assert third[server.url + "img/i59.png"][0] == "response"  # no earlier capture to ask: stored in full
    assert sorted(third[t][:2] for t in twins) == [("response", ""), ("revisit", IDENTICAL)]  # within the job
    result = json.loads((job_dir / "jobresult.json").read_text())
    assert result["domains"][0]["stop_reason"] == "DOWNLOAD_COMPLETE"
    report = (job_dir / "reports" / "crawl-report.txt").read_text()
    assert f"dedup service {service.url} unreachable" in report and "within-job dedup goes on" in report
