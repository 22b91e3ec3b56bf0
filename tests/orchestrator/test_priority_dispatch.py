"""Selective work never waits behind broad crawls: real broker, real worker processes.

1,000 snapshot jobs are queued on the low-priority channel and the only low-priority worker is busy
with the first of them; a selective job submitted then must be started and finished by the
high-priority worker while the snapshot jobs are still waiting. The harvesters are the stand-in
(tests/standin_harvester.py), which speaks the real contract; the orchestrator's own Celery worker
records what they report into the test database.
"""

from __future__ import annotations

import os

import pytest
from django.db import connection

from orchestrator.celery import app
from orchestrator.harvest.jobs import dispatch
from orchestrator.harvest.models import Job, JobDomain
from tests.conftest import stop_processes, wait_for
from tests.orchestrator import factories
from tests.orchestrator.realstack import start_worker

pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True), pytest.mark.slow]


def test_selective_job_overtakes_a_thousand_queued_snapshot_jobs(tmp_path):
    if connection.vendor != "postgresql" or not app.conf.broker_url.startswith("redis"):
        pytest.skip("needs the real PostgreSQL and Redis")
    with app.connection_for_write() as conn:
        for queue in ("harvest.snapshot", "harvest.focused", "events"):
            conn.default_channel.queue_purge(queue)

    snapshot = factories.snapshot_definition()
    selective = factories.selective_definition()
    template_job = factories.job(snapshot, domains=["broad.dk"])
    frozen = JobDomain.objects.get(job=template_job)
    low_jobs = Job.objects.bulk_create(
        Job(harvest=snapshot, harvest_run=1, channel=snapshot.channel, spec={}, domain_count=1) for _ in range(999)
    )
    for job in low_jobs:
        job.spec = {**template_job.spec, "job_id": job.pk}
    Job.objects.bulk_update(low_jobs, ["spec"], batch_size=500)
    JobDomain.objects.bulk_create(
        JobDomain(job=j, configuration_id=frozen.configuration_id, max_objects=-1, max_bytes=-1) for j in low_jobs
    )
    low_ids = [template_job.pk, *(j.pk for j in low_jobs)]

    s = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "orchestrator.settings",
        "NETHARVEST_DATABASE_URL": f"postgres://{s['USER']}@{s['HOST']}:{s['PORT']}/{s['NAME']}",
        "NETHARVEST_DATA_DIR": str(tmp_path),
    }
    workers = [
        start_worker("orchestrator", "events", "events", env, tmp_path / "events.log", concurrency=2),
        start_worker(
            "tests.standin_harvester",
            "harvest.snapshot",
            "low",
            {**env, "STANDIN_JOB_SECONDS": "600"},
            tmp_path / "low.log",
        ),
        start_worker(
            "tests.standin_harvester",
            "harvest.focused",
            "high",
            {**env, "STANDIN_JOB_SECONDS": "1"},
            tmp_path / "high.log",
        ),
    ]
    try:
        assert dispatch.submit_jobs(low_ids) == 1000
        wait_for(
            lambda: Job.objects.filter(pk__in=low_ids, status="STARTED").exists(),
            90,
            "the low-priority worker to start a snapshot job",
        )

        selective_job = factories.job(selective, domains=["news.dk"])
        assert dispatch.submit_jobs([selective_job.pk]) == 1
        wait_for(
            lambda: Job.objects.get(pk=selective_job.pk).status == "DONE",
            60,
            "the selective job to be done by the high-priority worker",
        )

        selective_job.refresh_from_db()
        assert selective_job.harvester.startswith("standin@")
        assert selective_job.harvest_infos.get().stop_reason == "DOWNLOAD_COMPLETE"
        statuses = list(Job.objects.filter(pk__in=low_ids).values_list("status", flat=True))
        assert statuses.count("STARTED") == 1 and statuses.count("SUBMITTED") == 999
    finally:
        stop_processes(*workers)
        with app.connection_for_write() as conn:
            for queue in ("harvest.snapshot", "harvest.focused", "events"):
                conn.default_channel.queue_purge(queue)
