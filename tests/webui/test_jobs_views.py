"""The Jobs pages: list with filters and pagination, resubmit/reject, running jobs' progress JSON,
controls and trap preview, the job page, reports and crawl-log search, each behind its role (the groups
of webui/migrations/0001_roles.py; fixtures from tests/webui/conftest.py).
Real PostgreSQL and Redis, a real harvest's files (tests/orchestrator/crawled_job.py)."""

from __future__ import annotations

import re
import shutil
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from harvester.runtime import spool_dir
from orchestrator.harvest.models import (
    ArchiveFile,
    HarvestChannel,
    HarvestDefinition,
    Job,
    JobControl,
    JobStats,
    JobStatus,
)
from tests.orchestrator import factories
from tests.orchestrator.crawled_job import DOMAINS, crawled, end_now, make_job, record, running_job
from tests.webui.conftest import ROLES
from webui import jobs_urls

EVERYONE = set(ROLES)
ENGINEERS = {"crawl engineer", "admin"}

pytestmark = pytest.mark.django_db


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


#: URL name → (roles that may use it, POST only?). Reading: every role; acting on a job: crawl engineers.
ACCESS = {
    "list": (EVERYONE, False),
    "running": (EVERYONE, False),
    "running-json": (EVERYONE, False),
    "job": (EVERYONE, False),
    "progress-json": (EVERYONE, False),
    "trap-preview": (EVERYONE, False),
    "report": (EVERYONE, False),
    "crawl-log": (EVERYONE, False),
    "continuous": (EVERYONE, False),
    "uri": (EVERYONE, False),
    "report-page": (EVERYONE, False),
    "crawl-log-page": (EVERYONE, False),
    "pages": (EVERYONE, False),
    "captures": (EVERYONE, False),
    "control": (ENGINEERS, True),
    "trap": (ENGINEERS, True),
    "resubmit": (ENGINEERS, True),
    "reject": (ENGINEERS, True),
}
#: Page QA's URLs: everyone reads, curators act (tests/webui/test_pageqa_views.py; tests/webui/test_access.py
#: refuses anonymous and role-less users on every URL).
PAGE_QA = {"qa", "qa-run", "qa-patch", "qa-mark", "qa-thumb"}


def _url(name: str, job: Job) -> str:
    if name in ("list", "running", "running-json"):
        return reverse(f"jobs:{name}")
    if name == "captures":
        return reverse("jobs:captures") + "?url=http://example.com/"
    if name in ("report", "report-page"):
        return reverse(f"jobs:{name}", args=[job.pk, "crawl-report.txt"])
    suffix = {"trap-preview": "?regex=.*", "crawl-log": "?tail=5"}.get(name, "")
    return reverse(f"jobs:{name}", args=[job.pk]) + suffix


def test_every_url_is_in_the_access_table() -> None:
    assert {p.name for p in jobs_urls.urlpatterns} == set(ACCESS) | PAGE_QA
    for pattern in jobs_urls.urlpatterns:
        assert getattr(pattern.callback, "required_permission", None), pattern.name


@pytest.mark.parametrize("role", ROLES)
def test_each_role_gets_exactly_its_pages_and_actions(role: str, clients: dict[str, Client]) -> None:
    job = make_job(status=JobStatus.FAILED)
    harvested = record(make_job())  # a job with files, so report and crawl-log answer 200
    continuous = factories.job(
        HarvestDefinition.objects.create(  # the live section is a continuous job's
            name="live", kind="continuous", channel=HarvestChannel.objects.get(name="continuous")
        )
    )
    for name, (allowed, post_only) in ACCESS.items():
        target = (
            harvested
            if name in ("report", "crawl-log", "report-page", "crawl-log-page")
            else continuous
            if name == "continuous"
            else job
        )
        response = clients[role].get(_url(name, target))
        if role in allowed:
            assert response.status_code == (405 if post_only else 200), (name, role, response.content[:300])
        else:
            assert response.status_code == 403, (name, role)
            assert "crawl engineer role" in response.content.decode()
            assert clients[role].post(_url(name, target), {"action": "stop", "regex": ".*"}).status_code == 403
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and job.rejected_at is None and not JobControl.objects.exists()


def test_anonymous_and_roleless_users_see_nothing(django_user_model: type[User]) -> None:
    job = make_job()
    nobody = Client()
    nobody.force_login(django_user_model.objects.create_user("nobody"))
    for name in ACCESS:
        for method in ("get", "post"):
            response = getattr(Client(), method)(_url(name, job))
            assert response.status_code == 302 and "?next=" in response["Location"], name
            assert getattr(nobody, method)(_url(name, job)).status_code == 403, name


