"""/metrics: who may read it, and that each family says what the database and the broker hold, parsed with
prometheus_client's own text parser."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from kombu.simple import SimpleQueue
from prometheus_client.parser import text_string_to_metric_families

from orchestrator.celery import app
from orchestrator.harvest.jobs import intake
from orchestrator.harvest.models import ArchiveFile, HarvestChannel, Job, JobStatus, ReaperSight
from tests.api.conftest import token_for
from tests.orchestrator import factories

pytestmark = pytest.mark.django_db


def scrape(client: Client | None = None, **headers: str) -> dict[str, dict[tuple, float]]:
    """{family: {labels as sorted (name, value) pairs: value}} of one scrape."""
    response = (client or Client()).get("/metrics", **headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    out: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            out.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def test_access_localhost_or_a_token(django_user_model):
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 200
    far = Client(REMOTE_ADDR="203.0.113.9")
    refused = far.get("/metrics")
    assert refused.status_code == 401 and refused["WWW-Authenticate"].startswith("Bearer")
    # a request a proxy on this machine forwarded is not this machine's
    assert Client().get("/metrics", HTTP_X_FORWARDED_FOR="203.0.113.9").status_code == 401
    viewer = token_for(django_user_model, "viewer")
    assert far.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {viewer}").status_code == 200
    nobody = token_for(django_user_model, None)
    assert far.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {nobody}").status_code == 403
    assert far.get("/metrics", HTTP_AUTHORIZATION="Bearer nh_unknown").status_code == 401
    assert Client().post("/metrics").status_code == 405


def test_allow_list_from_settings(settings):
    settings.NETHARVEST_METRICS_ALLOW = "10.0.0.0/8"
    assert Client(REMOTE_ADDR="10.1.2.3").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 401
    settings.NETHARVEST_METRICS_ALLOW = ""
    assert Client(REMOTE_ADDR="10.1.2.3").get("/metrics").status_code == 401


def test_jobs_by_status_and_channel():
    snapshot = factories.snapshot_definition("broad")
    for status in (JobStatus.DONE, JobStatus.DONE, JobStatus.FAILED):
        factories.job(status=status)
    factories.job(snapshot, status=JobStatus.NEW)
    jobs = scrape()["netharvest_jobs"]
    assert jobs[(("channel", "focused"), ("status", "DONE"))] == 2
    assert jobs[(("channel", "focused"), ("status", "FAILED"))] == 1
    assert jobs[(("channel", "snapshot"), ("status", "NEW"))] == 1
    assert jobs[(("channel", "snapshot"), ("status", "STARTED"))] == 0  # every series, zeros included
    assert sum(jobs.values()) == Job.objects.count()


def test_running_jobs_and_harvesters_from_the_latest_progress():
    job = factories.job(
        status=JobStatus.STARTED,
        harvester="h1@worker-1",
        last_heartbeat=timezone.now() - timedelta(seconds=30),
        domains=["example.fr"],
    )
    other = factories.job(status=JobStatus.STARTED, harvester="h1@worker-1", domains=["example.org"])
    for j, rate in ((job, 2.5), (other, 1.5)):
        assert intake.record_progress(
            {
                "job_id": j.pk,
                "at": "2026-11-23T10:00:00Z",
                "uris_done": 30,
                "uris_queued": 200,
                "uris_failed": 1,
                "bytes": 4096,
                "uri_rate": rate,
                "avg_uri_rate": 2.0,
                "kb_rate": 12.0,
                "avg_kb_rate": 10.0,
            }
        )
    m = scrape()
    labels = (("channel", "focused"), ("harvester", "h1@worker-1"), ("job", str(job.pk)))
    assert m["netharvest_job_uri_rate"][labels] == 2.5
    assert m["netharvest_job_byte_rate"][labels] == 12.0 * 1024
    assert m["netharvest_job_bytes"][labels] == 4096
    assert m["netharvest_job_uris"][(*labels[:2], labels[2], ("state", "queued"))] == 200
    assert m["netharvest_harvester_uri_rate"][(("harvester", "h1@worker-1"),)] == 4.0
    assert m["netharvest_harvester_jobs"][(("harvester", "h1@worker-1"),)] == 2
    age = m["netharvest_harvester_heartbeat_age_seconds"][(("harvester", "h1@worker-1"),)]
    assert 0 <= age < 30  # the freshest of its jobs' heartbeats (record_progress just beat)


def test_queue_depths_per_channel_from_the_broker(broker_queues):
    HarvestChannel.objects.create(name="metricstest", priority="low")
    with app.connection_for_write() as conn:
        queue = SimpleQueue(conn, "harvest.metricstest")
        for n in range(3):
            queue.put({"n": n})
        queue.close()
    m = scrape()
    assert m["netharvest_broker_up"][()] == 1
    assert m["netharvest_queue_messages"][(("channel", "metricstest"), ("queue", "harvest.metricstest"))] == 3
    assert (("channel", "focused"), ("queue", "harvest.focused")) in m["netharvest_queue_messages"]
    assert (("channel", ""), ("queue", "indexer")) in m["netharvest_queue_messages"]


def test_broker_down_is_said_and_the_rest_still_answers(broker_down):
    m = scrape()
    assert m["netharvest_broker_up"][()] == 0 and "netharvest_jobs" in m


def test_chain_backlog_failures_dedup_size_and_reaper(settings, tmp_path):
    job = factories.job(status=JobStatus.DONE)
    now = timezone.now()
    for i, (state, step) in enumerate(
        [("HARVESTED", ""), ("HARVESTED", ""), ("INDEXED", ""), ("FAILED", "INGESTED"), ("CLEANED", "")]
    ):
        ArchiveFile.objects.create(
            name=f"f{i}.warc.gz",
            job=job,
            size=1,
            sha256="",
            index_state=state,
            failed_step=step,
            claimed_until=now + timedelta(minutes=1) if i == 0 else None,
        )
    ArchiveFile.objects.filter(name="f1.warc.gz").update(updated=now - timedelta(hours=2))
    settings.NETHARVEST_DEDUP_INDEX = tmp_path / "dedup.sqlite3"
    (tmp_path / "dedup.sqlite3").write_bytes(b"x" * 4096)
    (tmp_path / "dedup.sqlite3-wal").write_bytes(b"x" * 100)
    ReaperSight.objects.create(last_sweep_at=now - timedelta(seconds=20), seeing_since=now - timedelta(hours=1))
    m = scrape()
    files = m["netharvest_chain_files"]
    assert files[(("state", "HARVESTED"),)] == 2 and files[(("state", "INDEXED"),)] == 1
    assert files[(("state", "FAILED"),)] == 1 and files[(("state", "TRANSFERRED"),)] == 0
    assert (("state", "CLEANED"),) not in files  # done files are not a backlog (and are never counted)
    assert m["netharvest_chain_files_claimed"][(("state", "HARVESTED"),)] == 1
    assert m["netharvest_chain_oldest_seconds"][(("state", "HARVESTED"),)] >= 7200
    assert m["netharvest_chain_failed_files"][(("step", "INGESTED"),)] == 1
    assert m["netharvest_dedup_index_bytes"][()] == 4196
    assert 20 <= m["netharvest_reaper_last_sweep_age_seconds"][()] < 60
    assert set(m["netharvest_scrape_seconds"]) == {
        (("family", f),) for f in ("jobs", "queues", "running", "failures", "chain", "dedup", "reaper")
    }


def test_the_grafana_dashboard_reads_only_metrics_that_exist():
    import json
    import re
    from pathlib import Path

    dashboard = json.loads((Path(__file__).resolve().parents[2] / "deploy" / "grafana-dashboard.json").read_text())
    used = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"netharvest_\w+", target["expr"])
    }
    text = Client().get("/metrics").content.decode()
    served = {family.name for family in text_string_to_metric_families(text)}
    assert used and used <= served, used - served


def test_a_scrape_costs_one_query_per_family_whatever_the_number_of_jobs():
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert Client().get("/metrics").status_code == 200
        return len(captured.captured_queries)

    factories.job(status=JobStatus.STARTED, domains=["example.fr"])
    few = queries()
    for n in range(30):
        job = factories.job(status=JobStatus.STARTED if n % 2 else JobStatus.DONE)
        ArchiveFile.objects.create(name=f"q{n}.warc.gz", job=job, size=1, sha256="")
    assert queries() == few == 6  # channels, then jobs, running jobs, failures, chain, reaper


def test_failed_jobs_waiting_for_a_decision_by_harvester_and_category():
    factories.job(status=JobStatus.FAILED, harvester="h1@crawl-01", error_category="crawl-process-died")
    factories.job(status=JobStatus.FAILED, harvester="h1@crawl-01", error_category="crawl-process-died")
    factories.job(status=JobStatus.FAILED, error_category="jobspec-unreadable")
    factories.job(
        status=JobStatus.FAILED,
        harvester="h2@crawl-02",
        error_category="reaped",
        rejected_at=timezone.now(),
        rejected_by="curator",
    )  # decided: not counted
    failed = scrape()["netharvest_failed_jobs"]
    assert failed == {
        (("category", "crawl-process-died"), ("channel", "focused"), ("harvester", "h1@crawl-01")): 2,
        (("category", "jobspec-unreadable"), ("channel", "focused"), ("harvester", "unknown")): 1,
    }
