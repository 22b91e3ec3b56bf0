"""The chain end to end through a real Celery indexer worker on Redis and PostgreSQL: a recorded JobResult
starts it (on commit), and a process killed with SIGKILL in the middle of a transfer leaves a claim that the
sweep hands to the worker once its lease has run out."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from orchestrator.celery import app
from orchestrator.harvest.chain import merging, storage
from orchestrator.harvest.models import ArchiveFile, ArchiveFileCopy
from tests.conftest import wait_for
from tests.orchestrator.chainhelp import data_lines, harvest, sha256
from tests.orchestrator.realstack import start_worker, stop_worker

pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True)]

REPO = Path(__file__).resolve().parents[2]

#: A worker's life ended by SIGKILL: it ingests and indexes one file, claims its transfer (with a 1 s lease),
#: records the copy it is making and has written half of it when it dies.
VICTIM = """
import os, signal, sys, tempfile
import django
django.setup()
from pathlib import Path
from orchestrator.harvest.chain import steps as chain, storage
from orchestrator.harvest.models import ArchiveFile, ArchiveFileCopy
f = ArchiveFile.objects.get(pk=int(sys.argv[1]))
for state in ("HARVESTED", "INGESTED"):
    step = chain.STEPS[state]
    token = chain.claim(f.pk, state)
    assert chain._record(f.pk, state, token, index_state=step.next, **step.run(f))
    f.refresh_from_db()
