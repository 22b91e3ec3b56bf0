"""The indexer chain over real WARCs on real PostgreSQL: every step, idempotence, crash recovery, failures
recorded on the file, the spool copy kept until every copy is verified, merges without duplicate lines."""

from __future__ import annotations

import os
import stat
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from warcio.archiveiterator import ArchiveIterator

from indexer.dedup import DedupIndex
from orchestrator.harvest.chain import merging, storage
from orchestrator.harvest.chain import steps as chain
from orchestrator.harvest.models import ArchiveFile, ArchiveFileCopy
from tests.indexer.warcs import corrupt_deflate
from tests.orchestrator import factories
from tests.orchestrator.chainhelp import data_lines, harvest, sha256, states

pytestmark = pytest.mark.django_db


def test_the_whole_chain_stores_indexes_and_merges_every_file(warcs, storage_env):
    job = harvest(warcs, storage_env / "spool")
    assert set(states(job).values()) == {"HARVESTED"}

    summary = chain.run_pending()
    assert (summary.done, summary.failed, summary.busy) == (len(warcs), [], [])
    files = list(ArchiveFile.objects.filter(job=job))
    assert {f.index_state for f in files} == {"CLEANED"}
    for f in files:
        original = next(w for w in warcs if w.name.split("-", 1)[1] == f.name.split("-", 1)[1])
        assert f.sha256 == f.harvester_sha256 == sha256(original)  # ingest: our hash, checked against theirs
        assert f.harvest_id == job.harvest_id and f.records > 0 and Path(f.cdx_path).is_file()
        primary = f.copies.get(is_replica=False)
        replica = f.copies.get(is_replica=True)
        assert primary.location in ("node1", "node2") and replica.location == "backup"
        assert primary.verified_ok and replica.verified_ok
        assert sha256(Path(primary.path)) == sha256(Path(replica.path)) == f.sha256
        assert Path(primary.path) == storage_env / primary.location / str(job.pk) / f.name
        assert not Path(f.spool_path).exists()  # deleted only now that both copies are verified
    assert not (storage_env / "spool" / str(job.pk) / "warcs").exists()  # clean: the emptied spool directory

    with DedupIndex(storage.dedup_index_path(), readonly=True) as dedup:
        assert dedup.db.execute("SELECT count(*) FROM by_digest").fetchone()[0] > 0

    assert merging.merge().files == len(warcs)
    big = merging.bigmerge()
    master = data_lines(storage.master_cdx())
    expected = sorted({line for f in files for line in data_lines(Path(f.cdx_path))})
    assert master == expected and big.master_cdx_lines == len(master)
    assert storage.master_cdx().read_bytes().startswith(b" CDX N b a m s k r M S V g\n")
    paths = {
        row[0]: row[1:]
        for row in (line.decode().rstrip("\n").split("\t") for line in data_lines(storage.master_path()))
    }
    assert sorted(paths) == sorted(f.name for f in files)
    for f in files:  # the primary copy, then the replica pywb falls back to
        assert paths[f.name] == [f.copies.get(is_replica=False).path, f.copies.get(is_replica=True).path]
    assert data_lines(storage.harvest_cdx(job.harvest_id)) == expected  # the definition's sub-index
    _replay_every_line(master, paths)


def _replay_every_line(master: list[bytes], path_index: dict[str, list[str]]) -> None:
    """Each master CDX line's file (through the PATH index), offset and length give back its record."""
    for line in master:
        fields = line.decode().split()
        url, length, offset, filename = fields[2], int(fields[8]), int(fields[9]), fields[10]
        with open(path_index[filename][0], "rb") as stream:
            stream.seek(offset)
            record = next(iter(ArchiveIterator(stream)))
            assert record.rec_headers.get_header("WARC-Target-URI") == url
        assert length > 0


