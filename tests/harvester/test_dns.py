"""DNS as a Heritrix prerequisite: ``dns:HOST`` fetched (P, via the host's first URI) before a host
named by a DNS name is crawled, logged with status 1 / text/dns, archived as a ``response`` record
with the zone block; a failed lookup is -1 on the dns: line and -6 on the host's URIs."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from crawlhelp import crawl_log, kill_mid_crawl, make_spec, run_crawl
from warcio.archiveiterator import ArchiveIterator

from harvester.crawllog import LINE_RE
from harvester.defaults import DNS_TTL_S
from harvester.dns import FAILED, PENDING, RESOLVED, UNKNOWN, DnsCache, lookup_host, system_resolver, zone_block


def _lines(job: Path) -> list[str]:
    return (job / "logs" / "crawl.log").read_text().splitlines()


def _dns_records(job: Path) -> list[Any]:
    found = []
    for warc in sorted((job / "warcs").glob("*.warc.gz")):
        with open(warc, "rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_headers.get_header("WARC-Target-URI", "").startswith("dns:"):
                    found.append((rec.rec_type, rec.rec_headers, rec.content_type, rec.content_stream().read()))
    return found


def test_lookup_precedes_the_hosts_first_fetch_and_is_logged_as_heritrix_does(tmp_path: Path, sites: Any) -> None:
    a, _ = sites
    seed = f"http://localhost:{a.port}/about.html"
    job = tmp_path / "job"
    result = run_crawl(job, make_spec([seed], job_id=601, settings={"scope": "path", "max_hops": 0}, max_objects=2))
    assert result["status"] == "DONE"
    lines = _lines(job)
    dns = [ln for ln in lines if " dns:localhost " in ln]
    assert len(dns) == 1, lines  # one lookup for the job (the TTL outlives it)
    line = dns[0]
    m = LINE_RE.match(line)
    assert m is not None, line
    (block,) = [b for *_, b in _dns_records(job)]
    digest = m["digest"]
    # Byte for byte: status 1 right-aligned in 5, size (the block) right-aligned in 10, P, via the
    # seed, text/dns, thread, fetch start+duration, digest, no source tag, content-size.
    expected = (
        f"{m['logged']}     1 {len(block):>10} dns:localhost P {seed} text/dns #{m['thread']} "
        f"{m['fetch']} {digest} - content-size:{len(block)}"
    )
    assert line == expected
    assert re.fullmatch(r"\d{17}\+\d+", m["fetch"])
    # It comes first: before robots.txt and before the seed.
    uris = [f[3] for f in crawl_log(job)]
    assert uris.index("dns:localhost") < uris.index(f"http://localhost:{a.port}/robots.txt") < uris.index(seed)
    # A prerequisite is never charged to the domain's object budget: with a budget of 2 objects,
    # robots.txt and the seed are both fetched (the seed is not refused with -5003).
    assert {f[3]: f[1] for f in crawl_log(job)}[seed] == "200"
    (domain,) = result["domains"]
    assert domain["objects"] == 2
    assert domain["stop_reason"] in ("OBJECT_LIMIT", "DOWNLOAD_COMPLETE")


def test_warc_record_holds_the_zone_block_and_the_resolver(tmp_path: Path, sites: Any) -> None:
    a, _ = sites
    job = tmp_path / "job"
    run_crawl(
        job, make_spec([f"http://localhost:{a.port}/about.html"], job_id=602, settings={"scope": "path", "max_hops": 0})
    )
    (record,) = _dns_records(job)
    rec_type, headers, content_type, block = record
    assert rec_type == "response"
    assert content_type == "text/dns"
    assert headers.get_header("WARC-Target-URI") == "dns:localhost"
    resolver = system_resolver()
    assert headers.get_header("WARC-IP-Address") == resolver
    first, *answers = block.decode("ascii").split("\n")
    stamp = datetime.strptime(first, "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    date = headers.get_header("WARC-Date")
    assert date.startswith(stamp.strftime("%Y-%m-%dT%H:%M:%S"))  # the block's time is the fetch time
    assert f"localhost.\t{DNS_TTL_S}\tIN\tA\t127.0.0.1" in answers
    assert answers[-1] == ""  # every answer line ends in a newline
    assert all(re.fullmatch(r"localhost\.\t\d+\tIN\t(A|AAAA)\t\S+", a) for a in answers[:-1])
    import base64
    import hashlib

    digest = "sha1:" + base64.b32encode(hashlib.sha1(block).digest()).decode()
    assert headers.get_header("WARC-Block-Digest") == digest == headers.get_header("WARC-Payload-Digest")
    log_line = next(ln for ln in _lines(job) if " dns:localhost " in ln)
    assert f" {digest} " in log_line
    # Reports: Heritrix counts lookups under the pseudo-host "dns:", its code 1 and text/dns.
    hosts = (job / "reports" / "hosts-report.txt").read_text().splitlines()
    assert f"1 {len(block)} dns: 0 0 1 {len(block)} 0 0 0 0 " in hosts
    assert f"1 {len(block)} text/dns" in (job / "reports" / "mimetype-report.txt").read_text().splitlines()
    assert "1 1" in (job / "reports" / "responsecode-report.txt").read_text().splitlines()


def test_failed_lookup_is_minus_1_and_the_hosts_uris_minus_6(tmp_path: Path, sites: Any) -> None:
    a, _ = sites
    job = tmp_path / "job"
    bad = "http://no-such-host.invalid/page.html"
    result = run_crawl(
        job,
        make_spec(
            [bad, f"http://localhost:{a.port}/about.html"],
            job_id=603,
            settings={"scope": "path", "max_hops": 0, "max_retries": 1},
        ),
    )
    assert result["status"] == "DONE"
    by_uri = {f[3]: f for f in crawl_log(job)}
    dns = by_uri["dns:no-such-host.invalid"]
    assert dns[1] == "-1" and dns[2] == "-" and dns[4] == "P" and dns[5] == bad and dns[6] == "unknown"
    assert dns[11] == "2t"  # retried like any network failure, then given up on
    assert by_uri[bad][1] == "-6"
    # Heritrix would never have scheduled that host's robots.txt: nothing is logged for it.
    assert "http://no-such-host.invalid/robots.txt" not in by_uri
    assert by_uri["dns:localhost"][1] == "1"  # the other host is unaffected
    assert not [r for r in _dns_records(job) if r[1].get_header("WARC-Target-URI") != "dns:localhost"]
    line = next(ln for ln in _lines(job) if " dns:no-such-host.invalid " in ln)
    assert re.fullmatch(r"\S{24}    -1          - dns:no-such-host\.invalid P \S+ unknown #\d{3} - - - 2t", line)


def test_ip_literal_hosts_need_no_lookup(tmp_path: Path, sites: Any) -> None:
    a, _ = sites
    job = tmp_path / "job"
    run_crawl(job, make_spec([f"{a.url}about.html"], job_id=604, settings={"scope": "path", "max_hops": 0}))
    assert not [f for f in crawl_log(job) if f[3].startswith("dns:")]
    assert _dns_records(job) == []


def test_cache_expires_after_the_ttl_and_failures_are_cached_too() -> None:
    cache = DnsCache()
    assert cache.state("example.com", 0) == UNKNOWN
    assert cache.mark_pending("example.com") == 0
    assert cache.state("example.com", 1) == PENDING
    cache.resolved("example.com", 300, 10)
    assert cache.state("example.com", 309.9) == RESOLVED
    assert cache.state("example.com", 310) == UNKNOWN  # due again: a second dns: fetch
    assert cache.mark_pending("example.com") == 1  # its own seen-set key (dns:example.com#1)
    cache.failed("example.com", 300, 400)
    assert cache.state("example.com", 500) == FAILED
    cache.forget("example.com")
    assert cache.state("example.com", 500) == UNKNOWN
    cache.failed("example.com", 300, 400)
    restored = DnsCache()
    restored.restore(cache.snapshot())
    assert restored.state("example.com", 500) == FAILED
    assert restored.mark_pending("example.com") == 2


def test_zone_block_and_which_hosts_need_a_lookup() -> None:
    when = datetime(2026, 1, 1, 12, 0, 0, 123000, tzinfo=UTC)
    assert zone_block("example.com", when, ["1.2.3.4", "2001:db8::1"], 300) == (
        b"20260101120000\nexample.com.\t300\tIN\tA\t1.2.3.4\nexample.com.\t300\tIN\tAAAA\t2001:db8::1\n"
    )
    assert lookup_host("http://Example.COM.:8080/x") == "example.com"
    assert lookup_host("http://127.0.0.1:8080/") is None
    assert lookup_host("http://[::1]/") is None
    assert lookup_host("dns:example.com") is None


def test_frontier_issues_the_lookup_first_and_a_resumed_job_keeps_waiting_for_it(tmp_path: Path) -> None:
    """No Scrapy engine here: the CrawlJob's own issue order, then the same job reopened (as after
    a kill -9) from its journalled frontier and key/value state."""
    from harvester.contracts import JobSpec
    from harvester.crawljob import CrawlJob

    spec = JobSpec.from_dict(make_spec(["http://localhost:1/", "http://127.0.0.1:1/"], job_id=605))
    job = CrawlJob(spec, tmp_path)
    first = job.issue(0.0)
    assert first is not None and first.url == "dns:localhost"
    assert first.meta["nh"].path == "P" and first.meta["nh"].via == "http://localhost:1/"
    assert job.dns.state("localhost", 0.0) == PENDING
    job.checkpoint()
    job.frontier.close()

    resumed = CrawlJob(spec, tmp_path)
    assert resumed.resumed
    assert resumed.dns.state("localhost", 0.0) == PENDING  # nothing of localhost goes out before it
    issued = []
    while (request := resumed.issue(0.0)) is not None:
        issued.append(request.url)
    assert "http://localhost:1/" not in issued and "http://localhost:1/robots.txt" not in issued
    assert "http://127.0.0.1:1/robots.txt" in issued  # an IP-literal host is not held up
    resumed.frontier.close()


def test_kill_9_then_rerun_does_not_look_the_host_up_again(tmp_path: Path, sites: Any) -> None:
    """The cache is journalled with the frontier: a resumed job trusts the lookup it already made."""
    a, _ = sites
    job = tmp_path / "job"
    spec = make_spec([f"http://localhost:{a.port}/"], job_id=606, settings={"min_delay_ms": 60, "max_delay_ms": 60})
    kill_mid_crawl(job, spec, lines=15)
    assert not (job / "jobresult.json").exists()
    result = run_crawl(job, spec)
    assert result["status"] == "DONE"
    lookups = [f for f in crawl_log(job) if f[3] == "dns:localhost"]
    assert [f[1] for f in lookups] == ["1"]
    assert {f[3]: f[1] for f in crawl_log(job)}[f"http://localhost:{a.port}/news/article6.html"] == "200"
    assert len(_dns_records(job)) == 1


def test_lookup_host_is_the_hostname_to_resolve_of_every_kind_of_url() -> None:
    """lookup_host reads the cached host_key (issue 14): the same answer as from urlsplit's hostname,
    over names, ports (default, odd, invalid), IP literals of both kinds, trailing dots, userinfo,
    case, and broken URLs."""
    from urllib.parse import urlsplit

    from harvester.hosts import is_ip

    def by_urlsplit(url: str) -> str | None:  # what lookup_host answered before it read host_key
        if url[:4].lower() == "dns:":
            return None
        try:
            host = (urlsplit(url).hostname or "").rstrip(".")
        except ValueError:
            return None
        return None if not host or is_ip(host) else host

    hosts = [
        "example.com",
        "Example.COM.",
        "a..",
        "127.0.0.1",
        "[::1]",
        "[2001:DB8::1]",
        "[fe80::1%25eth0]",
        "10.0.0.1.",
        "xn--bcher-kva.example",
        "bücher.example",
        "",
        "u:p@h.org",
        "@h.org",
        "h_1.org",
        "[::ffff:1.2.3.4]",
        "[::1",
    ]
    ports = ["", ":80", ":443", ":8080", ":0", ":99999", ":x", ":"]
    urls = ["dns:example.com", "DNS:x", "http:///p", "mailto:x@y", "http://", "https://h:1:2/"]
    for scheme in ("http", "https", "HTTP"):
        for host in hosts:
            for port in ports:
                urls.append(f"{scheme}://{host}{port}/p?q#f")
    for url in urls:
        assert lookup_host(url) == by_urlsplit(url), url