assert chain.claim(f.pk, "INDEXED")
location = storage.primary_locations()[0]
dest = storage.stored_path(location, f.job_id, f.name)
ArchiveFileCopy.objects.create(file=f, location=location.name, path=str(dest))
dest.parent.mkdir(parents=True, exist_ok=True)
data = Path(f.spool_path).read_bytes()
fd, _ = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)  # as copy_verified names it
with os.fdopen(fd, "wb") as part:
    part.write(data[: len(data) // 2])
    part.flush()
    os.kill(os.getpid(), signal.SIGKILL)
"""


def _process_env(storage_env: Path, settings) -> dict[str, str]:
    """The environment of a separate process (worker, `netharvest index run`) on this test's database and
    storage."""
    s = connection.settings_dict
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "orchestrator.settings",
        "NETHARVEST_DATABASE_URL": f"postgres://{s['USER']}@{s['HOST']}:{s['PORT']}/{s['NAME']}",
        "NETHARVEST_DATA_DIR": str(storage_env / "data"),
        "NETHARVEST_ARCHIVE_DIR": str(settings.NETHARVEST_ARCHIVE_DIR),
        "NETHARVEST_INDEX_DIR": str(settings.NETHARVEST_INDEX_DIR),
        "NETHARVEST_DEDUP_INDEX": str(settings.NETHARVEST_DEDUP_INDEX),
        "NETHARVEST_STORAGE_LOCATIONS": settings.NETHARVEST_STORAGE_LOCATIONS,
        "NETHARVEST_BACKUP_LOCATION": settings.NETHARVEST_BACKUP_LOCATION,
    }


def _purge() -> None:
    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge("indexer")


def test_a_real_indexer_worker_runs_the_chain_and_recovers_a_killed_transfer(warcs, storage_env, settings):
    if connection.vendor != "postgresql" or not app.conf.broker_url.startswith("redis"):
        pytest.skip("needs the real PostgreSQL and Redis")
    _purge()
    env = _process_env(storage_env, settings)
    worker = start_worker("orchestrator", "indexer", "indexer", env, storage_env / "worker.log", concurrency=2)
    try:
        # 1. A JobResult recorded: the chain starts when the transaction commits, on the worker.
        job = harvest(warcs, storage_env / "spool")
        wait_for(
            lambda: set(ArchiveFile.objects.filter(job=job).values_list("index_state", flat=True)) == {"CLEANED"},
            120,
            f"the worker to finish job {job.pk}'s files (log: {storage_env})",
        )
        assert ArchiveFileCopy.objects.filter(file__job=job, verified_ok=True).count() == 2 * len(warcs)

        # 2. While no worker runs, a second job is recorded (its tasks wait in Redis) and a process taking
        # one of its files through the chain is killed with SIGKILL half-way through writing the copy.
        stop_worker(worker)
        second = harvest(warcs, storage_env / "spool2")
        victim = ArchiveFile.objects.filter(job=second, kind="warc").order_by("name").first()
        killed = subprocess.run(
            [sys.executable, "-c", VICTIM, str(victim.pk)],
            cwd=REPO,
            timeout=60,
            env={**env, "NETHARVEST_INDEX_LEASE_S": "1"},
        )
        assert killed.returncode == -signal.SIGKILL
        victim.refresh_from_db()
        assert victim.index_state == "INDEXED" and victim.claim_token  # the dead process's claim
        assert list(Path(storage_env).glob(f"node*/{second.pk}/*.part"))  # and its half-written copy
        wait_for(
            lambda: ArchiveFile.objects.get(pk=victim.pk).claimed_until < timezone.now(),
            10,
            "the dead process's lease to run out",
        )

        # A worker comes back; its queued tasks and the sweep finish everything.
        worker = start_worker("orchestrator", "indexer", "indexer", env, storage_env / "worker2.log", concurrency=2)
        app.send_task("orchestrator.index.sweep", queue="indexer")
        wait_for(
            lambda: set(ArchiveFile.objects.filter(job=second).values_list("index_state", flat=True)) == {"CLEANED"},
            120,
            f"the worker to finish job {second.pk}'s files",
        )
        victim.refresh_from_db()
        assert not victim.error and not Path(victim.spool_path).exists()
        primary = victim.copies.get(is_replica=False)
        assert sha256(Path(primary.path)) == victim.sha256 and victim.copies.count() == 2
        assert not list(Path(storage_env).glob(f"node*/{second.pk}/*.part"))

        # 3. Merges through the worker's task: no duplicate line although both jobs hold the same records.
        app.send_task("orchestrator.index.merge", queue="indexer")
        # (the replay layout keeps an empty master from the start: wait for the merge itself)
        wait_for(lambda: storage.master_cdx().is_file() and data_lines(storage.master_cdx()), 60, "the merge task")
        master = data_lines(storage.master_cdx())
        assert (
            len(master) == len(set(master)) == sum(len(data_lines(Path(f.cdx_path))) for f in ArchiveFile.objects.all())
        )
        assert not merging.unmerged().exists()
    finally:
        stop_worker(worker)
        _purge()


def test_two_engineers_running_the_chain_at_once_share_the_files(warcs, storage_env, settings):
    """Two `netharvest index run` processes over the same files: each step of each file is done by one of
    them (the claims), so every file ends CLEANED with exactly one copy per location and nothing failed."""
    if connection.vendor != "postgresql":
        pytest.skip("needs the real PostgreSQL")
    env = _process_env(storage_env, settings)
    jobs = [harvest(warcs, storage_env / f"spool{i}") for i in range(3)]
    _purge()  # the intake's on-commit messages: no worker here, the two processes do the work
    netharvest = str(Path(sys.executable).with_name("netharvest"))
    runs = [
        subprocess.Popen(
            [netharvest, "index", "run"], env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=300)[0].decode() for p in runs]
    assert [p.returncode for p in runs] == [0, 0], outputs
    # Whatever one found held by the other, the other finished; a last run has nothing left to do.
    done = subprocess.run([netharvest, "index", "run"], env=env, cwd=REPO, capture_output=True, timeout=300)
    assert done.stdout.decode().startswith("0 files through the chain, 0 failed, 0 held"), done.stdout
    files = ArchiveFile.objects.filter(job__in=jobs)
    assert files.count() == 3 * len(warcs) and set(files.values_list("index_state", flat=True)) == {"CLEANED"}
    assert ArchiveFileCopy.objects.filter(file__in=files, verified_ok=True).count() == 2 * files.count()
    assert not list(Path(storage_env).glob("**/.*.part"))
