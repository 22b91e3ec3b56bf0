"""A started message overtaken by a heartbeat (two event workers) still records who runs the job."""

from __future__ import annotations

import pytest

from orchestrator.harvest import intake
from orchestrator.harvest.models import Job, JobStatus
from tests.orchestrator import factories

pytestmark = pytest.mark.django_db


def test_late_started_message_fills_the_harvester_once() -> None:
    job = factories.job(domains=["late.dk"], status=JobStatus.SUBMITTED)
    assert intake.record_progress({"job_id": job.pk, "at": "2026-11-23T10:00:00Z", "uris_done": 1})
    assert Job.objects.get(pk=job.pk).harvester == ""  # the heartbeat moved it to STARTED, anonymously
    assert intake.record_started(job.pk, "h1@machine")
    job.refresh_from_db()
    assert (job.status, job.harvester) == (JobStatus.STARTED, "h1@machine") and job.started_at is not None
    assert not intake.record_started(job.pk, "h2@other")  # never overwritten
    assert Job.objects.get(pk=job.pk).harvester == "h1@machine"
    new = factories.job(domains=["new.dk"])
    assert not intake.record_started(new.pk, "h1@machine")  # a NEW job was never sent: ignored
    assert Job.objects.get(pk=new.pk).harvester == ""
