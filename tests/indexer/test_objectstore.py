"""Object-store storage (indexer.objectstore) against a real S3-protocol server (moto's, tests/conftest.py):
verified copies, never overwriting a different object, multipart uploads resumed after a crash, verify."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from indexer import objectstore
from indexer.objectstore import ObjectLocation
from indexer.transfer import ChecksumMismatch, Location, NameConflict, NoSpaceError, choose_location


def _file(path: Path, size: int, seed: bytes = b"w") -> str:
    block = hashlib.sha256(seed).digest() * 2048
    with open(path, "wb") as f:
        for i in range(0, size, len(block)):
            f.write(block[: min(len(block), size - i)])
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_put_is_verified_conditional_and_idempotent(tmp_path, s3_bucket):
    src, other = tmp_path / "a.warc.gz", tmp_path / "b.warc.gz"
    digest, other_digest = _file(src, 3000), _file(other, 3000, b"x")
    url = objectstore.join(s3_bucket, "7", src.name)
    assert objectstore.upload_verified(src, url, digest) == url
    assert objectstore.size(url) == 3000 and objectstore.sha256_object(url) == digest
    assert objectstore.upload_verified(src, url, digest) == url  # again: finds the identical object
    with pytest.raises(NameConflict, match="refusing to replace"):
        objectstore.put(other, url, other_digest)  # a different file of the same name is never written
    assert objectstore.sha256_object(url) == digest
    with pytest.raises(ChecksumMismatch):  # a source that is not what was reported is not uploaded
        objectstore.put(other, objectstore.join(s3_bucket, "7", "c.warc.gz"), digest)
    assert objectstore.size(objectstore.join(s3_bucket, "7", "c.warc.gz")) is None


def test_a_multipart_upload_killed_after_one_part_resumes_and_arrives_once_whole(tmp_path, s3_bucket):
    part = 5 << 20  # S3's smallest part
    src = tmp_path / "big.warc.gz"
    digest = _file(src, 2 * part + 1234)
    url = objectstore.join(s3_bucket, "1", src.name)
    state = tmp_path / "delivery" / "big.upload.json"
    ticks = []

    def crash_after_first_part() -> None:
        ticks.append(1)
        if len(ticks) == 2:
            raise KeyboardInterrupt("killed")

    with pytest.raises(KeyboardInterrupt):
        objectstore.put(src, url, digest, state=state, tick=crash_after_first_part, part_size=part)
    assert state.is_file() and objectstore.size(url) is None  # nothing visible yet, the upload is kept
    bucket, key = objectstore.split(url)
    saved = __import__("json").loads(state.read_text())
    parts = objectstore.client().list_parts(Bucket=bucket, Key=key, UploadId=saved["upload_id"])["Parts"]
    assert [p["PartNumber"] for p in parts] == [1]

    objectstore.put(src, url, digest, state=state, part_size=part)  # the restarted worker
    assert not state.exists()
    assert objectstore.size(url) == src.stat().st_size and objectstore.sha256_object(url) == digest
    uploads = objectstore.client().list_multipart_uploads(Bucket=bucket).get("Uploads", [])
    assert uploads == []  # the one upload completed, no second one left behind
    assert objectstore.list_keys(objectstore.join(s3_bucket, "1")) == [url]


def test_verify_copy_says_ok_missing_or_corrupt(tmp_path, s3_bucket):
    src = tmp_path / "v.warc.gz"
    digest = _file(src, 500)
    url = objectstore.join(s3_bucket, "v.warc.gz")
    assert objectstore.verify_copy(url, digest) == "missing"
    objectstore.upload_verified(src, url, digest)
    assert objectstore.verify_copy(url, digest) == "ok"
    bucket, key = objectstore.split(url)
    objectstore.client().put_object(Bucket=bucket, Key=key, Body=b"x" * 500)  # bit rot, an operator's mistake
    assert objectstore.verify_copy(url, digest) == "corrupt"
    fetched = tmp_path / "fetched"
    with pytest.raises(ChecksumMismatch):
        objectstore.download_verified(url, fetched, digest)
    assert not fetched.exists() and not list(tmp_path.glob(".fetched.*"))


def test_choose_location_object_stores_are_unlimited_unless_given_a_capacity(tmp_path, s3_bucket):
    disk = Location("disk", tmp_path)
    bucket = objectstore.parse_location("obj", f"{s3_bucket}/archive")
    assert bucket.url == f"{s3_bucket}/archive" and bucket.capacity is None
    assert choose_location([disk, bucket], 10) is bucket  # no free space to ask a bucket for: always room
    small = objectstore.parse_location("obj", f"{s3_bucket}/archive?capacity=100")
    assert choose_location([disk, small], 10) is disk
    gone = ObjectLocation("gone", "s3://no-such-bucket-here/x")
    with pytest.raises(NoSpaceError, match="gone \\(s3://no-such-bucket-here/x\\): missing or unreadable"):
        choose_location([gone], 10)
    with pytest.raises(ValueError, match="unknown option"):
        objectstore.parse_location("obj", f"{s3_bucket}/x?quota=1")


def test_the_endpoint_comes_from_the_environment(s3_endpoint):
    assert os.environ["NETHARVEST_S3_ENDPOINT_URL"] == s3_endpoint
    assert objectstore.client().meta.endpoint_url == s3_endpoint


def test_compose_s_object_store_is_opt_in_private_and_without_default_credentials():
    import yaml

    compose = yaml.safe_load((Path(__file__).resolve().parents[2] / "docker-compose.yml").read_text())
    minio = compose["services"]["minio"]
    assert minio["profiles"] == ["objectstore"] and "ports" not in minio  # off by default, never published
    assert minio["environment"]["MINIO_ROOT_PASSWORD"] == "${NETHARVEST_S3_SECRET_KEY:-}"
    assert "-lt 16" in " ".join(minio["entrypoint"]) and minio["environment"]["MINIO_BROWSER"] == "off"
    assert "anonymous" not in " ".join(compose["services"]["minio-init"]["entrypoint"])
