from datetime import timedelta

import pytest
from django.utils import timezone

from orchestrator.harvest import dispatch, reaper
from orchestrator.harvest.models import Job, JobStatus
from tests.orchestrator import factories

pytestmark = pytest.mark.django_db


def test_silent_and_never_started_jobs_fail_with_their_reason(settings):
    settings.NETHARVEST_HEARTBEAT_TIMEOUT_S = 600
    settings.NETHARVEST_SUBMITTED_TIMEOUT_S = 3600
    now = timezone.now()
    silent = factories.job(status=JobStatus.STARTED, started_at=now - timedelta(hours=2),
                           last_heartbeat=now - timedelta(seconds=601))
    alive = factories.job(status=JobStatus.STARTED, started_at=now - timedelta(hours=2),
                          last_heartbeat=now - timedelta(seconds=30))
    stuck = factories.job(status=JobStatus.SUBMITTED, submitted_at=now - timedelta(hours=2))
    queued = factories.job(status=JobStatus.SUBMITTED, submitted_at=now - timedelta(minutes=5))
    assert reaper.reap(now) == {"heartbeat-lost": 1, "never-started": 1}
    states = dict(Job.objects.values_list("pk", "status"))
    assert states == {silent.pk: "FAILED", alive.pk: "STARTED", stuck.pk: "FAILED", queued.pk: "SUBMITTED"}
    silent.refresh_from_db()
    assert silent.error_category == "heartbeat-lost" and "600 s" in silent.error_detail
    assert reaper.reap(now) == {"heartbeat-lost": 0, "never-started": 0}


def test_a_reaped_job_can_be_resubmitted_and_carries_on(settings):
    settings.NETHARVEST_HEARTBEAT_TIMEOUT_S = 60
    job = factories.job(domains=["a.dk", "b.dk"], status=JobStatus.STARTED,
                        last_heartbeat=timezone.now() - timedelta(hours=1))
    reaper.reap()
    job.refresh_from_db()
    new = dispatch.resubmit(job, requested_by="test")
    job.refresh_from_db()
    assert job.status == "RESUBMITTED"
    assert new.continues_id == job.pk and new.status == "SUBMITTED"
    assert new.spec["job_id"] == new.pk and new.spec["continues_job"] == job.pk
    assert sorted(new.domains.values_list("configuration__domain__name", flat=True)) == ["a.dk", "b.dk"]
    with pytest.raises(dispatch.DispatchError, match="only a FAILED job"):
        dispatch.resubmit(job)
