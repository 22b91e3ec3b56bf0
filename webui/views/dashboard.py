"""The dashboard: what runs now, what runs next, what failed lately, and the state of storage and indexing."""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Count, Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from orchestrator.harvest import forecast
from orchestrator.harvest.models import ArchiveFile, Job
from orchestrator.harvest.models.archive import IndexState
from webui.access import READ, require

CALENDAR_DAYS = 7


@require(READ)
def home(request: HttpRequest) -> HttpResponse:
    now = timezone.now()
    running = list(Job.objects.filter(status="STARTED").select_related("harvest", "channel")
                   .order_by("started_at")[:100])
    waiting = dict(Job.objects.filter(status__in=["NEW", "SUBMITTED"]).values_list("status").annotate(n=Count("id"))
                   .order_by())
    failures = Job.objects.filter(status="FAILED", ended_at__gte=now - timedelta(days=7)).select_related(
        "harvest", "channel").order_by("-ended_at")[:20]
    files = {row["index_state"]: row for row in ArchiveFile.objects.values("index_state").annotate(
        n=Count("id"), bytes=Sum("size")).order_by()}
    dates, grid = forecast.calendar(CALENDAR_DAYS, now)
    return render(request, "webui/home.html", {
        "now": now, "running": running, "waiting": waiting, "failures": failures,
        "files": files, "index_states": IndexState.choices,
        "stalled": [job for job in running if job.last_heartbeat and now - job.last_heartbeat > timedelta(minutes=5)],
        "dates": dates, "grid": grid,
    })
