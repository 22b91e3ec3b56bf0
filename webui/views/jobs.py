"""Jobs: the filterable list (resubmit, reject), running jobs with live progress and controls, and the
job page (domains, seeds report, reports, files, crawl-log search and tail).

Business rules stay in orchestrator: dispatch.send_control / resubmit / reject change state (each a
conditional UPDATE), jobfiles reads what the harvester left. Every view is wrapped in
webui.access.require: reading needs READ (every role); any action on a job (stop, pause, resume, trap,
resubmit, reject) needs ENGINEER (crawl engineers and admins).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, time, timedelta
from typing import Any

import re2
from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count, F, Sum
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    JsonResponse,
    StreamingHttpResponse,
)
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_GET, require_POST

from harvester import patterns
from harvester.contracts import Progress
from harvester.patterns import PatternError
from harvester.reports import REPORT_NAMES
from orchestrator.harvest.jobs import jobfiles, progresslog, specs
from orchestrator.harvest.jobs.dispatch import BrokerUnavailable, DispatchError, reject, resubmit, send_control
from orchestrator.harvest.models import (
    ArchiveFile,
    HarvestChannel,
    HarvestDefinition,
    HarvestInfo,
    Job,
    JobControl,
    JobDomain,
    JobStatus,
)
from webui import svg
from webui.access import ENGINEER, READ, can, require
from webui.views import continuous

VIEW = READ
CONTROL = ENGINEER
RUNNING = (JobStatus.SUBMITTED, JobStatus.STARTED)
ENDED = (JobStatus.DONE, JobStatus.FAILED)
#: The running-jobs page lists a job that ended this recently under "Just ended", with its final result.
JUST_ENDED_S = 10 * 60
PAGE_SIZE = 50
DOMAIN_PAGE_SIZE = 100
#: Per-domain rows in a progress JSON: the most used budgets first; a snapshot job can hold 10,000 domains.
PROGRESS_DOMAINS = 50
#: Crawl-log search: at most this many matching lines per request (the pattern's length limit is
#: harvester.patterns.MAX_PATTERN_CHARS, as for every user pattern).
SEARCH_MAX_MATCHES = 5000
SEARCH_DEFAULT_MATCHES = 500
#: Trap preview: how many of the latest crawl.log lines it looks at.
PREVIEW_LINES = 5000
TAIL_LINES = 50
#: The crawl-log page without a search shows this many of the last lines.
TAIL_PAGE_LINES = 1000


# -- the list -----------------------------------------------------------------------------------
class JobFilter(forms.Form):
    status = forms.ChoiceField(
        required=False,
        choices=[("", "any")]
        + list(JobStatus.choices)
        + [("REJECTED", "FAILED, rejected"), ("RESUBMITTABLE", "FAILED, not rejected")],
    )
    harvest = forms.ModelChoiceField(
        HarvestDefinition.objects.only("id", "name").order_by("name"), required=False, empty_label="any"
    )
    channel = forms.ModelChoiceField(HarvestChannel.objects.order_by("name"), required=False, empty_label="any")
    created_from = forms.DateField(required=False, label="created from (UTC, YYYY-MM-DD)")
    created_to = forms.DateField(required=False, label="created to (UTC, inclusive)")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("created_from") and data.get("created_to") and data["created_from"] > data["created_to"]:
            self.add_error("created_to", "must not be before 'created from'")
        return data

    def apply(self, jobs: Any) -> Any:
        d = self.cleaned_data
        status = d.get("status")
        if status == "REJECTED":
            jobs = jobs.filter(status=JobStatus.FAILED, rejected_at__isnull=False)
        elif status == "RESUBMITTABLE":
            jobs = jobs.filter(status=JobStatus.FAILED, rejected_at__isnull=True)
        elif status:
            jobs = jobs.filter(status=status)
        if d.get("harvest"):
            jobs = jobs.filter(harvest=d["harvest"])
        if d.get("channel"):
            jobs = jobs.filter(channel=d["channel"])
        if d.get("created_from"):
            jobs = jobs.filter(created__gte=datetime.combine(d["created_from"], time.min, UTC))
        if d.get("created_to"):
            jobs = jobs.filter(created__lte=datetime.combine(d["created_to"], time.max, UTC))
        return jobs


@require(VIEW)
@require_GET
def job_list(request: HttpRequest) -> HttpResponse:
    form = JobFilter(request.GET or None)
    jobs = (
        Job.objects.select_related("harvest", "channel")
        .only(
            "id",
            "status",
            "harvest_run",
            "created",
            "started_at",
            "ended_at",
            "domain_count",
            "rejected_at",
            "rejected_by",
            "error_category",
            "harvest__name",
            "channel__name",
        )
        .order_by("-id")
        .annotate(objects=F("stats__objects_count"), nbytes=F("stats__bytes_count"))
    )
    if form.is_bound:
        if form.is_valid():
            jobs = form.apply(jobs)
        else:
            jobs = jobs.none()
    page = Paginator(jobs, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "jobs/list.html",
        {"form": form, "page": page, "query": query.urlencode(), "can_control": can(request, CONTROL)},
    )


def _back(request: HttpRequest, job: Job) -> HttpResponse:
    target = request.POST.get("next", "")
    if target.startswith("/jobs/") and "//" not in target:
        return redirect(target)
    return redirect("jobs:job", job.pk)


def _who(request: HttpRequest) -> str:
    return request.user.get_username()


@require(CONTROL)
@require_POST
def job_resubmit(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job, pk=job_id)
    try:
        new = resubmit(job, requested_by=_who(request))
    except DispatchError as exc:
        messages.error(request, f"Resubmit refused: {exc}")
    except Exception as exc:  # the broker: the new job stays NEW and the dispatcher retries it
        messages.warning(
            request, f"Job {job.pk} was resubmitted but could not be queued yet ({exc}); the dispatcher will retry."
        )
    else:
        messages.success(request, f"Job {job.pk} resubmitted as job {new.pk} ({new.status}).")
    return _back(request, job)


@require(CONTROL)
@require_POST
def job_reject(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job, pk=job_id)
    try:
        reject(job, requested_by=_who(request))
    except DispatchError as exc:
        messages.error(request, f"Reject refused: {exc}")
    else:
        messages.success(request, f"Job {job.pk} rejected: it will not be resubmitted.")
    return _back(request, job)


# -- running jobs and their progress --------------------------------------------------------------
def progress_of(job: Job, domains: int = PROGRESS_DOMAINS) -> dict[str, Any]:
    """A job's latest Progress (as intake stored it) with budgets used per domain, for the JSON
    endpoints and the first render of the pages (the same dict, so page and poll never disagree)."""
    latest = job.latest_progress()
    p = latest or Progress(job_id=job.pk, at="")  # the zeros of a job before its first heartbeat
    limits = specs.stored(job).budgets
    rows = []
    for name, figures in p.domains.items():
        max_objects, max_bytes = limits.get(name, (-1, -1))
        objects, nbytes = int(figures.get("objects", 0)), int(figures.get("bytes", 0))
        shares = [objects / max_objects if max_objects > 0 else None, nbytes / max_bytes if max_bytes > 0 else None]
        known = [s for s in shares if s is not None]
        rows.append(
            {
                "name": name,
                "objects": objects,
                "bytes": nbytes,
                "queued": int(figures.get("queued", 0)),
                "max_objects": max_objects,
                "max_bytes": max_bytes,
                "budget_used": round(max(known) * 100, 1) if known else None,
            }
        )
    rows.sort(key=lambda r: (-(r["budget_used"] or -1), -r["objects"], r["name"]))
    now = timezone.now()
    return {
        "job": job.pk,
        "status": job.status,
        "harvest": job.harvest.name if job.harvest_id else "",
        "at": p.at or None,
        "heartbeat_age_s": int((now - job.last_heartbeat).total_seconds()) if job.last_heartbeat else None,
        "uris_done": p.uris_done,
        "uris_queued": p.uris_queued,
        "uris_failed": p.uris_failed,
        "bytes": p.bytes,
        "uri_rate": p.uri_rate,
        "avg_uri_rate": p.avg_uri_rate,
        "kb_rate": p.kb_rate,
        "avg_kb_rate": p.avg_kb_rate,
        "queues_active": p.queues_active,
        "queues_snoozed": p.queues_snoozed,
        "queues_exhausted": p.queues_exhausted,
        "paused": bool(p.paused),
        "alerts": list(p.alerts),
        "continuous": dict(p.continuous) if p.continuous else None,  # a continuous job's live figures
        "domains": rows[:domains],
        "domains_total": len(rows),
        "has_progress": latest is not None,
    }


def progress_charts(job: Job) -> dict[str, str]:
    """The job's rate and queue over time (progresslog's thinned heartbeats, from its start to now or its
    end) as two inline SVG charts: the page draws them at first and the poll redraws them, so they grow
    while the job runs. Two charts, not one: a queue of thousands would flatten a rate of 3 URI/s."""
    start = job.started_at or job.submitted_at or job.created
    end = job.ended_at or timezone.now()
    if start is None or end <= start:
        return {}
    # A job's end is the harvester's own, to the second, and its last heartbeat (the final figures) is kept when
    # intake reads it, a moment later: up to the end alone, a short job's chart stopped at its first sample.
    # Samples are kept only while the job runs, so a margin after the end takes in none of another run's.
    until = end + timedelta(seconds=progresslog.SAMPLE_EVERY_S) if job.ended_at else end
    data = progresslog.series(job.pk, start, until, points=180)
    if not data.times and job.status not in RUNNING:
        return {}  # an ended job without samples (they are pruned after a week): no empty charts
    latest = job.latest_progress()
    try:
        at = parse_datetime(latest.at) if latest and latest.at else None
    except ValueError:  # a heartbeat's time that is no date: the chart ends at its samples
        at = None

    def line(figure: str) -> list[tuple[datetime, float]]:
        return progresslog.ending_at(data.points(figure), at, getattr(latest, figure) if latest else None)

    return {
        "rate": str(svg.line_chart([("URI/s", line("uri_rate"))], title="fetch rate over time", width=560)),
        "queue": str(
            svg.line_chart(
                [("queued", line("uris_queued")), ("done", line("uris_done"))],
                title="URIs queued and done over time",
                width=560,
            )
        ),
    }


def ended_results(jobs: list[Job]) -> list[dict[str, Any]]:
    """Ended jobs' final results for the running-jobs page: status, when, and the figures of each JobResult as
    intake recorded them (HarvestInfo per domain), not the last heartbeat's. One query for all the jobs."""
    figures: dict[int, dict[str, Any]] = {
        j.pk: {"domains": 0, "objects": 0, "bytes": 0, "stop_reasons": {}} for j in jobs
    }
    rows = (
        HarvestInfo.objects.filter(job__in=[j.pk for j in jobs])
        .values("job_id", "stop_reason")
        .annotate(n=Count("id"), objects=Sum("objects_count"), nbytes=Sum("bytes_count"))
        .order_by("-n")
    )
    for row in rows:
        f = figures[row["job_id"]]
        f["domains"] += row["n"]
        f["objects"] += row["objects"] or 0
        f["bytes"] += row["nbytes"] or 0
        f["stop_reasons"][row["stop_reason"]] = row["n"]
    return [
        {
            "job": j.pk,
            "status": j.status,
            "harvest": j.harvest.name if j.harvest_id else "",
            "ended": j.ended_at.strftime("%Y-%m-%d %H:%M:%S") if j.ended_at else None,
            "error": j.error_category,
            "url": reverse("jobs:job", args=[j.pk]),
            **figures[j.pk],
        }
        for j in jobs
    ]


