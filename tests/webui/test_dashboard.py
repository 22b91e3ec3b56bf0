"""The dashboard: running jobs with live figures, the calendar of coming runs, failures, index health."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from orchestrator.harvest.curation import seeding
from orchestrator.harvest.models import ArchiveFile, HarvestDefinition, HarvestInfo, Schedule
from orchestrator.harvest.scheduling import forecast
from tests.orchestrator import factories

pytestmark = pytest.mark.django_db


def text(response) -> str:
    return response.content.decode()


def test_running_failed_and_index_health(viewer):
    now = timezone.now()
    factories.job(
        domains=["example.fr"],
        status="STARTED",
        started_at=now,
        last_heartbeat=now - timedelta(minutes=9),
        harvester="h1/worker",
        progress={"uris_done": 4321, "uris_queued": 77, "bytes": 3 * 1024**3, "uri_rate": 12.5, "kb_rate": 300.0},
    )
    factories.job(status="FAILED", ended_at=now, error_category="harvester_lost", error_detail="no heartbeat")
    ArchiveFile.objects.create(name="a.warc.gz", size=1024**3, sha256="0" * 64, index_state="INDEXED")
    ArchiveFile.objects.create(name="b.warc.gz", size=10, sha256="1" * 64, index_state="FAILED", error="bad gzip")
    page = text(viewer.get(reverse("webui:home")))
    for expected in (
        "4\u202f321",
        "3.0 GB",
        "12.5",
        "h1/worker",
        "no heartbeat for over 5 min",
        "harvester_lost",
        "indexed (CDX written)",
        "1.0 GB",
        "failed (see error)",
    ):
        assert expected in page, expected


def test_calendar_of_coming_runs_with_expected_load(viewer):
    now = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
    daily = Schedule.objects.create(name="daily at 3", every=1, unit="day", anytime=False, at_hour=3, at_minute=0)
    hd = factories.selective_definition("news", schedule=daily, active=True, next_date=now + timedelta(hours=15))
    seeding.add_seeds(hd, "http://a.fr/\nhttp://b.fr/")
    HarvestDefinition.objects.filter(pk=hd.pk).update(runs=1)
    job = factories.job(hd, domains=["a.fr"], status="DONE")
    a = job.domains.get().configuration
    HarvestInfo.objects.create(
        job=job,
        harvest=hd,
        domain=a.domain,
        configuration=a,
        objects_count=10,
        bytes_count=2048,
        stop_reason="completed",
    )
    factories.selective_definition("inactive", schedule=daily)  # never in the calendar
    runs = forecast.coming_runs(7, now)
    assert [r.when for r in runs] == [datetime(2026, 11, 24 + i, 3, 0, tzinfo=UTC) for i in range(7)]
    assert {(r.definition.name, r.domains, r.expected_bytes) for r in runs} == {("news", 2, 2048)}
    dates, grid = forecast.calendar(7, now)
    assert len(dates) == 8 and list(grid) == ["focused"]
    assert grid["focused"][dates[0]].runs == [] and len(grid["focused"][dates[1]].runs) == 1
    page = text(viewer.get(reverse("webui:home")))
    assert "Coming runs" in page and "news" in page and "2.0 KB" in page


def test_overdue_run_shows_once_now():
    now = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
    hourly = Schedule.objects.create(name="hourly", every=1, unit="hour")
    factories.selective_definition("late", schedule=hourly, active=True, next_date=now - timedelta(hours=5))
    runs = forecast.coming_runs(1, now)
    assert runs[0].when == now and runs[0].expected_bytes is None
    assert all(r.when > now for r in runs[1:]) and len(runs) == 25


def test_empty_dashboard(viewer):
    page = text(viewer.get(reverse("webui:home")))
    assert "No job is running" in page and "No active scheduled harvest" in page and "No job failed" in page


def test_finished_tile_counts_every_job_of_the_week_and_both_pages_search_captures(viewer):
    """The tile said "10 (latest 10)" for any week with ten or more finished jobs: it shows the true count."""
    from webui.views.dashboard import FINISHED_SHOWN

    now = timezone.now()
    for n in range(FINISHED_SHOWN + 3):
        factories.job(status="DONE", ended_at=now - timedelta(hours=n))
    factories.job(status="DONE", ended_at=now - timedelta(days=8))  # not this week
    page = text(viewer.get(reverse("webui:home")))
    tile = page.split('<div class="tiles">')[1].split("</div>\n</div>")[0]
    assert (
        f'<span class="value">{FINISHED_SHOWN + 3}</span><span class="label">finished, last 7 days '
        f"(latest {FINISHED_SHOWN} listed)</span>"
    ) in tile
    assert page.split('<table id="finished">')[1].split("</table>")[0].count("<tr>") == FINISHED_SHOWN + 1
    # An address → its captures calendar, from the dashboard and from the Jobs list.
    for where in (reverse("webui:home"), reverse("jobs:list")):
        form = text(viewer.get(where)).split('class="captures-search"')[0].rsplit("<form", 1)[1]
        assert f'action="{reverse("jobs:captures")}"' in form and 'method="get"' in form
    assert viewer.get(reverse("jobs:captures"), {"url": "http://example.fr/"}).status_code == 200
