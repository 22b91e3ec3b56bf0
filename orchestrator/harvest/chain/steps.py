"""The indexer chain after each job (shared/seeds/001…, 4.1): ingest → index → transfer → backup → delete.

Each file moves on its own, so any number of indexer workers share the work file by file. A step is
claimed with one conditional UPDATE (``… WHERE index_state = <last step done> AND the lease is free``),
done, and recorded with another (``… WHERE claim_token = <mine>``); the state only ever names a step that
finished. The lease is short (``NETHARVEST_INDEX_LEASE_S``, 2 min) and renewed by the live worker while its
step runs (orchestrator.harvest.chain.leases), so a slow step keeps its file and a dead worker's file is free again
within a lease; a worker whose claim was taken over stops its step and records nothing.

Every step is written to be repeated: outputs are written under a temporary name and renamed, a copy is
recorded before it is made so a re-run finds it, the dedup index ignores captures it has. So a
worker killed anywhere leaves the file in the last finished state with a lease that runs out, the sweep
(every minute) queues it again, and whoever takes it next redoes only the unfinished step.

A step that fails records why on the file (FAILED, ``failed_step``, ``error``); the sweep retries it a
few times on its own (a full disk, a location briefly unmounted) and ``netharvest index run`` always does.
The spool copy is deleted only after the stored copy (and the replica, if configured) passed their
checksum, and a stored copy is never overwritten by a different file of the same name.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from harvester import delivery
from indexer import objectstore
from indexer.dedup import Capture, DedupIndex
from indexer.dedupclient import DedupClient, DedupServiceError
from indexer.indexpass import index_warc
from indexer.objectstore import ObjectLocation
from indexer.pathindex import path_line, write_path_file
from indexer.transfer import StorageError, choose_location, copy_verified, sha256_file
from orchestrator.harvest.archive import replay
from orchestrator.harvest.chain import storage
from orchestrator.harvest.chain.leases import ClaimLost, LeaseKeeper, still_mine
from orchestrator.harvest.chain.locks import file_lock
from orchestrator.harvest.models import ArchiveFile, ArchiveFileCopy, Job, JobStatus
from orchestrator.harvest.models.archive import IndexState
from orchestrator.harvest.qa import pageqa

log = logging.getLogger(__name__)

INDEX_FILE_TASK = "orchestrator.index.file"


class ChainError(Exception):
    """A step cannot be done; the message says what and where, and is recorded on the file."""


# --- the steps -------------------------------------------------------------------------------------


def ingest(f: ArchiveFile) -> dict[str, Any]:
    """Check the spool copy against what the harvester reported, and compute our own SHA-256. A file the
    harvester delivered to the object store (its path an ``s3://`` URL) is fetched first (_spool_copy)."""
    src = _spool_copy(f)
    size = src.stat().st_size
    if size != f.size:
        raise ChainError(f"{src} is {size} bytes; the harvester reported {f.size}")
    digest = sha256_file(src, still_mine)
    if f.harvester_sha256 and digest != f.harvester_sha256:
        raise ChainError(
            f"the SHA-256 of {src} is {digest}, the harvester reported {f.harvester_sha256}: "
            "the file changed or was damaged after it was written"
        )
    return {"sha256": digest}


def index(f: ArchiveFile) -> dict[str, Any]:
    """One sorted CDX for the file; a WARC's captures go into the dedup index for the next jobs."""
    src = _spool_copy(f)
    out = storage.cdx_path(f.job_id, f.name)
    return {"cdx_path": str(out), "records": index_and_feed(f, src, out), "merged_at": None}


def index_and_feed(f: ArchiveFile, src: Path, out: Path) -> int:
    """Write ``out``, the CDX of ``src``, and feed a WARC's captures to the dedup index, in one read of the
    file (indexer.indexpass); returns the number of CDX lines."""
    result = index_warc(src, out, filename=f.name, captures=f.kind == "warc")
    with result.captures:
        if f.kind == "warc":
            feed_dedup(result.captures)
    return result.records


def transfer(f: ArchiveFile) -> dict[str, Any]:
    """Copy into the storage location with the most free space, verify the copy, write the PATH line."""
    copy = _place_copy(f, storage.primary_locations(), replica=False)
    write_path_file([path_line(f.name, _directory(copy.path))], storage.path_file(f.job_id, f.name))
    return {}


def backup(f: ArchiveFile) -> dict[str, Any]:
    """A verified replica in the backup location, if one is configured (else nothing to do). The PATH line
    then names the replica after the primary copy, so replay falls back to it (pywb tries each path)."""
    location = storage.backup_location()
    if location is not None:
        replica = _place_copy(f, [location], replica=True)
        primary = f.copies.get(is_replica=False)
        write_path_file(
            [path_line(f.name, _directory(primary.path), _directory(replica.path))], storage.path_file(f.job_id, f.name)
        )
    return {}


def delete(f: ArchiveFile) -> dict[str, Any]:
    """Remove the harvester's spool copy, only once every copy the configuration asks for is verified. For a
    file the harvester delivered, write its receipt (the harvester's worker then deletes its spool copy:
    harvester.delivery.sweep_receipts) and remove the delivered object and the chain's local fetch."""
    copies = list(f.copies.all())
    if not any(not c.is_replica and c.verified_ok for c in copies):
        raise ChainError("no verified stored copy: the spool copy stays")
    backup_loc = storage.backup_location()
    if backup_loc is not None and not any(
        c.is_replica and c.verified_ok and c.location == backup_loc.name for c in copies
    ):
        raise ChainError(f"no verified replica in {backup_loc.name}: the spool copy stays")
    for c in copies:
        if _size(c.path) != f.size:
            raise ChainError(
                f"the copy in {c.location} ({c.path}) is missing or has the wrong size: the spool "
                "copy stays (netharvest index verify)"
            )
    if objectstore.is_url(f.spool_path):
        objectstore.put_bytes(delivery.receipt_url(f.spool_path), f.sha256.encode("ascii"))
        if f.spool_path not in {c.path for c in copies}:
            objectstore.delete(f.spool_path)
        storage.fetch_path(f.job_id, f.name).unlink(missing_ok=True)
    elif f.spool_path:
        Path(f.spool_path).unlink(missing_ok=True)
    return {}


@dataclass(frozen=True)
class Step:
    name: str
    done: str  # the state the file is in before the step
    next: str  # the state it is in after
    run: Callable[[ArchiveFile], dict[str, Any]]


STEPS: dict[str, Step] = {
    s.done: s
    for s in [
        Step("ingest", IndexState.HARVESTED, IndexState.INGESTED, ingest),
        Step("index", IndexState.INGESTED, IndexState.INDEXED, index),
        Step("transfer", IndexState.INDEXED, IndexState.TRANSFERRED, transfer),
        Step("backup", IndexState.TRANSFERRED, IndexState.BACKED_UP, backup),
        Step("delete", IndexState.BACKED_UP, IndexState.CLEANED, delete),
    ]
}
#: States in which a file is stored as configured (copy and replica verified): its CDX and final PATH line
#: may go into the master indexes.
STORED_STATES = (IndexState.BACKED_UP, IndexState.CLEANED)


def step_name(state: str) -> str:
    return STEPS[state].name if state in STEPS else state


# --- claiming and recording --------------------------------------------------------------------------


def lease() -> timedelta:
    return timedelta(seconds=settings.NETHARVEST_INDEX_LEASE_S)


def renew(file_id: int, state: str, token: str) -> bool:
    """Extend this worker's claim by a lease from now; False if it is no longer this worker's."""
    return (
        ArchiveFile.objects.filter(pk=file_id, index_state=state, claim_token=token).update(
            claimed_until=timezone.now() + lease()
        )
        == 1
    )


def claim(file_id: int, state: str, take_over: bool = False) -> str | None:
    """Take file ``file_id``'s next step if it is still in ``state`` and nobody holds a live lease on it.

    ``take_over`` ignores other leases: for an engineer who knows their holder is dead.
    """
    token = uuid.uuid4().hex
    now = timezone.now()
    rows = ArchiveFile.objects.filter(pk=file_id, index_state=state)
    if not take_over:
        rows = rows.filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
    return token if rows.update(claim_token=token, claimed_until=now + lease()) == 1 else None


def _record(file_id: int, state: str, token: str, **fields: Any) -> bool:
    """Write a step's outcome if this worker still holds the step (it may have lost a lease it outlived)."""
    return (
        ArchiveFile.objects.filter(pk=file_id, index_state=state, claim_token=token).update(
            claim_token="", claimed_until=None, **fields
        )
        == 1
    )


def advance(file_id: int, take_over: bool = False) -> str:
    """Do every step file ``file_id`` still needs, as far as it goes; return the state it is left in."""
    while True:
        f = ArchiveFile.objects.filter(pk=file_id).first()
        if f is None:
            raise ChainError(f"no archive file with id {file_id}")
        step = STEPS.get(f.index_state)
        if step is None:  # CLEANED or FAILED
            if f.index_state == IndexState.CLEANED and f.job_id:
                clean_job(f.job_id)
            return f.index_state
        token = claim(f.pk, step.done, take_over)
        if token is None:
            log.info("%s: %s is claimed by another worker", f.name, step.name)
            return f.index_state
        keeper = LeaseKeeper(
            partial(renew, f.pk, step.done, token), lease().total_seconds() / 4, f"{f.name} {step.name}"
        )
        try:
            with keeper:
                fields = step.run(f)
                keeper.check()
        except ClaimLost:
            log.warning(
                "%s: lost the %s step to another worker (lease ran out); stopped, nothing recorded", f.name, step.name
            )
            return step.done
        except Exception as exc:  # every failure, whatever it is, is recorded on the file
            message = str(exc) if isinstance(exc, ChainError) else f"{type(exc).__name__}: {exc}"
            log.warning("%s: %s failed: %s", f.name, step.name, message)
            _record(
                f.pk,
                step.done,
                token,
                index_state=IndexState.FAILED,
                failed_step=step.done,
                error=f"{step.name}: {message}"[:10000],
                attempts=F("attempts") + 1,
            )
            return IndexState.FAILED
        if not _record(f.pk, step.done, token, index_state=step.next, error="", failed_step="", attempts=0, **fields):
            log.warning("%s: lost the %s step to another worker (lease ran out)", f.name, step.name)
            return step.done
        log.info("%s: %s done", f.name, step.name)
        if step.next == IndexState.BACKED_UP:  # stored as configured: replayable now, before any merge
            replay.refresh_quietly(f"{f.name} was stored")
            pageqa.after_stored_quietly(f.job_id)  # the job's last file stored: its page QA pass starts


def retry_failed(names: Iterable[str] | None = None, auto: bool = False) -> int:
    """Send FAILED files back to the step that failed. ``auto`` (the sweep) gives up after
    ``NETHARVEST_INDEX_AUTO_RETRIES`` attempts; an engineer's ``index run`` always retries."""
    rows = ArchiveFile.objects.filter(index_state=IndexState.FAILED).exclude(failed_step="")
    if names is not None:
        rows = rows.filter(name__in=list(names))
    if auto:
        rows = rows.filter(attempts__lt=settings.NETHARVEST_INDEX_AUTO_RETRIES)
    return rows.update(index_state=F("failed_step"), claim_token="", claimed_until=None)


def pending() -> Any:
    """Files with a step still to do (FAILED ones excluded: they wait for a retry). Named states, not
    ``NOT IN (CLEANED, FAILED)``: the index on index_state then skips the millions of CLEANED rows."""
    return ArchiveFile.objects.filter(index_state__in=list(STEPS))


@dataclass
class RunSummary:
    done: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    busy: list[str] = field(default_factory=list)  # held by another worker's lease


def run_pending(take_over: bool = False, names: Iterable[str] | None = None) -> RunSummary:
    """Everything pending, now, in this process (``netharvest index run``; tests)."""
    names = list(names) if names is not None else None
    retry_failed(names)
    rows = pending()
    if names is not None:
        rows = rows.filter(name__in=names)
    summary = RunSummary()
    for file_id in rows.order_by("id").values_list("id", flat=True):
        state = advance(file_id, take_over)
        f = ArchiveFile.objects.get(pk=file_id)
        if state == IndexState.CLEANED:
            summary.done += 1
        elif state == IndexState.FAILED:
            summary.failed.append((f.name, f.error))
        else:
            summary.busy.append(f.name)
    return summary


# --- queueing: after intake, and the sweep ---------------------------------------------------------


def enqueue(file_ids: Iterable[int]) -> int:
    """Hand files to the indexer queue, one task per file, so workers share them."""
    from orchestrator.celery import app

    ids = list(file_ids)
    if not ids:
        return 0
    ArchiveFile.objects.filter(pk__in=ids).update(queued_at=timezone.now())
    for file_id in ids:
        app.send_task(INDEX_FILE_TASK, args=[file_id], queue="indexer")
    return len(ids)


def enqueue_job_on_commit(job_id: int) -> None:
    """Start the chain for a job's files once the transaction recording them commits. If the broker is
    down then, nothing is lost: the sweep finds the files."""

    def send() -> None:
        try:
            enqueue(
                ArchiveFile.objects.filter(job_id=job_id, index_state=IndexState.HARVESTED).values_list("id", flat=True)
            )
        except Exception as exc:  # a broker outage must not undo the recorded result
            log.warning("could not queue job %s's files for indexing (the sweep will): %s", job_id, exc)

    transaction.on_commit(send)


def sweep(limit: int = 5000) -> int:
    """Beat's safety net (every minute): retry failed files (a few times) and queue every file with a step to
    do that nobody holds, if its holder died (a claim that ran out: it is released here, so a worker that
    outlived it records nothing) or nobody queued it within ``NETHARVEST_INDEX_REQUEUE_S`` (a lost message,
    a broker outage). A file queued lately and never claimed is waiting its turn: it is not queued again."""
    retry_failed(auto=True)
    now = timezone.now()
    free = pending().filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
    dead = list(free.filter(claimed_until__lt=now).order_by("id").values_list("id", flat=True)[:limit])
    if dead:  # one conditional UPDATE: a claim renewed or taken meanwhile is left alone
        released = ArchiveFile.objects.filter(pk__in=dead, claimed_until__lt=now).update(
            claim_token="", claimed_until=None
        )
        log.warning("released %d claim(s) whose lease ran out (a worker died or was cut off)", released)
    forgotten = list(
        free.filter(claimed_until__isnull=True)
        .filter(Q(queued_at__isnull=True) | Q(queued_at__lt=now - requeue_after()))
        .exclude(pk__in=dead)
        .order_by("id")
        .values_list("id", flat=True)[:limit]
    )
    return enqueue(dead + forgotten[: max(0, limit - len(dead))])


def requeue_after() -> timedelta:
    return timedelta(seconds=settings.NETHARVEST_INDEX_REQUEUE_S)


# --- helpers -----------------------------------------------------------------------------------------


def feed_dedup(captures: Iterable[Capture]) -> int:
    """Add a WARC's captures to the dedup service (in batches; it serialises its writers), or to the SQLite
    index with one writer at a time across the workers sharing it. A service that cannot answer fails the
    step, which the chain retries: feeding again is idempotent."""
    if settings.NETHARVEST_DEDUP_URL:
        client = DedupClient(settings.NETHARVEST_DEDUP_URL)
        try:
            return client.add(captures)
        except DedupServiceError as exc:
            raise ChainError(str(exc)) from None
        finally:
            client.close()
    path = storage.dedup_index_path()
    with file_lock(path.with_name(path.name + ".lock")), DedupIndex(path) as dedup:
        return dedup.add(captures)


def _spool_copy(f: ArchiveFile) -> Path:
    """The harvester's copy as a local file: its spool path, or for a delivered file (an ``s3://`` URL) the
    chain's fetch of the object, kept until the delete step (verified against the harvester's SHA-256)."""
    if objectstore.is_url(f.spool_path):
        try:
            return objectstore.download_verified(
                f.spool_path, storage.fetch_path(f.job_id, f.name), f.harvester_sha256 or f.sha256, tick=still_mine
            )
        except StorageError as exc:
            raise ChainError(f"the delivered copy {f.spool_path}: {exc}") from None
    src = Path(f.spool_path) if f.spool_path else None
    if src is None or not src.is_file():
        raise ChainError(
            f"the harvester's spool copy {f.spool_path or '(no path)'} is missing (is the spool "
            "directory shared with this indexer machine?)"
        )
    return src


def _ensure_dir(location: storage.AnyLocation) -> bool:
    """A location's directory must exist (a storage node is mounted, not created); only the default one,
    the archive directory itself, is made on first use. A bucket must answer."""
    if isinstance(location, ObjectLocation):
        return location.available()
    path = Path(location.path)
    if not path.is_dir() and path == Path(settings.NETHARVEST_ARCHIVE_DIR):
        path.mkdir(parents=True, exist_ok=True)
    return path.is_dir()


def _place_copy(f: ArchiveFile, locations: list[storage.AnyLocation], replica: bool) -> ArchiveFileCopy:
    """Make (or finish) the file's verified copy in one of ``locations``.

    The copy is recorded before it is made, so a re-run after a crash goes back to the same place instead
    of leaving a stray copy in another location; the copy itself is written under a temporary name,
    checked against ``f.sha256`` and renamed (indexer.transfer.copy_verified).
    """
    names = {loc.name: loc for loc in locations}
    copy = f.copies.filter(is_replica=replica, location__in=list(names)).first()
    if copy is not None:
        location = names[copy.location]
        if not _ensure_dir(location):
            raise ChainError(f"storage location {location.name} ({location.path}) is missing (not mounted?)")
    else:
        usable = [loc for loc in locations if _ensure_dir(loc)]
        if not usable:
            missing = ", ".join(f"{loc.name} ({loc.path})" for loc in locations)
            raise ChainError(f"no storage location is available: {missing} missing (not mounted?)")
        try:
            location = choose_location(usable, f.size, replica=replica)
        except Exception as exc:  # e.g. none has room: say so on the file
            raise ChainError(str(exc)) from None
        dest = storage.stored_path(location, f.job_id, f.name)
        if _size(str(dest)) is not None and _sha256(str(dest)) != f.sha256:
            raise ChainError(
                f"a different file named {f.name} is already stored at {dest}: refusing to overwrite "
                "it (a second file with the same name?)"
            )
        copy, _ = ArchiveFileCopy.objects.get_or_create(
            file=f, location=location.name, defaults={"path": str(dest), "is_replica": replica}
        )
    src = _copy_source(f, replica)
    if objectstore.is_url(copy.path):  # a conditional put, read back and hashed (indexer.objectstore)
        objectstore.upload_verified(src, copy.path, f.sha256, tick=still_mine)
    else:
        _remove_partial_copies(Path(copy.path))
        copy_verified(src, Path(copy.path), f.sha256, tick=still_mine)
    ArchiveFileCopy.objects.filter(pk=copy.pk).update(verified_ok=True, verified_at=timezone.now())
    copy.verified_ok = True
    return copy


def _copy_source(f: ArchiveFile, replica: bool) -> Path:
    """The spool copy for the primary; for the replica, the verified stored copy (which proves it reads
    back), or the spool copy if that one is gone missing."""
    if replica:
        primary = f.copies.filter(is_replica=False, verified_ok=True).first()
        if primary is not None and not objectstore.is_url(primary.path) and Path(primary.path).is_file():
            return Path(primary.path)
    return _spool_copy(f)


def _directory(path: str) -> str:
    """What a PATH line names as the copy's directory: the parent path, or the URL up to the last ``/``."""
    return objectstore.parent(path) if objectstore.is_url(path) else str(Path(path).parent)


def _size(path: str) -> int | None:
    """A stored copy's size (a file or an object), None when it is not there."""
    if objectstore.is_url(path):
        return objectstore.size(path)
    p = Path(path)
    return p.stat().st_size if p.is_file() else None


def _sha256(path: str) -> str:
    return objectstore.sha256_object(path, still_mine) if objectstore.is_url(path) else sha256_file(path, still_mine)


def _remove_partial_copies(dest: Path) -> None:
    """What a copy killed half-way left (copy_verified's ``.<name>.<random>.part``). We hold this file's
    step, so no live worker is writing one of these."""
    if dest.parent.is_dir():
        for partial in dest.parent.glob(f".{dest.name}.*.part"):
            partial.unlink(missing_ok=True)


def _remove_if_empty(directory: Path) -> None:
    try:
        directory.rmdir()
    except OSError:
        pass  # not empty (other files of the job still to do) or already gone


def clean_job(job_id: int) -> bool:
    """The BnF's final clean: once a finished job's files have all passed every step, remove its emptied
    WARC directory from the spool. Logs, reports and the frontier stay for the harvester's own retention
    (a FAILED job's spool is what its resubmission resumes from)."""
    job = Job.objects.filter(pk=job_id).first()
    if job is None or job.status != JobStatus.DONE:
        return False
    if ArchiveFile.objects.filter(job_id=job_id).exclude(index_state=IndexState.CLEANED).exists():
        return False
    for spool in ArchiveFile.objects.filter(job_id=job_id).exclude(spool_path="").values_list("spool_path", flat=True):
        if objectstore.is_url(spool):  # delivered: the spool is the harvester's; the fetch directory is ours
            _remove_if_empty(storage.fetch_path(job_id, "x").parent)
        else:
            _remove_if_empty(Path(spool).parent)
    return True


def find(name: str) -> ArchiveFile:
    """The file named ``name`` (a bare file name, or a path ending in one), or a ChainError saying so."""
    bare = Path(name).name
    f = ArchiveFile.objects.filter(name=bare).first()
    if f is None:
        raise ChainError(f"no archive file named {bare} (netharvest index status lists the files in the chain)")
    return f


def reindex(name: str) -> ArchiveFile:
    """Rewrite one file's CDX (and feed the dedup index again) from its stored copy, or its spool copy if it
    is not stored yet; the next merge takes its lines again. A file not yet indexed simply runs the chain."""
    from orchestrator.harvest.chain import merging

    f = find(name)
    if f.index_state in (IndexState.HARVESTED, IndexState.INGESTED) or (
        f.index_state == IndexState.FAILED and f.failed_step in (IndexState.HARVESTED, IndexState.INGESTED)
    ):
        retry_failed([f.name])
        advance(f.pk)
        f.refresh_from_db()
        return f
    copy = f.copies.filter(is_replica=False, verified_ok=True).first()
    src = Path(copy.path) if copy is not None and Path(copy.path).is_file() else None
    if src is None and copy is not None and objectstore.is_url(copy.path):
        src = objectstore.download_verified(copy.path, storage.fetch_path(f.job_id, f.name), f.sha256)
    if src is None:
        src = _spool_copy(f)
    digest = sha256_file(src)
    if digest != f.sha256:
        raise ChainError(
            f"{src} does not match its SHA-256 ({digest}, expected {f.sha256}): not reindexing from a "
            "damaged copy (netharvest index verify)"
        )
    with merging.merge_lock():
        out = storage.cdx_path(f.job_id, f.name)
        records = index_and_feed(f, src, out)
        ArchiveFile.objects.filter(pk=f.pk).update(cdx_path=str(out), records=records, merged_at=None)
    replay.refresh_quietly(f"{f.name} was reindexed")
    f.refresh_from_db()
    return f