def _running_and_ended() -> tuple[list[Job], list[dict[str, Any]]]:
    """The running jobs, and the results of those that ended within the last ``JUST_ENDED_S`` (newest first)."""
    running_jobs = list(
        Job.objects.filter(status__in=RUNNING).select_related("harvest", "channel").order_by("id")[:500]
    )
    since = timezone.now() - timedelta(seconds=JUST_ENDED_S)
    ended = list(
        Job.objects.filter(status__in=ENDED, ended_at__gte=since)
        .select_related("harvest")
        .order_by("-ended_at", "-id")[:100]
    )
    return running_jobs, ended_results(ended)


@require(VIEW)
@require_GET
def running(request: HttpRequest) -> HttpResponse:
    jobs, ended = _running_and_ended()
    return render(
        request,
        "jobs/running.html",
        {"jobs": [(j, progress_of(j, domains=5)) for j in jobs], "ended": ended, "just_ended_min": JUST_ENDED_S // 60},
    )


@require(VIEW)
@require_GET
def running_json(request: HttpRequest) -> JsonResponse:
    jobs, ended = _running_and_ended()
    return JsonResponse(
        {"now": timezone.now().isoformat(), "jobs": [progress_of(j, domains=5) for j in jobs], "ended": ended}
    )


@require(VIEW)
@require_GET
def progress_json(request: HttpRequest, job_id: int) -> JsonResponse:
    job = get_object_or_404(Job.objects.select_related("harvest"), pk=job_id)
    data = progress_of(job)
    data["charts"] = progress_charts(job)
    data["controls"] = [_control(c) for c in job.controls.order_by("-requested_at")[:10]]
    return JsonResponse(data)


def _control(c: JobControl) -> dict[str, Any]:
    def t(v: datetime | None) -> str | None:
        return v.strftime("%Y-%m-%d %H:%M:%S") if v else None

    return {
        "action": c.action,
        "argument": c.argument,
        "by": c.requested_by,
        "requested": t(c.requested_at),
        "sent": t(c.sent_at),
        "acknowledged": t(c.acknowledged_at),
    }


@require(CONTROL)
@require_POST
def job_control(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job, pk=job_id)
    action = request.POST.get("action", "")
    if action not in ("stop", "pause", "resume"):
        messages.error(request, f"Unknown action {action!r}: choose stop, pause or resume.")
        return _back(request, job)
    return _send(request, job, action, "")


@require(CONTROL)
@require_POST
def job_trap(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job, pk=job_id)
    try:
        pattern = patterns.trap(request.POST.get("regex", ""), "regex").pattern
    except PatternError as exc:
        messages.error(request, f"Crawler trap not added: {exc}")
        return _back(request, job)
    return _send(request, job, "add_trap", pattern)


def _send(request: HttpRequest, job: Job, action: str, argument: str) -> HttpResponse:
    try:
        send_control(job, action, argument, requested_by=_who(request))
    except BrokerUnavailable as exc:  # recorded; beat's submit_new_jobs sweep sends it when the broker is back
        messages.warning(request, str(exc))
    except DispatchError as exc:
        messages.error(request, f"Not sent: {exc}")
    except Exception as exc:  # the broker; the request is recorded and shows as not sent
        messages.error(request, f"{action} was recorded but could not be sent to the harvester: {exc}")
    else:
        what = f"crawler trap {argument!r}" if action == "add_trap" else action
        messages.success(
            request,
            f"{what} sent to job {job.pk}; the harvester applies it at its next "
            "control poll (see the control history).",
        )
    return _back(request, job)


@require(VIEW)
@require_GET
def trap_preview(request: HttpRequest, job_id: int) -> JsonResponse:
    """How much a trap would cut, from what the orchestrator can see: the latest crawl.log lines.

    The harvester's frontier (the queued URLs themselves) is not visible from here, so this does not
    count queued URLs: it counts matches among recently processed URIs and scales the share to the
    queue size of the latest progress report, and says so.
    """
    job = get_object_or_404(Job, pk=job_id)
    try:
        pattern = patterns.trap(request.GET.get("regex", ""), "regex")
    except PatternError as exc:
        return JsonResponse({"valid": False, "error": str(exc)}, status=400)
    latest = job.latest_progress()
    queued = latest.uris_queued if latest else 0
    out: dict[str, Any] = {"valid": True, "queued": queued, "progress_at": latest.at or None if latest else None}
    try:
        source, lines = jobfiles.tail(job, PREVIEW_LINES)
    except (jobfiles.NotAvailable, OSError) as exc:
        out.update(basis=None, note=f"No crawl.log to preview against: {jobfiles.reason(exc)}. The regex is valid.")
        return JsonResponse(out)
    uris = [f[3] for f in (line.split() for line in lines) if len(f) > 3]
    matching = [u for u in uris if pattern.fullmatch(u)]
    share = len(matching) / len(uris) if uris else 0.0
    out.update(
        basis=f"the last {len(uris)} URIs in crawl.log ({source}), i.e. URIs already processed",
        sample=len(uris),
        matches=len(matching),
        share=round(share * 100, 1),
        estimate=round(share * queued) if uris else None,
        examples=matching[:10],
        note=(
            "An estimate, not a count: the queued URLs are in the harvester's frontier, which the "
            "orchestrator cannot see. If the queue resembles the recent crawl, about this many queued URLs "
            "would be dropped. The harvester matches the whole URI (full match), as here."
        ),
    )
    return JsonResponse(out)


# -- the job page ---------------------------------------------------------------------------------
@require(VIEW)
@require_GET
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job.objects.select_related("harvest", "channel", "continues"), pk=job_id)
    domains = Paginator(
        JobDomain.objects.filter(job=job)
        .select_related("configuration__domain")
        .order_by("configuration__domain__name", "configuration__name"),
        DOMAIN_PAGE_SIZE,
    )
    domain_page = domains.get_page(request.GET.get("domains_page"))
    infos = {
        h.configuration_id: h
        for h in HarvestInfo.objects.filter(job=job, configuration_id__in=[d.configuration_id for d in domain_page])
    }
    context: dict[str, Any] = {
        "job": job,
        "domain_page": domain_page,
        "infos": infos,
        "continued_by": list(job.continued_by.values_list("id", "status")),
        "files": ArchiveFile.objects.filter(job=job).prefetch_related("copies").order_by("kind", "name"),
        "controls": job.controls.order_by("-requested_at")[:50],
        "running": job.status in RUNNING,
        "progress": progress_of(job),
        "charts": progress_charts(job),
        "can_control": can(request, CONTROL),
        "report_names": REPORT_NAMES,
        "search_max": SEARCH_MAX_MATCHES,
        "search_default": SEARCH_DEFAULT_MATCHES,
        "pattern_max": patterns.MAX_PATTERN_CHARS,
        "live": continuous.live_of(job, request.GET.get("window", "")) if continuous.is_continuous(job) else None,
    }
    try:
        source, text, cut = jobfiles.read_text(job, "seeds-report.txt", limit=512 * 1024)
        context["seeds"] = (str(source), parse_seeds_report(text), cut)
    except (jobfiles.NotAvailable, OSError) as exc:
        context["seeds_missing"] = jobfiles.reason(exc)
    try:
        source, lines = jobfiles.tail(job, TAIL_LINES)
        context["tail"] = (str(source), lines)
    except (jobfiles.NotAvailable, OSError) as exc:
        context["tail_missing"] = jobfiles.reason(exc)
    return render(request, "jobs/detail.html", context)


