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
before each job (harvester.runjob), deletes each spool file whose receipt is there, then the receipt.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import time
from pathlib import Path

from harvester.contracts import FileResult, JobResult
from indexer import objectstore
from indexer.transfer import NameConflict, sha256_file

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
    return objectstore.join(objectstore.parent(job_dir), RECEIPTS, job_dir.rsplit("/", 1)[1],
                            delivered.rsplit("/", 1)[1])


def deliver_file(f: FileResult, job_dir: Path, delivery: str) -> FileResult:
    """Upload one produced file (resuming an interrupted upload) and return its FileResult naming the object.
    Remembers where the spool copy is (``delivery/<name>.json``) for :func:`sweep_receipts`."""
    if objectstore.is_url(f.path):
        return f
    url = object_url(delivery, job_dir.name, f.name)
    state_dir = job_dir / DELIVERY_DIR
    objectstore.put(f.path, url, f.sha256, state=state_dir / f"{f.name}.upload.json")
    record = state_dir / f"{f.name}.json"
    if not record.exists():
        state_dir.mkdir(parents=True, exist_ok=True)
        tmp = record.with_name(record.name + ".tmp")
        tmp.write_text(json.dumps({"url": url, "path": f.path, "size": f.size}), encoding="utf-8")
        os.replace(tmp, record)
    return dataclasses.replace(f, path=url)


def deliver_extras(job_dir: Path, delivery: str) -> None:
    """The job's logs and reports, for the record (they stay in the spool, as they do without delivery)."""
    for sub in ("logs", "reports"):
        for p in sorted((job_dir / sub).glob("*")) if (job_dir / sub).is_dir() else []:
            if p.is_file():
                url = objectstore.join(delivery, job_dir.name, sub, p.name)
                objectstore.put(p, url, sha256_file(p), state=job_dir / DELIVERY_DIR / f"{sub}-{p.name}.upload.json")


def deliver_result(result: JobResult, job_dir: Path, delivery: str | None = None,
                   retry_max_s: float = RETRY_MAX_S) -> JobResult:
    """``result`` with every file delivered; retries through an outage of the store (the files wait in the
    spool; the upload resumes). A file the store refuses for good (a different object of that name) keeps its
    spool path, and the chain then says it cannot read it."""
    delivery = delivery or target()
    if delivery is None:
        return result
    files = []
    for f in result.files:
        files.append(_until_delivered(f, job_dir, delivery, retry_max_s))
    try:
        deliver_extras(job_dir, delivery)
    except Exception as exc:  # the record copies are a courtesy: never hold the result for them
        logger.warning("job %s: logs and reports not delivered: %s", job_dir.name, exc)
    return dataclasses.replace(result, files=tuple(files))


def _until_delivered(f: FileResult, job_dir: Path, delivery: str, retry_max_s: float) -> FileResult:
    delay = 0.5
    while True:
        try:
            return deliver_file(f, job_dir, delivery)
        except NameConflict as exc:
            logger.error("job %s: %s not delivered: %s", job_dir.name, f.name, exc)
            return f
        except Exception as exc:  # an outage, a dropped connection: the upload resumes from its parts
            logger.warning("job %s: delivering %s failed (%s); retrying in %.0f s", job_dir.name, f.name, exc,
                           delay)
            time.sleep(delay)
            delay = min(delay * 2, retry_max_s)


def sweep_receipts(spool: Path) -> int:
    """Delete the spool copies the chain has stored (their receipt is in the store); returns how many.
    An unreachable store leaves everything for the next sweep."""
    removed = 0
    for record in sorted(spool.glob(f"*/{DELIVERY_DIR}/*.json")):
        if record.name.endswith(".upload.json"):
            continue
        try:
            data = json.loads(record.read_text(encoding="utf-8"))
            receipt = receipt_url(str(data["url"]))
            if objectstore.size(receipt) is None:
                continue
            Path(data["path"]).unlink(missing_ok=True)
            record.unlink()
            objectstore.delete(receipt)
            removed += 1
        except Exception as exc:
            logger.warning("receipt sweep: %s: %s (next sweep retries)", record, exc)
            return removed
    return removed
