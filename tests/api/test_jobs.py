"""Jobs through the API: list with filters and pages, show, control (real broker), resubmit, reject, and the
files of a real crawl (tests/orchestrator/crawled_job.py) listed and downloaded."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from kombu.simple import SimpleQueue

from harvester.contracts import control_queue
from orchestrator.celery import app
from orchestrator.harvest.jobs import intake
from orchestrator.harvest.models import ArchiveFile, Job, JobControl, JobStatus
from tests.api.conftest import errors
from tests.orchestrator import factories
from tests.orchestrator.crawled_job import crawled, make_job, record, running_job

pytestmark = pytest.mark.django_db


def _running() -> Job:
    return running_job({"site-a.fr": {"objects": 10, "bytes": 1000, "queued": 150}})


def test_list_filters_and_pages(viewer):
    snapshot = factories.snapshot_definition("broad")
    old = factories.job(status=JobStatus.DONE, created=datetime(2026, 1, 5, tzinfo=UTC))
    failed = factories.job(status=JobStatus.FAILED)
    broad = factories.job(snapshot, status=JobStatus.NEW)
    everything = viewer.get("/jobs").json()
    assert everything["count"] == 3 and [j["id"] for j in everything["items"]] == [broad.pk, failed.pk, old.pk]
    assert [j["id"] for j in viewer.get("/jobs", status="FAILED").json()["items"]] == [failed.pk]
    assert [j["id"] for j in viewer.get("/jobs", status="RESUBMITTABLE").json()["items"]] == [failed.pk]
    assert [j["id"] for j in viewer.get("/jobs", channel="snapshot").json()["items"]] == [broad.pk]
    assert [j["id"] for j in viewer.get("/jobs", harvest=str(snapshot.pk)).json()["items"]] == [broad.pk]
    assert [j["id"] for j in viewer.get("/jobs", created_to="2026-01-05").json()["items"]] == [old.pk]
    page = viewer.get("/jobs", limit=2, offset=2).json()
    assert page["count"] == 3 and [j["id"] for j in page["items"]] == [old.pk]
    assert errors(viewer.get("/jobs", status="SLEEPING"))[0][0] == ["query", "status"]
    assert errors(viewer.get("/jobs", channel="nowhere"))[0][0] == ["query", "channel"]
    assert errors(viewer.get("/jobs", created_from="2026-02-01", created_to="2026-01-01"))[0][0] == [
        "query",
        "created_to",
    ]
    assert viewer.get("/jobs", limit=5000).status_code == 422  # a page holds at most 1000


def test_show_has_the_latest_progress(viewer):
    job = _running()
    body = viewer.get(f"/jobs/{job.pk}").json()
    assert body["status"] == "STARTED" and body["channel"] == "focused" and body["harvest"] == job.harvest.name
    p = body["progress"]
    assert p["uris_done"] == 30 and p["uri_rate"] == 2.5 and p["domains"][0]["name"] == "site-a.fr"
    assert p["domains"][0]["budget_used"] == 25.0  # 10 of site-a.fr's 40 objects
    assert viewer.get("/jobs/999999").status_code == 404
    assert p["continuous"] is None  # not a continuous job


def test_show_has_a_continuous_jobs_live_figures(viewer):
    """A continuous job's heartbeat carries its live figures (harvester/continuous.py continuous_progress):
    scripts and dashboards read them here, as the job page and ``jobs show`` do."""
    job = _running()
    live = {
        "budget_per_s": 4.0,
        "fetch_rate": 3.87,
        "visits": 915,
        "changed": 215,
        "unchanged": 700,
        "validator_misses": 0,
        "queues": {"ready": 0, "snoozed": 1, "busy": 0, "empty": 0},
        "due_next": [{"uri": "http://127.0.0.1:8824/p36.html", "at": "2026-11-29T09:57:32Z", "wait_s": 54.7}],
        "freshness": 0.75,
    }
    assert intake.record_progress({"job_id": job.pk, "at": "2026-11-23T10:00:05Z", "continuous": live})
    shown = viewer.get(f"/jobs/{job.pk}").json()["progress"]["continuous"]
    assert shown["fetch_rate"] == 3.87 and shown["budget_per_s"] == 4.0 and shown["freshness"] == 0.75
    assert shown["due_next"][0]["uri"] == "http://127.0.0.1:8824/p36.html" and shown["queues"]["snoozed"] == 1


def test_control_is_recorded_and_sent_and_a_bad_trap_is_refused(engineer, broker_queues):
    job = _running()
    response = engineer.post(f"/jobs/{job.pk}/control", {"action": "pause"})
    assert response.status_code == 202, response.content
    control = JobControl.objects.get(job=job)
    assert (control.action, control.requested_by) == ("pause", "api:crawl_engineer") and control.sent_at
    with app.connection_for_write() as conn:
        queue = SimpleQueue(conn, control_queue(job.pk))
        message = queue.get(timeout=5)
        assert message.payload["action"] == "pause" and message.payload["id"] == control.pk
        message.ack()
        queue.close()
    bad = errors(engineer.post(f"/jobs/{job.pk}/control", {"action": "add_trap", "argument": r".*(?=/cal).*"}))
    assert bad == [
        (
            ["body", "argument"],
            "regex: lookahead (?=…) is not supported: crawler traps use RE2, linear-time regular expressions",
        )
    ]
    assert errors(engineer.post(f"/jobs/{job.pk}/control", {"action": "explode"}))[0][0] == ["body", "action"]
    assert errors(engineer.post(f"/jobs/{job.pk}/control", {"action": "stop", "argument": "x"}))[0][0] == [
        "body",
        "argument",
    ]
    assert JobControl.objects.filter(job=job).count() == 1  # nothing recorded for the refusals
    trap = engineer.post(f"/jobs/{job.pk}/control", {"action": "add_trap", "argument": r".*/calendar\?.*"})
    assert trap.status_code == 202 and trap.json()["argument"] == r".*/calendar\?.*"
    done = factories.job(status=JobStatus.DONE)
    refused = engineer.post(f"/jobs/{done.pk}/control", {"action": "stop"})
    assert refused.status_code == 409 and "only a submitted or started job" in refused.json()["detail"]
    shown = engineer.get(f"/jobs/{job.pk}").json()["controls"]
    assert [c["action"] for c in shown] == ["add_trap", "pause"]


def test_resubmit_then_reject(engineer, broker_queues):
    failed = factories.job(status=JobStatus.FAILED, domains=["example.fr"])
    response = engineer.post(f"/jobs/{failed.pk}/resubmit")
    assert response.status_code == 201, response.content
    new = response.json()["job"]
    assert new["continues"] == failed.pk and new["status"] == "SUBMITTED"
    assert Job.objects.get(pk=failed.pk).status == JobStatus.RESUBMITTED
    again = engineer.post(f"/jobs/{failed.pk}/resubmit")
    assert again.status_code == 409 and "only a FAILED job can be resubmitted" in again.json()["detail"]
    other = factories.job(status=JobStatus.FAILED)
    rejected = engineer.post(f"/jobs/{other.pk}/reject").json()
    assert rejected["rejected_by"] == "api:crawl_engineer" and rejected["rejected_at"]
    refused = engineer.post(f"/jobs/{other.pk}/resubmit")
    assert refused.status_code == 409 and "rejected by api:crawl_engineer" in refused.json()["detail"]


def test_files_of_a_real_crawl_are_listed_and_downloaded_whole(viewer):
    job = record(make_job())
    files = viewer.get(f"/jobs/{job.pk}/files").json()
    rows = {f.name: f for f in ArchiveFile.objects.filter(job=job)}
    assert {f["name"] for f in files} == set(rows) and len(rows) >= 2
    assert {f["kind"] for f in files} == {"warc", "metadata"}
    name = next(f["name"] for f in files if f["kind"] == "warc")
    response = viewer.get(f"/jobs/{job.pk}/files/{name}")
    assert response.status_code == 200 and response["Content-Disposition"].startswith("attachment")
    data = b"".join(response.streaming_content)
    assert rows[name].index_state == "HARVESTED"  # served from the spool: checked against the harvester's checksum
    assert len(data) == rows[name].size and hashlib.sha256(data).hexdigest() == rows[name].harvester_sha256
    assert response["X-Netharvest-Sha256"] == rows[name].harvester_sha256
    assert viewer.get(f"/jobs/{job.pk}/files/other-job.warc.gz").status_code == 404
    # a file whose copies are all gone: 404 saying why, never a server path
    ArchiveFile.objects.filter(pk=rows[name].pk).update(spool_path="/nowhere/x.warc.gz")
    gone = viewer.get(f"/jobs/{job.pk}/files/{name}")
    assert (
        gone.status_code == 404 and "no readable copy" in gone.json()["detail"] and "/nowhere" not in str(gone.json())
    )


def test_reports_and_the_crawl_log_are_served_from_the_spool(viewer):
    job = record(make_job())
    report = viewer.get(f"/jobs/{job.pk}/reports/mimetype-report.txt")
    assert report.status_code == 200 and report["X-Netharvest-Source"] == "spool reports/mimetype-report.txt"
    assert (
        b"".join(report.streaming_content).decode()
        == (crawled().job_dir / "reports" / "mimetype-report.txt").read_text()
    )
    log = b"".join(viewer.get(f"/jobs/{job.pk}/reports/crawl.log").streaming_content)
    assert log == (crawled().job_dir / "logs" / "crawl.log").read_bytes()
    assert viewer.get(f"/jobs/{job.pk}/reports/passwd").status_code == 404
    assert viewer.get(f"/jobs/{job.pk}/reports/..%2F..%2Fjobspec.json").status_code == 404


def test_a_job_seen_by_a_viewer_has_no_control(viewer):
    job = _running()
    assert viewer.post(f"/jobs/{job.pk}/control", {"action": "stop"}).status_code == 403
    assert not JobControl.objects.filter(job=job).exists()
    assert json.loads(viewer.get(f"/jobs/{job.pk}").content)["progress"]["has_progress"] is True


def test_a_stored_file_is_served_from_its_verified_copy_once_the_spool_is_gone(viewer, tmp_path):
    import shutil

    from orchestrator.harvest.models import ArchiveFileCopy

    job = record(make_job())
    f = ArchiveFile.objects.filter(job=job, kind="warc").first()
    stored, replica = tmp_path / "node1" / f.name, tmp_path / "backup" / f.name
    for path in (stored, replica):
        path.parent.mkdir()
        shutil.copyfile(f.spool_path, path)
    replica.write_bytes(b"not the file")  # a damaged replica must not be preferred to the primary copy
    ArchiveFileCopy.objects.create(file=f, location="backup", path=str(replica), is_replica=True, verified_ok=True)
    ArchiveFileCopy.objects.create(file=f, location="node1", path=str(stored), verified_ok=True)
    data = (Path(f.spool_path)).read_bytes()
    ArchiveFile.objects.filter(pk=f.pk).update(
        spool_path=str(tmp_path / "cleaned" / f.name), index_state="CLEANED", sha256=hashlib.sha256(data).hexdigest()
    )
    response = viewer.get(f"/jobs/{job.pk}/files/{f.name}")
    assert response.status_code == 200 and b"".join(response.streaming_content) == data
    assert response["X-Netharvest-Sha256"] == hashlib.sha256(data).hexdigest()
    listed = next(x for x in viewer.get(f"/jobs/{job.pk}/files").json() if x["name"] == f.name)
    assert {c["location"] for c in listed["copies"]} == {"node1", "backup"} and listed["index_state"] == "CLEANED"


def test_a_seeds_control_is_validated_and_only_for_a_continuous_job(engineer, broker_queues):
    """Review of issue 12: `seeds` went unchecked to any job. dispatch.send_control (every caller's gate)
    refuses it for a job that is not continuous and checks its JSON; the API says which field is wrong."""
    from orchestrator.harvest.jobs import dispatch

    job = _running()
    change = json.dumps({"add": ["https://www.example.fr/new"], "remove": []})
    refused = engineer.post(f"/jobs/{job.pk}/control", {"action": "seeds", "argument": change})
    assert refused.status_code == 409 and "only for continuous harvests" in refused.json()["detail"]
    with pytest.raises(dispatch.DispatchError, match="only for continuous"):
        dispatch.send_control(job, "seeds", change)
    Job.objects.filter(pk=job.pk).update(spec={**job.spec, "kind": "continuous"})
    job.refresh_from_db()
    bad = errors(engineer.post(f"/jobs/{job.pk}/control", {"action": "seeds", "argument": '{"add": ["nope"]}'}))
    assert bad[0][0] == ["body", "argument"] and "add[0]" in bad[0][1]
    with pytest.raises(dispatch.DispatchError, match="unknown key"):
        dispatch.send_control(job, "seeds", '{"added": []}')
    assert not JobControl.objects.filter(job=job).exists()  # nothing recorded for the refusals
    sent = engineer.post(f"/jobs/{job.pk}/control", {"action": "seeds", "argument": change})
    assert sent.status_code == 202 and JobControl.objects.get(job=job).action == "seeds"
