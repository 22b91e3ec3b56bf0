"""Result intake: a JobResult becomes job status, HarvestInfo and ArchiveFile rows, or nothing at all."""

import logging

import pytest

from orchestrator.harvest.jobs import intake
from orchestrator.harvest.models import ArchiveFile, HarvestInfo, Job, JobStatus
from tests.orchestrator import factories

pytestmark = pytest.mark.django_db

SHA = "ab" * 32


def result(job, status="DONE", domains=None, files=None, **extra):
    return {
        "version": 1,
        "job_id": job.pk,
        "status": status,
        "started": "2026-11-22T10:00:00+00:00",
        "ended": "2026-11-22T11:00:00Z",
        "domains": domains or [],
        "files": files or [],
        **extra,
    }


def domain_result(name, stop="DOWNLOAD_COMPLETE", objects=10, size=1000):
    return {"name": name, "configuration": "defaultconfig", "objects": objects, "bytes": size, "stop_reason": stop}


def test_result_is_recorded_with_history_and_files():
    job = factories.job(domains=["a.dk", "b.dk"], status=JobStatus.STARTED)
    intake.record_result(
        result(
            job,
            domains=[domain_result("a.dk"), domain_result("b.dk", "TIME_LIMIT", 5, 50)],
            files=[{"name": "1-1-x.warc.gz", "path": "/spool/1/x.warc.gz", "size": 123, "sha256": SHA, "kind": "warc"}],
        )
    )
    job.refresh_from_db()
    assert job.status == "DONE" and job.ended_at.isoformat() == "2026-11-22T11:00:00+00:00"
    assert sorted(HarvestInfo.objects.values_list("domain__name", "objects_count", "stop_reason")) == [
        ("a.dk", 10, "DOWNLOAD_COMPLETE"),
        ("b.dk", 5, "TIME_LIMIT"),
    ]
    f = ArchiveFile.objects.get()
    assert (f.job_id, f.harvester_sha256, f.index_state) == (job.pk, SHA, "HARVESTED")
    assert f.spool_path == "/spool/1/x.warc.gz"


def test_each_history_row_keeps_the_seeds_the_job_gave_its_configuration():
    """The domain page's replay links read these, not a broad-crawl job's whole spec per run."""
    job = factories.job(domains=["a.dk", "b.dk"], status=JobStatus.STARTED)
    frozen = {d["name"]: d["seeds"] for d in job.spec["domains"]}
    assert frozen["a.dk"] and frozen["a.dk"] != frozen["b.dk"]
    intake.record_result(result(job, domains=[domain_result("a.dk"), domain_result("b.dk")]))
    assert dict(HarvestInfo.objects.values_list("domain__name", "seeds")) == frozen


def test_result_may_overtake_the_started_message():
    job = factories.job(domains=["a.dk"], status=JobStatus.SUBMITTED)
    intake.record_result(result(job, domains=[domain_result("a.dk")], harvester="high@crawler1"))
    intake.record_started(job.pk, "high@crawler1")  # arrives late: the job stays DONE
    assert Job.objects.get(pk=job.pk).status == "DONE"
    assert Job.objects.get(pk=job.pk).harvester == "high@crawler1"


def test_a_resubmitted_jobs_start_is_its_own_not_the_crawls():
    """A job carrying on from another's checkpoint reports the crawl's start, the earlier job's: its own start (when
    it was heard) stays, or its page said it started before it was created. Unheard, the harvester's is taken."""
    job = factories.job(domains=["a.dk"], status=JobStatus.SUBMITTED)
    assert intake.record_started(job.pk, "high@crawler1")
    own = Job.objects.get(pk=job.pk).started_at
    intake.record_result(result(job, domains=[domain_result("a.dk")]))  # started 2026-11-22T10:00, long before
    assert Job.objects.get(pk=job.pk).started_at == own
    unheard = factories.job(factories.selective_definition("unheard"), domains=["a.dk"], status=JobStatus.SUBMITTED)
    intake.record_result(result(unheard, domains=[domain_result("a.dk")]))
    assert Job.objects.get(pk=unheard.pk).started_at.isoformat() == "2026-11-22T10:00:00+00:00"


