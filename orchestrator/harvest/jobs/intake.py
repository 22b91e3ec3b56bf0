"""Result intake: what harvesters report (started, progress, applied controls, JobResult) into the database.

A JobResult is all-or-nothing: validated against the contract and against the job it names, then
written in one transaction (job status and times, HarvestInfo rows in bulk, ArchiveFile rows). A
malformed, unknown or duplicate result is logged and leaves nothing behind.

Every report is idempotent, because a harvester delivers its outbox at least once (harvester.outbox): a
second started message, heartbeat, control acknowledgement or JobResult changes nothing. Reports about
a job that is not running (reaped, resubmitted, ended) are ignored: only a SUBMITTED or STARTED job
takes progress or a result.
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from django.db import DataError, IntegrityError, transaction
from django.db.models import Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from harvester.contracts import ContractError, FileResult, JobResult, Progress
from orchestrator.harvest.chain import steps as chain
from orchestrator.harvest.jobs import progresslog, specs
from orchestrator.harvest.models import (
    ArchiveFile,
    HarvestDefinition,
    HarvestInfo,
    Job,
    JobControl,
    JobDomain,
    JobStatus,
)

log = logging.getLogger(__name__)


class IntakeError(Exception):
    """A report that cannot be recorded; nothing of it was written."""


class EndedJob(IntakeError):
    """A result for a job that has ended: a redelivery (harvesters deliver at least once, from their outbox) or
    a fenced job's late word. Expected, so logged without alarm; nothing is written."""


def record_started(job_id: int, harvester: str) -> bool:
    now = timezone.now()
    moved = Job.transition(
        job_id, JobStatus.SUBMITTED, JobStatus.STARTED, started_at=now, last_heartbeat=now, harvester=harvester[:200]
    )
    if not moved:
        # A heartbeat or the result may have overtaken this message (two event workers): the job is already
        # STARTED or ended, but who ran it is still worth knowing. Only an empty field is filled.
        if (
            Job.objects.filter(pk=job_id, harvester="")
            .exclude(status__in=[JobStatus.NEW, JobStatus.SUBMITTED])
            .update(harvester=harvester[:200], started_at=Coalesce("started_at", Value(now)))
        ):
            log.info("job %s: started message from %s arrived after a heartbeat or its result", job_id, harvester)
            return True
        if Job.objects.filter(pk=job_id, status=JobStatus.STARTED, harvester=harvester[:200]).exists():
            # Its own harvester took the job's message again (handed back at a worker's shutdown, or
            # redelivered after a crash) and carries on from its checkpoint: expected, not a conflict.
            log.info("job %s: %s carries on with it", job_id, harvester)
        else:
            log.warning("job %s reported started by %s but is not SUBMITTED; ignored", job_id, harvester)
    return moved


def record_progress(data: Any) -> bool:
    """Store the latest heartbeat; a heartbeat of a job still SUBMITTED also marks it STARTED (its
    started message was lost or overtaken)."""
    try:
        progress = Progress.from_dict(data)
    except ContractError as exc:
        log.error("rejected a malformed progress message: %s", exc)
        return False
    now = timezone.now()
    Job.transition(progress.job_id, JobStatus.SUBMITTED, JobStatus.STARTED, started_at=now)
    updated = Job.objects.filter(pk=progress.job_id, status=JobStatus.STARTED).update(
        progress=progress.to_dict(), last_heartbeat=now
    )
    if not updated:
        log.warning("progress for job %s, which is not running; ignored", progress.job_id)
    else:
        progresslog.record(progress.job_id, progress.to_dict(), now)  # the series a live job's charts draw
    return bool(updated)


def record_control_applied(job_id: int, control_id: int, applied_at: str) -> bool:
    """The harvester applied control ``control_id``: the control history's "Acknowledged" (first time kept)."""
    try:
        when = _when(applied_at)
    except IntakeError as exc:
        log.error("job %s: rejected a control acknowledgement: %s", job_id, exc)
        return False
    return bool(
        JobControl.objects.filter(pk=control_id, job_id=job_id, acknowledged_at__isnull=True).update(
            acknowledged_at=when
        )
    )


def _archive_file(job: Job, f: FileResult) -> ArchiveFile:
    """The row of a file a harvester reported (while the job runs or in its result); the chain hashes it."""
    return ArchiveFile(
        name=f.name,
        kind=f.kind,
        job=job,
        harvest_id=job.harvest_id,
        size=f.size,
        sha256="",
        harvester_sha256=f.sha256,
        spool_path=f.path,
    )


