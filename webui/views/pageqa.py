"""A job's page QA (issue 13): what the QA pass saw of each page in replay, worst first, the live and replayed
thumbnails side by side, the missing URLs by host and type, the curator's good/bad marks, and the two actions
(run a pass, patch the gaps). The work is in orchestrator.harvest.qa.pageqa and .patch; this module lays it out."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from harvester.contracts import ContractError
from harvester.scope import Scope
from orchestrator.harvest.archive import replay
from orchestrator.harvest.jobs import patch, specs
from orchestrator.harvest.models import Domain, Job, QAMark, QAPage, QARun, QARunStatus
from orchestrator.harvest.qa import pageqa
from orchestrator.harvest.qa import score as qascore
from webui.access import CURATE, READ, can, require


def _run_of(request: HttpRequest, job: Job) -> QARun | None:
    raw = request.GET.get("run", "").strip()
    if raw:
        if not raw.isdigit():
            raise Http404(f"run: expected a number, got {raw!r}")
        return get_object_or_404(QARun, pk=int(raw), job=job)
    return QARun.objects.filter(job=job).order_by("-id").first()


@require(READ)
@require_GET
def job_qa(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job.objects.select_related("harvest", "patches"), pk=job_id)
    run = _run_of(request, job)
    pages: list[QAPage] = []
    groups: list[dict[str, object]] = []
    if run is not None:
        pages = list(run.pages.all())
        pages.sort(
            key=lambda p: qascore.worst_first(
                p.missing_count,
                p.timed_out or bool(p.replay_status is None or p.replay_status >= 400),
                (p.screenshot_similarity, p.text_similarity),
                p.url,
            )
        )
        by_id = {p.pk: p.url for p in pages}
        groups = qascore.group_missing(
            qascore.Missing(m.url, m.host, m.resource_type, by_id.get(m.page_id, "")) for m in run.missing.all()
        )
    collection = replay.collection_of(job.harvest_id)
    return render(
        request,
        "jobs/qa.html",
        {
            "job": job,
            "run": run,
            "pages": pages,
            "groups": groups,
            "runs": list(QARun.objects.filter(job=job).order_by("-id")[:20]),
            "marks": {m.url: m for m in QAMark.objects.filter(job=job)},
            "patch_jobs": list(Job.objects.filter(patches=job).order_by("-id").values_list("id", "status")),
            "replay_of": lambda p: replay.replay_url(p.url, p.timestamp, collection),
            "can_curate": can(request, CURATE),
            "busy": run is not None and run.status in (QARunStatus.QUEUED, QARunStatus.RUNNING),
            "stored": pageqa.stored_files(job),
            "max_pages": settings.NETHARVEST_QA_MAX_PAGES,
        },
    )


def _back(job: Job) -> HttpResponse:
    return redirect(reverse("jobs:qa", args=[job.pk]))


@require(CURATE)
@require_POST
def qa_run(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job, pk=job_id)
    try:
        run = pageqa.request(job, request.user.get_username())
    except pageqa.QAError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"QA run {run.pk} queued: this page follows it.")
    return _back(job)


@require(CURATE)
@require_POST
def qa_patch(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job, pk=job_id)
    try:
        new = patch.create_patch_job(job, request.user.get_username())
    except patch.PatchError as exc:
        messages.error(request, str(exc))
    else:
        urls = len(specs.stored(new).seeds)
        messages.success(
            request,
            f"Patch job {new.pk} of {urls} missing URL(s) is {new.status}; once it is indexed "
            "a new QA pass of this job runs by itself.",
        )
    return _back(job)


def domain_of(job: Job, url: str) -> Domain | None:
    """The job's domain whose scope holds ``url`` (how the harvester charged it), as a Domain row."""
    try:
        name = Scope(specs.read(job)).domain_of(url)
    except ContractError:
        return None
    return Domain.objects.filter(name=name).first() if name else None


@require(CURATE)
@require_POST
def qa_mark(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job, pk=job_id)
    url = request.POST.get("url", "").strip()
    verdict = request.POST.get("verdict", "")
    if verdict not in (QAMark.GOOD, QAMark.BAD):
        messages.error(request, f"verdict: expected good or bad, got {verdict!r}")
        return _back(job)
    if not QAPage.objects.filter(run__job=job, url=url).exists():
        messages.error(request, f"{url!r} is not a page the QA of job {job.pk} looked at")
        return _back(job)
    note = request.POST.get("note", "").strip()[:5000]
    QAMark.objects.update_or_create(
        job=job,
        url=url,
        defaults={
            "verdict": verdict,
            "note": note,
            "marked_by": request.user.get_username(),
            "domain": domain_of(job, url),
        },
    )
    messages.success(request, f"{url} marked {verdict}.")
    return _back(job)


@require(READ)
@require_GET
def qa_thumb(request: HttpRequest, job_id: int, page_id: int, which: str) -> HttpResponse:
    """A page's thumbnail: archived content, so behind the login like replay itself."""
    page = get_object_or_404(QAPage.objects.select_related("run"), pk=page_id, run__job_id=job_id)
    relative = {"replay": page.replay_thumb, "live": page.live_thumb}.get(which)
    if not relative:
        raise Http404(f"no {which} thumbnail for this page")
    path = (pageqa.qa_dir() / relative).resolve()
    if pageqa.qa_dir().resolve() not in path.parents or not Path(path).is_file():
        raise Http404("the thumbnail file is gone")
    return FileResponse(open(path, "rb"), content_type="image/png")
