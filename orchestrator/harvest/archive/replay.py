"""The replay service's view of the archive (indexer/replaylayout.py), kept in step with the indexer chain.

pywb (deploy/replay_server.py) serves one collection per harvest definition (``harvest-<id>``, its sub-index
``harvests/<id>.cdx``) and one for everything (``all``, the master CDX). A WARC's captures reach those
indexes only at the (daily) bigmerge, but a curator checks a job as soon as it ends and a continuous crawl
hands WARCs over while it runs; so each collection's ``indexes`` directory also links the per-WARC CDX of
every WARC the chain has stored whose lines are not in the master yet (merged_at unset, or in a daily not
bigmerged), and ``replay/warcs/`` links those WARCs' stored copies by name for pywb's path resolution.
:func:`refresh` brings the links in line with the database; the chain calls it when a WARC is stored
(backed up), the merges after they run, the sweep every minute as a safety net. pywb sees every change
without a restart (it re-lists a directory when the directory changes and opens index files by name).

Nothing here is ever missing a capture: a WARC's lines are in the master before its link goes (the link set is
read from the database first, then the dailies, and a bigmerge writes the master before deleting a daily); at
worst a capture is listed twice for a moment, which pywb takes in its stride.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from django.db import transaction
from django.db.models import Q

from indexer import objectstore
from indexer.pathindex import path_line, write_path_file
from indexer.replaylayout import ALL, URL_PREFIX, ReplayLayout, harvest_collection, touch_dir
from orchestrator.harvest.chain import storage
from orchestrator.harvest.chain.locks import file_lock
from orchestrator.harvest.models import ArchiveFile, ArchiveFileCopy, HarvestDefinition
from orchestrator.harvest.models.archive import IndexState

log = logging.getLogger(__name__)

#: States in which a WARC's stored copy is verified and its CDX written (orchestrator.harvest.chain.steps's
#: STORED_STATES, repeated here as the chain imports this module).
_STORED = (IndexState.BACKED_UP, IndexState.CLEANED)


def layout() -> ReplayLayout:
    return ReplayLayout(storage.index_dir())


def collection_of(harvest_id: int | None) -> str:
    """A harvest definition's collection; ``None``: the whole archive."""
    return harvest_collection(harvest_id) if harvest_id else ALL


def replay_url(url: str, timestamp: str = "", collection: str = ALL, mode: str = "") -> str:
    """The web UI's path replaying ``url`` as captured nearest ``timestamp`` (14 digits or a prefix; empty:
    the latest capture), pywb's ``/<collection>/<timestamp><mode>/<url>``. ``mode`` ``mp_`` is the page
    without pywb's frame (what a frame embeds), ``id_`` the archived bytes as they were."""
    stamp = f"{timestamp}{mode}/" if timestamp or mode else ""
    return f"{URL_PREFIX}/{collection}/{stamp}{quote(url, safe=':/?&=%#;,+@!$~*()[]')}"


def calendar_url(url: str, collection: str = ALL) -> str:
    """pywb's own list of every capture of ``url`` (its calendar page)."""
    return f"{URL_PREFIX}/{collection}/*/{quote(url, safe=':/?&=%#;,+@!$~*()[]')}"


@dataclass
class RefreshResult:
    collections: int = 0
    recent: int = 0  # stored WARCs linked because their lines are not in the master yet
    changed: int = 0  # links made or removed


def recent_files() -> list[tuple[str, int | None, str, str]]:
    """(name, harvest id, CDX path, stored copy) of every stored WARC whose lines are not in the master: not
    merged yet, or merged into a daily that bigmerge has not taken. The database is read before the dailies
    (see the module docstring)."""
    stored = Q(index_state__in=_STORED) | Q(index_state=IndexState.FAILED, failed_step__in=_STORED)
    rows = list(
        ArchiveFile.objects.filter(stored, merged_at__isnull=True)
        .exclude(cdx_path="")
        .values_list("id", "name", "harvest_id", "cdx_path")
    )
    daily = storage.daily_dir()
    names: set[str] = set()
    for manifest in sorted(daily.glob("*.files")) if daily.is_dir() else []:
        try:
            names.update(line for line in manifest.read_text().splitlines() if line)
        except FileNotFoundError:
            continue  # bigmerge took it meanwhile: its lines are in the master
    if names:
        known = {r[0] for r in rows}
        rows += [
            r
            for r in ArchiveFile.objects.filter(stored, name__in=names)
            .exclude(cdx_path="")
            .values_list("id", "name", "harvest_id", "cdx_path")
            if r[0] not in known
        ]
    copies = dict(
        ArchiveFileCopy.objects.filter(
            file_id__in=[r[0] for r in rows], is_replica=False, verified_ok=True
        ).values_list("file_id", "path")
    )
    return [(name, harvest_id, cdx, copies[pk]) for pk, name, harvest_id, cdx in rows if pk in copies]


