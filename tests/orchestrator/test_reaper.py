from datetime import timedelta

import pytest
from django.utils import timezone

from orchestrator.harvest.jobs import dispatch, reaper
from orchestrator.harvest.models import Job, JobControl, JobStatus, ReaperSight
from tests.orchestrator import factories

pytestmark = pytest.mark.django_db


def sweeping_since(when, last=None):
    """The reaper has swept without a gap since ``when`` (its last sweep ``last``, default: just now)."""
    ReaperSight.objects.update_or_create(pk=1, defaults={"seeing_since": when, "last_sweep_at": last or timezone.now()})


def test_silent_and_never_started_jobs_fail_with_their_reason(settings):
    settings.NETHARVEST_HEARTBEAT_TIMEOUT_S = 600
    settings.NETHARVEST_SUBMITTED_TIMEOUT_S = 3600
    now = timezone.now()
    silent = factories.job(
        status=JobStatus.STARTED, started_at=now - timedelta(hours=2), last_heartbeat=now - timedelta(seconds=601)
    )
    alive = factories.job(
        status=JobStatus.STARTED, started_at=now - timedelta(hours=2), last_heartbeat=now - timedelta(seconds=30)
    )
    stuck = factories.job(status=JobStatus.SUBMITTED, submitted_at=now - timedelta(hours=2))
    queued = factories.job(status=JobStatus.SUBMITTED, submitted_at=now - timedelta(minutes=5))
    sweeping_since(now - timedelta(hours=3), now - timedelta(seconds=15))
    assert reaper.reap(now) == {"heartbeat-lost": 1, "never-started": 1}
    states = dict(Job.objects.values_list("pk", "status"))
    assert states == {silent.pk: "FAILED", alive.pk: "STARTED", stuck.pk: "FAILED", queued.pk: "SUBMITTED"}
    silent.refresh_from_db()
    assert silent.error_category == "heartbeat-lost" and "600 s" in silent.error_detail
    assert reaper.reap(now) == {"heartbeat-lost": 0, "never-started": 0}


def test_a_reaped_job_can_be_resubmitted_and_carries_on(settings):
    settings.NETHARVEST_HEARTBEAT_TIMEOUT_S, settings.NETHARVEST_AUTO_RESUBMIT = 60, 0
    job = factories.job(
        domains=["a.dk", "b.dk"], status=JobStatus.STARTED, last_heartbeat=timezone.now() - timedelta(hours=1)
    )
    # Files it handed over while it ran: the archive has them; the take-over must leave those the chain has not
    # cleaned from the spool yet where they are, and carry every other file on.
    factories.archive_file(job, "7-metadata-1.warc.gz", index_state="CLEANED")
    factories.archive_file(job, f"{job.pk}-1-20261128000000-00001-h.warc.gz", index_state="INDEXED")
    factories.archive_file(job, f"{job.pk}-1-20261128000000-00000-h.warc.gz", index_state="FAILED")
    delivered = factories.archive_file(job, f"{job.pk}-1-20261128000000-00002-h.warc.gz", index_state="CLEANED")
    delivered.spool_path = f"s3://bucket/{job.pk}/{delivered.name}"  # its spool copy goes when the receipt is swept
    delivered.save(update_fields=["spool_path"])
    job.spec = {**job.spec, "continues_done": True}  # it had continued a DONE job: its resubmission does not
    job.save(update_fields=["spec"])
    sweeping_since(timezone.now() - timedelta(hours=2))
    reaper.reap()
    job.refresh_from_db()
    new = dispatch.resubmit(job, requested_by="test")
    job.refresh_from_db()
    assert job.status == "RESUBMITTED"
    assert new.continues_id == job.pk and new.status == "SUBMITTED"
    assert new.spec["job_id"] == new.pk and new.spec["continues_job"] == job.pk
    assert new.spec["continues_files"] == [f"{job.pk}-1-20261128000000-0000{n}-h.warc.gz" for n in (0, 1, 2)]
    assert new.spec["continues_done"] is False
    assert sorted(new.domains.values_list("configuration__domain__name", flat=True)) == ["a.dk", "b.dk"]
    with pytest.raises(dispatch.DispatchError, match="only a FAILED job"):
        dispatch.resubmit(job)


