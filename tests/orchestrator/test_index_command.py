"""``netharvest index``: status, run, reindex, merge, verify and cdx as a crawl engineer sees them."""

from __future__ import annotations

import io
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from orchestrator.harvest.models import ArchiveFile
from tests.orchestrator.chainhelp import harvest
from tests.orchestrator.commands import command_output

pytestmark = pytest.mark.django_db


run = partial(command_output, "index", with_errors=True)


def test_status_run_merge_and_status_again(warcs, storage_env):
    job = harvest(warcs, storage_env / "spool")
    text = run("status")
    assert f"HARVESTED    {len(warcs)}" in text
    assert "node1" in text and "node2" in text and "backup" in text and "replica" in text

    assert run("run").startswith(f"{len(warcs)} files through the chain, 0 failed, 0 held by another worker")
    text = run("status")
    assert f"CLEANED      {len(warcs)}" in text and f"{len(warcs)} stored files not merged yet" in text
    rows = {line.split()[0]: line.split() for line in text.splitlines() if line.startswith(("node", "backup"))}
    assert int(rows["node1"][3]) + int(rows["node2"][3]) == len(warcs) and int(rows["backup"][3]) == len(warcs)

    text = run("merge", "--big")
    assert f"merge: {len(warcs)} files" in text and "bigmerge: 1 daily merges" in text
    assert f"harvest sub-indexes {job.harvest_id}" in text
    assert "0 stored files not merged yet, 0 daily merges waiting" in run("status")
    assert run("merge") == "merge: nothing new to merge\n"


def test_failures_are_listed_with_their_errors_and_run_exits_non_zero(warcs, storage_env, settings):
    settings.NETHARVEST_STORAGE_LOCATIONS = f"gone={storage_env / 'unmounted'}"
    harvest(warcs[:1], storage_env / "spool")
    with pytest.raises(CommandError, match="1 file\\(s\\) failed"):
        run("run")
    text = run("status")
    assert "Failed (netharvest index run retries them)" in text
    assert "transfer" in text and "no storage location is available: gone" in text
    assert "gone" in text and "MISSING" in text  # the location itself, in the locations table
    (storage_env / "unmounted").mkdir()
    assert run("run").startswith("1 files through the chain, 0 failed")


def test_reindex_and_unknown_files(warcs, storage_env):
    harvest(warcs[:2], storage_env / "spool")
    run("run")
    f = ArchiveFile.objects.filter(kind="warc").first()
    Path(f.cdx_path).unlink()
    text = run("reindex", f.name)
    assert f"{f.name}: {f.records} CDX lines" in text and Path(f.cdx_path).is_file()
    assert run("reindex", f"/some/dir/{f.name}").startswith(f.name)  # a path to the file is fine too
    with pytest.raises(CommandError, match="no archive file named nosuch.warc.gz"):
        run("reindex", "nosuch.warc.gz")
    with pytest.raises(CommandError, match="no archive file named nosuch.warc.gz"):
        run("verify", "--file", "nosuch.warc.gz")
    with pytest.raises(CommandError, match="no archive file named nosuch.warc.gz"):
        run("run", "nosuch.warc.gz")
    with pytest.raises(CommandError, match="no storage location named nowhere"):
        run("verify", "--location", "nowhere")


def test_verify_reports_missing_and_corrupt_copies_per_location(warcs, storage_env):
    harvest(warcs, storage_env / "spool")
    run("run")
    assert run("verify").endswith("all copies verified\n")
    one, two = ArchiveFile.objects.order_by("name")[:2]
    Path(one.copies.get(location="backup").path).unlink()
    damaged = Path(two.copies.get(is_replica=False).path)
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, one bit pattern changed: only the hash can tell
    damaged.write_bytes(bytes(data))
    out = io.StringIO()
    with pytest.raises(CommandError, match="2 problem\\(s\\) found"):
        call_command("index", "verify", stdout=out)
    text = out.getvalue()
    assert f"MISSING: backup {one.name}" in text
    assert f"CORRUPT: {two.copies.get(is_replica=False).location} {two.name}" in text and "SHA-256" in text
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines()[2:] if not line.startswith(" ")}
    assert rows["backup"] == [str(len(warcs)), str(len(warcs) - 1), "1", "0"]
    assert not two.copies.get(is_replica=False).verified_ok  # recorded, so status shows it too
    assert run("verify", "--location", "backup", "--file", two.name).endswith("all copies verified\n")


def test_verify_reports_a_missing_location(warcs, storage_env, settings):
    harvest(warcs[:1], storage_env / "spool")
    run("run")
    settings.NETHARVEST_BACKUP_LOCATION = f"backup={storage_env / 'moved'}"
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("index", "verify", stdout=out)
    assert "LOCATION MISSING: backup" in out.getvalue()


def test_bad_location_configuration_is_a_clear_error(warcs, storage_env, settings):
    settings.NETHARVEST_STORAGE_LOCATIONS = "node1=relative/path"
    with pytest.raises(CommandError, match="NETHARVEST_STORAGE_LOCATIONS: item 1: location node1 path"):
        run("status")
    settings.NETHARVEST_STORAGE_LOCATIONS = "/no/name"
    with pytest.raises(CommandError, match="must be name=/absolute/path"):
        run("status")


def test_cdx_prints_cdx_for_warc_files(warcs, capsys):
    call_command("index", "cdx", str(warcs[0]))
    printed = capsys.readouterr().out.encode()
    assert printed.startswith(b" CDX N b a m s k r M S V g\n") and len(data_lines_of(printed)) > 0