def parse_seeds_report(text: str) -> list[dict[str, str]]:
    """seeds-report.txt (``[code] [status] [seed] [redirect]``) into rows."""
    out = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("["):
            continue
        parts = line.split()
        out.append(
            {
                "code": parts[0],
                "status": parts[1] if len(parts) > 1 else "",
                "seed": parts[2] if len(parts) > 2 else "",
                "redirect": parts[3] if len(parts) > 3 else "",
            }
        )
    return out


@require(VIEW)
@require_GET
def job_report(request: HttpRequest, job_id: int, name: str) -> HttpResponse:
    job = get_object_or_404(Job, pk=job_id)
    if name not in REPORT_NAMES:
        raise Http404(f"no report called {name!r}; reports are: {', '.join(REPORT_NAMES)}")
    try:
        source, text, cut = jobfiles.read_text(job, name)
    except (jobfiles.NotAvailable, OSError) as exc:
        raise Http404(jobfiles.reason(exc)) from None
    response = HttpResponse(
        text + (f"\n[cut at {jobfiles.MAX_REPORT_BYTES} bytes]\n" if cut else ""),
        content_type="application/json; charset=utf-8" if name.endswith(".json") else "text/plain; charset=utf-8",
    )
    response["X-Netharvest-Source"] = str(source)
    return response


