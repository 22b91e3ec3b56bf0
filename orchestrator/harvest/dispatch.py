"""Dispatch: NEW jobs onto their channel's queue, control messages to running jobs, resubmission.

A job is claimed (NEW → SUBMITTED, one conditional UPDATE) and published in the same transaction:
if publishing fails the claim rolls back and the job stays NEW for the next round; two dispatchers
never both publish one job. The only duplicate left is a crash between the broker accepting the
message and the database committing, documented in docs/DESIGN.md.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone
from kombu import Connection
from kombu.simple import SimpleQueue

from harvester.contracts import RUN_JOB_TASK, Control, control_queue
from harvester.patterns import PatternError, check
from orchestrator.celery import app
from orchestrator.harvest.models import Job, JobControl, JobDomain, JobStatus

log = logging.getLogger(__name__)


class DispatchError(Exception):
    """A request the job's state does not allow; the message says what and why."""


def submit_jobs(job_ids: Iterable[int]) -> int:
    """Publish the NEW jobs among ``job_ids``; returns how many this call submitted."""
    submitted, ids = 0, list(job_ids)
    for start in range(0, len(ids), 5):  # a few specs (megabytes each for a broad crawl) in memory at a time
        chunk = ids[start:start + 5]
        for job in Job.objects.filter(pk__in=chunk, status=JobStatus.NEW).select_related("channel").order_by("id"):
            submitted += submit(job)
    return submitted


def submit_new_jobs(limit: int = 1000) -> int:
    """Publish jobs left NEW (a dispatcher that failed, a broker that was down)."""
    ids = list(Job.objects.filter(status=JobStatus.NEW).order_by("id").values_list("id", flat=True)[:limit])
    return submit_jobs(ids)


def submit(job: Job) -> bool:
    with transaction.atomic():
        if not Job.transition(job.pk, JobStatus.NEW, JobStatus.SUBMITTED, submitted_at=timezone.now()):
            return False
        app.send_task(RUN_JOB_TASK, args=[job.spec], queue=job.channel.queue,
                      task_id=f"job-{job.pk}-{timezone.now():%Y%m%d%H%M%S%f}")
    log.info("job %s submitted to %s", job.pk, job.channel.queue)
    return True


def send_control(job: Job, action: str, argument: str = "", requested_by: str = "system") -> JobControl:
    """Record a control instruction with who and when, then send it to the running job."""
    if job.status not in (JobStatus.SUBMITTED, JobStatus.STARTED):
        raise DispatchError(f"job {job.pk} is {job.status}: only a submitted or started job can be told to {action}")
    if action == "add_trap":  # every caller (web UI, CLI, API) passes here: the one validator, before any row
        try:
            check(argument, "add_trap")
        except PatternError as exc:
            raise DispatchError(str(exc)) from None
    control = JobControl.objects.create(job=job, action=action, argument=argument, requested_by=requested_by)
    message = Control(job_id=job.pk, action=action, argument=argument, id=control.pk)
    with Connection(app.conf.broker_url, transport_options=app.conf.broker_transport_options) as conn:
        queue = SimpleQueue(conn, control_queue(job.pk))
        queue.put(message.to_dict())
        queue.close()
    JobControl.objects.filter(pk=control.pk, sent_at__isnull=True).update(sent_at=timezone.now())
    return control


def resubmit(job: Job, requested_by: str = "system") -> Job:
    """A failed job carries on as a new job with the same frozen domains; the old one is RESUBMITTED.

    The new JobSpec names the old job (``continues_job``), so a harvester that still has the old
    job's spool resumes its frontier instead of starting over.
    """
    with transaction.atomic():
        # Job.transition's conditional UPDATE, plus "not rejected": a concurrent reject() and resubmit()
        # update the same row under its lock, so exactly one of them wins.
        if not Job.objects.filter(pk=job.pk, status=JobStatus.FAILED, rejected_at__isnull=True).update(
                status=JobStatus.RESUBMITTED):
            current = Job.objects.filter(pk=job.pk).values("status", "rejected_by", "rejected_at").first()
            if current and current["rejected_at"] and current["status"] == JobStatus.FAILED:
                raise DispatchError(f"job {job.pk} was rejected by {current['rejected_by']} at "
                                    f"{current['rejected_at']:%Y-%m-%d %H:%M} UTC: it is not to be resubmitted")
            status = current["status"] if current else "gone"
            raise DispatchError(f"job {job.pk} is {status}: only a FAILED job can be resubmitted")
        new = Job.objects.create(
            harvest_id=job.harvest_id, harvest_run=job.harvest_run, channel_id=job.channel_id, spec={},
            domain_count=job.domain_count, expected_objects=job.expected_objects,
            expected_bytes=job.expected_bytes, continues=job,
        )
        new.spec = {**job.spec, "job_id": new.pk, "continues_job": job.pk}
        new.save(update_fields=["spec"])
        JobDomain.objects.bulk_create(
            JobDomain(job=new, configuration_id=d.configuration_id, max_objects=d.max_objects,
                      max_bytes=d.max_bytes) for d in job.domains.all()
        )
    log.info("job %s resubmitted as job %s by %s", job.pk, new.pk, requested_by)
    submit_jobs([new.pk])
    new.refresh_from_db()
    return new


def reject(job: Job, requested_by: str = "system") -> Job:
    """Mark a FAILED job as not to be resubmitted (its failure was judged final, e.g. a dead site).

    One conditional UPDATE (still FAILED, not yet rejected), so it cannot race a resubmission.
    """
    if not Job.objects.filter(pk=job.pk, status=JobStatus.FAILED, rejected_at__isnull=True).update(
            rejected_at=timezone.now(), rejected_by=requested_by[:150]):
        current = Job.objects.filter(pk=job.pk).values("status", "rejected_by").first()
        if current and current["status"] == JobStatus.FAILED:
            raise DispatchError(f"job {job.pk} was already rejected by {current['rejected_by']}")
        status = current["status"] if current else "gone"
        raise DispatchError(f"job {job.pk} is {status}: only a FAILED job can be rejected")
    log.info("job %s rejected by %s", job.pk, requested_by)
    job.refresh_from_db()
    return job