def refresh() -> RefreshResult:
    """Bring the replay layout in line with the archive: one collection directory per harvest definition, each
    linking its master sub-index (once bigmerge made it) and its recent WARCs' CDX files."""
    lay = layout()
    with file_lock(lay.root / "refresh.lock"):
        lay.ensure()
        result = RefreshResult()
        recent = recent_files()
        wanted: dict[str, dict[str, Path]] = defaultdict(dict)
        if lay.master_cdx.is_file():  # no dangling link: pywb would fail the collection's queries on it
            wanted[ALL]["master.cdx"] = lay.master_cdx
        for harvest_id in HarvestDefinition.objects.values_list("id", flat=True):
            coll = harvest_collection(harvest_id)
            wanted[coll] = {}
            sub = storage.harvest_cdx(harvest_id)
            if sub.is_file():
                wanted[coll]["master.cdx"] = sub
        warcs: dict[str, Path] = {}
        objects: list[bytes] = []
        for name, harvest_id, cdx, copy in recent:
            wanted[ALL][f"{name}.cdx"] = Path(cdx)
            if harvest_id:
                wanted[harvest_collection(harvest_id)][f"{name}.cdx"] = Path(cdx)
            if objectstore.is_url(copy):  # in an object store: a PATH line, pywb reads s3:// itself
                objects.append(path_line(name, objectstore.parent(copy)))
            else:
                warcs[name] = Path(copy)
        # Before the CDX links: a capture pywb finds must find its file.
        if not lay.recent_path.is_file() or sorted(objects) != lay.recent_path.read_bytes().splitlines(True):
            write_path_file(objects, lay.recent_path)
            result.changed += 1
        result.changed += sync_links(lay.warcs, warcs)
        for coll, links in wanted.items():
            result.changed += sync_links(lay.indexes(coll), links)
        result.collections, result.recent = len(wanted), len(recent)
        return result


def add_collection(harvest_id: int) -> None:
    """Give a new harvest definition its (empty) collection at once, so the link on its page opens pywb's
    search page instead of a 404 until the next :func:`refresh`; the captures' links come with its first WARC.
    Quiet as :func:`refresh_quietly`: the sweep's refresh makes it too."""
    lay = layout()
    directory = lay.indexes(harvest_collection(harvest_id))
    try:
        before = lay.collections.stat().st_mtime if lay.collections.is_dir() else 0.0
        directory.mkdir(parents=True, exist_ok=True)
        touch_dir(lay.collections, before)
    except OSError as exc:
        log.warning("replay collection of harvest definition %s not made (the sweep will retry): %s", harvest_id, exc)


def on_definition_saved(sender: object, instance: HarvestDefinition, created: bool, **kwargs: object) -> None:
    """post_save of HarvestDefinition (connected in apps.py): however a definition is made (web UI, CLI, API,
    admin, selection transfer), its collection exists once the transaction commits."""
    if created and not kwargs.get("raw"):
        transaction.on_commit(lambda: add_collection(instance.pk))


def refresh_quietly(why: str) -> None:
    """:func:`refresh` for the chain and the merges: replay lagging behind must never fail their work (the
    sweep refreshes again within a minute)."""
    try:
        refresh()
    except Exception as exc:  # logged; the sweep retries
        log.warning("replay index not refreshed after %s (the sweep will retry): %s", why, exc)


def sync_links(directory: Path, links: dict[str, Path]) -> int:
    """Make ``directory`` hold exactly ``links`` (name → target) as symlinks; returns how many changed. Each link
    is made under a temporary name and renamed into place, so pywb never sees one half-made."""
    directory.mkdir(parents=True, exist_ok=True)
    before = directory.stat().st_mtime
    changed = 0
    present = {entry.name: entry for entry in os.scandir(directory)}
    for name, target in links.items():
        entry = present.get(name)
        if entry is not None and entry.is_symlink() and os.readlink(entry.path) == str(target):
            continue
        tmp = directory / f".{name}.{uuid.uuid4().hex}.tmp"
        os.symlink(target, tmp)
        os.replace(tmp, directory / name)
        changed += 1
    for name, entry in present.items():
        if name not in links:
            Path(entry.path).unlink(missing_ok=True)
            changed += 1
    if changed:
        touch_dir(directory, before)
    return changed