def _search_params(query: Any) -> tuple[re2._Regexp, int]:
    """The crawl-log search's ``search`` (RE2, anywhere in the line) and ``limit``; a ValueError says what
    is wrong in one line (PatternError is one)."""
    raw = query.get("search", "")
    if not raw.strip():
        raise PatternError("search: enter a regular expression (e.g. ' 404 ' or 'example\\.fr/.*\\.pdf')")
    pattern = patterns.compile_pattern(raw, "search", patterns.SEARCH)
    try:
        limit = int(query.get("limit") or SEARCH_DEFAULT_MATCHES)
    except ValueError:
        limit = 0
    if not 1 <= limit <= SEARCH_MAX_MATCHES:
        raise PatternError(f"limit: a number from 1 to {SEARCH_MAX_MATCHES}")
    return pattern, limit


def _tail_param(query: Any) -> int:
    try:
        n = int(query["tail"])
    except ValueError:
        n = 0
    if not 1 <= n <= SEARCH_MAX_MATCHES:
        raise ValueError(f"tail: a number of lines from 1 to {SEARCH_MAX_MATCHES}")
    return n


@require(VIEW)
@require_GET
def crawl_log(request: HttpRequest, job_id: int) -> HttpResponse:
    """crawl.log lines matching a regex (``search``: RE2, anywhere in the line, so a viewer's pattern
    costs time linear in the log whatever it is), streamed as text, at most ``limit`` matches; or the
    last ``tail`` lines. The raw download; :func:`crawl_log_page` shows the same inside the web UI."""
    job = get_object_or_404(Job, pk=job_id)
    if "tail" in request.GET:
        try:
            n = _tail_param(request.GET)
        except ValueError as exc:
            return HttpResponseBadRequest(str(exc), content_type="text/plain; charset=utf-8")
        try:
            source, lines = jobfiles.tail(job, n)
        except (jobfiles.NotAvailable, OSError) as exc:
            raise Http404(jobfiles.reason(exc)) from None
        return HttpResponse(
            f"# the last {len(lines)} lines of crawl.log of job {job.pk} ({source})\n"
            + "".join(f"{line}\n" for line in lines),
            content_type="text/plain; charset=utf-8",
        )
    try:
        pattern, limit = _search_params(request.GET)
    except ValueError as exc:
        return HttpResponseBadRequest(str(exc) + "\n", content_type="text/plain; charset=utf-8")
    try:
        jobfiles.locate(job, jobfiles.CRAWL_LOG)
    except jobfiles.NotAvailable as exc:
        raise Http404(jobfiles.reason(exc)) from None
    response = StreamingHttpResponse(_search(job, pattern, limit), content_type="text/plain; charset=utf-8")
    response["X-Accel-Buffering"] = "no"
    return response