def test_a_heartbeat_overtaking_the_started_message_keeps_the_harvesters_name():
    job = factories.job(domains=["a.dk"], status=JobStatus.SUBMITTED)
    assert intake.record_progress({"job_id": job.pk, "at": "2026-11-22T10:00:05Z", "uris_done": 1})
    assert intake.record_started(job.pk, "high@crawler1")
    assert Job.objects.filter(pk=job.pk, status="STARTED", harvester="high@crawler1").exists()
    assert not intake.record_started(job.pk, "high@crawler2")  # a duplicate cannot rename it
    assert Job.objects.get(pk=job.pk).harvester == "high@crawler1"
    new = factories.job(domains=["new.dk"])
    assert not intake.record_started(new.pk, "high@crawler1")  # a NEW job was never sent: ignored
    assert Job.objects.get(pk=new.pk).harvester == ""


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"status": "WHATEVER"}, "status: must be one of"),
        ({"version": 9}, "unsupported JobResult version"),
        ({"domains": [{"name": "a.dk"}]}, "domains[0].configuration: is missing"),
        ({"files": [{"name": "f", "path": "/p", "size": 1, "sha256": "nothex"}]}, "files[0].sha256"),
    ],
)
def test_malformed_results_are_rejected_and_nothing_written(bad, message, caplog):
    job = factories.job(domains=["a.dk"], status=JobStatus.STARTED)
    with caplog.at_level(logging.ERROR), pytest.raises(intake.IntakeError):
        intake.record_result({**result(job, domains=[domain_result("a.dk")]), **bad})
    assert message in caplog.text
    assert Job.objects.get(pk=job.pk).status == "STARTED"
    assert not HarvestInfo.objects.exists() and not ArchiveFile.objects.exists()


def test_unknown_job_foreign_domain_and_duplicate_result_are_rejected(caplog):
    job = factories.job(domains=["a.dk"], status=JobStatus.STARTED)
    with pytest.raises(intake.IntakeError, match="does not exist"):
        intake.record_result({**result(job), "job_id": 999999})
    with pytest.raises(intake.IntakeError, match="not part of job"):
        intake.record_result(result(job, domains=[domain_result("a.dk"), domain_result("other.dk")]))
    assert not HarvestInfo.objects.exists()
    intake.record_result(result(job, domains=[domain_result("a.dk")]))
    caplog.clear()
    with caplog.at_level(logging.INFO), pytest.raises(intake.IntakeError, match="duplicate delivery"):
        intake.record_result(result(job, domains=[domain_result("a.dk")]))
    assert HarvestInfo.objects.count() == 1
    # Harvesters deliver at least once (their outbox): a redelivered result is expected, not an error.
    assert [r.levelname for r in caplog.records] == ["INFO"]


def test_a_file_name_already_archived_by_another_job_rejects_the_result():
    first = factories.job(domains=["a.dk"], status=JobStatus.STARTED)
    second = factories.job(factories.selective_definition("other"), domains=["a.dk"], status=JobStatus.STARTED)
    f = {"name": "same.warc.gz", "path": "/p", "size": 1, "sha256": SHA}
    intake.record_result(result(first, domains=[domain_result("a.dk")], files=[f]))
    with pytest.raises(intake.IntakeError, match="already in the archive"):
        intake.record_result(result(second, domains=[domain_result("a.dk")], files=[f]))
    assert Job.objects.get(pk=second.pk).status == "STARTED"


def test_harvest_limits_become_config_limits_where_the_configuration_was_binding():
    snapshot = factories.snapshot_definition(max_objects=1000, max_bytes=10**9)
    # a.dk: its configuration allowed only 100 objects (binding); b.dk: the harvest's 1000 was binding;
    # c.dk: its own byte limit equals the harvest's (a tie counts as the harvest's).
    job = factories.job(
        snapshot,
        domains=["a.dk", "b.dk", "c.dk"],
        status=JobStatus.STARTED,
        limits={"a.dk": (100, 10**9), "b.dk": (1000, 10**9), "c.dk": (1000, 10**9)},
    )
    intake.record_result(
        result(
            job,
            domains=[
                domain_result("a.dk", "OBJECT_LIMIT"),
                domain_result("b.dk", "OBJECT_LIMIT"),
                domain_result("c.dk", "SIZE_LIMIT"),
            ],
        )
    )
    assert dict(HarvestInfo.objects.values_list("domain__name", "stop_reason")) == {
        "a.dk": "CONFIG_OBJECT_LIMIT",
        "b.dk": "OBJECT_LIMIT",
        "c.dk": "SIZE_LIMIT",
    }


