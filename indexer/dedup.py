"""The deduplication index: payload digest → earliest capture, and URL → latest validators.

One SQLite file, updated incrementally as each job's WARCs are indexed (NetarchiveSuite rebuilds a
Lucene index per job from batch jobs instead). Harvesters open it read-only: a digest hit turns a
fetched duplicate into an identical-payload-digest revisit; a URL hit gives the ETag /
Last-Modified for a conditional request whose 304 becomes a server-not-modified revisit, and the
MIME type of that capture, because the harvester sends a conditional request only for types it
never extracts links from (harvester/revisit/__init__.py). An index written before ``by_url`` had its
``mime`` column gets it when a writer opens it; until a URL is fed again its type reads as ""
(unknown), which the harvester fetches in full: safe, never a lost link.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, Self

#: Captures per executemany batch in ``DedupIndex.add``.
ADD_BATCH = 10_000
#: SQLite page cache of a writing connection, in KiB.
WRITER_CACHE_KIB = 128 * 1024

SCHEMA = """
CREATE TABLE IF NOT EXISTS by_digest (
    digest TEXT PRIMARY KEY,          -- 'sha1:' + base32, as in WARC-Payload-Digest
    url TEXT NOT NULL,
    timestamp TEXT NOT NULL,          -- 14-digit UTC, as in CDX
    filename TEXT NOT NULL,
    offset INTEGER NOT NULL,
    mime TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS by_url (
    url TEXT PRIMARY KEY,
    digest TEXT NOT NULL,
    timestamp TEXT NOT NULL,
    filename TEXT NOT NULL,
    offset INTEGER NOT NULL,
    etag TEXT NOT NULL DEFAULT '',
    last_modified TEXT NOT NULL DEFAULT '',
    mime TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
"""


@dataclass(frozen=True)
class Capture:
    """An earlier capture a new fetch can refer to instead of storing the payload again."""

    digest: str
    url: str
    timestamp: str
    filename: str
    offset: int
    mime: str = ""
    etag: str = ""
    last_modified: str = ""


class OpenDb:
    """What both dedup indexes (SQLite here, RocksDB in :mod:`indexer.dedupstore`) share: one open ``db``,
    closed by :meth:`close` or at the end of a ``with`` block."""

    db: Any

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class DedupIndex(OpenDb):
    """Open (and create) a dedup index. ``readonly=True`` is what a harvester uses."""

    def __init__(self, path: str | Path, readonly: bool = False) -> None:
        self.path = Path(path)
        if readonly:
            self.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            # Random digests and URLs make every insert touch a random B-tree page: a 128 MiB page
            # cache and WAL's synchronous=NORMAL (fsync at checkpoints, not at every commit) make
            # feeding 2-2.5x faster (docs/BENCHMARKS.md, "Dedup index"). A power cut can lose the
            # last commits, never corrupt the file; losing them costs a few stored duplicates, and
            # re-feeding a WARC is idempotent.
            self.db.execute(f"PRAGMA cache_size=-{WRITER_CACHE_KIB}")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(SCHEMA)
            if not self._url_mime():
                self.db.execute("ALTER TABLE by_url ADD COLUMN mime TEXT NOT NULL DEFAULT ''")
        self._mime_column = "mime" if self._url_mime() else "''"

    def _url_mime(self) -> bool:
        """Whether ``by_url`` has its ``mime`` column (an index from before it was added has not)."""
        return any(row[1] == "mime" for row in self.db.execute("PRAGMA table_info(by_url)"))

    def by_digest(self, digest: str) -> Capture | None:
        row = self.db.execute(
            "SELECT digest, url, timestamp, filename, offset, mime FROM by_digest WHERE digest = ?",
            (digest,),
        ).fetchone()
        return Capture(*row) if row else None

    def by_url(self, url: str) -> Capture | None:
        row = self.db.execute(
            "SELECT digest, url, timestamp, filename, offset, etag, last_modified, "
            f"{self._mime_column} FROM by_url WHERE url = ?",
            (url,),
        ).fetchone()
        if not row:
            return None
        digest, url, ts, filename, offset, etag, last_modified, mime = row
        return Capture(digest, url, ts, filename, offset, mime, etag, last_modified)

    def add(self, captures: Iterable[Capture]) -> int:
        """Record captures in one transaction. The earliest capture of a digest stays its referent;
        the latest capture of a URL replaces its validators. Re-adding the same captures is a no-op,
        so re-indexing a file after a crash never corrupts the index. Captures are written in
        batches of ``ADD_BATCH`` with ``executemany`` (memory stays bounded for any input size)."""
        count = 0
        it = iter(captures)
        with self.db:
            while batch := list(islice(it, ADD_BATCH)):
                self.db.executemany(
                    "INSERT INTO by_digest VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(digest) DO UPDATE SET "
                    "url=excluded.url, timestamp=excluded.timestamp, filename=excluded.filename, "
                    "offset=excluded.offset, mime=excluded.mime WHERE excluded.timestamp < by_digest.timestamp",
                    [(c.digest, c.url, c.timestamp, c.filename, c.offset, c.mime) for c in batch],
                )
                self.db.executemany(
                    "INSERT INTO by_url (url, digest, timestamp, filename, offset, etag, last_modified, mime) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(url) DO UPDATE SET "
                    "digest=excluded.digest, timestamp=excluded.timestamp, filename=excluded.filename, "
                    "offset=excluded.offset, etag=excluded.etag, last_modified=excluded.last_modified, "
                    "mime=excluded.mime WHERE excluded.timestamp >= by_url.timestamp",
                    [
                        (c.url, c.digest, c.timestamp, c.filename, c.offset, c.etag, c.last_modified, c.mime)
                        for c in batch
                    ],
                )
                count += len(batch)
        return count
