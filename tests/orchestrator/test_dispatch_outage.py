"""`harvests run-now` while the broker is down: one line, the run committed with its jobs NEW, no duplicate
run on a retry, and the jobs sent by beat's `submit_new_jobs` once the broker answers (real PostgreSQL,
real Redis, the real `netharvest` command in its own process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from orchestrator.celery import app
from orchestrator.harvest.curation.domains import create_domains
from orchestrator.harvest.jobs import dispatch, tasks
from orchestrator.harvest.management.commands.harvests import WAITING_FOR_BROKER
from orchestrator.harvest.models import DomainConfiguration, HarvestDefinition, Job
from tests.conftest import closed_broker_url
from tests.orchestrator import factories

pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True)]

REPO = Path(__file__).resolve().parents[2]


def _netharvest(*args: str, broker: str) -> subprocess.CompletedProcess[str]:
    s = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "orchestrator.settings",
        "NETHARVEST_BROKER_URL": broker,
        "NETHARVEST_DATABASE_URL": f"postgres://{s['USER']}@{s['HOST']}:{s['PORT']}/{s['NAME']}",
    }
    return subprocess.run(
        [sys.executable, str(Path(sys.executable).with_name("netharvest")), *args],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _news(domains: list[str]) -> HarvestDefinition:
    create_domains(domains)
    definition = factories.selective_definition("news")
    definition.configurations.set(DomainConfiguration.objects.filter(domain__name__in=domains, is_default=True))
    return definition


def _queued(queue: str) -> list[dict]:
    with app.connection_for_write() as conn:
        client = conn.default_channel.client
        return [json.loads(m) for m in client.lrange(queue, 0, -1)]


def _purge(queue: str) -> None:
    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge(queue)


def test_run_now_with_the_broker_down_makes_one_run_that_beat_dispatches_later(purge_queues):
    if connection.vendor != "postgresql" or not app.conf.broker_url.startswith("redis"):
        pytest.skip("needs the real PostgreSQL and Redis")
    definition = _news(["a.fr", "b.fr"])
    queue = definition.channel.queue
    _purge(queue)
    down = closed_broker_url()

    first = _netharvest("harvests", "run-now", "news", broker=down)
    assert first.returncode == WAITING_FOR_BROKER, first.stderr
    assert len(first.stderr.splitlines()) == 1 and "Traceback" not in first.stderr, first.stderr
    assert (
        "run 1 of 'news' made: 1 job(s) will be dispatched when the broker answers (it does not now: " in first.stderr
        and "Connection refused" in first.stderr
    )
    jobs = list(Job.objects.filter(harvest=definition))
    assert [(j.harvest_run, j.status) for j in jobs] == [(1, "NEW")]  # the run is committed, its job waits

    # The operator retries while the broker is still down: no second run.
    again = _netharvest("harvests", "run-now", "news", broker=down)
    assert again.returncode == WAITING_FOR_BROKER and len(again.stderr.splitlines()) == 1, again.stderr
    assert "no new run of 'news': run 1 is still waiting to be dispatched" in again.stderr
    assert HarvestDefinition.objects.get(pk=definition.pk).runs == 1 and Job.objects.count() == 1

    # The broker is back: beat's periodic task sends the job, SUBMITTED only now that its message is queued.
    assert "submit-new-jobs" in app.conf.beat_schedule
    tasks.submit_new_jobs()
    job = Job.objects.get()
    assert job.status == "SUBMITTED" and job.submitted_at is not None
    messages = _queued(queue)
    assert [m["headers"]["id"] for m in messages] == [dispatch.run_job_task_id(job.pk)]

    # Nothing waits any more: run-now makes run 2 and submits it at once.
    done = _netharvest("harvests", "run-now", "news", broker=app.conf.broker_url)
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert list(Job.objects.order_by("id").values_list("harvest_run", "status")) == [(1, "SUBMITTED"), (2, "SUBMITTED")]
    assert len(_queued(queue)) == 2


def test_submit_stops_at_the_first_refused_publish_and_leaves_the_rest_new(broker_down):
    definition = _news(["a.fr"])
    jobs = [factories.job(definition, domains=[f"d{i}.fr"]) for i in range(3)]
    with pytest.raises(dispatch.BrokerUnavailable) as refused:
        dispatch.submit_jobs([j.pk for j in jobs])
    assert refused.value.submitted == 0 and "\n" not in refused.value.reason
    assert set(Job.objects.values_list("status", flat=True)) == {"NEW"}
    tasks.submit_new_jobs()  # beat's sweep with the broker still down: a logged line, not a crash
    assert set(Job.objects.values_list("status", flat=True)) == {"NEW"}