def test_every_stored_file_and_index_takes_the_umask_mode(warcs, storage_env):
    """Under umask 027 a replay service in the archive's group can read every stored WARC, CDX, PATH
    and master index: they were 0600 (tempfile.mkstemp), readable by the chain's user alone."""
    old = os.umask(0o027)
    try:
        harvest(warcs, storage_env / "spool")
        chain.run_pending()
        merging.merge()
        merging.bigmerge()
    finally:
        os.umask(old)
    stored = [p for top in ("node1", "node2", "backup", "index") for p in (storage_env / top).rglob("*") if p.is_file()]
    assert any(p.name.endswith(".warc.gz") for p in stored) and storage.master_cdx() in stored
    assert storage.master_path() in stored
    assert {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in stored} == {p.name: "0o640" for p in stored}


def test_running_everything_twice_changes_nothing(warcs, storage_env):
    harvest(warcs, storage_env / "spool")
    chain.run_pending()
    merging.merge()
    merging.bigmerge()
    master = storage.master_cdx().read_bytes()
    path_index = storage.master_path().read_bytes()

    assert chain.run_pending().done == 0  # nothing pending
    assert merging.merge().files == 0
    merging.bigmerge()
    # A daily merged again (a crash after the master was replaced, before the daily was removed) and a
    # reindexed file (its lines merged a second time) add no line.
    ArchiveFile.objects.update(merged_at=None)
    chain.reindex(ArchiveFile.objects.filter(kind="warc").first().name)
    assert merging.merge().files == len(warcs)
    merging.bigmerge()
    assert storage.master_cdx().read_bytes() == master
    assert storage.master_path().read_bytes() == path_index
    assert ArchiveFileCopy.objects.count() == 2 * len(warcs)


def test_a_worker_killed_mid_transfer_leaves_a_state_the_next_run_finishes(warcs, storage_env, settings):
    job = harvest(warcs, storage_env / "spool")
    victim = ArchiveFile.objects.filter(job=job, kind="warc").order_by("name").first()
    # Ingest and index everything, then play the dead worker: it had claimed the transfer, recorded the
    # copy and written half of it when it was killed.
    for f in ArchiveFile.objects.filter(job=job):
        for step in ("HARVESTED", "INGESTED"):
            token = chain.claim(f.pk, step)
            f.refresh_from_db()
            assert chain._record(f.pk, step, token, index_state=chain.STEPS[step].next, **chain.STEPS[step].run(f))
    victim.refresh_from_db()
    token = chain.claim(victim.pk, "INDEXED")
    dest = storage.stored_path(storage.primary_locations()[1], job.pk, victim.name)
    ArchiveFileCopy.objects.create(file=victim, location="node2", path=str(dest))
    dest.parent.mkdir(parents=True)
    (dest.parent / f".{victim.name}.dead1234.part").write_bytes(Path(victim.spool_path).read_bytes()[:1000])
    # A half-written CDX of another step's crash lies about too.
    Path(victim.cdx_path).with_suffix(".tmp").write_bytes(b"garbage")

    summary = chain.run_pending()
    assert victim.name in summary.busy  # its lease is still running: nobody else takes it yet
    ArchiveFile.objects.filter(pk=victim.pk).update(claimed_until=timezone.now() - timedelta(seconds=1))
    assert chain.run_pending().done == 1
    victim.refresh_from_db()
    assert victim.index_state == "CLEANED" and token != victim.claim_token
    primary = victim.copies.get(is_replica=False)  # the copy went where the dead worker had put it
    assert (primary.location, sha256(dest)) == ("node2", victim.sha256)
    assert ArchiveFileCopy.objects.filter(file=victim).count() == 2
    assert not list(dest.parent.glob("*.part"))  # the dead worker's partial copy is gone


def test_take_over_ignores_a_live_lease(warcs, storage_env):
    job = harvest(warcs[:1], storage_env / "spool")
    f = ArchiveFile.objects.get(job=job)
    assert chain.claim(f.pk, "HARVESTED")
    assert chain.claim(f.pk, "HARVESTED") is None  # exactly one claim wins
    assert chain.run_pending().busy == [f.name]
    assert chain.run_pending(take_over=True).done == 1


