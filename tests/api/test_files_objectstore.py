"""A job's file stored only in an object store downloads whole through the API (streamed from the bucket,
which API clients usually cannot reach), against a real S3-protocol server (tests/conftest.py)."""

from __future__ import annotations

import hashlib

import pytest

from indexer import objectstore
from orchestrator.harvest.models import ArchiveFile, ArchiveFileCopy
from tests.orchestrator import factories

pytestmark = pytest.mark.django_db


def test_a_file_in_an_object_store_downloads_whole(viewer, tmp_path, s3_bucket):
    job = factories.job()
    data = b"WARC/1.1\r\n" + bytes(range(256)) * 5000
    digest = hashlib.sha256(data).hexdigest()
    src = tmp_path / f"{job.pk}-a.warc.gz"
    src.write_bytes(data)
    url = objectstore.upload_verified(src, objectstore.join(s3_bucket, "archive", str(job.pk), src.name), digest)
    f = ArchiveFile.objects.create(
        job=job,
        name=src.name,
        kind="warc",
        size=len(data),
        sha256=digest,
        harvester_sha256=digest,
        spool_path="/harvester/elsewhere/x.warc.gz",
    )
    ArchiveFileCopy.objects.create(file=f, location="obj", path=url, verified_ok=True)
    response = viewer.get(f"/jobs/{job.pk}/files/{src.name}")
    assert response.status_code == 200 and response["Content-Disposition"].startswith("attachment")
    assert b"".join(response.streaming_content) == data and response["X-Netharvest-Sha256"] == digest
    objectstore.delete(url)
    gone = viewer.get(f"/jobs/{job.pk}/files/{src.name}")
    assert gone.status_code == 404 and s3_bucket not in str(gone.json())