def _scan(job: Job, pattern: re2._Regexp, limit: int) -> Iterator[tuple[str, Any]]:
    """``("source", where)`` first, then ``("line", text)`` per match (at most ``limit``), then
    ``("end", (found, scanned))``: the one reading of crawl.log that the download and the page share."""
    found = scanned = 0
    with jobfiles.open_binary(job, jobfiles.CRAWL_LOG) as (source, stream):
        yield "source", source
        for line in jobfiles.iter_lines(stream):
            scanned += 1
            if pattern.search(line):
                found += 1
                yield "line", line
                if found >= limit:
                    break
    yield "end", (found, scanned)


def _summary(found: int, scanned: int, limit: int) -> str:
    more = " (limit reached: narrow the search or raise the limit)" if found >= limit else ""
    return (
        f"{found} matching line{'' if found == 1 else 's'} in the first {scanned} line{'' if scanned == 1 else 's'}"
        f"{more}"
    )


def _search(job: Job, pattern: re2._Regexp, limit: int) -> Iterator[str]:
    batch: list[str] = []
    for kind, value in _scan(job, pattern, limit):
        if kind == "source":
            yield f"# crawl.log of job {job.pk} ({value}): lines matching /{pattern.pattern}/, at most {limit}\n"
        elif kind == "line":
            batch.append(value + "\n")
            if len(batch) >= 200:
                yield "".join(batch)
                batch = []
        else:
            if batch:
                yield "".join(batch)
            yield f"# {_summary(*value, limit)}\n"


