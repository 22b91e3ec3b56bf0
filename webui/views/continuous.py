"""A continuous job live (issue 12), and one URI's history in it.

The figures are the harvester's: its latest Progress heartbeat carries a ``continuous`` section (the
contract in harvester.contracts: fetch rate and budget, cumulative visit outcomes, queue states, hosts,
the URIs due next, the policy's freshness estimate), intake keeps a thinned series of heartbeats
(orchestrator.harvest.jobs.progresslog) for the charts, and the job's ArchiveFile rows say which WARCs the
running crawl has closed and how far the indexer chain has taken them. The page section is one
template, rendered into the job page and re-fetched every few seconds by the same page (``live``), so
the first render and each refresh can never disagree and no figure is formatted twice.

A URI's history comes from the job's crawl.log annotations (orchestrator.harvest.archive.urihistory): each
visit with the wait the policy chose after it, the visit and version counts; and from the archive's index
(orchestrator.harvest.archive.captures, the view replay has): the captures of the URI in the definition's
collection, each a link into replay.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_GET

from orchestrator.harvest.archive import replay, urihistory
from orchestrator.harvest.archive.captures import captures_of
from orchestrator.harvest.jobs import jobfiles, progresslog
from orchestrator.harvest.models import ArchiveFile, HarvestDefinition, Job, JobStatus
from orchestrator.harvest.models.archive import IndexState
from webui.access import READ, require
from webui.svg import hbars, line_chart

#: The chart windows a reader can choose, by their query value.
WINDOWS = {"1h": 3600, "6h": 6 * 3600, "24h": 24 * 3600, "7d": 7 * 24 * 3600}
DEFAULT_WINDOW = "1h"
#: A WARC whose CDX lines are written (and every state after it) is in the index.
INDEXED = (IndexState.INDEXED, IndexState.TRANSFERRED, IndexState.BACKED_UP, IndexState.CLEANED)
#: A URI's captures listed from the index (the latest ones).
SHOWN_CAPTURES = 500
#: Latest closed WARCs listed in the section (all of them are on the job page's file table).
SHOWN_FILES = 10


def is_continuous(job: Job) -> bool:
    return job.harvest.kind == HarvestDefinition.CONTINUOUS


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def live_of(job: Job, window: str = DEFAULT_WINDOW, now: datetime | None = None) -> dict[str, Any]:
    """Everything the continuous section shows, from the latest heartbeat, the progress series and the
    job's files."""
    now = now or timezone.now()
    progress = job.latest_progress()
    c = (progress.continuous if progress else None) or {}
    visits = _int(c.get("visits"))
    # The counters nest: ``unchanged`` counts every visit that found no change, of which ``not_modified`` and
    # ``header_skipped`` learnt it from the headers; shown here as parts that add up to the visits.
    by_headers = _int(c.get("not_modified")) + _int(c.get("header_skipped"))
    outcomes = [
        ("changed (new version)", _int(c.get("changed"))),
        ("unchanged (same content digest)", max(_int(c.get("unchanged")) - by_headers, 0)),
        ("not modified (304 to a conditional GET)", _int(c.get("not_modified"))),
        ("unchanged by headers (download stopped)", _int(c.get("header_skipped"))),
    ]
    budget = _num(c.get("budget_per_s"))
    seconds = WINDOWS.get(window, WINDOWS[DEFAULT_WINDOW])
    series = progresslog.series(job.pk, now - timedelta(seconds=seconds), now)
    latest = parse_datetime(progress.at) if progress else None
    rate_points = progresslog.ending_at(series.points("c_fetch_rate"), latest, _num(c.get("fetch_rate")))
    uri_points = progresslog.ending_at(series.points("uri_rate"), latest, _num(progress.uri_rate) if progress else None)
    freshness = _num(c.get("freshness"))
    freshness_points = [(t, v * 100) for t, v in progresslog.ending_at(series.points("c_freshness"), latest, freshness)]
    states = dict(
        ArchiveFile.objects.filter(job=job, kind="warc")
        .values_list("index_state")
        .annotate(n=Count("id"))
        .values_list("index_state", "n")
    )
    queues = c.get("queues") if isinstance(c.get("queues"), dict) else {}
    return {
        "has_section": bool(c),
        "at": progress.at or None if progress else None,
        "running": job.status in (JobStatus.SUBMITTED, JobStatus.STARTED),
        "fetch_rate": _num(c.get("fetch_rate")),
        "budget": budget,
        "budget_used": round(_num(c.get("fetch_rate")) / budget * 100, 1)
        if budget and _num(c.get("fetch_rate")) is not None
        else None,
        "visits": visits,
        "outcomes": outcomes,
        "outcome_chart": hbars([o for o in outcomes if o[1]], title="visit outcomes", total=visits or None)
        if any(n for _, n in outcomes)
        else None,
        "errors": _int(c.get("errors")),
        "validator_misses": _int(c.get("validator_misses")),
        "validator_checks": _int(c.get("not_modified")) + _int(c.get("header_skipped")),
        "queues": {k: _int(queues.get(k)) for k in ("ready", "snoozed", "busy", "empty")},
        "hosts": [h for h in c.get("hosts") or [] if isinstance(h, dict)],
        "due_next": [d for d in c.get("due_next") or [] if isinstance(d, dict)],
        "freshness": freshness,
        "warcs_closed": _int(c.get("warcs_closed")),
        "files_total": sum(states.values()),
        "files_indexed": sum(n for state, n in states.items() if state in INDEXED),
        "files_failed": states.get(IndexState.FAILED, 0),
        "files": list(ArchiveFile.objects.filter(job=job, kind="warc").order_by("-created", "-name")[:SHOWN_FILES]),
        "window": window if window in WINDOWS else DEFAULT_WINDOW,
        "windows": list(WINDOWS),
        "rate_chart": line_chart(
            [("fetches/s", rate_points), ("URIs/s", uri_points)],
            title="fetch rate against the budget",
            limit=("budget (fetches/s)", budget) if budget else None,
        ),
        "freshness_chart": line_chart(
            [("estimated freshness %", freshness_points)], title="estimated freshness", axis_top=100
        )
        if freshness_points
        else None,
    }


