"""Every archived fetch attempt has its crawl.log line (issue 14): a URI answered 503 twice, then
200, leaves three response records and three crawl.log lines (the first two annotated
``willRetry``); the reports count the lines, the budget counts the object once."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from crawlhelp import crawl_log, make_spec, run_crawl, tiny_site
from warcio.archiveiterator import ArchiveIterator


def _flaky(path: str, n: int) -> tuple[int, bytes]:
    """``/flaky`` answers 503 (no Retry-After) twice, then 200; nothing else exists."""
    if path == "/flaky":
        return (503, b"busy") if n <= 2 else (200, b"<html>fine</html>")
    return 404, b"none"


def test_each_archived_attempt_has_its_crawl_log_line(tmp_path: Path) -> None:
    job = tmp_path / "job"
    with tiny_site(_flaky) as base:
        url = f"{base}flaky"
        result = run_crawl(
            job, make_spec([url], job_id=1401, max_objects=10, settings={"retry_delay_s": 0, "max_retries": 2})
        )
    assert result["status"] == "DONE"

    records = []
    for warc in (job / "warcs").glob("1401-7-*.warc.gz"):
        with open(warc, "rb") as fh:
            records += [
                r.http_headers.get_statuscode()
                for r in ArchiveIterator(fh)
                if r.rec_type == "response" and r.rec_headers.get_header("WARC-Target-URI") == url
            ]
    assert sorted(records) == ["200", "503", "503"]

    lines = [f for f in crawl_log(job) if f[3] == url]
    assert [f[1] for f in lines] == ["503", "503", "200"]
    notes = [f[11].split(",") for f in lines]
    assert "willRetry" in notes[0] and "willRetry" in notes[1]
    assert "willRetry" not in notes[2]
    assert "2t" in notes[1] and "3t" in notes[2]  # Heritrix's attempts annotation

    # The reports count what crawl.log says: every line, by status, and by host.
    codes = Counter(f[1] for f in crawl_log(job))
    report = (job / "reports" / "responsecode-report.txt").read_text().splitlines()[1:]
    assert {int(code): int(n) for n, code in (line.split() for line in report)} == {
        int(c): n for c, n in codes.items() if int(c) > 0
    }
    hosts = {
        f[2]: int(f[0])
        for f in (line.split() for line in (job / "reports" / "hosts-report.txt").read_text().splitlines()[1:])
    }
    assert hosts["127.0.0.1"] == sum(1 for f in crawl_log(job) if int(f[1]) > 0)

    # The budget: one object for the URI (and one each for its robots.txt prerequisite and the host's inferred
    # /favicon.ico), not three for the URI.
    domain = result["domains"][0]
    assert domain["objects"] == 3
    assert domain["stop_reason"] == "DOWNLOAD_COMPLETE"


def test_the_archive_side_predicts_retries_from_the_crawls_own_settings() -> None:
    # One policy (harvester.retries) read from the settings crawlsettings writes: no fallback of its own.
    from scrapy.settings import Settings

    from harvester.retries import RETRY_STATUSES, RetryPolicy

    policy = RetryPolicy.from_settings(Settings({"RETRY_TIMES": 3, "RETRY_HTTP_CODES": list(RETRY_STATUSES)}))
    assert policy.will_retry({"retry_times": 2}, status=503)
    assert not policy.will_retry({"retry_times": 3}, status=503)
    assert not policy.will_retry({}, status=500)
    retried = any(issubclass(TimeoutError, e) for e in policy.exceptions)
    assert policy.will_retry({}, exc=TimeoutError()) == retried
