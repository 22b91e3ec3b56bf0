"""A URL's captures across jobs, from the index replay uses: the master CDX (or a harvest definition's
sub-index) and the per-WARC CDX of stored WARCs not merged yet (orchestrator.harvest.archive.replay), so the list
shows what a curator can open in replay, no more and no less.

Each index is binary-searched for the URL's SURT key (indexer.cdxsearch): the cost is a few reads per index
file whatever the archive's size. As in pywb, one SURT key covers the URL's spellings (``http``/``https``,
``www.``, query order), and a revisit is listed as a capture of its own (the payload it stands for is resolved
on replay).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from indexer.cdx import surt_key
from indexer.cdxsearch import iter_key
from orchestrator.harvest.archive import replay
from orchestrator.harvest.chain import storage
from orchestrator.harvest.models import ArchiveFile

#: Most captures one lookup returns (the latest ones): a page revisited every hour for years is a long list.
MAX_CAPTURES = 5000


@dataclass(frozen=True)
class Capture:
    """One capture of a URL, as its CDX line and the archive file holding it say."""

    timestamp: str  # 14 digits, UTC
    url: str
    status: str  # "-" for records without one
    mime: str
    digest: str
    length: int  # of the record in the WARC (compressed)
    offset: int
    filename: str
    job_id: int | None
    harvest_id: int | None

    @property
    def revisit(self) -> bool:
        return self.mime == "warc/revisit"

    @property
    def when(self) -> datetime:
        return datetime.strptime(self.timestamp, "%Y%m%d%H%M%S").replace(tzinfo=UTC)

    def replay_url(self, collection: str = replay.ALL, mode: str = "") -> str:
        return replay.replay_url(self.url, self.timestamp, collection, mode)


def index_files(harvest_id: int | None = None) -> list[Path]:
    """The index files a lookup reads: the master (or the definition's sub-index) and the unmerged WARCs' CDX.
    Computed once for many lookups (a page of a job's pages), it saves a query per lookup."""
    master = storage.harvest_cdx(harvest_id) if harvest_id else storage.master_cdx()
    files = [master] if master.is_file() else []
    files += [Path(cdx) for _, h, cdx, _ in replay.recent_files() if harvest_id in (None, h)]
    return files


def captures_of(
    url: str, harvest_id: int | None = None, limit: int = MAX_CAPTURES, files: list[Path] | None = None
) -> list[Capture]:
    """Every capture of ``url`` in the archive (or in harvest definition ``harvest_id``'s collection), oldest
    first; at most ``limit``, the latest ones. ``files``: :func:`index_files` of ``harvest_id``, if known."""
    key = surt_key(url.strip())
    lines: set[bytes] = set()
    for cdx in files if files is not None else index_files(harvest_id):
        try:
            lines.update(iter_key(cdx, key))
        except FileNotFoundError:
            continue  # a per-WARC CDX rewritten by a reindex at this moment: the master has its lines
    rows = sorted((line.decode("utf-8", "replace").split(" ") for line in lines), key=lambda f: (f[1], f[10]))
    rows = [f for f in rows if len(f) == 11][-limit:]
    files = dict(
        (name, (job, harvest))
        for name, job, harvest in ArchiveFile.objects.filter(name__in={f[10] for f in rows}).values_list(
            "name", "job_id", "harvest_id"
        )
    )
    out = []
    for f in rows:
        job_id, harvest = files.get(f[10], (None, None))
        out.append(
            Capture(
                timestamp=f[1],
                url=f[2],
                status=f[4],
                mime=f[3],
                digest=f[5],
                length=int(f[8]) if f[8].isdigit() else 0,
                offset=int(f[9]) if f[9].isdigit() else 0,
                filename=f[10],
                job_id=job_id,
                harvest_id=harvest,
            )
        )
    return out
