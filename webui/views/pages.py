"""A job's pages with replay in the page, and a URL's captures across jobs as a calendar (issue 13).

Both only lay out what orchestrator.harvest.archive.pages and .captures compute; every replay link goes to the web
UI's ``/replay/…`` (webui/views/replay.py), so it carries the same login and role check as these pages.
"""

from __future__ import annotations

import calendar
from collections import defaultdict
from typing import Any
from urllib.parse import urlsplit

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from orchestrator.harvest.archive.captures import MAX_CAPTURES, Capture, captures_of
from orchestrator.harvest.archive.pages import job_pages
from orchestrator.harvest.jobs import jobfiles
from orchestrator.harvest.models import HarvestDefinition, Job
from webui.access import READ, require
from webui.views.replay import replay_base

PAGE_SIZE = 50
#: Captures listed in the table under the calendar (the latest; the calendar counts them all).
TABLE_ROWS = 500


class _Pages:
    """What Django's Paginator needs of a list whose rows are computed per page (pages.job_pages)."""

    def __init__(self, total: int) -> None:
        self.total = total

    def count(self) -> int:
        return self.total

    def __len__(self) -> int:
        return self.total

    def __getitem__(self, _: slice) -> list[object]:
        return []  # the rows of the page come from job_pages, not from here


def _page_number(request: HttpRequest) -> int:
    raw = request.GET.get("page", "1")
    return int(raw) if raw.isdigit() and int(raw) > 0 else 1


@require(READ)
@require_GET
def job_pages_view(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job.objects.select_related("harvest"), pk=job_id)
    number = _page_number(request)
    context: dict[str, Any] = {"job": job}
    try:
        listed = job_pages(job, (number - 1) * PAGE_SIZE, PAGE_SIZE)
    except (jobfiles.NotAvailable, OSError) as exc:
        context["missing"] = jobfiles.reason(exc)
        return render(request, "jobs/pages.html", context)
    page = Paginator(_Pages(listed.total), PAGE_SIZE).get_page(number)
    shown = next((p for p in listed.pages if p.capture is not None), None)
    context.update(listed=listed, page=page, shown=shown)
    return framing(request, render(request, "jobs/pages.html", context))


def framing(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """A web UI page that frames replay: replayed documents in its frame share its origin and can reach into it,
    so it allows no script, no fetch and no form but logging out, and frames only ``/replay/``; its opener
    policy matches replay's, so windows opened from the frame on web UI pages are cut off (webui/views/replay)."""
    response["Content-Security-Policy"] = (
        f"default-src 'self'; script-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        f"connect-src 'none'; object-src 'none'; base-uri 'none'; "
        f"form-action {request.scheme}://{request.get_host()}{reverse('webui:logout')}; "
        f"frame-src {replay_base(request)}"
    )
    response["Cross-Origin-Opener-Policy"] = "unsafe-none"
    return response


def _calendar(found: list[Capture]) -> list[dict[str, Any]]:
    """Years (latest first) × 12 months, each month the days with captures: a day links to its latest one."""
    days: dict[int, dict[int, dict[int, list[Capture]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for c in found:
        when = c.when
        days[when.year][when.month][when.day].append(c)
    years = []
    for year in sorted(days, reverse=True):
        months = []
        for month in range(1, 13):
            in_month = days[year].get(month, {})
            weeks = calendar.Calendar().monthdayscalendar(year, month)
            months.append(
                {
                    "name": calendar.month_abbr[month],
                    "count": sum(len(v) for v in in_month.values()),
                    "weeks": [[(d, in_month.get(d, [])) for d in week] for week in weeks],
                }
            )
        years.append({"year": year, "months": months, "count": sum(m["count"] for m in months)})
    return years


@require(READ)
@require_GET
def captures_view(request: HttpRequest) -> HttpResponse:
    url = request.GET.get("url", "").strip()
    harvest = None
    if request.GET.get("harvest", "").isdigit():
        harvest = get_object_or_404(HarvestDefinition, pk=int(request.GET["harvest"]))
    context: dict[str, Any] = {"address": url, "harvest": harvest, "max": MAX_CAPTURES}
    if url:
        if urlsplit(url).scheme not in ("http", "https"):
            context["error"] = "Enter a full address starting with http:// or https://"
        else:
            found = captures_of(url, harvest_id=harvest.pk if harvest else None)
            jobs = dict(
                Job.objects.filter(pk__in={c.job_id for c in found if c.job_id}).values_list("pk", "harvest_run")
            )
            context.update(
                found=found,
                years=_calendar(found),
                rows=list(reversed(found))[:TABLE_ROWS],
                runs=jobs,
                latest=found[-1] if found else None,
            )
    return render(request, "jobs/captures.html", context)
