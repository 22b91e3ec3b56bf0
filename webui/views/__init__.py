"""The web UI's pages."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from orchestrator.harvest.models import HarvestDefinition, Job


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """What runs now and what happened lately, in one glance."""
    by_status = dict(Job.objects.values_list("status").annotate(n=Count("id")).order_by())
    context = {
        "jobs_by_status": by_status,
        "running": Job.objects.filter(status__in=["SUBMITTED", "STARTED"]).select_related("harvest", "channel")[:50],
        "recent": Job.objects.select_related("harvest", "channel")[:20],
        "definitions": HarvestDefinition.objects.filter(active=True).select_related("channel")[:50],
    }
    return render(request, "webui/home.html", context)
