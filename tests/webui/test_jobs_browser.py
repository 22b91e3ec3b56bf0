"""The Jobs and QA pages in a real browser (Playwright driving Debian's Chromium) against the live server:
a running job's progress updates without a reload, the trap preview answers from crawl.log, and a
finished job's reports and statistics open. Screenshots (jobs-*.png, qa-*.png) go to the test data directory,
or to ``$NETHARVEST_SCREENSHOT_DIR`` (``docs/screenshots`` refreshes the committed ones): a test run never
changes the work tree.

Skipped, saying why, only when Chromium or the playwright package is absent (.ci/run installs both).
"""

from __future__ import annotations

import shutil
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.utils import timezone

from harvester.runtime import spool_dir
from orchestrator.harvest.jobs import intake, progresslog
from orchestrator.harvest.models import JobStatus, ProgressSample
from tests.orchestrator.crawled_job import crawled, end_now, make_job, record
from tests.webui.browserhelp import MARKS, session_page, shot

pytestmark = MARKS


@pytest.fixture
def page(monkeypatch, live_server):
    cache.clear()
    user = User.objects.create_superuser("engineer", password="pw-long-enough")
    with session_page(monkeypatch, live_server, user, 1280) as tab:
        yield tab


def _progress(job_id: int, done: int, queued: int, alerts: list[str]) -> None:
    assert intake.record_progress(
        {
            "job_id": job_id,
            "at": f"2026-11-23T10:00:{done % 60:02d}Z",
            "uris_done": done,
            "uris_queued": queued,
            "bytes": done * 20_000,
            "uri_rate": 3.5,
            "avg_uri_rate": 2.9,
            "kb_rate": 68.4,
            "avg_kb_rate": 55.0,
            "queues_active": 2,
            "domains": {
                "site-a.fr": {"objects": done - 4, "bytes": done * 15_000, "queued": queued},
                "site-b.dk": {"objects": 5, "bytes": done * 5_000, "queued": 0},
            },
            "alerts": alerts,
        }
    )


def test_running_job_updates_live_and_previews_a_trap(live_server, page) -> None:
    job = make_job(status=JobStatus.STARTED, started_at=timezone.now() - timedelta(minutes=6))
    _progress(job.pk, 12, 340, [])
    logs = spool_dir() / str(job.pk) / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    shutil.copy(crawled().job_dir / "logs" / "crawl.log", logs / "crawl.log")

    page.goto(f"{live_server.url}/jobs/{job.pk}/")
    assert page.inner_text("[data-f=uris_done]") == "12"
    _progress(job.pk, 37, 512, ["site-b.dk: object budget reached"])
    # the page polls every 5 s: the new heartbeat shows without a reload
    page.wait_for_function("document.querySelector('[data-f=uris_done]').textContent === '37'", timeout=20_000)
    assert page.inner_text("[data-f=uris_queued]") == "512"
    assert "object budget reached" in page.inner_text("#alerts")
    assert "site-b.dk" in page.inner_text("#budgets tbody tr:first-child")  # 5 of 5 objects: most used
    assert page.locator("#budgets tbody tr:first-child .meter.full").count() == 1
    # Its rate and queue over time: more samples (stored as intake keeps them, as if the job had run for five
    # minutes) show in the charts at the next poll, without a reload: the charts grow while the job runs.
    before = page.locator("#chart-rate circle").count()
    start = timezone.now() - timedelta(minutes=5)
    ProgressSample.objects.bulk_create(
        ProgressSample(
            job=job,
            at=start + timedelta(minutes=i),
            figures=progresslog.figures_of(
                {"uri_rate": 1.5 + i * 0.5, "uris_queued": 620 - 30 * i, "uris_done": 6 * i}
            ),
        )
        for i in range(5)
    )
    page.wait_for_function(f"document.querySelectorAll('#chart-rate circle').length >= {before + 5}", timeout=20_000)
    assert "queued" in page.inner_text("#chart-queue") and "done" in page.inner_text("#chart-queue")

    page.fill("#trap-regex", r".*\.(png|jpg|gif|css)")
    page.click("#trap-preview")
    page.wait_for_selector("#trap-result:has-text('URIs match')")
    text = page.inner_text("#trap-result")
    assert "already processed" in text and "cannot see" in text and "about" in text
    shot(page, "jobs-running-job")

    page.goto(f"{live_server.url}/jobs/running/")
    _progress(job.pk, 41, 500, [])
    page.wait_for_function(
        f"document.querySelector('tr[data-job=\"{job.pk}\"] [data-f=uris_done]').textContent === '41'", timeout=20_000
    )
    shot(page, "jobs-running")

    # The job ends while the page is open: it leaves the running list, its final result shows under "Just ended".
    end_now(job)
    page.wait_for_selector(f"#ended tr[data-ended='{job.pk}']", timeout=20_000)
    assert page.locator(f"#running tr[data-job='{job.pk}']").count() == 0
    ended = page.inner_text(f"#ended tr[data-ended='{job.pk}']")
    assert "DONE" in ended and "45" in ended and "DOWNLOAD_COMPLETE 1, DOWNLOAD_UNFINISHED 1" in ended


def test_finished_job_reports_and_statistics(live_server, page) -> None:
    job = record(make_job())
    page.goto(f"{live_server.url}/jobs/")
    page.click(f"a[href='/jobs/{job.pk}/']")
    page.wait_for_selector("text=Seeds report")
    assert "OBJECT_LIMIT" in page.inner_text("main")
    shot(page, "jobs-job")
    # The crawl log opens in the same tab, inside the layout, with the way back (no bare text in a new tab).
    page.click("a:has-text('Last 1,000 lines')")
    page.wait_for_selector("pre.log")
    assert "The last" in page.inner_text("main") and len(page.context.pages) == 1
    page.click(f"a:has-text('Back to job {job.pk}')")
    page.wait_for_selector("text=Seeds report")
    page.goto(f"{live_server.url}/jobs/{job.pk}/reports/mimetype-report.txt")
    assert "[#urls] [#bytes] [mime-types]" in page.inner_text("body")
    page.goto(f"{live_server.url}/qa/job/{job.pk}/")
    assert page.locator("svg.chart").count() >= 10
    shot(page, "qa-job")
    page.goto(f"{live_server.url}/qa/")
    page.click(f"a[href='/qa/year/{job.ended_at.year}/']")
    page.wait_for_selector("text=MIME categories")
    shot(page, "qa-year")
