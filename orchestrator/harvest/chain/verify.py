"""Re-hash stored copies and say, per location, which are missing or corrupt (``netharvest index verify``).

A copy is good when its file (or object, in an s3:// location: indexer.objectstore) exists, has the recorded
size and its SHA-256 matches the one computed at ingest. Each copy's ``verified_at`` / ``verified_ok``
records the outcome, so a bad copy shows in status and a later check can pick up from the oldest verification.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from django.utils import timezone

from indexer import objectstore
from indexer.objectstore import ObjectLocation
from indexer.transfer import copy_verified, sha256_file, verify_copy
from orchestrator.harvest.chain import storage
from orchestrator.harvest.models import ArchiveFile, ArchiveFileCopy


@dataclass
class Problem:
    location: str
    name: str
    path: str
    kind: str  # "missing", "corrupt", "unconfigured location", "location missing"
    detail: str = ""


@dataclass
class VerifyReport:
    checked: Counter[str] = field(default_factory=Counter)  # per location
    good: Counter[str] = field(default_factory=Counter)
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify(location: str | None = None, name: str | None = None) -> VerifyReport:
    """Check every copy (or those in ``location`` / of file ``name``)."""
    report = VerifyReport()
    configured = storage.all_locations()
    if (
        location is not None
        and location not in configured
        and not ArchiveFileCopy.objects.filter(location=location).exists()
    ):
        raise ValueError(f"no storage location named {location} (configured: {', '.join(configured)})")
    for loc in configured.values():
        if (location is None or loc.name == location) and name is None and not loc.available():
            detail = (
                "the bucket does not answer (endpoint, credentials?)"
                if isinstance(loc, ObjectLocation)
                else "the directory does not exist (not mounted?)"
            )
            report.problems.append(Problem(loc.name, "", str(loc.path), "location missing", detail))
    copies = ArchiveFileCopy.objects.select_related("file").order_by("location", "file__name")
    if location is not None:
        copies = copies.filter(location=location)
    if name is not None:
        copies = copies.filter(file__name=name)
    for copy in copies.iterator():
        report.checked[copy.location] += 1
        problem = _check(copy, configured)
        ArchiveFileCopy.objects.filter(pk=copy.pk).update(verified_at=timezone.now(), verified_ok=problem is None)
        if problem is None:
            report.good[copy.location] += 1
        else:
            report.problems.append(problem)
    return report


def _check(copy: ArchiveFileCopy, configured: dict[str, object]) -> Problem | None:
    if copy.location not in configured:
        return Problem(
            copy.location,
            copy.file.name,
            copy.path,
            "unconfigured location",
            "the copy's location is no longer in NETHARVEST_STORAGE_LOCATIONS / NETHARVEST_BACKUP_LOCATION",
        )
    size = _size(copy.path)
    if size is None:
        return Problem(copy.location, copy.file.name, copy.path, "missing")
    if size != copy.file.size:
        return Problem(copy.location, copy.file.name, copy.path, "corrupt", f"{size} bytes, expected {copy.file.size}")
    digest = objectstore.sha256_object(copy.path) if objectstore.is_url(copy.path) else sha256_file(copy.path)
    if digest != copy.file.sha256:
        return Problem(
            copy.location, copy.file.name, copy.path, "corrupt", f"SHA-256 {digest}, expected {copy.file.sha256}"
        )
    return None


def repair(report: VerifyReport) -> list[tuple[Problem, str]]:
    """Restore each missing or corrupt copy from a good one (another copy, or the spool copy if it is still
    there), at the same path, so PATH lines stay true. A corrupt file is kept aside as
    ``.<name>.corrupt-<UTC time>`` for inspection, never overwritten. Returns (problem, outcome) pairs; an
    outcome starting with "LOST" means no good copy is left."""
    outcomes = []
    for problem in report.problems:
        if problem.kind not in ("missing", "corrupt"):
            outcomes.append((problem, "not repaired: fix the configuration or mount the location"))
            continue
        f = ArchiveFile.objects.get(name=problem.name)
        source = _good_source(f, exclude=problem.path)
        if source is None:
            outcomes.append((problem, "LOST: no good copy of this file is left anywhere"))
            continue
        try:
            _restore(source, problem.path, f.sha256)
        except OSError as exc:
            outcomes.append((problem, f"not repaired: {exc}"))
            continue
        ArchiveFileCopy.objects.filter(file=f, path=problem.path).update(verified_ok=True, verified_at=timezone.now())
        outcomes.append((problem, f"repaired from {source}"))
    return outcomes


def _size(path: str) -> int | None:
    if objectstore.is_url(path):
        return objectstore.size(path)
    p = Path(path)
    return p.stat().st_size if p.is_file() else None


def _restore(source: str, dest: str, sha256: str) -> None:
    """Copy good ``source`` over bad or missing ``dest`` (files or objects), the bad one kept aside."""
    aside = f".corrupt-{timezone.now():%Y%m%d%H%M%S}"
    if objectstore.is_url(dest):
        if objectstore.size(dest) is not None:
            bucket, key = objectstore.split(dest)
            head, _, tail = key.rpartition("/")
            objectstore.client().copy_object(
                Bucket=bucket, Key=f"{head}/.{tail}{aside}", CopySource={"Bucket": bucket, "Key": key}
            )
            objectstore.delete(dest)
    else:
        p = Path(dest)
        if p.exists():
            p.rename(p.with_name(f".{p.name}{aside}"))
    with tempfile.TemporaryDirectory() as tmp:
        local = (
            objectstore.download_verified(source, Path(tmp) / "copy", sha256)
            if objectstore.is_url(source)
            else Path(source)
        )
        if objectstore.is_url(dest):
            objectstore.upload_verified(local, dest, sha256)
        else:
            copy_verified(local, Path(dest), sha256)


def _good_source(f: ArchiveFile, exclude: str) -> str | None:
    candidates = [c.path for c in f.copies.exclude(path=exclude).order_by("is_replica")]
    if f.spool_path:
        candidates.append(f.spool_path)
    for candidate in candidates:
        check = objectstore.verify_copy if objectstore.is_url(candidate) else verify_copy
        if check(candidate, f.sha256) == "ok":
            return candidate
    return None
