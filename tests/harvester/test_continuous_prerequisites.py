"""A continuous crawl keeps a host whose prerequisites fail for a while, and obeys the robots.txt a site
has now (issue 12's "runs until stopped", seed 002 §6.2, Heritrix's robotsValidityDurationSeconds).

In a snapshot a URI whose host's DNS lookup failed (-6) or whose robots.txt never answered (-61) is
logged and let go, as Heritrix does; in a crawl of months that would take the host out for good after one
outage. Here such a URI is a failed visit: logged, counted, and tried again after its wait. robots.txt
itself is fetched again when its validity ends, so a host that was down is crawled once it answers, and a
rule added later is obeyed. Real crawl children over HTTP, time constants in seconds.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from crawlhelp import began, continuous_spec, controlled_crawl, crawl_log, write_spec

from harvester.reports import parse_duration
from tests.changingsite import REVISIT_SECONDS, ChangingSite
from tests.conftest import wait_for

REVISIT = {**REVISIT_SECONDS, "max_wait_s": 4}


@pytest.fixture
def site() -> Any:
    s = ChangingSite().start()
    yield s
    s.robots_hang_s = 0.0
    s.shutdown()


def _spec(seeds: list[str], job_id: int, robots_validity_s: int, dns_ttl_s: int = 3600, **settings: Any) -> dict:
    return continuous_spec(
        seeds,
        job_id,
        {"min_delay_ms": 100, "max_delay_ms": 100, **settings},
        revisit=REVISIT,
        budget_per_s=20.0,
        warc_rotate_s=60,
        robots_validity_s=robots_validity_s,
        dns_ttl_s=dns_ttl_s,
    )


def _lines(job_dir: Path, uri: str, status: str | None = None) -> list[list[str]]:
    log = job_dir / "logs" / "crawl.log"
    if not log.exists():
        return []
    return [f for f in crawl_log(job_dir) if f[3] == uri and (status is None or f[1] == status)]


def _progress(job_dir: Path) -> dict[str, Any]:
    try:
        return json.loads((job_dir / "progress.json").read_text())["continuous"]
    except (OSError, ValueError, KeyError):
        return {}


def _logged(stamp: str) -> float:
    """A crawl.log line's time (its first field: ISO 8601 with milliseconds, UTC)."""
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC).timestamp()


def _stop(proc: Any, job_id: int) -> None:
    assert proc.stdin is not None
    proc.stdin.write((json.dumps({"job_id": job_id, "action": "stop", "argument": "", "id": 0}) + "\n").encode())
    proc.stdin.flush()
    assert proc.wait(60) == 0