def test_a_step_that_loses_its_lease_does_not_record_over_the_new_holder(warcs, storage_env):
    job = harvest(warcs[:1], storage_env / "spool")
    f = ArchiveFile.objects.get(job=job)
    old = chain.claim(f.pk, "HARVESTED")
    new = chain.claim(f.pk, "HARVESTED", take_over=True)
    assert not chain._record(f.pk, "HARVESTED", old, index_state="INGESTED")
    assert chain._record(f.pk, "HARVESTED", new, index_state="INGESTED")


def test_a_checksum_that_does_not_match_the_bytes_fails_ingest(warcs, storage_env):
    job = harvest(warcs, storage_env / "spool", corrupt_checksum=warcs[0].name)
    chain.run_pending()
    bad = ArchiveFile.objects.get(job=job, harvester_sha256="0" * 64)
    assert (bad.index_state, bad.failed_step, bad.attempts) == ("FAILED", "HARVESTED", 1)
    assert bad.error.startswith("ingest: the SHA-256 of") and "the harvester reported 000" in bad.error
    assert Path(bad.spool_path).exists() and not bad.copies.exists()
    assert ArchiveFile.objects.filter(job=job, index_state="CLEANED").count() == len(warcs) - 1
    chain.run_pending()  # retried, fails again, counted
    bad.refresh_from_db()
    assert (bad.index_state, bad.attempts) == ("FAILED", 2)


def test_corrupt_deflate_data_fails_the_index_step_with_file_and_offset(warcs, storage_env, tmp_path):
    """A WARC whose compressed data is corrupt (checksums match: it was written so) is a failure
    recorded on the file, naming the member's offset, not an IsalError escaping the step."""
    bad = tmp_path / warcs[0].name
    bad.write_bytes(warcs[0].read_bytes())
    offset = corrupt_deflate(bad)
    job = harvest([bad, *warcs[1:]], storage_env / "spool")
    chain.run_pending()
    failed = ArchiveFile.objects.get(job=job, index_state="FAILED")
    assert failed.failed_step == "INGESTED"
    assert failed.error.startswith(
        f"index: WarcFormatError: {failed.spool_path}: corrupt gzip data in the member at offset {offset}"
    )
    assert ArchiveFile.objects.filter(job=job, index_state="CLEANED").count() == len(warcs) - 1


def test_missing_locations_fail_the_transfer_and_a_rerun_finishes(warcs, storage_env, settings):
    settings.NETHARVEST_STORAGE_LOCATIONS = f"gone={storage_env / 'unmounted'}"
    job = harvest(warcs, storage_env / "spool")
    summary = chain.run_pending()
    assert len(summary.failed) == len(warcs)
    f = ArchiveFile.objects.filter(job=job).first()
    assert (f.index_state, f.failed_step) == ("FAILED", "INDEXED")
    assert "no storage location is available: gone" in f.error and "unmounted" in f.error
    assert Path(f.spool_path).exists()
    (storage_env / "unmounted").mkdir()  # the node is mounted again
    assert chain.run_pending().done == len(warcs)
    assert set(ArchiveFileCopy.objects.filter(is_replica=False).values_list("location", flat=True)) == {"gone"}


def test_the_spool_copy_stays_until_the_replica_is_verified(warcs, storage_env, settings):
    settings.NETHARVEST_BACKUP_LOCATION = f"backup={storage_env / 'backup-not-mounted'}"
    job = harvest(warcs, storage_env / "spool")
    chain.run_pending()
    for f in ArchiveFile.objects.filter(job=job):
        assert (f.index_state, f.failed_step) == ("FAILED", "TRANSFERRED")
        assert f.copies.get().verified_ok and Path(f.spool_path).exists()
    # Not in the master indexes before they are stored as configured (the PATH line names the replica too).
    assert merging.merge().files == 0
    (storage_env / "backup-not-mounted").mkdir()
    assert chain.run_pending().done == len(warcs)
    assert all(not Path(f.spool_path).exists() for f in ArchiveFile.objects.filter(job=job))
    assert merging.merge().files == len(warcs)