def test_a_dead_worker_is_reaped_in_a_minute_but_a_broker_outage_reaps_nobody(settings):
    """The rule, on a fake clock: sweeps every 15 s; heartbeats every 5 s until the worker dies or the broker
    goes away for 5 minutes (no sweeps, no heartbeats), after which the live job's outbox catches up."""
    settings.NETHARVEST_HEARTBEAT_TIMEOUT_S, settings.NETHARVEST_BLIND_GAP_S = 60, 30
    t0 = timezone.now().replace(microsecond=0)
    live = factories.job(status=JobStatus.STARTED, started_at=t0, last_heartbeat=t0)
    dead = factories.job(status=JobStatus.STARTED, started_at=t0, last_heartbeat=t0)
    sweeping_since(t0 - timedelta(hours=1), t0)
    t = t0
    while t < t0 + timedelta(seconds=120):  # healthy broker: "dead" stops at t0, "live" beats every 5 s
        t += timedelta(seconds=15)
        Job.objects.filter(pk=live.pk).update(last_heartbeat=t - timedelta(seconds=5))
        reaper.reap(t)
        if Job.objects.get(pk=dead.pk).status == "FAILED":
            break
    assert Job.objects.get(pk=dead.pk).error_category == "heartbeat-lost"
    assert timedelta(seconds=60) < t - t0 <= timedelta(seconds=75)  # noticed within 60-75 s of its last beat
    assert Job.objects.get(pk=live.pk).status == "STARTED"

    # The broker is away for 5 minutes: beat cannot send a sweep, no harvester can send a heartbeat. "live" is
    # alive through it; "silent" died just before it.
    silent = factories.job(status=JobStatus.STARTED, started_at=t0, last_heartbeat=t - timedelta(seconds=5))
    back = t + timedelta(minutes=5)
    assert reaper.reap(back) == {"heartbeat-lost": 0, "never-started": 0}  # the first sweep after the gap
    t = back
    while Job.objects.get(pk=silent.pk).status == "STARTED":
        t += timedelta(seconds=15)
        # the harvester's back-off (<= 5 s) and outbox: its first heartbeat 10 s after the broker is back
        beat = max(back + timedelta(seconds=10), t - timedelta(seconds=5))
        Job.objects.filter(pk=live.pk).update(last_heartbeat=beat)
        reaper.reap(t)
    assert Job.objects.get(pk=live.pk).status == "STARTED"  # the outage reaped no live job
    assert timedelta(seconds=60) < t - back <= timedelta(seconds=75)  # a dead one: a minute after the broker is back


def _fence(job_id):
    """The controls waiting for ``job_id`` on the broker (read and put back, as a harvester does)."""
    from harvester.contracts import control_queue
    from orchestrator.celery import app

    actions = []
    with app.connection_for_write() as conn:
        queue = conn.SimpleQueue(control_queue(job_id))
        try:
            messages = []
            while True:
                try:
                    messages.append(queue.get(block=False))
                except queue.Empty:
                    break
            actions = [m.payload["action"] for m in messages]
            for m in messages:
                m.ack()
        finally:
            queue.close()
    return actions