def test_list_filters_and_paginates(viewer: Client) -> None:
    news = factories.selective_definition("news")
    broad = factories.snapshot_definition("broad")
    old = datetime(2025, 3, 1, tzinfo=UTC)
    Job.objects.bulk_create(
        [
            Job(harvest=news, harvest_run=1, channel=news.channel, spec={}, status=JobStatus.DONE, created=old)
            for _ in range(120)
        ]
        + [
            Job(
                harvest=broad,
                harvest_run=1,
                channel=broad.channel,
                spec={},
                status=JobStatus.FAILED,
                created=old + timedelta(days=30),
            )
            for _ in range(7)
        ]
    )
    page = viewer.get(reverse("jobs:list"))
    assert page.status_code == 200
    assert "page 1 of 3 (127 in all)" in page.content.decode()
    assert _rows(page.content.decode()) == 50
    last = viewer.get(reverse("jobs:list") + "?status=DONE&page=3").content.decode()
    assert _rows(last) == 20 and "page 3 of 3 (120 in all)" in last
    snapshot = HarvestChannel.objects.get(name="snapshot")
    for query, expected in (
        (f"?harvest={broad.pk}", 7),
        (f"?channel={snapshot.pk}", 7),
        ("?status=FAILED&created_from=2025-03-15", 7),
        ("?created_to=2025-03-01", 120),
        ("?status=RESUBMITTABLE", 7),
        ("?status=REJECTED", 0),
    ):
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
    assert other.rejected_at is not None and other.rejected_by == "crawl_engineer"
    assert f"Job {other.pk} rejected" in text
    # a rejected job is never resubmitted, and a second reject says who did it
    text = _flash(engineer, engineer.post(reverse("jobs:resubmit", args=[other.pk])))
    assert "was rejected by crawl_engineer" in text
    assert Job.objects.get(pk=other.pk).status == JobStatus.FAILED and not Job.objects.filter(continues=other).exists()
    again = engineer.post(reverse("jobs:reject", args=[other.pk]))
    assert "already rejected by crawl_engineer" in _flash(engineer, again)
    done = make_job(status=JobStatus.DONE)
    assert "only a FAILED job can be rejected" in _flash(
        engineer, engineer.post(reverse("jobs:reject", args=[done.pk]))
    )
    assert Job.objects.get(pk=done.pk).rejected_at is None


def _running_job() -> Job:
    return running_job(
        {
            "site-a.fr": {"objects": 10, "bytes": 1000, "queued": 150},
            "site-b.dk": {"objects": 5, "bytes": 3096, "queued": 50},
        },
        ["site-b.dk: budget reached"],
    )


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


def test_an_ended_job_leaves_the_running_list_with_its_final_result(viewer: Client) -> None:
    """Before: an ended job stayed on the running page with its last heartbeat's figures (30 URIs) until a
    reload, and then vanished without its result."""
    job = _running_job()
    other = _running_job()
    long_ago = make_job(status=JobStatus.DONE, ended_at=datetime.now(UTC) - timedelta(hours=1))
    end_now(job)
    listing = viewer.get(reverse("jobs:running-json")).json()
    assert [j["job"] for j in listing["jobs"]] == [other.pk]  # out of the running list
    ended = {e["job"]: e for e in listing["ended"]}
    assert set(ended) == {job.pk}  # the one that ended an hour ago is not "just ended"
    final = ended[job.pk]
    assert (final["status"], final["domains"], final["objects"], final["bytes"]) == ("DONE", 2, 45, 73096)
    assert final["stop_reasons"] == {"DOWNLOAD_COMPLETE": 1, "DOWNLOAD_UNFINISHED": 1}
    assert final["url"] == f"/jobs/{job.pk}/"

    page = viewer.get(reverse("jobs:running")).content.decode()
    assert f'data-job="{other.pk}"' in page and f'data-job="{job.pk}"' not in page
    assert f'data-ended="{job.pk}"' in page and f'data-ended="{long_ago.pk}"' not in page
    row = page[page.index(f'data-ended="{job.pk}"') :].split("</tr>")[0]
    assert "DONE" in row and ">45<" in row and "71.4 KB" in row and "DOWNLOAD_COMPLETE 1, DOWNLOAD_UNFINISHED 1" in row


