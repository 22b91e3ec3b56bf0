"""The Jobs pages: list with filters and pagination, resubmit/reject, running jobs' progress JSON,
controls and trap preview, the job page, reports and crawl-log search, each behind its permission.
Real PostgreSQL and Redis, a real harvest's files (tests/orchestrator/crawled_job.py)."""

from __future__ import annotations

import re
import shutil
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse

from harvester.runtime import spool_dir
from orchestrator.harvest import intake
from orchestrator.harvest.models import ArchiveFile, HarvestChannel, Job, JobControl, JobStatus
from tests.orchestrator import factories
from tests.orchestrator.crawled_job import DOMAINS, crawled, make_job, record

pytestmark = pytest.mark.django_db


def _client(name: str, *perms: str) -> Client:
    user = User.objects.create_user(name, password="pw")
    for perm in perms:
        app, codename = perm.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app, codename=codename))
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def viewer() -> Client:
    return _client("viewer", "harvest.view_job")


@pytest.fixture
def engineer() -> Client:
    return _client("engineer", "harvest.view_job", "harvest.add_jobcontrol")


def _rows(text: str) -> int:
    """Job rows in a list page."""
    return len(re.findall(r'<td><a href="/jobs/\d+/">', text))


def _total(client: Client, query: str) -> int:
    text = client.get(reverse("jobs:list") + query).content.decode()
    found = re.search(r"\(([\d,]+) in all\)", text)
    return int(found.group(1).replace(",", "")) if found else _rows(text)


def _flash(client: Client, response) -> str:  # type: ignore[no-untyped-def]
    """Follow a redirect and return the page's text (messages included)."""
    assert response.status_code == 302, response.content[:500]
    return client.get(response["Location"]).content.decode()


def test_every_page_needs_login_and_the_view_permission() -> None:
    job = make_job()
    anonymous, nobody = Client(), _client("nobody")
    urls = [reverse("jobs:list"), reverse("jobs:running"), reverse("jobs:running-json"),
            reverse("jobs:job", args=[job.pk]), reverse("jobs:progress-json", args=[job.pk]),
            reverse("jobs:trap-preview", args=[job.pk]) + "?regex=x",
            reverse("jobs:report", args=[job.pk, "crawl-report.txt"]),
            reverse("jobs:crawl-log", args=[job.pk]) + "?tail=5"]
    for url in urls:
        assert anonymous.get(url).status_code == 302, url
        assert nobody.get(url).status_code == 403, url


def test_actions_need_the_change_permission(viewer: Client) -> None:
    job = make_job(status=JobStatus.FAILED)
    for name, data in (("jobs:resubmit", {}), ("jobs:reject", {}), ("jobs:control", {"action": "stop"}),
                       ("jobs:trap", {"regex": ".*x"})):
        assert viewer.post(reverse(name, args=[job.pk]), data).status_code == 403
    assert Client().post(reverse("jobs:reject", args=[job.pk])).status_code == 302  # to the login page
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and job.rejected_at is None and not JobControl.objects.exists()
    assert viewer.get(reverse("jobs:reject", args=[job.pk])).status_code == 405


def test_list_filters_and_paginates(viewer: Client) -> None:
    news = factories.selective_definition("news")
    broad = factories.snapshot_definition("broad")
    old = datetime(2025, 3, 1, tzinfo=UTC)
    Job.objects.bulk_create(
        [Job(harvest=news, harvest_run=1, channel=news.channel, spec={}, status=JobStatus.DONE, created=old)
         for _ in range(120)]
        + [Job(harvest=broad, harvest_run=1, channel=broad.channel, spec={}, status=JobStatus.FAILED,
               created=old + timedelta(days=30)) for _ in range(7)])
    page = viewer.get(reverse("jobs:list"))
    assert page.status_code == 200
    assert "page 1 of 3 (127 in all)" in page.content.decode()
    assert _rows(page.content.decode()) == 50
    last = viewer.get(reverse("jobs:list") + "?status=DONE&page=3").content.decode()
    assert _rows(last) == 20 and "page 3 of 3 (120 in all)" in last
    snapshot = HarvestChannel.objects.get(name="snapshot")
    for query, expected in ((f"?harvest={broad.pk}", 7), (f"?channel={snapshot.pk}", 7),
                            ("?status=FAILED&created_from=2025-03-15", 7), ("?created_to=2025-03-01", 120),
                            ("?status=RESUBMITTABLE", 7), ("?status=REJECTED", 0)):
        assert _total(viewer, query) == expected, query
    bad = viewer.get(reverse("jobs:list") + "?created_from=2025-13-01&created_to=2025-01-01")
    text = bad.content.decode()
    assert "Enter a valid date" in text and "The filter has errors" in text
    assert _rows(text) == 0
    backwards = viewer.get(reverse("jobs:list") + "?created_from=2025-05-01&created_to=2025-01-01").content.decode()
    assert "must not be before" in backwards


