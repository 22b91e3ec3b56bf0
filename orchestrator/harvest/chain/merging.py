"""merge (daily) and bigmerge: per-file CDX and PATH files → daily files → the master indexes.

merge takes every stored file whose lines are not merged yet and k-way merges their CDX and PATH files
into one sorted daily pair (``<index>/daily/<stamp>.cdx|.path``), then a manifest (``<stamp>.files``, the
file names) that marks the daily complete, then marks the files merged. bigmerge merges the complete
dailies into ``master.cdx`` / ``master.path`` and each harvest definition's sub-index
(``harvests/<id>.cdx``), each written under a temporary name and renamed over the old one, so readers
never see a half-written index; then it deletes the dailies, manifest last.

Every output is a merge that collapses identical lines, so any step redone after a crash (a daily made
twice, a daily merged into the master twice) leaves exactly the lines of one clean run. Only one merge
runs at a time (a lock on the index directory).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from django.db.models import Q
from django.utils import timezone

from indexer.cdx import CDX_HEADER
from indexer.merge import merge_sorted
from orchestrator.harvest.archive import replay
from orchestrator.harvest.chain import storage
from orchestrator.harvest.chain.locks import file_lock
from orchestrator.harvest.chain.steps import STORED_STATES
from orchestrator.harvest.models import ArchiveFile
from orchestrator.harvest.models.archive import IndexState

log = logging.getLogger(__name__)


@contextmanager
def merge_lock() -> Iterator[None]:
    with file_lock(storage.index_dir() / "merge.lock"):
        yield


@dataclass
class MergeResult:
    files: int = 0
    cdx_lines: int = 0
    daily: str = ""
    missing: list[str] = field(default_factory=list)  # stored files whose CDX or PATH file is gone


@dataclass
class BigMergeResult:
    dailies: int = 0
    master_cdx_lines: int = 0
    master_path_lines: int = 0
    harvests: list[int] = field(default_factory=list)


def unmerged() -> object:
    """Stored files whose lines are not in a daily yet (a file that failed after transfer counts: its
    WARC is in storage)."""
    return ArchiveFile.objects.filter(merged_at__isnull=True).filter(
        Q(index_state__in=STORED_STATES) | Q(index_state=IndexState.FAILED, failed_step__in=STORED_STATES)
    )


R = TypeVar("R")


def _locked(step: Callable[[], R], what: str) -> R:
    """Run one merge under the merge lock (one at a time), then have replay see the indexes it wrote."""
    with merge_lock():
        result = step()
    replay.refresh_quietly(what)
    return result


def merge() -> MergeResult:
    """The daily merge: the day's CDX and PATH files into one sorted daily pair."""
    return _locked(_merge, "the daily merge")


def _merge() -> MergeResult:
    result = MergeResult()
    files = list(unmerged().order_by("id"))
    ready = []
    for f in files:
        cdx, path = Path(f.cdx_path) if f.cdx_path else None, storage.path_file(f.job_id, f.name)
        if cdx is None or not cdx.is_file() or not path.is_file():
            result.missing.append(f.name)
        else:
            ready.append((f, cdx, path))
    if result.missing:
        log.warning("merge: no CDX or PATH file for %s (netharvest index reindex FILE)", ", ".join(result.missing))
    if not ready:
        return result
    now = timezone.now()
    stamp = now.strftime("%Y%m%d%H%M%S%f")
    daily = storage.daily_dir()
    daily.mkdir(parents=True, exist_ok=True)
    result.cdx_lines = merge_sorted([cdx for _, cdx, _ in ready], daily / f"{stamp}.cdx", header=CDX_HEADER)
    merge_sorted([path for _, _, path in ready], daily / f"{stamp}.path")
    _write_atomic(daily / f"{stamp}.files", "".join(f"{f.name}\n" for f, _, _ in ready))
    ArchiveFile.objects.filter(pk__in=[f.pk for f, _, _ in ready], merged_at__isnull=True).update(merged_at=now)
    result.files, result.daily = len(ready), stamp
    log.info("merge: %d files, %d CDX lines into daily %s", result.files, result.cdx_lines, stamp)
    return result


def bigmerge() -> BigMergeResult:
    """The dailies into the master CDX and PATH indexes and the per-harvest-definition sub-indexes."""
    return _locked(_bigmerge, "bigmerge")


