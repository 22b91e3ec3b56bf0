"""Where the replay service (pywb) finds the archive: one layout under the index directory, shared by the
orchestrator, which keeps it up to date (orchestrator.harvest.archive.replay), and the pywb launcher
(deploy/replay_server.py), which runs in pywb's own virtual environment and imports only this module
(no Django, no third-party import).

    <index>/master.cdx, master.path           the master indexes (orchestrator.harvest.chain.merging)
    <index>/replay/config.yaml                pywb's configuration, written by the launcher
    <index>/replay/collections/<coll>/indexes/
        master.cdx -> <index>/master.cdx (collection ``all``) or <index>/harvests/<id>.cdx, once it exists
        <warc name>.cdx -> the per-WARC CDX of a stored WARC not yet in the master index
    <index>/replay/warcs/<warc name> -> the stored copy of that WARC
    <index>/replay/recent.path               PATH lines of such WARCs stored in an object store (s3:// URLs:
                                              no symlink can point there)

pywb reads a collection's ``indexes`` directory anew whenever the directory changes (it caches the listing by
the directory's ``stat``) and opens each index file by name per query, so a master replaced by rename, a new
symlink for a WARC the chain just stored, or a new harvest definition's directory are all seen without a
restart. WARC names resolve through ``master.path`` first (pywb's path index: primary copy, then replica),
then through ``warcs/`` (files not merged yet).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

#: The collection holding every capture of the archive.
ALL = "all"
#: A harvest definition's collection is ``PREFIX<definition id>``.
HARVEST_PREFIX = "harvest-"
#: The URL prefix the replay service is mounted at, in pywb and in the web UI's proxy alike, so the links pywb
#: writes into replayed pages point back through the web UI.
URL_PREFIX = "/replay"


def harvest_collection(harvest_id: int) -> str:
    return f"{HARVEST_PREFIX}{harvest_id}"


class ReplayLayout:
    """The replay service's files under ``index_dir``."""

    def __init__(self, index_dir: str | Path) -> None:
        self.index_dir = Path(index_dir)
        self.root = self.index_dir / "replay"
        self.collections = self.root / "collections"
        self.warcs = self.root / "warcs"
        self.config = self.root / "config.yaml"
        self.master_cdx = self.index_dir / "master.cdx"
        self.master_path = self.index_dir / "master.path"
        self.recent_path = self.root / "recent.path"

    def indexes(self, collection: str) -> Path:
        return self.collections / collection / "indexes"

    def ensure(self) -> None:
        """The directories."""
        for d in (self.index_dir, self.collections, self.warcs, self.indexes(ALL)):
            d.mkdir(parents=True, exist_ok=True)

    def ensure_path_index(self) -> None:
        """The master PATH file, for the launcher: pywb chooses its path-index resolver only for a file that
        exists when it starts, so an archive with nothing merged yet gets an empty one (bigmerge takes an empty
        master as an input like any other, and replaces it)."""
        for path in (self.master_path, self.recent_path):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                continue
            os.close(fd)

    def pywb_config(self, framed: bool = True) -> str:
        """pywb's config.yaml for this layout (auto collections: every directory under ``collections`` is one)."""
        lines = [
            "# Written by deploy/replay_server.py (indexer/replaylayout.py): do not edit, it is rewritten at start.",
            f"collections_root: {_yaml(self.collections)}",
            "index_paths: indexes",
            "archive_paths:",
            f"  - {_yaml('file://' + str(self.master_path))}",
            f"  - {_yaml('file://' + str(self.recent_path))}",
            f"  - {_yaml(str(self.warcs) + '/')}",
            "enable_auto_colls: true",
            f"framed_replay: {'true' if framed else 'false'}",
            "enable_memento: true",
        ]
        return "\n".join(lines) + "\n"


def _yaml(value: str | Path) -> str:
    """A YAML double-quoted scalar (paths may hold any character but a newline)."""
    text = str(value)
    if "\n" in text or "\r" in text:
        raise ValueError(f"replay layout: path {text!r} contains a newline")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def touch_dir(directory: Path, before: float) -> None:
    """Give ``directory`` (changed since its modification time was ``before``) a modification time later, in
    whole seconds, than both ``before`` and now: pywb compares a directory's ``stat`` (whole seconds) to decide
    whether to list it again, so a change in the second of its last listing would otherwise stay unseen."""
    when = max(int(time.time()), int(before)) + 1
    os.utime(directory, (when, when))