def test_resubmit_and_reject(engineer: Client) -> None:
    failed = make_job(status=JobStatus.FAILED)
    text = _flash(engineer, engineer.post(reverse("jobs:resubmit", args=[failed.pk])))
    new = Job.objects.get(continues=failed)
    assert f"resubmitted as job {new.pk}" in text
    assert new.status == JobStatus.SUBMITTED and Job.objects.get(pk=failed.pk).status == JobStatus.RESUBMITTED

    other = make_job(status=JobStatus.FAILED)
    text = _flash(engineer, engineer.post(reverse("jobs:reject", args=[other.pk]), {"next": "/jobs/?status=FAILED"}))
    other.refresh_from_db()
    assert other.rejected_at is not None and other.rejected_by == "engineer"
    assert f"Job {other.pk} rejected" in text
    # a rejected job is never resubmitted, and a second reject says who did it
    text = _flash(engineer, engineer.post(reverse("jobs:resubmit", args=[other.pk])))
    assert "was rejected by engineer" in text
    assert Job.objects.get(pk=other.pk).status == JobStatus.FAILED and not Job.objects.filter(continues=other).exists()
    assert "already rejected by engineer" in _flash(engineer, engineer.post(reverse("jobs:reject", args=[other.pk])))
    done = make_job(status=JobStatus.DONE)
    assert "only a FAILED job can be rejected" in _flash(engineer, engineer.post(reverse("jobs:reject",
                                                                                         args=[done.pk])))
    assert Job.objects.get(pk=done.pk).rejected_at is None


def _running_job() -> Job:
    job = make_job(status=JobStatus.STARTED)
    assert intake.record_progress({
        "job_id": job.pk, "at": "2026-11-23T10:00:00Z", "uris_done": 30, "uris_queued": 200, "uris_failed": 1,
        "bytes": 4096, "uri_rate": 2.5, "avg_uri_rate": 2.0, "kb_rate": 12.0, "avg_kb_rate": 10.0,
        "domains": {"site-a.fr": {"objects": 10, "bytes": 1000, "queued": 150},
                    "site-b.dk": {"objects": 5, "bytes": 3096, "queued": 50}},
        "alerts": ["site-b.dk: budget reached"]})
    return job


def test_progress_json_shows_rates_budgets_and_alerts(viewer: Client) -> None:
    job = _running_job()
    data = viewer.get(reverse("jobs:progress-json", args=[job.pk])).json()
    assert (data["uris_done"], data["uris_queued"], data["uri_rate"], data["kb_rate"]) == (30, 200, 2.5, 12.0)
    assert data["alerts"] == ["site-b.dk: budget reached"]
    budgets = {d["name"]: d["budget_used"] for d in data["domains"]}
    assert budgets == {"site-b.dk": 100.0, "site-a.fr": 25.0}  # max objects 5 and 40 (DOMAINS)
    assert data["domains"][0]["name"] == "site-b.dk"  # most used first
    listing = viewer.get(reverse("jobs:running-json")).json()
    assert [j["job"] for j in listing["jobs"]] == [job.pk]
    page = viewer.get(reverse("jobs:running")).content.decode()
    assert f'data-job="{job.pk}"' in page and "running-json" not in page and "/jobs/running.json" in page
    detail = viewer.get(reverse("jobs:job", args=[job.pk])).content.decode()
    assert "Budget used per domain" in detail and "setInterval(poll, 5000)" in detail
    assert "Add trap" not in detail  # no controls without the permission


def test_controls_are_recorded_and_sent(engineer: Client) -> None:
    job = _running_job()
    text = _flash(engineer, engineer.post(reverse("jobs:control", args=[job.pk]), {"action": "pause"}))
    assert "pause sent" in text
    control = JobControl.objects.get(job=job)
    assert (control.action, control.requested_by) == ("pause", "engineer") and control.sent_at is not None
    assert "Unknown action" in _flash(engineer, engineer.post(reverse("jobs:control", args=[job.pk]),
                                                              {"action": "explode"}))
    assert "invalid regular expression" in _flash(engineer, engineer.post(reverse("jobs:trap", args=[job.pk]),
                                                                          {"regex": "(unclosed"}))
    assert "enter a regular expression" in _flash(engineer, engineer.post(reverse("jobs:trap", args=[job.pk]),
                                                                          {"regex": "  "}))
    assert JobControl.objects.filter(job=job).count() == 1  # nothing half-written
    _flash(engineer, engineer.post(reverse("jobs:trap", args=[job.pk]), {"regex": r".*/calendar\?.*"}))
    trap = JobControl.objects.get(job=job, action="add_trap")
    assert trap.argument == r".*/calendar\?.*" and trap.sent_at is not None
    done = make_job(status=JobStatus.DONE)
    assert "only a submitted or started job" in _flash(engineer, engineer.post(
        reverse("jobs:control", args=[done.pk]), {"action": "stop"}))
    history = engineer.get(reverse("jobs:job", args=[job.pk])).content.decode()
    assert "add_trap" in history and "calendar" in history