def test_a_host_whose_robots_txt_timed_out_is_crawled_once_it_answers_and_new_rules_are_obeyed(
    tmp_path: Path, site: ChangingSite
) -> None:
    job_dir = tmp_path / "job"
    seed, fast, slow = site.url, f"{site.url}fast", f"{site.url}slow"
    robots = f"{site.url}robots.txt"
    site.robots_hang_s = 4.0  # the crawler gives up after 1 s, twice
    write_spec(
        job_dir,
        _spec([seed], 961, robots_validity_s=3, read_timeout_s=1, connect_timeout_s=1, max_retries=1),
    )
    proc = controlled_crawl(job_dir)
    try:
        # robots.txt never answers: the seed is logged -61 ...
        wait_for(lambda: _lines(job_dir, seed, "-61"), 60, "the seed's -61")
        site.robots_hang_s = 0.0
        site.robots = "User-agent: *\nDisallow: /slow\n"
        # ... and, robots.txt asked for again when its validity ended, crawled after all.
        wait_for(lambda: _lines(job_dir, seed, "200"), 30, "the seed fetched once robots.txt answers")
        wait_for(lambda: _lines(job_dir, fast, "200"), 30, "its links followed")
        wait_for(lambda: _lines(job_dir, slow, "-9998"), 30, "/slow refused: the rule robots.txt gave")
        # A rule added later is obeyed from the next fetch of robots.txt on.
        changed_at = time.time()
        site.robots = "User-agent: *\nDisallow: /fast\n"
        wait_for(
            lambda: [h for h in site.hits("/robots.txt") if h.start > changed_at and h.status == 200],
            30,
            "robots.txt fetched again",
        )
        reread = min(h.end for h in site.hits("/robots.txt") if h.start > changed_at and h.status == 200)
        wait_for(lambda: _lines(job_dir, fast, "-9998"), 30, "/fast refused under the new rule")
        time.sleep(3)
        # The rule goes away again (a day of maintenance): /fast, archived before, was kept and comes back.
        lifted_at = time.time()
        site.robots = "User-agent: *\nDisallow: /slow\n"
        wait_for(lambda: [h for h in site.hits("/fast") if h.start > lifted_at], 30, "/fast fetched again")
    finally:
        if proc.poll() is None:
            _stop(proc, 961)
    assert not [h for h in site.hits("/slow")], "a disallowed page was fetched"
    excluded = [h for h in site.hits("/fast") if reread + 0.5 < h.start < lifted_at]
    assert not excluded, "/fast fetched while robots.txt excluded it"
    # /slow, never fetched, was disregarded at its first sight (Heritrix); /fast, an archived page, was kept.
    assert len(_lines(job_dir, slow, "-9998")) == 1
    assert all(f[-1].startswith("wt:") for f in _lines(job_dir, fast, "-9998"))
    # robots.txt: asked again at each end of its validity, not on every URI.
    renewals = [f for f in crawl_log(job_dir) if f[3] == robots and f[1] == "200"]
    assert 2 <= len(renewals) <= 1 + (time.time() - began(renewals[0][8])) / 3 + 1, len(renewals)
    assert all(f[4].endswith("P") for f in renewals)  # prerequisites, as the first one


def test_a_uri_whose_host_lookup_failed_is_tried_again_when_the_failure_expires(
    tmp_path: Path, site: ChangingSite
) -> None:
    job_dir = tmp_path / "job"
    bad = "http://no-such-host.invalid/page.html"
    # The failed lookup holds 3 s (dns_ttl_s); the URI's own wait after a failure is the initial 2 s, but
    # its host sleeps until the lookup may be tried again: one -6 line per failed lookup, not one per wait.
    spec = _spec([bad, site.url], 962, robots_validity_s=3600, dns_ttl_s=3, scope="host", max_retries=0)
    write_spec(job_dir, spec)
    proc = controlled_crawl(job_dir)
    try:
        wait_for(lambda: len(_lines(job_dir, bad, "-6")) >= 3, 60, "three attempts at the unresolvable URI")
        # The failed visits are counted as errors in the job's progress (written every few seconds).
        wait_for(lambda: _progress(job_dir).get("errors", 0) >= 3, 30, "the errors in the progress")
    finally:
        _stop(proc, 962)
    attempts = [_logged(f[0]) for f in _lines(job_dir, bad, "-6")]
    lookups = [_logged(f[0]) for f in _lines(job_dir, "dns:no-such-host.invalid")]
    # Each attempt after the lookup failed again (the failure expired, the host was looked up anew), never two
    # between two lookups: not in a loop, and not given up.
    assert len(lookups) >= len(attempts) >= 3, (lookups, attempts)
    assert all(b - a >= 2.5 for a, b in zip(attempts, attempts[1:], strict=False)), attempts
    # The line carries the revisit annotation, with the URI's failed visits counted as none, and the wait until
    # the URI is really tried again: until the failed lookup expires (3 s), not the policy's own 2 s.
    failed = _lines(job_dir, bad, "-6")
    assert all(f[-1].startswith("wt:") and ",0vis," in f[-1] for f in failed)
    waits = [parse_duration(f[-1].split(",")[0].removeprefix("wt:")) for f in failed]
    assert all(w is not None and 2200 < w <= 3000 for w in waits), waits
    assert len(_lines(job_dir, site.url, "200")) >= 2  # the other host crawled meanwhile
    result = json.loads((job_dir / "jobresult.json").read_text())
    assert result["status"] == "DONE"