def test_a_copy_damaged_before_the_delete_step_keeps_the_spool_copy(warcs, storage_env):
    job = harvest(warcs[:1], storage_env / "spool")
    f = ArchiveFile.objects.get(job=job)
    while f.index_state != "BACKED_UP":
        token = chain.claim(f.pk, f.index_state)
        step = chain.STEPS[f.index_state]
        chain._record(f.pk, step.done, token, index_state=step.next, **step.run(f))
        f.refresh_from_db()
    stored = Path(f.copies.get(is_replica=False).path)
    stored.write_bytes(stored.read_bytes()[:-10])
    chain.run_pending()
    f.refresh_from_db()
    assert (f.index_state, f.failed_step) == ("FAILED", "BACKED_UP")
    assert "missing or has the wrong size" in f.error and Path(f.spool_path).exists()


def test_a_different_file_already_stored_under_the_same_name_is_never_overwritten(warcs, storage_env, settings):
    settings.NETHARVEST_STORAGE_LOCATIONS = f"node1={storage_env / 'node1'}"
    job = harvest(warcs[:1], storage_env / "spool")
    f = ArchiveFile.objects.get(job=job)
    squatter = storage_env / "node1" / str(job.pk) / f.name
    squatter.parent.mkdir(parents=True)
    squatter.write_bytes(b"another file with this name")
    chain.run_pending()
    f.refresh_from_db()
    assert f.index_state == "FAILED" and "refusing to overwrite" in f.error
    assert squatter.read_bytes() == b"another file with this name"


def test_a_second_file_with_the_same_name_is_refused(warcs, storage_env):
    from orchestrator.harvest.jobs.intake import IntakeError

    first = harvest(warcs[:1], storage_env / "spool")
    name = ArchiveFile.objects.get(job=first).name
    other = factories.job(factories.selective_definition("other"), domains=["b.fr"], status="STARTED")
    with pytest.raises(IntakeError, match="already in the archive"):
        from orchestrator.harvest.jobs import intake

        intake.record_result(
            {
                "version": 1,
                "job_id": other.pk,
                "status": "DONE",
                "ended": "2026-11-23T10:00:00Z",
                "files": [{"name": name, "path": "/elsewhere/" + name, "size": 1, "sha256": "a" * 64}],
            }
        )
    assert ArchiveFile.objects.filter(name=name).count() == 1


def test_sweep_queues_what_was_left_behind_and_retries_failures_a_few_times(warcs, storage_env, settings):
    from orchestrator.celery import app

    if not app.conf.broker_url.startswith("redis"):
        pytest.skip("needs the real Redis")
    job = harvest(warcs[:2], storage_env / "spool")
    a, b = ArchiveFile.objects.filter(job=job).order_by("name")
    ArchiveFile.objects.filter(pk=b.pk).update(index_state="FAILED", failed_step="INDEXED", attempts=1)
    busy = chain.claim(a.pk, "HARVESTED")
    try:
        assert chain.sweep() == 1  # b, retried; a is held by a live lease
        ArchiveFile.objects.filter(pk=a.pk).update(claimed_until=timezone.now() - timedelta(seconds=1))
        assert chain.sweep() == 1  # a now; b was queued a moment ago
        ArchiveFile.objects.filter(pk=b.pk).update(
            index_state="FAILED", attempts=settings.NETHARVEST_INDEX_AUTO_RETRIES
        )
        assert chain.sweep() == 0  # given up on: an engineer's `index run` retries it
        assert busy
    finally:
        with app.connection_for_write() as conn:
            conn.default_channel.queue_purge("indexer")


def test_merge_crash_between_daily_and_marking_adds_no_duplicates(warcs, storage_env):
    harvest(warcs, storage_env / "spool")
    chain.run_pending()
    merging.merge()
    ArchiveFile.objects.update(merged_at=None)  # the crash: the daily exists, the files were never marked
    merging.merge()
    # And a daily cut short before its manifest: removed by bigmerge, its files merged again later.
    daily = storage.daily_dir()
    (daily / "20260101000000000000.cdx").write_bytes(b"a line that must never reach the master\n")
    (storage.index_dir() / ".master.cdx.k1ll3d.tmp").write_bytes(b"half a master")  # a merge killed half-way
    big = merging.bigmerge()
    assert big.dailies == 2
    master = data_lines(storage.master_cdx())
    assert len(master) == len(set(master)) and b"never reach" not in b"".join(master)
    assert not list(daily.iterdir()) and not list(storage.index_dir().glob(".*.tmp"))


