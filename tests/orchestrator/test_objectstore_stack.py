"""Two harvester workers that share no disk, one indexer, one object store (issue 15's Done-means).

Real processes: two Celery harvester workers, each with its own spool directory and ``NETHARVEST_DELIVERY``
pointing at a bucket of a real S3-protocol server (moto's, tests/conftest.py), and the orchestrator's
intake/indexer worker with no spool at all and an ``s3://`` storage location. Two jobs run at once, one on each
harvester; both are delivered, indexed, stored, verified and replayable by the real pywb, and a harvester's
receipt sweep then empties its spool. (A harvester killed -9 mid-upload: tests/harvester/test_delivery.py.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.request import urlopen

import pytest

from harvester import delivery
from orchestrator.harvest.archive import replay
from orchestrator.harvest.chain import verify
from orchestrator.harvest.curation import seeding
from orchestrator.harvest.models import ArchiveFile, CrawlTemplate, Job
from orchestrator.harvest.scheduling import scheduler
from tests.conftest import stop_processes, wait_for
from tests.orchestrator import factories
from tests.orchestrator.realstack import start_worker
from tests.staticsite import StaticServer, write_site

pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True)]

CELERY = str(Path(sys.executable).parent / "celery")


@pytest.fixture
def no_shared_disk(transactional_db: None, tmp_path: Path, settings, s3_bucket: str) -> Iterator[dict[str, Path]]:
    from django.db import connection

    if connection.vendor != "postgresql" or not os.environ.get("NETHARVEST_BROKER_URL", "").startswith("redis"):
        pytest.skip("worker processes need the test database on PostgreSQL and a Redis broker")
    db = connection.settings_dict
    index = tmp_path / "index"
    common = {
        "NETHARVEST_DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "NETHARVEST_DATA_DIR": str(settings.DATA_DIR),
        "DJANGO_SETTINGS_MODULE": "orchestrator.settings",
        "NETHARVEST_DEMO": "0",
        "NETHARVEST_INDEX_DIR": str(index),
        "NETHARVEST_DEDUP_INDEX": str(index / "dedup.sqlite3"),
        "NETHARVEST_STORAGE_LOCATIONS": f"obj={s3_bucket}/archive",
        "NETHARVEST_BACKUP_LOCATION": "",
    }
    for name, value in common.items():
        if name.startswith("NETHARVEST_") and name not in (
            "NETHARVEST_DATABASE_URL",
            "NETHARVEST_DATA_DIR",
            "NETHARVEST_DEMO",
        ):
            setattr(settings, name, Path(value) if name.endswith(("_DIR", "_INDEX")) else value)
    env = {**os.environ, **common}
    subprocess.run(
        [CELERY, "-A", "harvester.worker", "purge", "-f", "-Q", "harvest.focused,events,indexer"],
        env=env,
        check=True,
        capture_output=True,
    )
    spools = {"s3a": tmp_path / "spool-a", "s3b": tmp_path / "spool-b"}
    log = tmp_path / "workers.log"
    indexer_env = {**env, "NETHARVEST_SPOOL_DIR": str(tmp_path / "indexer-has-no-spool")}
    processes = [start_worker("orchestrator", "events,indexer", "s3idx", indexer_env, log)]
    for name, spool in spools.items():
        harvester_env = {**env, "NETHARVEST_SPOOL_DIR": str(spool), "NETHARVEST_DELIVERY": f"{s3_bucket}/delivery"}
        processes.append(start_worker("harvester.worker", "harvest.focused", name, harvester_env, log))
    yield spools
    stop_processes(*processes)


def test_two_harvesters_without_a_shared_disk_deliver_through_the_object_store(tmp_path, no_shared_disk, s3_bucket):
    from tests.replayhelp import start_replay

    write_site(tmp_path / "site", pages=4)
    server = StaticServer(tmp_path / "site")
    log = tmp_path / "workers.log"
    try:
        template = CrawlTemplate.objects.create(
            name="local static site", min_delay_ms=0, max_delay_ms=0, delay_factor=0, retry_delay_s=1, max_retries=1
        )
        jobs = []
        for name in ("object store one", "object store two"):
            definition = factories.selective_definition(name)
            assert seeding.add_seeds(definition, server.url, template).ok
            jobs += scheduler.run_now(definition, requested_by="test").jobs
        ids = [job.pk for job in jobs]
        wait_for(
            lambda: set(Job.objects.filter(pk__in=ids).values_list("status", flat=True)) <= {"DONE", "FAILED"},
            120,
            "both jobs to end",
        )
        done = list(Job.objects.filter(pk__in=ids))
        assert {j.status for j in done} == {"DONE"}, log.read_text()[-4000:]
        wait_for(
            lambda: (
                set(ArchiveFile.objects.filter(job_id__in=ids).values_list("index_state", flat=True)) == {"CLEANED"}
            ),
            120,
            "the jobs' files through the indexer chain",
        )
        assert sorted(j.harvester.split("@")[0] for j in done) == ["s3a", "s3b"]  # one job on each harvester
        for f in ArchiveFile.objects.filter(job_id__in=ids):
            assert f.spool_path == delivery.object_url(f"{s3_bucket}/delivery", f.job_id, f.name)  # delivered
            (copy,) = f.copies.all()
            assert copy.path == f"{s3_bucket}/archive/{f.job_id}/{f.name}" and copy.verified_ok
        assert not (tmp_path / "indexer-has-no-spool").exists()
        report = verify.verify()
        assert report.ok and report.good["obj"] == ArchiveFile.objects.filter(job_id__in=ids).count()

        service = start_replay(tmp_path / "index", tmp_path / "replay.log")
        try:
            with urlopen(server.url, timeout=30) as live:
                page = live.read()
            with urlopen(
                service.url + replay.replay_url(server.url, f"{done[0].created:%Y}", mode="id_"), timeout=30
            ) as response:  # the archived bytes, read from the bucket
                assert response.status == 200 and response.read() == page
        finally:
            service.stop()
    finally:
        server.shutdown()
    for name, spool in no_shared_disk.items():  # the sweep each harvester runs before its next job
        job = next(j for j in done if j.harvester.startswith(f"{name}@"))
        warcs = spool / str(job.pk) / "warcs"
        assert any(warcs.glob("*.warc.gz"))  # kept until the receipts...
        assert delivery.sweep_receipts(spool) == ArchiveFile.objects.filter(job=job).count()
        assert not any(warcs.glob("*.warc.gz"))  # ...then gone
