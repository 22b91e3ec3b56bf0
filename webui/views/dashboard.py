"""The dashboard: what runs now, what finished and what failed lately, what runs next, and the state of
storage and indexing."""

from __future__ import annotations

from datetime import timedelta

from django.db import connection
from django.db.models import Count, F, Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from orchestrator.harvest.models import ArchiveFile, Job
from orchestrator.harvest.models.archive import IndexState
from orchestrator.harvest.scheduling import forecast
from webui.access import READ, require

CALENDAR_DAYS = 7
#: The dashboard lists this many of the jobs that finished in the last 7 days, newest first.
FINISHED_SHOWN = 10


def file_states() -> dict[str, dict]:
    """Archive files per index state: exact for the files still in the chain or failed (few, found
    through the index_state index); the done ones, millions in time, are the table's estimated size
    minus those (marked as an estimate)."""
    pending = [state for state in IndexState.values if state != IndexState.CLEANED]
    files = {
        row["index_state"]: row
        for row in ArchiveFile.objects.filter(index_state__in=pending)
        .values("index_state")
        .annotate(n=Count("id"), bytes=Sum("size"))
        .order_by()
    }
    if connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute("SELECT reltuples::bigint FROM pg_class WHERE relname = 'harvest_archivefile'")
            total = max(cur.fetchone()[0], 0)
        done = max(total - sum(row["n"] for row in files.values()), 0)
        files[IndexState.CLEANED] = {"n": done, "bytes": None, "estimate": True}
    else:
        done = ArchiveFile.objects.filter(index_state=IndexState.CLEANED).aggregate(n=Count("id"), bytes=Sum("size"))
        files[IndexState.CLEANED] = done
    return files


@require(READ)
def home(request: HttpRequest) -> HttpResponse:
    now = timezone.now()
    running = list(
        Job.objects.filter(status="STARTED").select_related("harvest", "channel").order_by("started_at")[:100]
    )
    waiting = dict(
        Job.objects.filter(status__in=["NEW", "SUBMITTED"]).values_list("status").annotate(n=Count("id")).order_by()
    )
    failures = (
        Job.objects.filter(status="FAILED", ended_at__gte=now - timedelta(days=7))
        .select_related("harvest", "channel")
        .order_by("-ended_at")[:20]
    )
    done_lately = Job.objects.filter(status="DONE", ended_at__gte=now - timedelta(days=7))
    finished = (
        done_lately.select_related("harvest", "channel")
        .annotate(objects=F("stats__objects_count"), nbytes=F("stats__bytes_count"))
        .order_by("-ended_at")[:FINISHED_SHOWN]
    )
    # The tile's figure is the true count (the (status, ended_at) index answers it without touching the table's
    # other rows), not the length of the list below, which stops at FINISHED_SHOWN.
    finished_count = done_lately.count()
    files = file_states()
    dates, grid = forecast.calendar(CALENDAR_DAYS, now)
    return render(
        request,
        "webui/home.html",
        {
            "now": now,
            "running": running,
            "waiting": waiting,
            "failures": failures,
            "finished": finished,
            "finished_count": finished_count,
            "finished_shown": FINISHED_SHOWN,
            "files": files,
            "index_states": IndexState.choices,
            "stalled": [
                job for job in running if job.last_heartbeat and now - job.last_heartbeat > timedelta(minutes=5)
            ],
            "dates": dates,
            "grid": grid,
        },
    )
