"""The orchestrator's Celery tasks. Harvesters address the ``record_*`` tasks by name only
(harvester.contracts), so the harvester never imports this module."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task

from harvester.contracts import CONTROL_APPLIED_TASK, PROGRESS_TASK, RECORD_FILES_TASK, RESULT_TASK, STARTED_TASK
from orchestrator.harvest.jobs import dispatch, intake, reaper
from orchestrator.harvest.scheduling import scheduler

log = logging.getLogger(__name__)


@shared_task(name=STARTED_TASK, ignore_result=True)
def record_started(job_id: int, harvester: str = "") -> None:
    intake.record_started(job_id, harvester)


@shared_task(name=PROGRESS_TASK, ignore_result=True)
def record_progress(progress: dict[str, Any]) -> None:
    intake.record_progress(progress)


@shared_task(name=CONTROL_APPLIED_TASK, ignore_result=True)
def record_control_applied(job_id: int, control_id: int, applied_at: str) -> None:
    intake.record_control_applied(job_id, control_id, applied_at)


@shared_task(name=RECORD_FILES_TASK, ignore_result=True)
def record_files(job_id: int, files: list[dict[str, Any]]) -> None:
    intake.record_files(job_id, files)


@shared_task(name=RESULT_TASK, ignore_result=True)
def record_result(result: dict[str, Any]) -> None:
    try:
        intake.record_result(result)
    except intake.EndedJob:
        pass  # a redelivery, logged by intake
    except intake.IntakeError as exc:  # logged with its reason by intake; a bad report must not be retried forever
        intake.fail_rejected(result, str(exc))


@shared_task(name="orchestrator.reap_jobs", ignore_result=True)
def reap_jobs() -> None:
    reaper.reap()


@shared_task(name="orchestrator.submit_new_jobs", ignore_result=True)
def submit_new_jobs() -> None:
    """Beat's sweep (every minute): send the jobs left NEW, e.g. by a run made while the broker was down, and
    the controls recorded but not sent then (a deactivation's ``stop``, a seed change)."""
    try:
        sent = dispatch.submit_new_jobs()
    except dispatch.BrokerUnavailable as exc:
        log.warning("jobs left NEW, the next round retries: %s (%d sent first)", exc, exc.submitted)
        return
    if sent:
        log.info("%d job(s) left NEW submitted", sent)
    controls = dispatch.resend_controls()
    if controls:
        log.info("%d control(s) left unsent sent", controls)


@shared_task(name="orchestrator.schedule_due_harvests", ignore_result=True)
def schedule_due_harvests() -> None:
    """Make the runs that are due, then dispatch their jobs (jobs left NEW by a failed dispatch are
    picked up by ``submit_new_jobs``)."""
    job_ids = scheduler.schedule_due_harvests()
    if job_ids:
        try:
            dispatch.submit_jobs(job_ids)
        except dispatch.BrokerUnavailable as exc:
            log.warning("%d new job(s) stay NEW until the broker answers (submit_new_jobs): %s", len(job_ids), exc)
