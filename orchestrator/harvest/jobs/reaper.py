"""The reaper: jobs whose harvester went silent become FAILED, with the reason, and are fenced off.

NetarchiveSuite checks for such jobs once, when it starts; this runs every
``NETHARVEST_REAPER_INTERVAL_S`` (15 s) from beat. A STARTED job silent for
``NETHARVEST_HEARTBEAT_TIMEOUT_S`` (60 s; heartbeats come every 5 s) is failed, so a dead worker is
noticed in about a minute. Each job is failed by one conditional UPDATE (``WHERE status = STARTED``
and still silent), so a job that reports in the same instant is either updated by its report or failed
here, never both; a failed job then gets the ``cancel`` fence (dispatch.send_cancel), so a harvester
that was only cut off stops when it comes back, and a stale copy of its message never crawls it again.

Silence only counts while the orchestrator could hear. The sweep itself travels through the broker
(beat → events queue), so a sweep that comes more than ``NETHARVEST_BLIND_GAP_S`` after the previous
one means the orchestrator was deaf meanwhile (broker, beat or events worker away) and so were the
harvesters' heartbeats: silence is then counted from that sweep on (:class:`ReaperSight`), and the
harvesters, which kept their messages in their outboxes, have a full timeout to be heard again.

A job failed for silence is then **resubmitted by the reaper itself** (:func:`resubmit_lost`): its worker or
machine died, not its crawl, so the new job carries on from the old one's checkpoint (a worker on the same
machine takes its spool over) without waiting for an operator. At most ``NETHARVEST_AUTO_RESUBMIT`` (2) times in
a row in one line of jobs, and never for a job someone had told to stop: a job that kills its harvester every
time stays FAILED, with a line saying so, for an operator to resubmit or reject.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from orchestrator.harvest.models import Job, JobControl, JobStatus, ReaperSight

log = logging.getLogger(__name__)


def seeing_since(now: datetime) -> datetime:
    """Record this sweep; return since when the orchestrator has been sweeping without a gap."""
    with transaction.atomic():
        sight = ReaperSight.objects.select_for_update().filter(pk=1).first()
        if sight is None:
            ReaperSight.objects.create(pk=1, last_sweep_at=now, seeing_since=now)
            return now
        if (now - sight.last_sweep_at).total_seconds() > settings.NETHARVEST_BLIND_GAP_S:
            log.warning(
                "reaper: no sweep since %s (broker, beat or events worker away): job silence is counted from now",
                sight.last_sweep_at,
            )
            sight.seeing_since = now
        sight.last_sweep_at = max(now, sight.last_sweep_at)
        sight.save(update_fields=["last_sweep_at", "seeing_since"])
        return sight.seeing_since


def reap(now: datetime | None = None) -> dict[str, int]:
    from orchestrator.harvest.jobs.dispatch import send_cancel

    now = now or timezone.now()
    timeout = settings.NETHARVEST_HEARTBEAT_TIMEOUT_S
    silent = now - timedelta(seconds=timeout)
    never_started = now - timedelta(seconds=settings.NETHARVEST_SUBMITTED_TIMEOUT_S)
    reaped: list[int] = []
    if seeing_since(now) < silent:
        rule = Q(status=JobStatus.STARTED) & (
            Q(last_heartbeat__lt=silent) | Q(last_heartbeat__isnull=True, started_at__lt=silent)
        )
        for pk in Job.objects.filter(rule).values_list("pk", flat=True):
            if Job.objects.filter(rule, pk=pk).update(
                status=JobStatus.FAILED,
                ended_at=now,
                error_category="heartbeat-lost",
                error_detail=f"no heartbeat from the harvester for {timeout} s (its worker or machine died, "
                "or it lost the broker); resubmit to continue",
            ):
                reaped.append(pk)
    unstarted = list(
        Job.objects.filter(status=JobStatus.SUBMITTED, submitted_at__lt=never_started).values_list("pk", flat=True)
    )
    unstarted = [
        pk
        for pk in unstarted
        if Job.objects.filter(pk=pk, status=JobStatus.SUBMITTED, submitted_at__lt=never_started).update(
            status=JobStatus.FAILED,
            ended_at=now,
            error_category="never-started",
            error_detail="submitted but not started by any harvester within "
            f"{settings.NETHARVEST_SUBMITTED_TIMEOUT_S} s (no worker on its channel?)",
        )
    ]
    for pk in unstarted:
        send_cancel(pk)
    for pk in reaped:
        if resubmit_lost(pk) is None:
            send_cancel(pk)  # a resubmission publishes the fence itself
    if reaped or unstarted:
        log.warning("reaper failed %d silent and %d never-started jobs", len(reaped), len(unstarted))
    return {"heartbeat-lost": len(reaped), "never-started": len(unstarted)}


def resubmit_lost(job_id: int) -> Job | None:
    """Resubmit a job reaped for silence unless it was told to stop or its line of jobs was lost too often.

    Returns the new job, or None when it is left FAILED (its ``error_detail`` then says why). A concurrent
    operator's resubmit or reject wins cleanly: :func:`dispatch.resubmit` moves only a FAILED, unrejected job.
    """
    from orchestrator.harvest.jobs.dispatch import BrokerUnavailable, DispatchError, resubmit

    limit = settings.NETHARVEST_AUTO_RESUBMIT
    job = Job.objects.filter(pk=job_id).defer("spec").first()
    if limit <= 0 or job is None:
        return None
    if JobControl.objects.filter(job_id=job_id, action="stop").exists():
        return None  # it was being stopped: ending now is what was asked for
    lost = _lost_in_a_row(job)
    if lost > limit:
        Job.objects.filter(pk=job_id, status=JobStatus.FAILED).update(
            error_detail=f"{job.error_detail}; not resubmitted automatically: its harvester was lost {lost} times "
            f"in a row (NETHARVEST_AUTO_RESUBMIT = {limit}), resubmit or reject it"
        )
        log.error("job %s: harvester lost %d times in a row, left FAILED for an operator", job_id, lost)
        return None
    try:
        new = resubmit(job, requested_by="reaper")
    except BrokerUnavailable:  # the new job is committed but unsent: submit_new_jobs sends it when the broker is back
        new = Job.objects.filter(continues_id=job_id).only("pk").latest("pk")
    except DispatchError as exc:  # an operator resubmitted or rejected it meanwhile
        log.info("job %s: not resubmitted automatically: %s", job_id, exc)
        return None
    except Exception:  # e.g. a spec that no longer passes the contract: the sweep goes on with the others
        log.exception("job %s: could not be resubmitted automatically; it stays FAILED", job_id)
        return None
    Job.objects.filter(pk=job_id).update(
        error_detail=f"{job.error_detail.removesuffix('; resubmit to continue')}; resubmitted automatically as "
        f"job {new.pk} ({lost} of {limit})"
    )
    return new


def _lost_in_a_row(job: Job) -> int:
    """How many jobs of ``job``'s line (it and the jobs it continues) ended ``heartbeat-lost``, back to the first
    that ended otherwise."""
    lost, category, previous = 0, job.error_category, job.continues_id
    while category == "heartbeat-lost":
        lost += 1
        row = Job.objects.filter(pk=previous).values_list("error_category", "continues_id").first()
        category, previous = row or ("", None)
    return lost
