"""Dispatch: NEW jobs onto their channel's queue, control messages to running jobs, resubmission,
and the ``cancel`` fence for jobs the orchestrator has ended for good (:func:`send_cancel`).

**Submitting a job** (:func:`submit`): its row is locked (``SELECT … FOR UPDATE SKIP LOCKED``, so two
dispatchers never publish one job at once), its JobSpec is published, and only once the broker has
confirmed the message is the job marked SUBMITTED, with one conditional ``UPDATE … WHERE status = 'NEW'``,
committed at once. So a job is never SUBMITTED without its message: a publish that fails (the broker down,
a timeout) leaves it NEW, and beat's ``submit_new_jobs`` (every minute) sends it when the broker answers.
The one window left, a message accepted by the broker while the orchestrator dies before its commit (or a
reply lost to a timeout), publishes the job again later: the message carries the job's id as its task id
(``job-<id>``) and a harvester never runs one job twice (``harvester.joblock``; a second machine's
``started`` is refused by intake).

**By reference** (issue 15): with ``NETHARVEST_SPEC_BASE_URL`` set, the message is a JobRef, the job's id and
``<base>/api/v1/jobs/<id>/spec``, a few dozen bytes instead of a broad-crawl job's megabytes of JSON; the
harvester reads the frozen spec from the API when it takes the job (harvester.specfetch), and a spec it
cannot read fails the job (``jobspec-unreadable``) for a resubmission, whose new job has its own spec and
reference. The guarantees above do not change: the spec is frozen (committed) before the job can be
submitted, and the task id is still ``job-<id>``.

A publish is bounded: the orchestrator's Celery app (orchestrator/celery.py) sets connect and socket
timeouts and a short publish retry, so a command run while the broker is down answers in seconds with
:class:`BrokerUnavailable` instead of hanging.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from kombu import Connection
from kombu.exceptions import OperationalError
from kombu.simple import SimpleQueue

from harvester.contracts import RUN_JOB_TASK, ContractError, Control, JobRef, control_queue, seed_changes
from harvester.patterns import PatternError, trap
from orchestrator.celery import app
from orchestrator.harvest.jobs import specs
from orchestrator.harvest.models import Job, JobControl, JobDomain, JobStatus

log = logging.getLogger(__name__)


class DispatchError(Exception):
    """A request the job's state does not allow; the message says what and why."""


class BrokerUnavailable(DispatchError):
    """The broker did not take a message; ``reason`` is its one-line cause, ``submitted`` how many jobs
    this call had published before it stopped. The jobs not sent stay NEW for ``submit_new_jobs``."""

    def __init__(self, reason: str, submitted: int = 0) -> None:
        super().__init__(f"the broker does not answer: {reason}")
        self.reason = reason
        self.submitted = submitted
        self.control: JobControl | None = None  # send_control: the control recorded but not sent


def broker_reason(exc: BaseException) -> str:
    """One line saying why a publish failed (kombu and redis errors carry a multi-line chain)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


def submit_jobs(job_ids: Iterable[int]) -> int:
    """Publish the NEW jobs among ``job_ids``; returns how many this call submitted.

    Raises :class:`BrokerUnavailable` at the first publish the broker refuses: the remaining jobs are not
    tried (each would wait for the same timeout) and stay NEW, with the ones already sent SUBMITTED.
    """
    submitted, ids = 0, list(job_ids)
    by_reference = bool(settings.NETHARVEST_SPEC_BASE_URL)
    size = 500 if by_reference else 5  # inline: a few specs (megabytes each for a broad crawl) in memory at a time
    for start in range(0, len(ids), size):
        jobs = Job.objects.filter(pk__in=ids[start : start + size], status=JobStatus.NEW).select_related("channel")
        for job in (jobs.defer("spec") if by_reference else jobs).order_by("id"):
            try:
                submitted += submit(job)
            except BrokerUnavailable as exc:
                exc.submitted = submitted
                raise
    return submitted


def submit_new_jobs(limit: int = 1000) -> int:
    """Publish jobs left NEW (a dispatcher that failed, a broker that was down): beat's periodic sweep."""
    ids = list(Job.objects.filter(status=JobStatus.NEW).order_by("id").values_list("id", flat=True)[:limit])
    return submit_jobs(ids)


def run_job_task_id(job_id: int) -> str:
    """The task id of a job's message: the same for every publish of the job, so a duplicate is known."""
    return f"job-{job_id}"


