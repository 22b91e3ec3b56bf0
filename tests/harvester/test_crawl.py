"""Whole crawls of the test site through the crawl child: politeness timing, Retry-After and
retries, time and size limits, robots policy (politeness off unless the test is about it)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from crawlhelp import began, crawl_log, fetched, make_spec, run_crawl
from warcio.archiveiterator import ArchiveIterator


def test_politeness_spaces_fetches_per_host(tmp_path: Path, sites: Any) -> None:
    a, b = sites
    spec = make_spec(
        [f"{a.url}news/"],
        job_id=301,
        settings={"scope": "path", "min_delay_ms": 400, "max_delay_ms": 400, "delay_factor": 5.0},
    )
    result = run_crawl(tmp_path / "job", spec)
    assert result["status"] == "DONE"
    host = f"127.0.0.1:{a.port}"
    starts = sorted(began(f[8]) for f in crawl_log(tmp_path / "job") if host in f[3] and f[8] != "-")
    assert len(starts) >= 7
    gaps = [y - x for x, y in zip(starts, starts[1:], strict=False)]
    assert min(gaps) >= 0.38, gaps  # 400 ms (minus clock rounding) between fetches of one host


def test_retry_after_is_honoured(tmp_path: Path, sites: Any) -> None:
    a, _ = sites
    a.busy_served = False
    spec = make_spec([f"{a.url}busy"], job_id=302, settings={"scope": "path", "retry_delay_s": 600})
    result = run_crawl(tmp_path / "job", spec, timeout=30)  # 600 s retry delay would time out
    assert result["status"] == "DONE"
    first, line = [f for f in crawl_log(tmp_path / "job") if f[3].endswith("/busy")]
    assert first[1] == "503" and "willRetry" in first[11]  # every archived attempt has its line
    assert line[1] == "200"
    assert "2t" in line[11]  # Heritrix's attempts annotation: the second try succeeded
    statuses = []
    for warc in (tmp_path / "job" / "warcs").glob("302-7-*.warc.gz"):
        with open(warc, "rb") as fh:
            statuses += [
                r.http_headers.get_statuscode()
                for r in ArchiveIterator(fh)
                if r.rec_type == "response" and r.rec_headers.get_header("WARC-Target-URI").endswith("/busy")
            ]
    assert sorted(statuses) == ["200", "503"]  # both attempts archived


def test_connection_failures_are_retried_then_logged(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    spec = make_spec(
        [f"http://127.0.0.1:{port}/"], job_id=303, settings={"retry_delay_s": 0, "max_retries": 2, "robots": "ignore"}
    )
    result = run_crawl(tmp_path / "job", spec, timeout=60)
    assert result["status"] == "DONE"
    lines = {f[3]: f for f in crawl_log(tmp_path / "job")}
    seed = lines[f"http://127.0.0.1:{port}/"]
    assert seed[1] == "-2"
    assert "3t" in seed[-1]
    assert result["stats"]["uris_failed"] >= 1


def test_robots_txt_that_never_answers_precludes_its_host_minus_61(tmp_path: Path) -> None:
    """Robots obeyed and the host's robots.txt given up on after its retries: Heritrix's
    PreconditionEnforcer has no valid robots for the host, so its URIs are -61, never fetched."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    spec = make_spec([f"http://127.0.0.1:{port}/"], job_id=1403, settings={"retry_delay_s": 0, "max_retries": 2})
    assert run_crawl(tmp_path / "job", spec, timeout=60)["status"] == "DONE"
    lines = {f[3]: f for f in crawl_log(tmp_path / "job")}
    robots = lines[f"http://127.0.0.1:{port}/robots.txt"]
    assert (robots[1], robots[4], robots[-1]) == ("-2", "P", "3t")
    seed = lines[f"http://127.0.0.1:{port}/"]
    assert (seed[1], seed[8]) == ("-61", "-")  # not fetched


def test_time_limit(tmp_path: Path, sites: Any) -> None:
    a, _ = sites
    spec = make_spec(
        [f"{a.url}calendar?month=2026-01"],
        job_id=304,
        time_limit_s=2,
        settings={"min_delay_ms": 200, "max_delay_ms": 200, "max_hops": 1000},
    )
    result = run_crawl(tmp_path / "job", spec)
    assert result["domains"][0]["stop_reason"] == "TIME_LIMIT"
    assert result["stats"]["ended_by"] == "time_limit"


