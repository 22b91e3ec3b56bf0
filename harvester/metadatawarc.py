"""The job's metadata WARC, ``{job}-metadata-1.warc.gz``: what a reader of the archive needs to know how
the content WARCs were made (crawl.log, the reports, the JobSpec, the seeds), as NetarchiveSuite's
metadata files hold them (docs/FORMATS.md, "Metadata WARC"). Written once, at the end of a job; a
continuous job also writes its crawl.log in segments while it runs (:mod:`harvester.crawllogsegments`),
so its last metadata WARC is ``-metadata-N`` and holds the rest of the crawl.log."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import harvester
from harvester.contracts import JobSpec
from harvester.crawllogsegments import metadata_name
from harvester.warcwriter import WarcRecord, file_sha1, sha1_b32, warc_date, write_warc_file

METADATA_HOST = "netharvest"


def write_metadata_warc(
    directory: Path,
    *,
    spec: JobSpec,
    job_id: str,
    harvest_id: str,
    crawl_log: Path,
    reports: list[Path],
    seeds: list[str],
    warcinfo: list[tuple[str, str]],
    compresslevel: int = 6,
    number: int = 1,
    log_range: tuple[int, int] | None = None,
    setup: bool = True,
) -> Path:
    """``{job}-metadata-{number}.warc.gz``: crawl.log (bytes ``log_range`` of it: [start, end), end None
    for the end of the file; all of it by default), each report, the JobSpec and the seeds (``setup``), as
    ``metadata`` records with NetarchiveSuite-style URIs (docs/FORMATS.md, "Metadata WARC"):
    ``metadata://netharvest/crawl/<logs|reports|setup>/<name>?netharvestVersion=…&harvestid=…
    &harvestnum=…&jobid=…``."""
    query = (
        f"?netharvestVersion={harvester.__version__}&harvestid={harvest_id}"
        f"&harvestnum={spec.harvest_run}&jobid={job_id}"
    )
    now = warc_date(datetime.now(UTC))
    items: list[tuple[str, str, Any]] = [("logs", "crawl.log", (crawl_log, log_range))]
    items += [("reports", p.name, (p, None)) for p in reports]
    if setup:
        items.append(("setup", "jobspec.json", json.dumps(spec.to_dict(), indent=2, sort_keys=True).encode()))
        items.append(("setup", "seeds.txt", "".join(f"{s}\n" for s in seeds).encode()))

    def records() -> Iterator[WarcRecord]:
        for folder, name, content in items:
            ctype = "application/json" if name.endswith(".json") else "text/plain"
            if isinstance(content, tuple):
                path, span = content
                with open(path, "rb") as f:
                    part = FileRange(f, *span) if span is not None else f
                    digest, size = file_sha1(part)
                    yield _metadata_record(folder, name, query, now, ctype, [part], size, digest)
            else:
                yield _metadata_record(
                    folder, name, query, now, ctype, [content], len(content), hashlib.sha1(content).digest()
                )

    return write_warc_file(directory / metadata_name(job_id, number), records(), warcinfo, compresslevel)


class FileRange:
    """Bytes [start, end) of an open file as a seekable part of a record (``end`` None: to the end)."""

    def __init__(self, f: BinaryIO, start: int, end: int | None) -> None:
        self.f, self.start = f, start
        self.end = f.seek(0, os.SEEK_END) if end is None else end
        self.pos = start

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        assert whence == os.SEEK_SET
        self.pos = self.start + offset
        return offset

    def read(self, n: int = -1) -> bytes:
        left = self.end - self.pos
        if left <= 0:
            return b""
        self.f.seek(self.pos)
        data = self.f.read(left if n < 0 else min(n, left))
        self.pos += len(data)
        return data


def _metadata_record(
    folder: str, name: str, query: str, date: str, ctype: str, parts: list[Any], length: int, digest: bytes
) -> WarcRecord:
    return WarcRecord(
        type="metadata",
        headers=[
            ("WARC-Date", date),
            ("WARC-Target-URI", f"metadata://{METADATA_HOST}/crawl/{folder}/{name}{query}"),
            ("WARC-Block-Digest", sha1_b32(digest)),
        ],
        parts=parts,
        length=length,
        content_type=ctype,
    )