def job_message(job: Job) -> dict:
    """What a job's message carries: a :class:`~harvester.contracts.JobRef` (its id and the API URL of its
    frozen spec) when ``NETHARVEST_SPEC_BASE_URL`` is set, else the whole JobSpec (module docstring)."""
    base = settings.NETHARVEST_SPEC_BASE_URL
    if base:
        return JobRef(job_id=job.pk, spec_url=f"{base}/api/v1/jobs/{job.pk}/spec").to_dict()
    return job.spec


def _broker_errors() -> tuple[type[BaseException], ...]:
    """What a publish raises when the broker is down or does not answer (the transport's own errors, which
    Celery re-raises as kombu's OperationalError, and socket errors and timeouts)."""
    conn = app.connection_for_write()  # not connected: only the transport's error classes are read
    try:
        return (OperationalError, OSError, *conn.connection_errors, *conn.channel_errors)
    finally:
        conn.release()


def submit(job: Job) -> bool:
    """Publish one NEW job, then mark it SUBMITTED; False if it is not NEW or another dispatcher has it.

    Call it outside a transaction of your own: the commit right after the confirmed publish is what makes
    SUBMITTED mean "its message is on the queue".
    """
    with transaction.atomic():
        if not Job.objects.select_for_update(skip_locked=True).filter(pk=job.pk, status=JobStatus.NEW).exists():
            return False  # submitted already, or being submitted by another dispatcher right now
        try:
            app.send_task(
                RUN_JOB_TASK, args=[job_message(job)], queue=job.channel.queue, task_id=run_job_task_id(job.pk)
            )
        except _broker_errors() as exc:
            log.info("job %s not submitted, it stays NEW: %s", job.pk, broker_reason(exc))  # the caller reports
            raise BrokerUnavailable(broker_reason(exc)) from exc
        # The broker has the message: mark the job, under the row lock taken above, and commit right here.
        Job.transition(job.pk, JobStatus.NEW, JobStatus.SUBMITTED, submitted_at=timezone.now())
    log.info("job %s submitted to %s", job.pk, job.channel.queue)
    return True


def send_control(job: Job, action: str, argument: str = "", requested_by: str = "system") -> JobControl:
    """Record a control instruction with who and when, then send it to the running job."""
    if job.status not in (JobStatus.SUBMITTED, JobStatus.STARTED):
        raise DispatchError(f"job {job.pk} is {job.status}: only a submitted or started job can be told to {action}")
    if action == "cancel":
        raise DispatchError("cancel is the orchestrator's own fence (send_cancel), not a control to send")
    if action == "add_trap":  # every caller (web UI, CLI, API) passes here: the one validator, before any row
        try:
            argument = trap(argument, "add_trap").pattern
        except PatternError as exc:
            raise DispatchError(str(exc)) from None
    if action == "seeds":  # the same gate for the seed changes of a running continuous job
        kind = specs.stored(job).kind
        if kind != "continuous":
            raise DispatchError(
                f"job {job.pk} is a {kind or 'non-continuous'} job: seeds reach a "
                "running crawl only for continuous harvests"
            )
        try:
            seed_changes(argument)
        except ContractError as exc:
            raise DispatchError(str(exc)) from None
    control = JobControl.objects.create(job=job, action=action, argument=argument, requested_by=requested_by)
    if not _send_recorded(control):
        refused = BrokerUnavailable(f"{action} for job {job.pk} is recorded and sent when the broker is back")
        refused.control = control  # the recorded, unsent row (resend_controls sends it)
        raise refused
    return control


def _send_recorded(control: JobControl) -> bool:
    """Publish one recorded control and mark it sent; False (logged, the row stays unsent) if the broker is
    away, so :func:`resend_controls` sends it later."""
    try:
        _publish_control(
            Control(job_id=control.job_id, action=control.action, argument=control.argument, id=control.pk)
        )
    except _broker_errors() as exc:
        log.warning(
            "job %s: %s (control %s) not sent, the broker is down: %s",
            control.job_id,
            control.action,
            control.pk,
            broker_reason(exc),
        )
        return False
    JobControl.objects.filter(pk=control.pk, sent_at__isnull=True).update(sent_at=timezone.now())
    return True


def resend_controls(limit: int = 1000) -> int:
    """Beat's sweep: publish the controls recorded while the broker was down (``sent_at`` empty) to jobs that
    still run, oldest first so a job gets them in the order they were asked; stops at the first refusal
    (the broker is still away: the next round retries). Returns how many were sent.

    A control for a job that ended meanwhile is left unsent: there is no harvester to read it."""
    sent = 0
    pending = (
        JobControl.objects.filter(sent_at__isnull=True, job__status__in=(JobStatus.SUBMITTED, JobStatus.STARTED))
        .exclude(action="cancel")
        .order_by("pk")[:limit]
    )
    for control in pending:
        if not _send_recorded(control):
            break
        sent += 1
    return sent