def test_trap_preview_is_based_on_the_crawl_log_and_says_so(viewer: Client) -> None:
    job = _running_job()
    url = reverse("jobs:trap-preview", args=[job.pk])
    assert "No crawl.log" in viewer.get(url + "?regex=.*").json()["note"]
    live = spool_dir() / str(job.pk) / "logs"
    live.mkdir(parents=True)
    shutil.copy(crawled().job_dir / "logs" / "crawl.log", live / "crawl.log")
    uris = [line.split()[3] for line in (live / "crawl.log").read_text().splitlines()]
    expected = [u for u in uris if re.fullmatch(r".*\.(png|jpg|gif|css)", u)]
    assert expected, "the test site has images and style sheets"
    data = viewer.get(url, {"regex": r".*\.(png|jpg|gif|css)"}).json()
    assert data["valid"] and data["sample"] == len(uris) and data["matches"] == len(expected)
    assert data["estimate"] == round(len(expected) / len(uris) * 200)
    assert "already processed" in data["basis"] and "cannot see" in data["note"]
    bad = viewer.get(url, {"regex": "[a-"})
    assert bad.status_code == 400 and "invalid regular expression" in bad.json()["error"]


def test_job_page_shows_domains_seeds_files_and_the_log_tail(viewer: Client) -> None:
    job = record(make_job())
    page = viewer.get(reverse("jobs:job", args=[job.pk]))
    text = page.content.decode()
    assert page.status_code == 200
    for name in DOMAINS:
        assert name in text
    assert "OBJECT_LIMIT" in text  # site-b.dk's budget
    assert "CRAWLED" in text and f"http://127.0.0.1:{crawled().ports[0]}/" in text  # seeds report
    for f in ArchiveFile.objects.filter(job=job):
        assert f.name in text
    assert "harvested (in the harvester&#39;s spool)" in text
    last = (crawled().job_dir / "logs" / "crawl.log").read_text().splitlines()[-1]
    assert last.split()[3] in text and "spool" in text


def test_reports_and_crawl_log_search(viewer: Client) -> None:
    job = record(make_job())
    report = viewer.get(reverse("jobs:report", args=[job.pk, "mimetype-report.txt"]))
    assert report.content.decode() == (crawled().job_dir / "reports" / "mimetype-report.txt").read_text()
    assert report["X-Netharvest-Source"].startswith("spool ")
    assert viewer.get(f"/jobs/{job.pk}/reports/..%2F..%2Fetc%2Fpasswd").status_code == 404
    assert viewer.get(reverse("jobs:report", args=[job.pk, "nope.txt"])).status_code == 404

    log = (crawled().job_dir / "logs" / "crawl.log").read_text().splitlines()
    url = reverse("jobs:crawl-log", args=[job.pk])
    response = viewer.get(url, {"search": " 404 "})
    assert response.streaming
    lines = b"".join(response.streaming_content).decode().splitlines()
    expected = [line for line in log if " 404 " in line]
    assert lines[1:-1] == expected and lines[-1] == f"# {len(expected)} matching lines in the first {len(log)} lines"
    capped = b"".join(viewer.get(url, {"search": "http", "limit": "3"}).streaming_content).decode().splitlines()
    assert len(capped) == 5 and "limit reached" in capped[-1]
    for bad, message in (({"search": "(x"}, "invalid regular expression"), ({"search": ""}, "enter a regular"),
                         ({"search": "x", "limit": "100000"}, "limit: a number"),
                         ({"search": "x", "limit": "ten"}, "limit: a number"), ({"tail": "0"}, "tail:")):
        r = viewer.get(url, bad)
        assert r.status_code == 400 and message in r.content.decode(), bad
    tail = viewer.get(url, {"tail": "3"}).content.decode().splitlines()
    assert tail[1:] == log[-3:]
    assert viewer.get(reverse("jobs:crawl-log", args=[make_job().pk]), {"search": "x"}).status_code == 404
