"""Harvester-side delivery (harvester.delivery) against a real S3-protocol server (tests/conftest.py): results
name the objects, a worker killed (-9) mid-upload resumes and the file arrives once, whole; the spool copy goes
only when the chain's receipt is there."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from harvester import delivery
from harvester.contracts import FileResult, JobResult
from indexer import objectstore

REPO = Path(__file__).resolve().parents[2]


def _result(job_dir: Path, *sizes: int) -> JobResult:
    (job_dir / "warcs").mkdir(parents=True)
    files = []
    for i, size in enumerate(sizes):
        path = job_dir / "warcs" / f"{job_dir.name}-{i}.warc.gz"
        with open(path, "wb") as f:
            for _ in range(0, size, 1 << 20):
                f.write(os.urandom(min(1 << 20, size - f.tell())))
        files.append(FileResult(path.name, str(path), size, hashlib.sha256(path.read_bytes()).hexdigest()))
    return JobResult(
        job_id=int(job_dir.name),
        status="DONE",
        started="2026-11-24T08:00:00Z",
        ended="2026-11-24T08:01:00Z",
        files=tuple(files),
        domains=(),
    )


def test_receipt_url_sits_beside_the_delivered_objects():
    assert delivery.receipt_url("s3://b/deliv/42/42-x.warc.gz") == "s3://b/deliv/receipts/42/42-x.warc.gz"
    assert delivery.object_url("s3://b/deliv", 42, "42-x.warc.gz") == "s3://b/deliv/42/42-x.warc.gz"


def test_deliver_result_names_objects_and_the_sweep_waits_for_receipts(tmp_path, s3_bucket):
    spool, target = tmp_path / "spool", f"{s3_bucket}/deliv"
    job_dir = spool / "7"
    result = _result(job_dir, 1000, 2000)
    (job_dir / "logs").mkdir()
    (job_dir / "logs" / "crawl.log").write_text("a line\n")
    delivered = delivery.deliver_result(result, job_dir, target)
    assert [f.path for f in delivered.files] == [f"{target}/7/7-0.warc.gz", f"{target}/7/7-1.warc.gz"]
    assert [f.sha256 for f in delivered.files] == [f.sha256 for f in result.files]
    assert objectstore.size(f"{target}/7/logs/crawl.log") == 7
    assert delivery.deliver_result(result, job_dir, target) == delivered  # again (a resent result): no change
    assert delivery.sweep_receipts(spool) == 0 and all(Path(f.path).is_file() for f in result.files)
    receipt = delivery.receipt_url(delivered.files[0].path)
    objectstore.put_bytes(receipt, delivered.files[0].sha256.encode())  # what the chain does
    assert delivery.sweep_receipts(spool) == 1
    assert not Path(result.files[0].path).exists() and Path(result.files[1].path).is_file()
    assert objectstore.list_keys(f"{target}/receipts") == []


DELIVER = """
import json, sys
from pathlib import Path
from harvester import delivery
from harvester.contracts import JobResult
job_dir = Path(sys.argv[1])
result = JobResult.from_dict(json.loads((job_dir / "jobresult.json").read_text()))
print(json.dumps(delivery.deliver_result(result, job_dir, sys.argv[2]).to_dict()))
"""


def test_a_harvester_killed_mid_upload_delivers_the_file_once_whole_on_restart(tmp_path, s3_bucket):
    job_dir, target = tmp_path / "spool" / "9", f"{s3_bucket}/deliv"
    result = _result(job_dir, 3 * objectstore.PART_SIZE + 12345)  # four parts
    (job_dir / "jobresult.json").write_text(json.dumps(result.to_dict()))
    args = [sys.executable, "-c", DELIVER, str(job_dir), target]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    state = job_dir / "delivery" / f"{result.files[0].name}.upload.json"
    url = delivery.object_url(target, 9, result.files[0].name)
    bucket, key = objectstore.split(url)
    first = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (state.exists() and _parts(bucket, key, state)):
        time.sleep(0.005)
    os.kill(first.pid, signal.SIGKILL)  # after its first part, before the last
    first.wait()
    uploaded = _parts(bucket, key, state)
    assert 1 <= len(uploaded) < 4 and objectstore.size(url) is None  # killed mid-upload: nothing visible yet

    again = subprocess.run(args, env=env, capture_output=True, check=True)
    (delivered,) = json.loads(again.stdout)["files"]
    assert delivered["path"] == url and not state.exists()
    assert objectstore.size(url) == result.files[0].size and objectstore.sha256_object(url) == result.files[0].sha256
    assert objectstore.client().list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []  # resumed, not redone
    assert objectstore.list_keys(f"{target}/9") == [url]


def _parts(bucket: str, key: str, state: Path) -> list[int]:
    try:
        upload_id = json.loads(state.read_text())["upload_id"]
        listed = objectstore.client().list_parts(Bucket=bucket, Key=key, UploadId=upload_id)
    except Exception:
        return []
    return [p["PartNumber"] for p in listed.get("Parts", [])]


def test_a_continuous_job_s_closed_warcs_are_delivered_before_they_are_reported(tmp_path, s3_bucket, monkeypatch):
    """The relay of WARCs a continuous job closes mid-run: with a delivery target, the orchestrator hears of each
    one only once it is in the store; while the store is down they wait (nothing reported, nothing lost)."""
    from harvester.continuous import FILES_CLOSED
    from harvester.outbox import Outbox
    from harvester.runjob import _FilesRelay

    job_dir = tmp_path / "spool" / "5"
    result = _result(job_dir, 700)
    outbox = Outbox(job_dir)
    relay = _FilesRelay(job_dir, 5, outbox)
    (job_dir / FILES_CLOSED).write_text(json.dumps(result.files[0].__dict__) + "\n")
    monkeypatch.setenv("NETHARVEST_DELIVERY", f"{s3_bucket}/deliv")
    endpoint = os.environ["NETHARVEST_S3_ENDPOINT_URL"]
    monkeypatch.setenv("NETHARVEST_S3_ENDPOINT_URL", "http://127.0.0.1:9")  # the store is unreachable
    relay.poll()
    assert outbox.pending() == [] and relay.undelivered
    monkeypatch.setenv("NETHARVEST_S3_ENDPOINT_URL", endpoint)  # back
    relay.retry_at = 0.0  # its back-off is over
    relay.poll()
    (message,) = [json.loads(p.read_text()) for p in outbox.pending()]
    assert message["args"][1][0]["path"] == f"{s3_bucket}/deliv/5/{result.files[0].name}"
    assert objectstore.sha256_object(message["args"][1][0]["path"]) == result.files[0].sha256


def _small_parts(monkeypatch) -> None:
    monkeypatch.setattr(objectstore, "PART_SIZE", 5 << 20)  # S3's smallest part: a 3-part file stays small


def test_every_upload_keeps_the_heartbeat_flowing(tmp_path, s3_bucket, monkeypatch):
    """Review of issue 15, defect 1: the parent uploading gigabytes (mid-run relay, final delivery) sent no
    heartbeat and the reaper failed the job. The Heartbeat passed as ``tick`` publishes progress during the
    upload: at least once per part here (its interval set to 0)."""
    from harvester import runjob as tasks
    from harvester.continuous import FILES_CLOSED
    from harvester.outbox import Outbox

    _small_parts(monkeypatch)
    monkeypatch.setattr(tasks, "PROGRESS_INTERVAL_S", 0.0)
    published: list[str] = []
    monkeypatch.setattr(tasks, "publish", lambda task, args: published.append(task))
    job_dir = tmp_path / "spool" / "11"
    result = _result(job_dir, (10 << 20) + 5, 3000)  # three parts, then one PUT
    (job_dir / "progress.json").write_text(json.dumps({"job_id": 11, "urls_done": 5}))
    outbox = Outbox(job_dir)
    heartbeat = tasks.Heartbeat(tasks._ProgressRelay(job_dir, outbox), tasks.BrokerLink(11), outbox)
    relay = tasks._FilesRelay(job_dir, 11, outbox)
    (job_dir / FILES_CLOSED).write_text(json.dumps(result.files[0].__dict__) + "\n")
    monkeypatch.setenv("NETHARVEST_DELIVERY", f"{s3_bucket}/deliv")
    relay.poll(heartbeat)  # the mid-run relay
    assert published.count(tasks.PROGRESS_TASK) >= 3
    published.clear()
    delivered = delivery.deliver_result(result, job_dir, tick=heartbeat)  # the job's end
    assert published.count(tasks.PROGRESS_TASK) >= 1  # the small file (the big one was delivered already)
    assert [f.path for f in delivered.files] == [f"{s3_bucket}/deliv/11/{f.name}" for f in result.files]


def test_a_delivered_file_is_answered_from_its_record_never_uploaded_or_read_again(tmp_path, s3_bucket):
    """Defect 2: after the sweep removed the spool copy, a duplicate message (or a restarted parent, or a
    continuous job's final result) delivering that file again looped forever on FileNotFoundError; a file
    whose stored object the chain had removed was uploaded again (an orphan)."""
    spool, target = tmp_path / "spool", f"{s3_bucket}/deliv"
    job_dir = spool / "12"
    result = _result(job_dir, 1000)
    (first,) = delivery.deliver_result(result, job_dir, target).files
    objectstore.put_bytes(delivery.receipt_url(first.path), result.files[0].sha256.encode())
    objectstore.delete(first.path)  # what the chain's delete step does once the file is stored
    assert delivery.sweep_receipts(spool) == 1 and not Path(result.files[0].path).exists()
    again = delivery.deliver_result(result, job_dir, target)  # the spool copy is gone: answered from the record
    assert again.files == (first,)
    assert objectstore.size(first.path) is None  # not uploaded again
    assert json.loads(delivery.record_path(job_dir, first.name).read_text())["swept"] is True


def test_a_file_that_can_never_be_delivered_is_given_up_with_one_line(tmp_path, s3_bucket, caplog):
    """Defect 2: a missing spool file, a damaged one, or a store refusing the request (4xx) is permanent:
    the file keeps its spool path (the chain says it cannot read it), the worker is not stuck retrying."""
    job_dir = tmp_path / "spool" / "13"
    result = _result(job_dir, 1000, 1000, 1000)
    Path(result.files[0].path).unlink()  # gone, never delivered
    Path(result.files[1].path).write_bytes(b"damaged")  # not what its checksum says
    with caplog.at_level("ERROR", logger="harvester.delivery"):
        out = delivery.deliver_result(result, job_dir, f"{s3_bucket}/deliv")
        refused = delivery.deliver_result(
            _result(tmp_path / "spool" / "14", 10), tmp_path / "spool" / "14", "s3://no-such-bucket-here/deliv"
        )
    assert [f.path for f in out.files] == [
        result.files[0].path,
        result.files[1].path,
        f"{s3_bucket}/deliv/13/{result.files[2].name}",
    ]
    assert not objectstore.is_url(refused.files[0].path)
    assert len([r for r in caplog.records if "for good" in r.getMessage()]) == 3


def test_the_sweep_trusts_a_receipt_only_when_it_holds_the_delivered_digest(tmp_path, s3_bucket, caplog):
    """Defect 6: a receipt with another digest (another deployment sharing the prefix, an earlier file of that
    name) keeps the spool copy; a bad record does not block the others."""
    spool, target = tmp_path / "spool", f"{s3_bucket}/deliv"
    a, b = _result(spool / "15", 1000), _result(spool / "16", 1000)
    (da,) = delivery.deliver_result(a, spool / "15", target).files
    (db,) = delivery.deliver_result(b, spool / "16", target).files
    (spool / "10" / "delivery").mkdir(parents=True)
    (spool / "10" / "delivery" / "10-0.warc.gz.json").write_text("{not json")  # sorts first
    objectstore.put_bytes(delivery.receipt_url(da.path), b"0" * 64)  # not a's digest
    objectstore.put_bytes(delivery.receipt_url(db.path), db.sha256.encode())
    with caplog.at_level("ERROR", logger="harvester.delivery"):
        assert delivery.sweep_receipts(spool) == 1
    assert Path(a.files[0].path).is_file() and not Path(b.files[0].path).exists()
    assert objectstore.size(delivery.receipt_url(da.path)) is not None  # left alone
    assert objectstore.size(delivery.receipt_url(db.path)) is None
    assert any("spool copy kept" in r.getMessage() for r in caplog.records)


def test_the_relay_reports_what_it_delivered_and_retries_only_what_failed(tmp_path, s3_bucket, monkeypatch):
    """Defect 8: one file failing kept every file of the batch pending, uploaded (or hashed) again every poll."""
    from harvester.continuous import FILES_CLOSED
    from harvester.outbox import Outbox
    from harvester.runjob import _FilesRelay

    target = f"{s3_bucket}/deliv"
    job_dir = tmp_path / "spool" / "17"
    result = _result(job_dir, 700, 800)
    Path(result.files[1].path).unlink()  # can never be delivered
    outbox = Outbox(job_dir)
    relay = _FilesRelay(job_dir, 17, outbox)
    (job_dir / FILES_CLOSED).write_text("".join(json.dumps(f.__dict__) + "\n" for f in result.files))
    monkeypatch.setenv("NETHARVEST_DELIVERY", target)
    relay.poll()
    (message,) = [json.loads(p.read_text()) for p in outbox.pending()]
    assert [f["path"] for f in message["args"][1]] == [f"{target}/17/{result.files[0].name}", result.files[1].path]
    assert relay.undelivered == []

    third = job_dir / "warcs" / "17-2.warc.gz"  # a third WARC closes while the store is down
    third.write_bytes(b"third")
    more = FileResult(third.name, str(third), 5, hashlib.sha256(b"third").hexdigest())
    with open(job_dir / FILES_CLOSED, "a") as f:
        f.write(json.dumps(more.__dict__) + "\n")
    endpoint = os.environ["NETHARVEST_S3_ENDPOINT_URL"]
    monkeypatch.setenv("NETHARVEST_S3_ENDPOINT_URL", "http://127.0.0.1:9")
    relay.poll()
    assert [e["name"] for e in relay.undelivered] == [more.name] and relay.retry_at > time.monotonic()
    monkeypatch.setenv("NETHARVEST_S3_ENDPOINT_URL", endpoint)
    relay.poll()  # backing off: not tried yet
    assert len(outbox.pending()) == 1 and relay.undelivered
    relay.retry_at = 0.0
    relay.poll()
    assert len(outbox.pending()) == 2 and relay.undelivered == []


def test_an_idle_worker_sweeps_its_receipts_too(tmp_path, s3_bucket, monkeypatch):
    """The sweep ran only before a job: a harvester that got no more jobs never freed its spool."""
    spool, target = tmp_path / "spool", f"{s3_bucket}/deliv"
    result = _result(spool / "18", 1000)
    (delivered,) = delivery.deliver_result(result, spool / "18", target).files
    objectstore.put_bytes(delivery.receipt_url(delivered.path), delivered.sha256.encode())
    monkeypatch.setenv("NETHARVEST_DELIVERY", target)
    stop = delivery.start_sweeper(lambda: spool, interval_s=0.05)
    assert stop is not None
    deadline = time.monotonic() + 20
    while Path(result.files[0].path).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    stop.set()
    assert not Path(result.files[0].path).exists()
    monkeypatch.delenv("NETHARVEST_DELIVERY")
    assert delivery.start_sweeper(lambda: spool) is None  # no delivery target: nothing to sweep
