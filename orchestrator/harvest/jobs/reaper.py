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
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from orchestrator.harvest.models import Job, JobStatus, ReaperSight

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
    for pk in reaped + unstarted:
        send_cancel(pk)
    if reaped or unstarted:
        log.warning("reaper failed %d silent and %d never-started jobs", len(reaped), len(unstarted))
    return {"heartbeat-lost": len(reaped), "never-started": len(unstarted)}
