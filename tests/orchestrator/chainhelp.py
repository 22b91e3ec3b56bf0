"""Helpers for the indexer-chain tests: real WARCs from a real crawl of the bundled test site, handed to
the orchestrator as a harvester would (a spool directory and a JobResult through result intake)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

from orchestrator.harvest.jobs import intake
from orchestrator.harvest.models import ArchiveFile, Job, JobStatus
from tests.orchestrator import factories


def crawl_warcs(out: Path) -> list[Path]:
    """Crawl the test site once (small WARC size limit, so several WARCs plus the metadata WARC)."""
    from harvester.testsite import serve_in_thread
    from tests.harvester.crawlhelp import make_spec, run_crawl

    site = serve_in_thread(0)
    try:
        spec = make_spec([site.url], job_id=1, settings={"scope": "host", "warc_max_bytes": 30_000}, max_objects=40)
        result = run_crawl(out, spec)
    finally:
        site.shutdown()
    assert result["status"] == "DONE", result
    return sorted(Path(f["path"]) for f in result["files"])


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def harvest(
    warcs: list[Path],
    spool: Path,
    definition: Any = None,
    domain: str = "example.fr",
    corrupt_checksum: str | None = None,
) -> Job:
    """A job whose harvester left copies of ``warcs`` in ``spool/<job>/warcs`` and reported them.

    File names get the job's id as prefix, as the harvester's naming does, so several jobs can be harvested
    in one test. ``corrupt_checksum`` names a file whose reported SHA-256 is wrong.
    """
    job = factories.job(definition, domains=[domain], status=JobStatus.STARTED)
    directory = spool / str(job.pk) / "warcs"
    directory.mkdir(parents=True)
    files = []
    for warc in warcs:
        name = f"{job.pk}-{warc.name.split('-', 1)[1]}"
        dest = directory / name
        shutil.copyfile(warc, dest)
        digest = sha256(dest) if warc.name != corrupt_checksum else "0" * 64
        files.append(
            {
                "name": name,
                "path": str(dest),
                "size": dest.stat().st_size,
                "sha256": digest,
                "kind": "metadata" if "-metadata-" in name else "warc",
            }
        )
    intake.record_result(
        {
            "version": 1,
            "job_id": job.pk,
            "status": "DONE",
            "started": "2026-11-23T10:00:00Z",
            "ended": "2026-11-23T10:05:00Z",
            "files": files,
            "domains": [
                {
                    "name": domain,
                    "configuration": "defaultconfig",
                    "objects": 10,
                    "bytes": 1000,
                    "stop_reason": "DOWNLOAD_COMPLETE",
                }
            ],
        }
    )
    job.refresh_from_db()
    return job


def states(job: Job | None = None) -> dict[str, str]:
    rows = ArchiveFile.objects.all() if job is None else ArchiveFile.objects.filter(job=job)
    return dict(rows.values_list("name", "index_state"))


def data_lines(path: Path) -> list[bytes]:
    """A CDX or PATH file's lines without the CDX header."""
    return [line for line in path.read_bytes().splitlines(keepends=True) if not line.startswith(b" CDX ")]