def test_rebuild_gives_the_same_master(warcs, storage_env):
    harvest(warcs, storage_env / "spool")
    chain.run_pending()
    merging.merge()
    merging.bigmerge()
    master, path_index = storage.master_cdx().read_bytes(), storage.master_path().read_bytes()
    os.remove(storage.master_cdx())
    merging.rebuild()
    assert storage.master_cdx().read_bytes() == master and storage.master_path().read_bytes() == path_index


def test_two_jobs_of_two_definitions_get_their_own_sub_indexes(warcs, storage_env):
    one = harvest(warcs[:1], storage_env / "spool")
    two = harvest(
        warcs[1:2], storage_env / "spool", definition=factories.selective_definition("elections"), domain="other.fr"
    )
    chain.run_pending()
    merging.merge()
    assert set(merging.bigmerge().harvests) == {one.harvest_id, two.harvest_id}
    for job in (one, two):
        f = ArchiveFile.objects.get(job=job)
        assert data_lines(storage.harvest_cdx(job.harvest_id)) == data_lines(Path(f.cdx_path))


def test_the_index_step_reads_each_warc_once_and_writes_what_the_two_passes_wrote(
    warcs, storage_env, tmp_path, monkeypatch
):
    """The CDX and the dedup feed come from one read of the spool copy (they parsed it twice), and both
    outputs equal the separate CDX pass's and dedup pass's, byte for byte and row for row."""
    import builtins

    from indexer.cdx import write_cdx
    from indexer.dedupfeed import add_warc

    job = harvest(warcs, storage_env / "spool")
    files = list(ArchiveFile.objects.filter(job=job).order_by("name"))
    real_open = builtins.open
    reads: dict[str, list[int]] = {}

    class Counted:
        """The file object the step gets, counting the bytes it reads."""

        def __init__(self, f, log):
            self._f, self._log = f, log

        def read(self, *a):
            data = self._f.read(*a)
            self._log.append(len(data))
            return data

        def readline(self, *a):
            data = self._f.readline(*a)
            self._log.append(len(data))
            return data

        def __getattr__(self, name):
            return getattr(self._f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._f.close()

    def counting_open(file, *args, **kwargs):
        f = real_open(file, *args, **kwargs)
        if isinstance(file, (str, Path)) and str(file) in spool_paths:
            opened.append(str(file))
            return Counted(f, reads.setdefault(str(file), []))
        return f

    spool_paths = {f.spool_path for f in files}
    opened: list[str] = []
    monkeypatch.setattr(builtins, "open", counting_open)
    for f in files:
        chain.index(f)
    monkeypatch.undo()
    assert sorted(opened) == sorted(spool_paths)  # each WARC opened once by the step...
    for f in files:  # ...and read once: no byte of it read twice (but the 5-byte format sniff)
        assert Path(f.spool_path).stat().st_size <= sum(reads[f.spool_path]) <= Path(f.spool_path).stat().st_size + 5

    with DedupIndex(tmp_path / "two-pass.sqlite") as two:
        for f in files:
            two_cdx = tmp_path / (f.name + ".cdx")
            write_cdx(Path(f.spool_path), two_cdx, filename=f.name)
            assert storage.cdx_path(f.job_id, f.name).read_bytes() == two_cdx.read_bytes()
            if f.kind == "warc":
                add_warc(two, Path(f.spool_path), f.name)
        expected = [two.db.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in ("by_digest", "by_url")]
    with DedupIndex(storage.dedup_index_path(), readonly=True) as one:
        assert [one.db.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in ("by_digest", "by_url")] == expected
    assert expected[0]  # the WARCs had captures to compare