def _publish_control(message: Control) -> None:
    # A few quick tries, not kombu's default of retrying for ever: a caller must learn that the broker is away.
    options = {**app.conf.broker_transport_options, "max_retries": 3, "interval_start": 0, "interval_step": 1}
    with Connection(app.conf.broker_url, transport_options=options) as conn:
        queue = SimpleQueue(conn, control_queue(message.job_id))
        queue.put(message.to_dict())
        queue.close()


def send_cancel(job_id: int) -> bool:
    """Fence off a job the orchestrator has ended for good (reaped, resubmitted, rejected).

    A ``cancel`` in the job's control queue stops a harvester that still runs it (a worker that was
    only cut off from the broker) and makes any stale copy of its message (a redelivery after a
    worker died) be dropped before it crawls anything (harvester.runjob). The harvesters put it back
    after reading it, so it stays (one small message per fenced job). Failing to publish is logged,
    not raised: the job's state has already changed, and resubmit and reject publish it again.
    """
    try:
        _publish_control(Control(job_id=job_id, action="cancel"))
    except Exception as exc:  # any broker error: the state change stands
        log.error("job %s: could not publish its cancel fence: %s", job_id, exc)
        return False
    log.info("job %s: cancel fence published", job_id)
    return True


def resubmit(job: Job, requested_by: str = "system") -> Job:
    """A failed job carries on as a new job with the same frozen domains; the old one is RESUBMITTED.

    The new JobSpec names the old job (``continues_job``), so a harvester that still has the old
    job's spool resumes its frontier instead of starting over.
    """
    with transaction.atomic():
        # Job.transition's conditional UPDATE, plus "not rejected": a concurrent reject() and resubmit()
        # update the same row under its lock, so exactly one of them wins.
        if not Job.objects.filter(pk=job.pk, status=JobStatus.FAILED, rejected_at__isnull=True).update(
            status=JobStatus.RESUBMITTED
        ):
            current = Job.objects.filter(pk=job.pk).values("status", "rejected_by", "rejected_at").first()
            if current and current["rejected_at"] and current["status"] == JobStatus.FAILED:
                raise DispatchError(
                    f"job {job.pk} was rejected by {current['rejected_by']} at "
                    f"{current['rejected_at']:%Y-%m-%d %H:%M} UTC: it is not to be resubmitted"
                )
            status = current["status"] if current else "gone"
            raise DispatchError(f"job {job.pk} is {status}: only a FAILED job can be resubmitted")
        new = job.follow_on(
            domain_count=job.domain_count,
            expected_objects=job.expected_objects,
            expected_bytes=job.expected_bytes,
            continues=job,
        )
        specs.store(new.pk, specs.derive(job, **specs.continuation(job, job_id=new.pk)))
        JobDomain.objects.bulk_create(
            JobDomain(job=new, configuration_id=d.configuration_id, max_objects=d.max_objects, max_bytes=d.max_bytes)
            for d in job.domains.all()
        )
    log.info("job %s resubmitted as job %s by %s", job.pk, new.pk, requested_by)
    send_cancel(job.pk)  # before the new job can start: no stale copy of the old job's message may run
    submit_jobs([new.pk])
    new.refresh_from_db()
    return new


def reject(job: Job, requested_by: str = "system") -> Job:
    """Mark a FAILED job as not to be resubmitted (its failure was judged final, e.g. a dead site).

    One conditional UPDATE (still FAILED, not yet rejected), so it cannot race a resubmission.
    """
    if not Job.objects.filter(pk=job.pk, status=JobStatus.FAILED, rejected_at__isnull=True).update(
        rejected_at=timezone.now(), rejected_by=requested_by[:150]
    ):
        current = Job.objects.filter(pk=job.pk).values("status", "rejected_by").first()
        if current and current["status"] == JobStatus.FAILED:
            raise DispatchError(f"job {job.pk} was already rejected by {current['rejected_by']}")
        status = current["status"] if current else "gone"
        raise DispatchError(f"job {job.pk} is {status}: only a FAILED job can be rejected")
    log.info("job %s rejected by %s", job.pk, requested_by)
    send_cancel(job.pk)
    job.refresh_from_db()
    return job