@require(VIEW)
@require_GET
def crawl_log_page(request: HttpRequest, job_id: int) -> HttpResponse:
    """The crawl-log search and tail inside the web UI, with the way back to the job and a raw download
    of the same lines (they opened as bare text in a new tab, with no way back)."""
    job = get_object_or_404(Job.objects.select_related("harvest"), pk=job_id)
    context: dict[str, Any] = {
        "job": job,
        "search": request.GET.get("search", ""),
        "limit": SEARCH_DEFAULT_MATCHES,
        "search_max": SEARCH_MAX_MATCHES,
        "pattern_max": patterns.MAX_PATTERN_CHARS,
        "raw_query": request.GET.urlencode(),
        "lines": None,
    }
    status = 200
    try:
        if "search" in request.GET:
            pattern, context["limit"] = _search_params(request.GET)
            lines, summary = [], ""
            for kind, value in _scan(job, pattern, context["limit"]):
                if kind == "source":
                    context["source"] = value
                elif kind == "line":
                    lines.append(value)
                else:
                    summary = _summary(*value, context["limit"])
            context.update(lines=lines, summary=summary)
        else:
            n = _tail_param(request.GET) if "tail" in request.GET else TAIL_PAGE_LINES
            context["source"], context["lines"] = jobfiles.tail(job, n)
            context["summary"] = f"the last {len(context['lines'])} lines"
            context["raw_query"] = f"tail={n}"
    except ValueError as exc:
        context["error"], status = str(exc), 400
    except (jobfiles.NotAvailable, OSError) as exc:
        context["error"], status = f"No crawl.log: {jobfiles.reason(exc)}", 404
    return render(request, "jobs/crawl_log.html", context, status=status)


