"""The chain with no shared file system: a harvester delivered its WARCs to the object store (harvester.delivery),
the chain ingests them from there, stores them in an s3:// location (replica on disk), writes receipts, and
the harvester's sweep then removes its spool copies; verify and repair work on objects. Real PostgreSQL, a
real S3-protocol server (moto's, tests/conftest.py)."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command

from harvester import delivery
from harvester.contracts import FileResult, JobResult
from indexer import objectstore
from indexer.pathindex import lookup
from orchestrator.harvest.chain import steps as chain
from orchestrator.harvest.chain import storage, verify
from orchestrator.harvest.jobs import intake, jobfiles
from orchestrator.harvest.models import ArchiveFile, Job, JobStatus
from tests.orchestrator import factories
from tests.orchestrator.chainhelp import sha256

pytestmark = pytest.mark.django_db


def deliver(warcs: list[Path], spool: Path, target: str) -> tuple[Job, Path]:
    """A job whose harvester (another machine) delivered ``warcs`` to ``target`` and reported the objects."""
    job = factories.job(None, domains=["example.fr"], status=JobStatus.STARTED)
    job_dir = spool / str(job.pk)
    (job_dir / "warcs").mkdir(parents=True)
    files = []
    for warc in warcs:
        dest = job_dir / "warcs" / f"{job.pk}-{warc.name.split('-', 1)[1]}"
        shutil.copyfile(warc, dest)
        files.append(
            FileResult(
                dest.name,
                str(dest),
                dest.stat().st_size,
                sha256(dest),
                "metadata" if "-metadata-" in dest.name else "warc",
            )
        )
    result = JobResult(
        job_id=job.pk,
        status="DONE",
        started="2026-11-23T10:00:00Z",
        ended="2026-11-23T10:05:00Z",
        files=tuple(files),
        domains=(),
    )
    delivered = delivery.deliver_result(result, job_dir, target)
    assert all(f.path == delivery.object_url(target, job.pk, f.name) for f in delivered.files)
    intake.record_result(delivered.to_dict())
    return job, job_dir


def test_delivered_files_are_stored_in_the_object_store_and_the_spool_swept_after_receipts(
    warcs, tmp_path, settings, s3_bucket
):
    target = f"{s3_bucket}/delivery"
    (tmp_path / "backup").mkdir()
    settings.NETHARVEST_INDEX_DIR = tmp_path / "index"
    settings.NETHARVEST_DEDUP_INDEX = tmp_path / "index" / "dedup.sqlite3"
    settings.NETHARVEST_STORAGE_LOCATIONS = f"obj={s3_bucket}/archive"
    settings.NETHARVEST_BACKUP_LOCATION = f"backup={tmp_path / 'backup'}"
    spool = tmp_path / "spool"  # the harvester's own disk: the chain never reads it
    job, job_dir = deliver(warcs, spool, target)
    hidden = tmp_path / "elsewhere"
    spool.rename(hidden)  # proof: the chain runs with the harvester's spool out of reach

    summary = chain.run_pending()
    assert (summary.done, summary.failed) == (len(warcs), [])
    for f in ArchiveFile.objects.filter(job=job):
        assert f.index_state == "CLEANED" and f.sha256 == f.harvester_sha256
        primary, replica = f.copies.get(is_replica=False), f.copies.get(is_replica=True)
        assert primary.path == f"{s3_bucket}/archive/{job.pk}/{f.name}"
        assert objectstore.sha256_object(primary.path) == sha256(Path(replica.path)) == f.sha256
        assert lookup(storage.path_file(job.pk, f.name), f.name) == [primary.path, replica.path]
        assert objectstore.size(f.spool_path) is None  # the delivered object: stored elsewhere, removed
        assert objectstore.size(delivery.receipt_url(f.spool_path)) is not None
    assert not (tmp_path / "index" / "fetch" / str(job.pk)).exists()  # the chain's local fetches are gone
    source = jobfiles.locate(job, jobfiles.CRAWL_LOG)  # the job's pages read its crawl.log from the bucket
    assert source.kind == "metadata WARC" and source.path.parent == tmp_path / "index" / "cache"

    hidden.rename(spool)
    kept = sorted((job_dir / "warcs").iterdir())
    assert len(kept) == len(warcs)  # the harvester removes nothing before it sees the receipts
    assert delivery.sweep_receipts(spool) == len(warcs)
    assert list((job_dir / "warcs").iterdir()) == []
    assert objectstore.list_keys(f"{target}/receipts") == []
    assert delivery.sweep_receipts(spool) == 0

    report = verify.verify()
    assert report.ok and sum(report.good.values()) == 2 * len(warcs)
    out = io.StringIO()
    call_command("index", "status", stdout=out)
    row = next(line for line in out.getvalue().splitlines() if line.startswith("obj "))
    assert f"{s3_bucket}/archive" in row and "unlimited" in row and "MISSING" not in row
    victim = ArchiveFile.objects.filter(job=job).first().copies.get(is_replica=False)
    bucket, key = objectstore.split(victim.path)
    objectstore.client().put_object(Bucket=bucket, Key=key, Body=b"rot")
    report = verify.verify(location="obj")
    assert [(p.kind, p.path) for p in report.problems] == [("corrupt", victim.path)]
    outcomes = verify.repair(report)
    assert outcomes[0][1].startswith("repaired from") and verify.verify().ok
    aside = [k for k in objectstore.list_keys(f"{s3_bucket}/archive/{job.pk}") if ".corrupt-" in k]
    assert len(aside) == 1  # the bad object kept aside for inspection, not overwritten


def test_a_delivered_file_that_does_not_match_fails_ingest_and_keeps_everything(warcs, tmp_path, settings, s3_bucket):
    settings.NETHARVEST_INDEX_DIR = tmp_path / "index"
    settings.NETHARVEST_DEDUP_INDEX = tmp_path / "index" / "dedup.sqlite3"
    settings.NETHARVEST_STORAGE_LOCATIONS = f"obj={s3_bucket}/archive"
    settings.NETHARVEST_BACKUP_LOCATION = ""
    job, _ = deliver(warcs[:1], tmp_path / "spool", f"{s3_bucket}/delivery")
    f = ArchiveFile.objects.get(job=job)
    bucket, key = objectstore.split(f.spool_path)
    objectstore.client().put_object(Bucket=bucket, Key=key, Body=b"damaged in transit")
    summary = chain.run_pending()
    assert summary.failed and "delivered copy" in summary.failed[0][1] and "SHA-256" in summary.failed[0][1]
    assert objectstore.size(delivery.receipt_url(f.spool_path)) is None
    assert (
        delivery.sweep_receipts(tmp_path / "spool") == 0
        and Path(tmp_path / "spool" / str(job.pk) / "warcs" / f.name).is_file()
    )


def test_pywb_replays_a_warc_stored_only_in_the_object_store(warcs, tmp_path, settings, s3_bucket):
    """The PATH index names the s3:// object (no replica to fall back to) and the real pywb serves the archived
    bytes from it (pywb's S3 loader, boto3 in its environment, the endpoint from the environment)."""
    from urllib.error import HTTPError
    from urllib.request import urlopen

    from warcio.archiveiterator import ArchiveIterator

    from orchestrator.harvest.archive import pages, replay
    from tests.replayhelp import start_replay

    settings.NETHARVEST_INDEX_DIR = tmp_path / "index"
    settings.NETHARVEST_DEDUP_INDEX = tmp_path / "index" / "dedup.sqlite3"
    settings.NETHARVEST_STORAGE_LOCATIONS = f"obj={s3_bucket}/archive"
    settings.NETHARVEST_BACKUP_LOCATION = ""
    warc = next(w for w in warcs if "-metadata-" not in w.name)
    job, _ = deliver([warc], tmp_path / "spool", f"{s3_bucket}/delivery")
    shutil.rmtree(tmp_path / "spool")
    assert not chain.run_pending().failed
    f = ArchiveFile.objects.get(job=job)
    assert lookup(storage.path_file(job.pk, f.name), f.name) == [f"{s3_bucket}/archive/{job.pk}/{f.name}"]
    with open(warc, "rb") as stream:
        record = next(
            r for r in ArchiveIterator(stream) if r.rec_type == "response" and r.http_headers.get_statuscode() == "200"
        )
        url, payload = record.rec_headers.get_header("WARC-Target-URI"), record.content_stream().read()
        stamp = record.rec_headers.get_header("WARC-Date")
    ts = "".join(c for c in stamp if c.isdigit())[:14]
    with open(warc, "rb") as stream:  # the captures list's page titles, read with a ranged GET from the bucket
        records = ArchiveIterator(stream)
        page = next(
            records.get_record_offset()
            for r in records
            if r.rec_type == "response" and b"<title>" in r.content_stream().read()
        )
    stored = pages._stored_path(f.name)
    assert stored == f"{s3_bucket}/archive/{job.pk}/{f.name}" and pages._read_title(stored, page)
    service = start_replay(tmp_path / "index", tmp_path / "replay.log")
    try:
        try:
            with urlopen(service.url + replay.replay_url(url, ts, mode="id_"), timeout=30) as response:
                assert response.status == 200 and response.read() == payload
        except HTTPError as exc:
            raise AssertionError(f"{exc}: {exc.read()[-2000:]} {service.log.read_text()[-3000:]}") from None
    finally:
        service.stop()
