"""Job status moves forward only, and of racing processes exactly one moves a job."""

import threading

import pytest
from django.db import close_old_connections, connection

from orchestrator.harvest.models import Job, JobStatus
from orchestrator.harvest.models.jobs import IllegalTransition
from tests.orchestrator import factories


@pytest.mark.django_db
def test_allowed_transitions_move_forward_and_illegal_ones_raise():
    job = factories.job()
    assert Job.transition(job.pk, JobStatus.NEW, JobStatus.SUBMITTED)
    assert not Job.transition(job.pk, JobStatus.NEW, JobStatus.SUBMITTED)  # no longer NEW
    assert Job.transition(job.pk, JobStatus.SUBMITTED, JobStatus.STARTED)
    assert Job.transition(job.pk, JobStatus.STARTED, JobStatus.FAILED, error_category="crash")
    job.refresh_from_db()
    assert (job.status, job.error_category) == ("FAILED", "crash")
    for old, new in [("DONE", "STARTED"), ("STARTED", "NEW"), ("FAILED", "DONE"), ("RESUBMITTED", "NEW")]:
        with pytest.raises(IllegalTransition, match=f"from {old} to {new}"):
            Job.transition(job.pk, old, new)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_racing_threads_move_a_job_exactly_once():
    """Ten threads, each with its own database connection, try to submit the same job at once."""
    if connection.vendor == "sqlite":
        pytest.skip("SQLite serialises writers; the race is only meaningful on PostgreSQL")
    jobs = [factories.job(factories.selective_definition(f"hd{i}")) for i in range(20)]
    for job in jobs:
        barrier = threading.Barrier(10)
        wins: list[bool] = []

        def race(job_id: int = job.pk, barrier: threading.Barrier = barrier, wins: list[bool] = wins) -> None:
            try:
                barrier.wait()
                wins.append(Job.transition(job_id, JobStatus.NEW, JobStatus.SUBMITTED))
            finally:
                close_old_connections()
                connection.close()

        threads = [threading.Thread(target=race) for _ in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(wins) == [False] * 9 + [True]
    assert set(Job.objects.values_list("status", flat=True)) == {"SUBMITTED"}


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_racing_processes_move_a_job_exactly_once(tmp_path):
    """Separate OS processes (as beat, the reaper and result intake are) race to finish a job."""
    import os
    import subprocess
    import sys

    job = factories.job(status=JobStatus.STARTED)
    script = (
        "import django, sys; django.setup();"
        "from orchestrator.harvest.models import Job;"
        f"print(Job.transition({job.pk}, 'STARTED', sys.argv[1]))"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    if connection.vendor == "postgresql":
        env["NETHARVEST_DATABASE_URL"] = _test_database_url()
    else:
        pytest.skip("the process race needs a shared server database")
    procs = [
        subprocess.Popen([sys.executable, "-c", script, status], env=env, stdout=subprocess.PIPE, text=True)
        for status in ["DONE", "FAILED"] * 3
    ]
    results = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert sorted(results) == ["False"] * 5 + ["True"]
    job.refresh_from_db()
    assert job.status in ("DONE", "FAILED")


def _test_database_url() -> str:
    s = connection.settings_dict
    return f"postgres://{s['USER']}@{s['HOST']}:{s['PORT']}/{s['NAME']}"