def test_selective_limits_are_always_the_configurations_own():
    job = factories.job(domains=["a.dk"], status=JobStatus.STARTED, limits={"a.dk": (50, 10**6)})
    intake.record_result(result(job, domains=[domain_result("a.dk", "SIZE_LIMIT")]))
    assert HarvestInfo.objects.get().stop_reason == "CONFIG_SIZE_LIMIT"


def test_started_and_progress_update_the_job():
    job = factories.job(domains=["a.dk"], status=JobStatus.SUBMITTED)
    assert intake.record_started(job.pk, "high@crawler1")
    assert not intake.record_started(job.pk, "high@crawler2")  # a duplicate delivery cannot take it over
    assert intake.record_progress(
        {"job_id": job.pk, "at": "2026-11-22T10:00:05Z", "uris_done": 42, "kb_rate": 12.5, "unknown_future_field": 1}
    )
    job.refresh_from_db()
    assert (job.status, job.harvester, job.progress["uris_done"]) == ("STARTED", "high@crawler1", 42)
    assert job.last_heartbeat is not None
    assert not intake.record_progress({"job_id": job.pk})  # malformed: no time


def test_a_message_a_harvester_could_not_read_fails_only_a_job_nobody_started(caplog):
    """Review of dispatch by reference: a duplicate copy of a running job's message whose spec could not be
    read made a FAILED result that ended the running job (and later refused its DONE result)."""
    running = factories.job(domains=["a.dk"], status=JobStatus.STARTED)
    for category in intake.UNREAD_MESSAGE:
        with pytest.raises(intake.EndedJob, match="concerns a duplicate message, not the running job"):
            intake.record_result(result(running, status="FAILED", error_category=category, error_detail="x"))
    assert Job.objects.get(pk=running.pk).status == JobStatus.STARTED
    waiting = factories.job(factories.selective_definition("other"), domains=["b.dk"], status=JobStatus.SUBMITTED)
    intake.record_result(result(waiting, status="FAILED", error_category="jobspec-unreadable", error_detail="x"))
    assert Job.objects.get(pk=waiting.pk).status == JobStatus.FAILED


def test_a_rejected_result_fails_its_job_with_the_reason_at_once():
    """The result task: a result that cannot be recorded ends its job FAILED with the reason, where the job used
    to wait STARTED until the reaper called its harvester dead ("heartbeat-lost", the cause a newcomer saw for
    a result the database refused); a redelivery to an ended job changes nothing."""
    from orchestrator.harvest.jobs import tasks

    job = factories.job(domains=["a.dk"], status=JobStatus.STARTED)
    tasks.record_result(result(job, domains=[domain_result("a.dk"), domain_result("other.dk")]))
    failed = Job.objects.get(pk=job.pk)
    assert (failed.status, failed.error_category) == ("FAILED", "result-rejected")
    assert "domain other.dk (configuration defaultconfig) is not part of job" in failed.error_detail
    done = factories.job(factories.selective_definition("other"), domains=["a.dk"], status=JobStatus.STARTED)
    tasks.record_result(result(done, domains=[domain_result("a.dk")]))
    tasks.record_result(result(done, domains=[domain_result("a.dk")]))  # delivered twice
    assert Job.objects.get(pk=done.pk).status == "DONE"
    # rows the database refuses are a rejection too, not an exception that leaves the job STARTED
    third = factories.job(factories.selective_definition("third"), domains=["a.dk"], status=JobStatus.STARTED)
    tasks.record_result(result(third, domains=[domain_result("a.dk"), domain_result("a.dk")]))
    assert Job.objects.get(pk=third.pk).error_category == "result-rejected"
    assert not HarvestInfo.objects.filter(job=third).exists()
