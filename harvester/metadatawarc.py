"""The job's metadata WARC, ``{job}-metadata-1.warc.gz``: what a reader of the archive needs to know how
the content WARCs were made (crawl.log, the reports, the JobSpec, the seeds), as NetarchiveSuite's
metadata files hold them (docs/FORMATS.md, "Metadata WARC"). Written once, at the end of a job."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import harvester
from harvester.contracts import JobSpec
from harvester.fileresults import METADATA_SUFFIX
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
) -> Path:
    """``{job}-metadata-1.warc.gz``: crawl.log, each report, the JobSpec and the seeds, as
    ``metadata`` records with NetarchiveSuite-style URIs (docs/FORMATS.md, "Metadata WARC"):
    ``metadata://netharvest/crawl/<logs|reports|setup>/<name>?netharvestVersion=…&harvestid=…
    &harvestnum=…&jobid=…``."""
    query = (
        f"?netharvestVersion={harvester.__version__}&harvestid={harvest_id}"
        f"&harvestnum={spec.harvest_run}&jobid={job_id}"
    )
    now = warc_date(datetime.now(UTC))
    items: list[tuple[str, str, Any]] = [("logs", "crawl.log", crawl_log)]
    items += [("reports", p.name, p) for p in reports]
    items.append(("setup", "jobspec.json", json.dumps(spec.to_dict(), indent=2, sort_keys=True).encode()))
    items.append(("setup", "seeds.txt", "".join(f"{s}\n" for s in seeds).encode()))

    def records() -> Iterator[WarcRecord]:
        for folder, name, content in items:
            ctype = "application/json" if name.endswith(".json") else "text/plain"
            if isinstance(content, Path):
                with open(content, "rb") as f:
                    digest, size = file_sha1(f)
                    yield _metadata_record(folder, name, query, now, ctype, [f], size, digest)
            else:
                yield _metadata_record(
                    folder, name, query, now, ctype, [content], len(content), hashlib.sha1(content).digest()
                )

    return write_warc_file(directory / f"{job_id}{METADATA_SUFFIX}", records(), warcinfo, compresslevel)


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
