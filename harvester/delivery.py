"""Harvester-side delivery: the harvester puts what it harvested into the object store itself.

Why: a harvester on another machine shares no disk with the indexer chain (issue 15). With
``NETHARVEST_DELIVERY=s3://bucket/prefix`` set on the harvester, each closed WARC and the metadata WARC go up
as ``<prefix>/<job>/<name>`` (indexer.objectstore.put: SHA-256 sent with every part, conditional put, a big
file as a multipart upload whose id is kept in ``<spool>/<job>/delivery/`` so a crash or an outage resumes it),
and the FileResult the orchestrator gets names the object URL instead of the spool path. The job's logs and
reports go up too, under ``<prefix>/<job>/logs/`` and ``…/reports/``, for the record (they are also inside the
metadata WARC). Without a delivery target nothing changes: the chain reads the shared spool as before.

The spool copy stays until the chain has a verified stored copy. The harvester never sees the database, so
the chain says so in the store: its delete step writes a *receipt* ``<prefix>/receipts/<job>/<name>`` (and
removes the delivered object, now stored elsewhere). :func:`sweep_receipts`, run by the harvester worker
before each job (harvester.runjob) and every ``RECEIPT_SWEEP_S`` (harvester.worker), deletes each spool file
whose receipt holds the SHA-256 of its delivery record, then the receipt. One delivery prefix per deployment,
never reused: receipts are found by name (the digest check keeps a stranger's receipt from deleting a file).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harvester.contracts import FileResult, JobResult
from harvester.defaults import RECEIPT_SWEEP_S
from indexer import objectstore
from indexer.objectstore import Tick, no_tick
from indexer.transfer import sha256_file

logger = logging.getLogger(__name__)

DELIVERY_DIR = "delivery"
RECEIPTS = "receipts"
RETRY_MAX_S = 60.0


def target() -> str | None:
    """``NETHARVEST_DELIVERY`` (``s3://bucket/prefix``), or None: no delivery, the shared spool is read."""
    value = os.environ.get("NETHARVEST_DELIVERY", "").strip()
    if not value:
        return None
    objectstore.split(value)  # a clear error now rather than at the first upload
    return value.rstrip("/")


def object_url(delivery: str, job_id: int | str, name: str) -> str:
    return objectstore.join(delivery, str(job_id), name)


def receipt_url(delivered: str) -> str:
    """``…/<prefix>/<job>/<name>`` → ``…/<prefix>/receipts/<job>/<name>``: what the chain writes once the file
    is stored and verified (orchestrator.harvest.chain.steps.delete)."""
    job_dir = objectstore.parent(delivered)
    return objectstore.join(
        objectstore.parent(job_dir), RECEIPTS, job_dir.rsplit("/", 1)[1], delivered.rsplit("/", 1)[1]
    )


def record_path(job_dir: Path, name: str) -> Path:
    """``<job>/delivery/<name>.json``: written once the file is in the store (its URL, spool path, size,
    SHA-256); kept after the sweep (marked ``swept``) so a later delivery of that file is answered from it."""
    return job_dir / DELIVERY_DIR / f"{name}.json"


def _read_record(record: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        logger.warning("%s is unreadable (%s): delivering that file again", record, exc)
        return None
    return data if isinstance(data, dict) and isinstance(data.get("url"), str) else None


def _write_record(record: Path, data: dict[str, Any]) -> None:
    record.parent.mkdir(parents=True, exist_ok=True)
    # a name of its own: the worker's periodic sweep and a job's may write the same record
    tmp = record.with_name(f".{record.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, record)


def deliver_file(f: FileResult, job_dir: Path, delivery: str, tick: Tick = no_tick) -> FileResult:
    """Upload one produced file (resuming an interrupted upload) and return its FileResult naming the object.

    A file already delivered (its record is there) is answered from the record without touching the store or
    the spool: a duplicate message after DONE, a restarted parent re-reading ``files-closed.jsonl``, or a
    continuous job's final result naming WARCs the relay delivered mid-run (whose spool copy the receipt
    sweep may have deleted already). ``tick`` is called during the upload (the heartbeat, harvester.runjob).
    Raises what :func:`indexer.objectstore.put` raises; :func:`indexer.objectstore.permanent` says which
    errors no retry can cure."""
    if objectstore.is_url(f.path):
        return f
    record = record_path(job_dir, f.name)
    done = _read_record(record)
    if done is not None:
        return dataclasses.replace(f, path=done["url"])
    url = object_url(delivery, job_dir.name, f.name)
    objectstore.put(f.path, url, f.sha256, state=job_dir / DELIVERY_DIR / f"{f.name}.upload.json", tick=tick)
    _write_record(record, {"url": url, "path": f.path, "size": f.size, "sha256": f.sha256.lower()})
    return dataclasses.replace(f, path=url)


def deliver_extras(job_dir: Path, delivery: str, tick: Tick = no_tick) -> None:
    """The job's logs and reports, for the record (they stay in the spool, as they do without delivery)."""
    for sub in ("logs", "reports"):
        for p in sorted((job_dir / sub).glob("*")) if (job_dir / sub).is_dir() else []:
            if p.is_file():
                url = objectstore.join(delivery, job_dir.name, sub, p.name)
                objectstore.put(
                    p, url, sha256_file(p), tick=tick, state=job_dir / DELIVERY_DIR / f"{sub}-{p.name}.upload.json"
                )


def deliver_result(
    result: JobResult,
    job_dir: Path,
    delivery: str | None = None,
    retry_max_s: float = RETRY_MAX_S,
    tick: Tick = no_tick,
) -> JobResult:
    """``result`` with every file delivered; retries through an outage of the store (the files wait in the
    spool; the upload resumes), calling ``tick`` all along (the upload and the waits between tries). A file
    that cannot be delivered for good (:func:`indexer.objectstore.permanent`: gone from the spool, damaged, a
    different object of that name, refused by the store) keeps its spool path, with one error line, and the
    chain then says it cannot read it."""
    delivery = delivery or target()
    if delivery is None:
        return result
    files = []
    for f in result.files:
        files.append(_until_delivered(f, job_dir, delivery, retry_max_s, tick))
    try:
        deliver_extras(job_dir, delivery, tick)
    except Exception as exc:  # the record copies are a courtesy: never hold the result for them
        logger.warning("job %s: logs and reports not delivered: %s", job_dir.name, exc)
    return dataclasses.replace(result, files=tuple(files))


def wait(seconds: float, tick: Tick) -> None:
    """Sleep ``seconds``, calling ``tick`` at least every second (a back-off must not silence the heartbeat)."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        tick()
        time.sleep(min(left, 1.0))


def _until_delivered(f: FileResult, job_dir: Path, delivery: str, retry_max_s: float, tick: Tick) -> FileResult:
    delay = 0.5
    while True:
        try:
            return deliver_file(f, job_dir, delivery, tick)
        except Exception as exc:
            if objectstore.permanent(exc):
                logger.error("job %s: %s not delivered, for good: %s", job_dir.name, f.name, exc)
                return f
            # an outage, a dropped connection: the upload resumes from its parts
            logger.warning("job %s: delivering %s failed (%s); retrying in %.0f s", job_dir.name, f.name, exc, delay)
            wait(delay, tick)
            delay = min(delay * 2, retry_max_s)


def sweep_receipts(spool: Path) -> int:
    """Delete the spool copies the chain has stored; returns how many.

    A spool copy goes only when its receipt's body is the SHA-256 its delivery record holds (a receipt left by
    another deployment sharing the prefix, or for an earlier file of that name, says another digest and is
    left alone, with one line). Order: spool copy, receipt, then the record is marked ``swept`` (kept: it
    answers later deliveries of that file); a crash between leaves a record whose spool copy is gone, which
    the next sweep marks. A bad record is skipped; an unreachable store ends the sweep (the next one retries).
    """
    removed = 0
    for record in sorted(spool.glob(f"*/{DELIVERY_DIR}/*.json")):
        if record.name.endswith(".upload.json"):
            continue
        data = _read_record(record)
        if data is None or data.get("swept"):
            continue
        try:
            path = Path(str(data["path"]))
            want = str(data.get("sha256") or (sha256_file(path) if path.is_file() else "")).lower()
            receipt = receipt_url(str(data["url"]))
        except (KeyError, OSError, ValueError) as exc:
            logger.warning("receipt sweep: %s: %s (skipped)", record, exc)
            continue
        try:
            body = objectstore.get_bytes(receipt)
        except Exception as exc:
            logger.warning("receipt sweep: %s: %s (the next sweep retries)", receipt, exc)
            return removed
        if body is None:
            if not path.exists():  # swept before a crash lost the mark
                _write_record(record, {**data, "swept": True})
            continue
        if body.decode("ascii", "replace").strip().lower() != want:
            logger.error(
                "receipt sweep: %s says %r, but %s has SHA-256 %s: spool copy kept (one delivery prefix "
                "per deployment, never reused)",
                receipt,
                body[:80],
                path,
                want,
            )
            continue
        try:
            path.unlink(missing_ok=True)
            objectstore.delete(receipt)
        except Exception as exc:
            logger.warning("receipt sweep: %s: %s (the next sweep retries)", record, exc)
            return removed
        _write_record(record, {**data, "swept": True})
        removed += 1
    return removed


def start_sweeper(spool: Callable[[], Path], interval_s: float = RECEIPT_SWEEP_S) -> threading.Event | None:
    """Sweep the receipts every ``interval_s`` in a daemon thread until the returned event is set (None
    without a delivery target): the sweep before each job alone never frees the spool of a harvester that
    gets no more jobs."""
    if target() is None:
        return None
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                sweep_receipts(spool())
            except Exception as exc:  # never let the thread die: the next round tries again
                logger.warning("receipt sweep failed: %s", exc)
            stop.wait(interval_s)

    threading.Thread(target=loop, name="receipt-sweep", daemon=True).start()
    return stop