def data_lines_of(text: bytes) -> list[bytes]:
    return [line for line in text.splitlines() if not line.startswith(b" CDX ")]


def test_netharvest_index_cdx_needs_no_database(warcs, tmp_path):
    """The console script's shortcut, in a process with no database configured at all."""
    env = {
        "PATH": "/usr/bin:/bin",
        "NETHARVEST_DATABASE_URL": "postgres://nobody@127.0.0.1:1/none",
        "NETHARVEST_DATA_DIR": str(tmp_path),
    }
    done = subprocess.run(
        [str(Path(sys.executable).parent / "netharvest"), "index", "cdx", str(warcs[0])],
        env=env,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(b" CDX N b a m s k r M S V g\n") and data_lines_of(done.stdout)
    assert all(line.endswith(warcs[0].name.encode()) for line in data_lines_of(done.stdout))


def test_status_of_one_file(warcs, storage_env):
    harvest(warcs[:1], storage_env / "spool")
    f = ArchiveFile.objects.get()
    assert "state HARVESTED" in run("status", f.name) and "(present)" in run("status", f.name)
    run("run")
    text = run("status", f.name)
    assert "state CLEANED" in text and "(gone)" in text
    f.refresh_from_db()
    assert f"SHA-256 {f.sha256}" in text and f"({f.records} lines)" in text
    assert "primary" in text and "replica" in text and "NO" not in text.split("verified (UTC)")[1]
    with pytest.raises(CommandError, match="no archive file named x.warc.gz"):
        run("status", "x.warc.gz")


def test_a_damaged_cdx_file_stops_the_merge_with_its_name_and_leaves_the_master_alone(warcs, storage_env):
    from orchestrator.harvest.chain import storage

    harvest(warcs, storage_env / "spool")
    run("run")
    run("merge", "--big")
    master = storage.master_cdx().read_bytes()
    f = ArchiveFile.objects.filter(kind="warc").first()
    ArchiveFile.objects.filter(pk=f.pk).update(merged_at=None)
    cdx = Path(f.cdx_path)
    header, *lines = cdx.read_bytes().splitlines(keepends=True)
    cdx.write_bytes(header + b"".join(reversed(lines)))  # no longer sorted
    with pytest.raises(CommandError, match=f"not sorted.*{f.name}"):
        run("merge", "--big")
    assert storage.master_cdx().read_bytes() == master
    assert "1 stored files not merged yet" in run("status")
    run("reindex", f.name)
    assert run("merge", "--big").startswith("merge: 1 files")
    assert storage.master_cdx().read_bytes() == master


def test_verify_repair_restores_copies_from_good_ones_and_reports_lost_files(warcs, storage_env):
    harvest(warcs, storage_env / "spool")
    run("run")
    one, two, three = ArchiveFile.objects.order_by("name")[:3]
    Path(one.copies.get(is_replica=True).path).unlink()
    damaged = Path(two.copies.get(is_replica=False).path)
    damaged.write_bytes(b"rot")
    text = run("verify", "--repair", "--file", one.name) + run("verify", "--repair", "--file", two.name)
    assert "backup " + one.name + ": repaired from" in text and two.name + ": repaired from" in text
    assert run("verify").endswith("all copies verified\n")
    assert [p.read_bytes() for p in damaged.parent.glob(f".{two.name}.corrupt-*")] == [b"rot"]  # kept aside
    for copy in three.copies.all():  # every copy of the third file is gone: nothing to repair from
        Path(copy.path).unlink()
    out = io.StringIO()
    with pytest.raises(CommandError, match="2 problem\\(s\\) not repaired"):
        call_command("index", "verify", "--repair", stdout=out)
    assert f"{three.name}: LOST: no good copy" in out.getvalue()


def test_dedup_load_moves_the_sqlite_index_into_the_service_and_the_chain_then_feeds_it(
    warcs, storage_env, settings, tmp_path
):
    """Issue 15's migration path: the SQLite index the chain fed so far, loaded into the dedup service, gives
    the same answers; from then on the chain (here a reindex) feeds the service, idempotently."""
    from indexer.dedup import DedupIndex
    from indexer.dedupclient import DedupClient
    from orchestrator.harvest.chain import storage
    from tests.dedupsvc import ServiceProcess

    harvest(warcs, storage_env / "spool")
    run("run")
    with DedupIndex(storage.dedup_index_path(), readonly=True) as idx:
        digests = [r[0] for r in idx.db.execute("SELECT digest FROM by_digest")]
        urls = [r[0] for r in idx.db.execute("SELECT url FROM by_url")]
        expected = ({d: idx.by_digest(d) for d in digests}, {u: idx.by_url(u) for u in urls})
    assert digests and urls
    with pytest.raises(CommandError, match="NETHARVEST_DEDUP_URL is not set"):
        run("dedup-load")

    service = ServiceProcess(tmp_path / "dedup.rocksdb")
    try:
        settings.NETHARVEST_DEDUP_URL = service.url
        assert storage.dedup_location() == service.url  # what new JobSpecs name
        assert f"loaded {len(digests) + len(urls)} captures" in run("dedup-load")
        client = DedupClient(service.url)
        assert client.lookup(digests, urls) == expected
        name = ArchiveFile.objects.filter(kind="warc").order_by("name").values_list("name", flat=True)[0]
        run("reindex", name)  # the chain's feed, now through the service: nothing changes
        assert client.lookup(digests, urls) == expected
        client.close()
        service.stop()
        with pytest.raises(CommandError, match="unreachable"):
            run("dedup-load")
    finally:
        service.stop()
