"""Dispatch by reference (issue 15): the job message on the real broker is a JobRef, and the harvester's own
reader (harvester.specfetch) reads the frozen spec from the API of a live server with a viewer's token;
a resubmitted job's message points at its own spec, which names the job it continues."""

from __future__ import annotations

import pytest
from kombu.simple import SimpleQueue

from harvester.contracts import JobRef, JobSpec, harvest_queue
from harvester.specfetch import SpecUnreadable, fetch_spec
from orchestrator.celery import app
from orchestrator.harvest.jobs import dispatch
from orchestrator.harvest.models import Job, JobStatus
from tests.orchestrator import factories

pytestmark = pytest.mark.django_db


def _published(queue: str, task_id: str) -> list:
    """The args of the message with ``task_id`` on ``queue`` (taken off it). Nothing consumes the harvest
    queues in these tests, so an earlier test's message may wait there: it is put back, not taken for this one."""
    with app.connection_for_write() as conn:
        simple = SimpleQueue(conn, queue)
        others = []
        try:
            while True:
                message = simple.get(timeout=5)
                if message.headers.get("id") == task_id:
                    message.ack()
                    return message.payload[0]
                others.append(message)
        finally:
            for message in others:
                message.requeue()
            simple.close()


def test_the_spec_endpoint(viewer):
    job = factories.job(domains=["example.fr"])
    response = viewer.get(f"/jobs/{job.pk}/spec")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert response.json() == Job.objects.get(pk=job.pk).spec
    assert viewer.get("/jobs/999999/spec").status_code == 404
    viewer.token = None
    assert viewer.get(f"/jobs/{job.pk}/spec").status_code == 401


def test_without_a_base_url_the_whole_spec_travels(settings):
    settings.NETHARVEST_SPEC_BASE_URL = ""
    job = factories.job(domains=["example.fr"])
    assert dispatch.job_message(job) == job.spec


# Transactional: the live server answers from its own connection, so it must see what the test commits.
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_message_is_a_reference_the_harvester_reads(viewer, settings, live_server, monkeypatch, request):
    if not app.conf.broker_url.startswith("redis"):
        pytest.skip("reads the published message from Redis")
    request.getfixturevalue("broker_queues")  # empties what the test leaves on the harvest queues
    settings.NETHARVEST_SPEC_BASE_URL = live_server.url
    monkeypatch.setenv("NETHARVEST_API_TOKEN", viewer.token)
    job = factories.job(domains=["example.fr", "example.se"])
    assert dispatch.submit_jobs([job.pk]) == 1

    args = _published(harvest_queue(job.channel.name), f"job-{job.pk}")
    assert args == [{"job_id": job.pk, "spec_url": f"{live_server.url}/api/v1/jobs/{job.pk}/spec", "version": 1}]
    spec = JobSpec.from_dict(fetch_spec(JobRef.from_dict(args[0])))
    assert spec.to_dict() == JobSpec.from_dict(Job.objects.get(pk=job.pk).spec).to_dict()
    assert [d.name for d in spec.domains] == ["example.fr", "example.se"]

    Job.objects.filter(pk=job.pk).update(status=JobStatus.FAILED)
    new = dispatch.resubmit(Job.objects.get(pk=job.pk))
    args = _published(harvest_queue(job.channel.name), f"job-{new.pk}")
    assert args[0]["job_id"] == new.pk
    again = JobSpec.from_dict(fetch_spec(JobRef.from_dict(args[0])))
    assert (again.job_id, again.continues_job) == (new.pk, job.pk)

    monkeypatch.setenv("NETHARVEST_API_TOKEN", "nh_not-a-token")
    with pytest.raises(SpecUnreadable, match=r"HTTP 401 Unauthorized \(set NETHARVEST_API_TOKEN"):
        fetch_spec(JobRef.from_dict(args[0]), tries=1)