def _bigmerge() -> BigMergeResult:
    result = BigMergeResult()
    _remove_stray_temporaries()
    daily = storage.daily_dir()
    manifests = sorted(daily.glob("*.files")) if daily.is_dir() else []
    complete = [m for m in manifests if m.with_suffix(".cdx").is_file() and m.with_suffix(".path").is_file()]
    # A daily without its manifest was cut short: its files were not marked merged, so the next merge
    # takes them again. A manifest without its daily was already merged before a crash.
    for stray in [p for p in (daily.glob("*.cdx") if daily.is_dir() else []) if not p.with_suffix(".files").exists()]:
        stray.unlink(missing_ok=True)
        stray.with_suffix(".path").unlink(missing_ok=True)
    if complete:
        master_cdx, master_path = storage.master_cdx(), storage.master_path()
        cdx_inputs = ([master_cdx] if master_cdx.is_file() else []) + [m.with_suffix(".cdx") for m in complete]
        path_inputs = ([master_path] if master_path.is_file() else []) + [m.with_suffix(".path") for m in complete]
        result.master_cdx_lines = merge_sorted(cdx_inputs, master_cdx, header=CDX_HEADER)
        result.master_path_lines = merge_sorted(path_inputs, master_path)
        result.harvests = _merge_harvest_indexes(complete)
        result.dailies = len(complete)
    for m in manifests:
        m.with_suffix(".cdx").unlink(missing_ok=True)
        m.with_suffix(".path").unlink(missing_ok=True)
        m.unlink()
    if complete:
        log.info(
            "bigmerge: %d dailies; master %d CDX lines, %d PATH lines",
            result.dailies,
            result.master_cdx_lines,
            result.master_path_lines,
        )
    return result


def _merge_harvest_indexes(dailies: list[Path]) -> list[int]:
    """Each harvest definition's sub-index gains the CDX of its files in these dailies (the BnF's
    collection entry points: a definition follows a collection policy)."""
    names = {line for m in dailies for line in m.read_text().splitlines() if line}
    by_harvest: dict[int, list[Path]] = defaultdict(list)
    for harvest_id, cdx in ArchiveFile.objects.filter(name__in=names, harvest__isnull=False).values_list(
        "harvest_id", "cdx_path"
    ):
        if cdx and Path(cdx).is_file():
            by_harvest[harvest_id].append(Path(cdx))
    for harvest_id, cdx_files in sorted(by_harvest.items()):
        out = storage.harvest_cdx(harvest_id)
        out.parent.mkdir(parents=True, exist_ok=True)
        merge_sorted(([out] if out.is_file() else []) + cdx_files, out, header=CDX_HEADER)
    return sorted(by_harvest)


def rebuild() -> BigMergeResult:
    """Build the master indexes and sub-indexes anew from every stored file's CDX and PATH files (after a
    reindex with a changed indexer, whose old lines an incremental merge cannot take out)."""
    with merge_lock():
        files = [
            f
            for f in ArchiveFile.objects.filter(
                Q(index_state__in=STORED_STATES) | Q(index_state=IndexState.FAILED, failed_step__in=STORED_STATES)
            )
            if f.cdx_path and Path(f.cdx_path).is_file()
        ]
        result = BigMergeResult()
        index = storage.index_dir()
        index.mkdir(parents=True, exist_ok=True)
        result.master_cdx_lines = merge_sorted(
            [Path(f.cdx_path) for f in files], storage.master_cdx(), header=CDX_HEADER
        )
        paths = [storage.path_file(f.job_id, f.name) for f in files]
        result.master_path_lines = merge_sorted([p for p in paths if p.is_file()], storage.master_path())
        by_harvest: dict[int, list[Path]] = defaultdict(list)
        for f in files:
            if f.harvest_id:
                by_harvest[f.harvest_id].append(Path(f.cdx_path))
        for harvest_id, cdx_files in sorted(by_harvest.items()):
            out = storage.harvest_cdx(harvest_id)
            out.parent.mkdir(parents=True, exist_ok=True)
            merge_sorted(cdx_files, out, header=CDX_HEADER)
        result.harvests = sorted(by_harvest)
        ArchiveFile.objects.filter(pk__in=[f.pk for f in files]).update(merged_at=timezone.now())
        daily = storage.daily_dir()
        for leftover in list(daily.iterdir()) if daily.is_dir() else []:
            leftover.unlink()
    replay.refresh_quietly("the rebuild")
    return result


def _remove_stray_temporaries() -> None:
    """Temporary outputs of a merge killed half-way (``.<name>.<random>.tmp``); no merge is running now, as
    we hold the merge lock, so none of them is anyone's work in progress."""
    for directory in (storage.index_dir(), storage.daily_dir(), storage.harvest_cdx(0).parent):
        if directory.is_dir():
            for stray in directory.glob(".*.tmp"):
                stray.unlink(missing_ok=True)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)