def test_reaped_resubmitted_and_rejected_jobs_are_fenced(settings):
    settings.NETHARVEST_HEARTBEAT_TIMEOUT_S, settings.NETHARVEST_AUTO_RESUBMIT = 60, 0
    now = timezone.now()
    silent = factories.job(domains=["a.dk"], status=JobStatus.STARTED, last_heartbeat=now - timedelta(hours=1))
    other = factories.job(domains=["b.dk"], status=JobStatus.FAILED)
    for job in (silent, other):
        _fence(job.pk)  # job ids can repeat across test databases; control queues live on in the broker
    sweeping_since(now - timedelta(hours=2))
    reaper.reap()
    assert _fence(silent.pk) == ["cancel"]
    new = dispatch.resubmit(Job.objects.get(pk=silent.pk), requested_by="test")
    assert _fence(silent.pk) == ["cancel"]
    dispatch.reject(other, requested_by="test")
    assert _fence(other.pk) == ["cancel"]
    with pytest.raises(dispatch.DispatchError, match="fence"):
        dispatch.send_control(new, "cancel")


def _silent(now, **fields):
    return factories.job(domains=["a.dk"], status=JobStatus.STARTED, last_heartbeat=now - timedelta(hours=1), **fields)


def test_a_lost_job_is_resubmitted_by_the_reaper_then_left_for_an_operator_when_lost_again(settings):
    """A dead worker's job carries on by itself (twice in a row at most); the third loss in a row waits for a person."""
    settings.NETHARVEST_HEARTBEAT_TIMEOUT_S, settings.NETHARVEST_AUTO_RESUBMIT = 60, 2
    now = timezone.now()
    sweeping_since(now - timedelta(hours=2))
    line = [_silent(now)]
    for n in (1, 2, 3):
        reaper.reap()
        lost = Job.objects.get(pk=line[-1].pk)
        if n == 3:
            assert (lost.status, lost.error_category) == ("FAILED", "heartbeat-lost")
            assert "lost 3 times in a row" in lost.error_detail and "resubmit or reject" in lost.error_detail
            assert _fence(lost.pk) == ["cancel"]
            break
        new = Job.objects.get(continues=lost)
        assert lost.status == "RESUBMITTED" and f"resubmitted automatically as job {new.pk} ({n} of 2)" in (
            lost.error_detail
        )
        assert new.status == "SUBMITTED" and new.spec["continues_job"] == lost.pk
        assert list(new.domains.values_list("configuration__domain__name", flat=True)) == ["a.dk"]
        # The new job starts, then its worker dies too.
        Job.objects.filter(pk=new.pk).update(status=JobStatus.STARTED, last_heartbeat=now - timedelta(hours=1))
        line.append(new)
    assert Job.objects.filter(harvest=line[0].harvest).count() == 3  # nothing resubmitted twice


def test_a_job_told_to_stop_or_with_auto_resubmission_off_is_not_resubmitted(settings):
    settings.NETHARVEST_HEARTBEAT_TIMEOUT_S, settings.NETHARVEST_AUTO_RESUBMIT = 60, 2
    now = timezone.now()
    sweeping_since(now - timedelta(hours=2))
    stopping = _silent(now)
    JobControl.objects.create(job=stopping, action="stop", requested_by="curator")
    reaper.reap()
    assert Job.objects.get(pk=stopping.pk).status == "FAILED" and not Job.objects.filter(continues=stopping).exists()
    settings.NETHARVEST_AUTO_RESUBMIT = 0
    off = _silent(now)
    reaper.reap()
    assert Job.objects.get(pk=off.pk).status == "FAILED" and not Job.objects.filter(continues=off).exists()


def test_an_operator_who_rejects_first_wins_over_the_reapers_resubmission(settings):
    settings.NETHARVEST_HEARTBEAT_TIMEOUT_S, settings.NETHARVEST_AUTO_RESUBMIT = 60, 2
    now = timezone.now()
    job = _silent(now)
    Job.objects.filter(pk=job.pk).update(status=JobStatus.FAILED, error_category="heartbeat-lost")
    dispatch.reject(Job.objects.get(pk=job.pk), requested_by="curator")
    assert reaper.resubmit_lost(job.pk) is None
    assert Job.objects.get(pk=job.pk).status == "FAILED" and not Job.objects.filter(continues=job).exists()