def record_files(job_id: int, files: Any) -> int:
    """Files a continuous job closed while it runs (``orchestrator.record_files``): ArchiveFile rows, and the
    indexer chain started for them once committed, so their captures are replayable and in the dedup index
    within minutes. Idempotent by file name (a redelivered message adds nothing); a name another job
    already has, or a job that is not running, is refused whole. Returns how many rows were added."""
    try:
        if not isinstance(files, list):
            raise ContractError(f"files: expected a list, got {type(files).__name__}")
        results = [FileResult.from_dict(f if isinstance(f, dict) else {}, f"files[{i}]") for i, f in enumerate(files)]
    except ContractError as exc:
        log.error("job %s: rejected a malformed record_files message: %s", job_id, exc)
        return 0
    names = [f.name for f in results]
    with transaction.atomic():
        # The job's row lock: a JobResult recorded at the same moment (another intake worker) waits, so the
        # two never both register a file (the result skips what this registered, and the other way round).
        job = Job.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.status not in (JobStatus.SUBMITTED, JobStatus.STARTED):
            log.warning(
                "job %s: files %s reported while the job is %s; ignored",
                job_id,
                ", ".join(names),
                job.status if job else "unknown",
            )
            return 0
        taken = list(ArchiveFile.objects.filter(name__in=names).exclude(job=job).values_list("name", flat=True)[:5])
        if taken:
            log.error("job %s: file name(s) already in the archive from another job: %s", job_id, ", ".join(taken))
            return 0
        have = set(ArchiveFile.objects.filter(job=job, name__in=names).values_list("name", flat=True))
        new = [f for f in results if f.name not in have]
        ArchiveFile.objects.bulk_create([_archive_file(job, f) for f in new])
        if new:
            chain.enqueue_job_on_commit(job.pk)
    if new:
        log.info("job %s: %d file(s) handed over while running", job_id, len(new))
    return len(new)


def record_result(data: Any) -> Job:
    """Record a JobResult. Raises IntakeError (after logging it) if anything about it is wrong."""
    try:
        result = JobResult.from_dict(data)
    except ContractError as exc:
        log.error("rejected a malformed JobResult: %s", exc)
        raise IntakeError(f"malformed JobResult: {exc}") from None
    try:
        try:
            return _record(result)
        except (IntegrityError, DataError) as exc:  # the rows cannot be stored: no retry makes them fit
            raise IntakeError(f"its records could not be stored: {' '.join(str(exc).split())[:300]}") from exc
    except IntakeError as exc:
        (log.info if isinstance(exc, EndedJob) else log.error)(
            "rejected the JobResult of job %s: %s", result.job_id, exc
        )
        raise


def fail_rejected(data: Any, reason: str) -> bool:
    """A live job whose result was rejected (:class:`IntakeError`, not a redelivery) ends FAILED with the reason
    (``result-rejected``) instead of waiting, STARTED, for the reaper to call its harvester dead: the job page
    says what went wrong, and the job can be resubmitted or rejected. True if it was live."""
    job_id = data.get("job_id") if isinstance(data, dict) else None
    if not isinstance(job_id, int):
        return False
    own = data.get("error_category") or ""
    if own:  # the harvester's own verdict is kept in the detail
        reason += f" (the harvester reported {data.get('status')}: {own}: {data.get('error_detail') or ''})"
    for old in (JobStatus.STARTED, JobStatus.SUBMITTED):
        if Job.transition(
            job_id,
            old,
            JobStatus.FAILED,
            ended_at=timezone.now(),
            error_category="result-rejected",
            error_detail=f"the harvester's result could not be recorded: {reason}",
        ):
            return True
    return False


#: Results a harvester sends when it could not even read the job's message: they end only a job no harvester
#: has started.
UNREAD_MESSAGE = ("jobspec-unreadable", "invalid-jobspec")