def test_controls_are_recorded_and_sent(engineer: Client) -> None:
    job = _running_job()
    text = _flash(engineer, engineer.post(reverse("jobs:control", args=[job.pk]), {"action": "pause"}))
    assert "pause sent" in text
    control = JobControl.objects.get(job=job)
    assert (control.action, control.requested_by) == ("pause", "crawl_engineer") and control.sent_at is not None
    assert "Unknown action" in _flash(
        engineer, engineer.post(reverse("jobs:control", args=[job.pk]), {"action": "explode"})
    )
    assert "not a valid regular expression" in _flash(
        engineer, engineer.post(reverse("jobs:trap", args=[job.pk]), {"regex": "(unclosed"})
    )
    assert "enter a regular expression" in _flash(
        engineer, engineer.post(reverse("jobs:trap", args=[job.pk]), {"regex": "  "})
    )
    assert "regex: lookahead (?=…) is not supported: crawler traps use RE2, linear-time regular expressions" in _flash(
        engineer, engineer.post(reverse("jobs:trap", args=[job.pk]), {"regex": r".*(?=/cal).*"})
    )
    assert JobControl.objects.filter(job=job).count() == 1  # nothing half-written
    _flash(engineer, engineer.post(reverse("jobs:trap", args=[job.pk]), {"regex": r".*/calendar\?.*"}))
    trap = JobControl.objects.get(job=job, action="add_trap")
    assert trap.argument == r".*/calendar\?.*" and trap.sent_at is not None
    done = make_job(status=JobStatus.DONE)
    assert "only a submitted or started job" in _flash(
        engineer, engineer.post(reverse("jobs:control", args=[done.pk]), {"action": "stop"})
    )
    history = engineer.get(reverse("jobs:job", args=[job.pk])).content.decode()
    assert "add_trap" in history and "calendar" in history
    # Stop asks first (a newcomer's run: one click ended a job), saying what stopping does
    assert f"return confirm('Stop job {job.pk}? It ends now and is reported DONE with what it has.')" in history


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
    assert bad.status_code == 400 and "not a valid regular expression" in bad.json()["error"]


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
    listing = viewer.get(reverse("jobs:list")).content.decode()  # objects and bytes from the job's statistics
    stats = JobStats.objects.get(job=job)
    assert f'<td class="num">{stats.objects_count:,}</td>' in listing


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
    for bad, message in (
        ({"search": "(x"}, "not a valid regular expression"),
        ({"search": ""}, "enter a regular"),
        ({"search": "x", "limit": "100000"}, "limit: a number"),
        ({"search": "x", "limit": "ten"}, "limit: a number"),
        ({"tail": "0"}, "tail:"),
        ({"search": r"(\w+) \1"}, "search: backreference \\1 is not supported: the crawl-log search uses RE2"),
    ):
        r = viewer.get(url, bad)
        assert r.status_code == 400 and message in r.content.decode(), bad
    tail = viewer.get(url, {"tail": "3"}).content.decode().splitlines()
    assert tail[1:] == log[-3:]
    assert viewer.get(reverse("jobs:crawl-log", args=[make_job().pk]), {"search": "x"}).status_code == 404


def test_no_server_path_in_report_responses(viewer: Client) -> None:
    """The ``X-Netharvest-Source`` header and the 404 text named absolute paths on the server."""
    job = record(make_job())
    report = viewer.get(reverse("jobs:report", args=[job.pk, "mimetype-report.txt"]))
    assert report["X-Netharvest-Source"] == "spool reports/mimetype-report.txt"
    bare = factories.job(status=JobStatus.DONE)
    reports = spool_dir() / str(bare.pk) / "reports"
    reports.mkdir(parents=True)
    try:
        missing = viewer.get(reverse("jobs:report", args=[bare.pk, "mimetype-report.txt"]))
        tail = viewer.get(reverse("jobs:crawl-log", args=[bare.pk]), {"tail": "5"})
    finally:
        shutil.rmtree(reports.parent)
    assert missing.status_code == 404 and tail.status_code == 404
    page = missing.content.decode()
    assert (
        f"mimetype-report.txt of job {bare.pk} is neither in its spool directory nor in its metadata WARC "
        "(1 place(s) looked in)"
    ) in page
    assert str(spool_dir()) not in page and str(spool_dir()) not in tail.content.decode()


#: A URI with a 24-segment path, and patterns a backtracking engine needs exponential time for on it.
DEEP_URI = "http://127.0.0.1:8000/" + "/".join(f"s{i}" for i in range(24)) + "/index.html"
HOSTILE = (r"(.|.)*Z", r".*(.*/)*calendar/.*")


@pytest.mark.timeout(60)  # the old code never returned (Python's re backtracks 2^n on these)
def test_hostile_patterns_answer_in_search_and_trap_preview(viewer: Client) -> None:
    """A viewer's pattern is matched by RE2 (harvester.patterns): the search and the preview answer with a
    result, never freeze a worker. `(.|.)*Z` got past the old nested-repeat guard."""
    job = _running_job()
    live = spool_dir() / str(job.pk) / "logs"
    live.mkdir(parents=True)
    line = (
        f"2026-11-23T10:00:00.000Z   200       1234 {DEEP_URI} LL http://127.0.0.1:8000/ text/html #001 "
        "20261123100000000+12 sha1:AAAA - -"
    )
    (live / "crawl.log").write_text(line + "\n" + line.replace("index.html", "calendar/x") + "\n")
    search = viewer.get(reverse("jobs:crawl-log", args=[job.pk]), {"search": HOSTILE[0]})
    assert search.status_code == 200
    lines = b"".join(search.streaming_content).decode().splitlines()
    assert lines[-1] == "# 2 matching lines in the first 2 lines"  # the timestamps end in Z
    preview = viewer.get(reverse("jobs:trap-preview", args=[job.pk]), {"regex": HOSTILE[0]})
    assert preview.status_code == 200 and preview.json()["valid"] and preview.json()["matches"] == 0
    preview = viewer.get(reverse("jobs:trap-preview", args=[job.pk]), {"regex": HOSTILE[1]})
    assert preview.status_code == 200 and preview.json()["matches"] == 1
    refused = viewer.get(reverse("jobs:trap-preview", args=[job.pk]), {"regex": r".*(?<=/s1)/.*"})
    assert refused.status_code == 400
    assert refused.json()["error"] == (
        "regex: lookbehind (?<=…) is not supported: crawler traps use RE2, linear-time regular expressions"
    )
