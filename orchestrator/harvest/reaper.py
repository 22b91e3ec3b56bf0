"""The reaper: jobs whose harvester went silent become FAILED, with the reason, so they can be resubmitted.

NetarchiveSuite checks for such jobs once, when it starts; this runs every minute from beat. Each
sweep is one conditional UPDATE per rule (``WHERE status = …``), so a job that reports in the same
instant is either updated by its report or failed here, never both.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from orchestrator.harvest.models import Job, JobStatus

log = logging.getLogger(__name__)


def reap(now: datetime | None = None) -> dict[str, int]:
    now = now or timezone.now()
    silent = now - timedelta(seconds=settings.NETHARVEST_HEARTBEAT_TIMEOUT_S)
    never_started = now - timedelta(seconds=settings.NETHARVEST_SUBMITTED_TIMEOUT_S)
    heartbeat = Job.objects.filter(status=JobStatus.STARTED).filter(
        Q(last_heartbeat__lt=silent) | Q(last_heartbeat__isnull=True, started_at__lt=silent)
    ).update(
        status=JobStatus.FAILED, ended_at=now, error_category="heartbeat-lost",
        error_detail=f"no heartbeat from the harvester for {settings.NETHARVEST_HEARTBEAT_TIMEOUT_S} s "
                     "(its worker or machine died?); resubmit to continue",
    )
    unstarted = Job.objects.filter(status=JobStatus.SUBMITTED, submitted_at__lt=never_started).update(
        status=JobStatus.FAILED, ended_at=now, error_category="never-started",
        error_detail=f"submitted but not started by any harvester within {settings.NETHARVEST_SUBMITTED_TIMEOUT_S} s "
                     "(no worker on its channel?)",
    )
    if heartbeat or unstarted:
        log.warning("reaper failed %d silent and %d never-started jobs", heartbeat, unstarted)
    return {"heartbeat-lost": heartbeat, "never-started": unstarted}
