"""Patch crawl (issue 13): the resources a QA pass found missing become a follow-up job of exactly those URLs.

The BnF's curators note what replay lacks and have it harvested again by hand ("including additional URLs",
shared/seeds/001…, 4.2). Here one action makes a real Job of the same definition and run: the patched job's
frozen JobSpec with its seeds replaced by the missing URLs, its template's settings with ``max_hops`` and
``max_embed_hops`` at 0 (so exactly those URLs, nothing they link or embed: a resource that needs further ones
shows them missing in the next QA pass), the same dedup index, channel, budgets and traps. It is dispatched like
any job (orchestrator.harvest.jobs.dispatch), its result taken in by intake and its WARCs indexed by the chain; once
they are stored, the chain starts a new QA pass over the patched job (orchestrator.harvest.qa.pageqa), in whose
replay the patched captures now answer (same definition, same replay collection).

The patch job's HarvestInfo rows are kept (they are the domain's harvest history: the curator sees the patch),
but job generation's size estimates and snapshot continuation ignore them: a patch of three images says nothing
about a site's size.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import replace

from django.db import transaction

from harvester.contracts import JobSpec, validate_seed
from harvester.scope import Scope
from orchestrator.harvest.jobs import dispatch, specs
from orchestrator.harvest.models import Job, JobDomain, JobStatus, MissingResource, QARun, QARunStatus

log = logging.getLogger(__name__)

RUNNING = (JobStatus.NEW, JobStatus.SUBMITTED, JobStatus.STARTED)


class PatchError(Exception):
    """A patch crawl that cannot be made; the message says why."""


def latest_run(job: Job) -> QARun | None:
    return QARun.objects.filter(job=job, status=QARunStatus.DONE).order_by("-ended_at", "-id").first()


def missing_urls(run: QARun) -> list[tuple[str, str]]:
    """(missing URL, the first page that needed it) of ``run``, each URL once, in a stable order."""
    out: dict[str, str] = {}
    for url, page in MissingResource.objects.filter(run=run).order_by("url", "page_id").values_list("url", "page__url"):
        out.setdefault(url, page)
    return list(out.items())


def patch_spec(job: Job, new_id: int, urls: list[tuple[str, str]]) -> JobSpec:
    """``job``'s JobSpec for a patch job ``new_id`` fetching ``urls``: each URL goes to the domain whose scope
    holds it, else to the domain of the page that needed it (an off-site embed is charged where the page's
    embeds were), else to the first domain."""
    spec = specs.read(job)
    scope = Scope(spec)
    seeds: dict[str, list[str]] = defaultdict(list)
    first = spec.domains[0].name
    for url, page in urls:
        seeds[scope.domain_of(url) or scope.domain_of(page) or first].append(validate_seed(url, "missing URL"))
    return specs.derive(
        spec,
        job_id=new_id,
        continues_job=None,
        domains=tuple(replace(d, seeds=tuple(seeds[d.name])) for d in spec.domains if seeds.get(d.name)),
        settings=replace(spec.settings, max_hops=0, max_embed_hops=0),
    )


def create_patch_job(job: Job, requested_by: str, run: QARun | None = None) -> Job:
    """A NEW patch job of ``job`` for the missing URLs of ``run`` (default: its latest finished QA pass),
    submitted to its channel. Refused while another patch of ``job`` is still to run, so a double click makes one
    job."""
    run = run or latest_run(job)
    if run is None:
        raise PatchError(f"job {job.pk} has no finished QA pass: run one first (netharvest jobs qa {job.pk})")
    if run.job_id != job.pk:
        raise PatchError(f"QA run {run.pk} is of job {run.job_id}, not of job {job.pk}")
    urls = missing_urls(run)
    if not urls:
        raise PatchError(f"QA run {run.pk} of job {job.pk} found nothing missing: there is nothing to patch")
    with transaction.atomic():
        Job.objects.select_for_update().filter(pk=job.pk).first()  # one patch decision per job at a time
        pending = Job.objects.filter(patches=job, status__in=RUNNING).values_list("id", flat=True).first()
        if pending:
            raise PatchError(f"job {pending} already patches job {job.pk} and has not finished: wait for it")
        new = job.follow_on(
            patches=job,
            expected_objects=len(urls),
        )
        spec = patch_spec(job, new.pk, urls)
        specs.store(new.pk, spec)
        names = {(d.name, d.configuration) for d in spec.domains}
        JobDomain.objects.bulk_create(
            JobDomain(job=new, configuration_id=d.configuration_id, max_objects=d.max_objects, max_bytes=d.max_bytes)
            for d in job.domains.select_related("configuration__domain")
            if (d.configuration.domain.name, d.configuration.name) in names
        )
    log.info(
        "job %s: patch job %s of %d missing URL(s) from QA run %s, by %s",
        job.pk,
        new.pk,
        len(urls),
        run.pk,
        requested_by,
    )
    try:
        dispatch.submit_jobs([new.pk])
    except dispatch.BrokerUnavailable as exc:  # it stays NEW; beat's submit_new_jobs sends it
        log.warning("patch job %s stays NEW until the broker answers: %s", new.pk, exc)
    new.refresh_from_db()
    return new