@require(READ)
@require_GET
def live(request: HttpRequest, job_id: int) -> HttpResponse:
    """The continuous section of the job page alone, for the page's refresh."""
    job = get_object_or_404(Job.objects.select_related("harvest"), pk=job_id)
    if not is_continuous(job):
        raise Http404(f"job {job.pk} is not a continuous job")
    return render(request, "jobs/_continuous.html", {"job": job, "live": live_of(job, request.GET.get("window", ""))})


@require(READ)
@require_GET
def uri_history(request: HttpRequest, job_id: int) -> HttpResponse:
    """One URI's visits in a continuous job: a table and the policy's wait over time."""
    job = get_object_or_404(Job.objects.select_related("harvest"), pk=job_id)
    uri = request.GET.get("uri", "").strip()
    context: dict[str, Any] = {"job": job, "uri": uri, "max_visits": urihistory.MAX_VISITS}
    if uri:
        # The archive's side: this URI's captures in the definition's collection (every job of it), as replay
        # serves them; a revisit record is a capture that stands for an earlier payload.
        captures = captures_of(uri, harvest_id=job.harvest_id, limit=SHOWN_CAPTURES)
        context.update(
            captures=captures[::-1],
            collection=replay.collection_of(job.harvest_id),
            payloads=len({c.digest for c in captures if not c.revisit and c.digest != "-"}),
            revisits=sum(1 for c in captures if c.revisit),
        )
        try:
            source, visits, total = urihistory.visits(job, uri)
        except (jobfiles.NotAvailable, OSError) as exc:
            context["missing"] = jobfiles.reason(exc)
        else:
            versions = [(v.at, float(v.versions)) for v in visits if v.versions is not None]
            waits = [(v.at, v.wait_s) for v in visits if v.wait_s is not None]
            unit, size = _wait_unit(max((w for _, w in waits), default=0))
            context.update(
                source=source,
                visits=visits,
                total=total,
                wait_chart=line_chart(
                    [(f"wait after the visit ({unit})", [(t, w / size) for t, w in waits])],
                    title="wait over time",
                    height=150,
                ),
                versions_chart=line_chart([("versions seen", versions)], title="versions", height=120)
                if versions
                else None,
            )
    return render(request, "jobs/uri.html", context)


def _wait_unit(longest_s: float) -> tuple[str, float]:
    """The unit a wait chart reads best in: seconds while waits are short (a test web in accelerated time),
    up to days for a news site's archive pages."""
    for unit, size, below in (("s", 1, 120), ("min", 60, 2 * 3600), ("hours", 3600, 2 * 86400)):
        if longest_s < below:
            return unit, size
    return "days", 86400
