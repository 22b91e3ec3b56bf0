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
    return JobResult(job_id=int(job_dir.name), status="DONE", started="2026-11-24T08:00:00Z",
                     ended="2026-11-24T08:01:00Z", files=tuple(files), domains=())


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
    objectstore.put_bytes(delivery.receipt_url(delivered.files[0].path), b"stored")  # what the chain does
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
    relay.poll()
    (message,) = [json.loads(p.read_text()) for p in outbox.pending()]
    assert message["args"][1][0]["path"] == f"{s3_bucket}/deliv/5/{result.files[0].name}"
    assert objectstore.sha256_object(message["args"][1][0]["path"]) == result.files[0].sha256