def _record(result: JobResult) -> Job:
    job = Job.objects.select_related("harvest").filter(pk=result.job_id).first()
    if job is None:
        raise IntakeError(f"job {result.job_id} does not exist")
    if job.status not in (JobStatus.SUBMITTED, JobStatus.STARTED):
        raise EndedJob(
            f"job {job.pk} is {job.status}; a result is only taken for a submitted or started job "
            "(a duplicate delivery?)"
        )
    if result.error_category in UNREAD_MESSAGE and job.status != JobStatus.SUBMITTED:
        # A copy of the job's message that a harvester could not read, while the job runs elsewhere (the
        # duplicate publish dispatch.py allows for): that copy's failure is not the job's.
        raise EndedJob(
            f"job {job.pk} is {job.status}: a {result.error_category} failure from "
            f"{result.harvester or 'a harvester'} concerns a duplicate message, not the running job"
        )
    frozen = {
        (d.configuration.domain.name, d.configuration.name): d
        for d in JobDomain.objects.filter(job=job).select_related("configuration__domain")
    }
    seeds = specs.stored(job).seeds_by_configuration()  # kept with each row for the domain page's replay links
    infos = []
    for domain in result.domains:
        entry = frozen.get((domain.name, domain.configuration))
        if entry is None:
            raise IntakeError(
                f"domain {domain.name} (configuration {domain.configuration}) is not part of job {job.pk}"
            )
        infos.append(
            HarvestInfo(
                job=job,
                harvest_id=job.harvest_id,
                domain_id=entry.configuration.domain_id,
                configuration_id=entry.configuration_id,
                objects_count=domain.objects,
                bytes_count=domain.bytes,
                stop_reason=config_stop_reason(domain.stop_reason, job.harvest, entry),
                date=timezone.now(),
                seeds=seeds.get((domain.name, domain.configuration), []),
            )
        )
    names = [f.name for f in result.files]
    taken = list(ArchiveFile.objects.filter(name__in=names).exclude(job=job).values_list("name", flat=True)[:5])
    if taken:
        raise IntakeError(f"file name(s) already in the archive from another job: {', '.join(taken)}")
    if len(set(names)) != len(names):
        raise IntakeError("the result lists a file twice")
    with transaction.atomic():
        # Under the job's row lock (as record_files takes it): a continuous job handed some files over
        # while it ran; they are registered already.
        Job.objects.select_for_update().filter(pk=job.pk).first()
        handed = set(ArchiveFile.objects.filter(job=job, name__in=names).values_list("name", flat=True))
        moved = False
        for old in (JobStatus.STARTED, JobStatus.SUBMITTED):
            moved = Job.transition(
                job.pk,
                old,
                result.status,
                ended_at=_when(result.ended),
                error_category=result.error_category[:50],
                error_detail=result.error_detail,
                # The job's own start, when it was heard: a job carrying on from another's checkpoint (resubmitted)
                # reports the crawl's start, the earlier job's, and showed "started" before it was even created.
                **({"started_at": Coalesce("started_at", Value(_when(result.started)))} if result.started else {}),
            )
            if moved:
                break
        if not moved:
            raise IntakeError(f"job {job.pk} changed state while its result was being recorded")
        if result.figures is not None:  # the QA statistics read these (qa/stats.py); None: from the text reports
            Job.objects.filter(pk=job.pk).update(figures=asdict(result.figures))
        if result.harvester:
            # The started message may come after the result (two intake workers): the result names the harvester.
            Job.objects.filter(pk=job.pk, harvester="").update(harvester=result.harvester[:200])
        HarvestInfo.objects.bulk_create(infos, batch_size=5000)
        ArchiveFile.objects.bulk_create(
            [_archive_file(job, f) for f in result.files if f.name not in handed],
            batch_size=5000,
        )
        if result.files:
            chain.enqueue_job_on_commit(job.pk)  # the indexer chain starts once this commits
    job.refresh_from_db()
    log.info("job %s %s: %d domains, %d files", job.pk, job.status, len(infos), len(names))
    from orchestrator.harvest.qa.stats import record_job_stats_quietly  # QA figures (issue 6), never fatal

    record_job_stats_quietly(job)
    return job


def config_stop_reason(reason: str, definition: HarvestDefinition, frozen: JobDomain) -> str:
    """Say whether a limit was the harvest's or the configuration's own, as NetarchiveSuite does.

    The limit a job gave a domain is the smaller of the definition's (snapshot harvests only) and the
    configuration's. When the configuration's was strictly smaller, it was the binding one, and the
    domain is reported as CONFIG_OBJECT_LIMIT / CONFIG_SIZE_LIMIT: a later continuation only retries it
    if someone raised that configuration's limit.
    """
    pairs = {"OBJECT_LIMIT": ("max_objects", "CONFIG_OBJECT_LIMIT"), "SIZE_LIMIT": ("max_bytes", "CONFIG_SIZE_LIMIT")}
    if reason not in pairs:
        return reason
    field, config_reason = pairs[reason]
    harvest_limit = getattr(definition, field) if definition.kind == HarvestDefinition.SNAPSHOT else -1
    config_limit = getattr(frozen, field)
    if config_limit != -1 and (harvest_limit == -1 or config_limit < harvest_limit):
        return config_reason
    return reason


def _when(value: str | None) -> datetime:
    if not value:
        return timezone.now()
    parsed = parse_datetime(value)
    if parsed is None:
        raise IntakeError(f"not an ISO 8601 time: {value!r}")
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