@require(VIEW)
@require_GET
def report_page(request: HttpRequest, job_id: int, name: str) -> HttpResponse:
    """One report of the job inside the web UI: a table when the report has Heritrix's ``[column]``
    header, else its text; every report a tab away, and the raw file a link away."""
    job = get_object_or_404(Job.objects.select_related("harvest"), pk=job_id)
    if name not in REPORT_NAMES:
        raise Http404(f"no report called {name!r}; reports are: {', '.join(REPORT_NAMES)}")
    context: dict[str, Any] = {"job": job, "name": name, "report_names": REPORT_NAMES}
    try:
        context["source"], text, context["cut"] = jobfiles.read_text(job, name)
    except (jobfiles.NotAvailable, OSError) as exc:
        context["error"] = f"Not available: {jobfiles.reason(exc)}"
        return render(request, "jobs/report.html", context, status=404)
    context["columns"], context["rows"] = report_table(text)
    context["text"] = text
    return render(request, "jobs/report.html", context)


_HEADER = re2.compile(r"\[([^\]]*)\]")


def report_table(text: str) -> tuple[list[str], list[list[str]]]:
    """A Heritrix report (``[#urls] [#bytes] [mime-types]`` then one whitespace-separated row per line)
    as columns and rows; no columns when the first line is not such a header (the text is shown then)."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("["):
        return [], []
    columns = _HEADER.findall(lines[0])
    if len(columns) < 2:
        return [], []
    rows = [line.split(None, len(columns) - 1) for line in lines[1:] if line.strip()]
    return columns, rows
