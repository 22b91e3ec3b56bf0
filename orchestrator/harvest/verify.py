"""Re-hash stored copies and say, per location, which are missing or corrupt (``netharvest index verify``).

A copy is good when its file exists, has the recorded size and its SHA-256 matches the one computed at
ingest. Each copy's ``verified_at`` / ``verified_ok`` records the outcome, so a bad copy shows in status
and a later check can pick up from the oldest verification.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from django.utils import timezone

from indexer.storage import sha256_file
from orchestrator.harvest import storage
from orchestrator.harvest.models import ArchiveFileCopy


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
    if location is not None and location not in configured and not ArchiveFileCopy.objects.filter(
            location=location).exists():
        raise ValueError(f"no storage location named {location} (configured: {', '.join(configured)})")
    for loc in configured.values():
        if (location is None or loc.name == location) and name is None and not Path(loc.path).is_dir():
            report.problems.append(Problem(loc.name, "", str(loc.path), "location missing",
                                           "the directory does not exist (not mounted?)"))
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
    path = Path(copy.path)
    if copy.location not in configured:
        return Problem(copy.location, copy.file.name, copy.path, "unconfigured location",
                       "the copy's location is no longer in NETHARVEST_STORAGE_LOCATIONS / NETHARVEST_BACKUP_LOCATION")
    if not path.is_file():
        return Problem(copy.location, copy.file.name, copy.path, "missing")
    size = path.stat().st_size
    if size != copy.file.size:
        return Problem(copy.location, copy.file.name, copy.path, "corrupt", f"{size} bytes, expected {copy.file.size}")
    digest = sha256_file(path)
    if digest != copy.file.sha256:
        return Problem(copy.location, copy.file.name, copy.path, "corrupt",
                       f"SHA-256 {digest}, expected {copy.file.sha256}")
    return None