def test_size_limit(tmp_path: Path, sites: Any) -> None:
    a, _ = sites
    spec = make_spec([a.url], job_id=305, max_bytes=3000)
    result = run_crawl(tmp_path / "job", spec)
    d = result["domains"][0]
    assert d["stop_reason"] == "SIZE_LIMIT"
    assert 3000 <= d["bytes"] < 3000 + 32 * 2000  # at most what was in flight when it was reached
    assert any(f[1] == "-5003" and "Q:groupMaxAllKb" in f[-1] for f in crawl_log(tmp_path / "job"))


def test_robots_ignored_when_the_template_says_so(tmp_path: Path, sites: Any) -> None:
    a, _ = sites
    result = run_crawl(tmp_path / "job", make_spec([a.url], job_id=306, settings={"robots": "ignore"}))
    assert result["status"] == "DONE"
    got = fetched(tmp_path / "job")
    assert got[f"{a.url}private/secret.html"] == "200"
    assert got[f"{a.url}robots.txt"] == "200"  # still fetched and archived, as Heritrix does


def test_hops_bound_the_calendar_trap(tmp_path: Path, sites: Any) -> None:
    a, _ = sites
    result = run_crawl(
        tmp_path / "job", make_spec([f"{a.url}calendar?month=2026-01"], job_id=307, settings={"max_hops": 3})
    )
    assert result["domains"][0]["stop_reason"] == "DOWNLOAD_COMPLETE"
    got = fetched(tmp_path / "job")
    assert got[f"{a.url}calendar?month=2026-04"] == "200"
    assert got[f"{a.url}calendar?month=2026-05"] == "-4001"


def test_hostile_pages_never_kill_the_job(tmp_path: Path, sites: Any) -> None:
    """Redirect loop, latin-1 and broken UTF-8, a gzip bomb, ever-deeper paths, session ids."""
    a, _ = sites
    job_dir = tmp_path / "job"
    spec = make_spec(
        [f"{a.url}hostile/"], job_id=308, settings={"scope": "path", "max_hops": 4, "max_document_bytes": 1024 * 1024}
    )
    result = run_crawl(job_dir, spec)
    assert result["status"] == "DONE"
    assert result["domains"][0]["stop_reason"] == "DOWNLOAD_COMPLETE"
    lines = crawl_log(job_dir)
    got = {f[3]: f for f in lines}
    # The loop is cut by the seen-set: each end fetched once, the second one via R.
    assert [f[3] for f in lines].count(f"{a.url}hostile/loop-a") == 1
    assert got[f"{a.url}hostile/loop-b"][1] == "302" and got[f"{a.url}hostile/loop-b"][4] == "LR"
    # Links after undecodable bytes are still found.
    assert got[f"{a.url}hostile/after-latin1.html"][1] == "200"
    assert got[f"{a.url}hostile/after-bad-utf8.html"][1] == "200"
    # The bomb is archived as transferred (64 KiB of gzip), never inflated to 64 MiB.
    bomb = got[f"{a.url}hostile/bomb.html"]
    assert bomb[1] == "200" and int(bomb[2]) < 1024 * 1024
    with open(next((job_dir / "warcs").glob("308-7-*-00000-*.warc.gz")), "rb") as fh:
        block = next(
            r.raw_stream.read()
            for r in ArchiveIterator(fh)
            if r.rec_type == "response" and r.rec_headers.get_header("WARC-Target-URI").endswith("/bomb.html")
        )
    assert block[:2] == b"\x1f\x8b" and len(block) == int(bomb[2])
    # Ever-deeper paths end at the hop limit; the self-renewing session id is one URI.
    assert got[f"{a.url}hostile/deep/x/x/x/"][1] == "200"  # hop 4
    assert got[f"{a.url}hostile/deep/x/x/x/x/"][1] == "-4001"
    assert sum("/hostile/session" in f[3] for f in lines) == 1  # its link to itself is the same URI


def test_a_domain_listed_twice_is_one_result(tmp_path: Path, sites: Any) -> None:
    """A spec made from a definition that had one domain through two configurations (a paste before
    2026-11-29 did that) lists the domain twice: the crawl is one domain, under its first configuration, and
    its result names it once, as the intake's one row per job and configuration needs."""
    a, _ = sites
    spec = make_spec([a.url], job_id=309, max_objects=5)
    first = spec["domains"][0]
    spec["domains"].append({**first, "configuration": "pasted", "seeds": [f"{a.url}news.html"], "max_objects": 2})
    result = run_crawl(tmp_path / "job", spec)
    assert [(d["name"], d["configuration"]) for d in result["domains"]] == [("site-a", "default")]
    assert result["domains"][0]["objects"] == 5 and result["domains"][0]["stop_reason"] == "OBJECT_LIMIT"
