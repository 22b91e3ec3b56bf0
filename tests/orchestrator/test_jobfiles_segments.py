"""A continuous job's crawl.log in segments (``{job}-metadata-1`` … ``-metadata-N``), read back once the spool has
no crawl.log: the job's pages, API and QA read its crawl.log as the segments' records in the order of N, and its
reports from the last metadata WARC."""

from __future__ import annotations

from pathlib import Path

import pytest

from harvester.contracts import JobSpec
from harvester.metadatawarc import write_metadata_warc
from orchestrator.harvest.jobs import jobfiles
from orchestrator.harvest.models import ArchiveFile, Job
from tests.orchestrator import factories

pytestmark = pytest.mark.django_db

LINES = [
    f"2026-11-28T10:00:{i:02d}.000Z   200        100 http://a.example/{i} - - text/html #000 - - - -" for i in range(30)
]


def test_a_crawl_log_in_segments_reads_as_one(tmp_path: Path) -> None:
    job = factories.job(None, domains=["example.fr"])
    warcs = tmp_path / str(job.pk) / "warcs"
    warcs.mkdir(parents=True)
    log = tmp_path / "crawl.log"  # the harvester's, elsewhere: the spool holds no logs/ any more
    log.write_text("".join(line + "\n" for line in LINES))
    report = tmp_path / "crawl-report.txt"
    report.write_text("URIs: 30\n")
    cuts = [0, len("".join(line + "\n" for line in LINES[:12])), len("".join(line + "\n" for line in LINES[:25]))]
    spec = JobSpec.from_dict(job.spec)
    written = []
    for number, (start, end) in enumerate(zip(cuts, [*cuts[1:], None], strict=True), start=1):
        last = end is None
        written.append(
            write_metadata_warc(
                warcs,
                spec=spec,
                job_id=str(job.pk),
                harvest_id=str(job.harvest_id),
                crawl_log=log,
                reports=[report] if last else [],
                seeds=["http://a.example/"],
                warcinfo=[],
                number=number,
                log_range=(start, end),
                setup=last,
            )
        )
    for path in reversed(written):  # rows in any order: N orders them
        ArchiveFile.objects.create(job=job, name=path.name, kind="metadata", size=1, spool_path=str(path))
    ArchiveFile.objects.create(job=job, name=f"{job.pk}-7-x-00000-h.warc.gz", size=1, spool_path=str(warcs / "x"))

    source = jobfiles.locate(job, jobfiles.CRAWL_LOG)
    assert source.paths == tuple(written)
    assert str(source) == f"metadata WARCs {job.pk}-metadata-1.warc.gz to {job.pk}-metadata-3.warc.gz (3)"
    with jobfiles.open_binary(job, jobfiles.CRAWL_LOG) as (_, stream):
        assert list(jobfiles.iter_lines(stream)) == LINES
    with jobfiles.open_binary(job, jobfiles.CRAWL_LOG) as (_, stream):
        data = b""
        while chunk := stream.read(1000):
            data += chunk
    assert data == log.read_bytes()
    assert jobfiles.tail(job, 7)[1] == LINES[-7:]
    source, text, cut = jobfiles.read_text(job, "crawl-report.txt")
    assert (source.path, text, cut) == (written[-1], "URIs: 30\n", False)


def _segments(job: Job, warcs: Path, log: Path, cuts: list[int]) -> list[Path]:
    spec = JobSpec.from_dict(job.spec)
    out = []
    for number, (start, end) in enumerate(zip(cuts, cuts[1:], strict=False), start=1):
        path = write_metadata_warc(
            warcs,
            spec=spec,
            job_id=str(job.pk),
            harvest_id=str(job.harvest_id),
            crawl_log=log,
            reports=[],
            seeds=[],
            warcinfo=[],
            number=number,
            log_range=(start, end),
            setup=False,
        )
        ArchiveFile.objects.create(job=job, name=path.name, kind="metadata", size=1, spool_path=str(path))
        out.append(path)
    return out


def test_a_resubmitted_jobs_crawl_log_starts_with_what_the_failed_one_archived(tmp_path: Path) -> None:
    """The failed job's segments handed over while it ran stay its files; the job resubmitting it carried its
    crawl.log on and archived the rest: read from the archive, its crawl.log is the whole, as on its spool."""
    failed = factories.job(None, domains=["example.fr"], status="RESUBMITTED")
    job = factories.job(None, domains=["example.fr"], continues=failed)
    log = tmp_path / "crawl.log"
    log.write_text("".join(line + "\n" for line in LINES))
    size = [len("".join(line + "\n" for line in LINES[:n])) for n in (0, 5, 10, 20, 30)]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _segments(failed, tmp_path / "a", log, size[:3])  # 0-5, 5-10
    mine = _segments(job, tmp_path / "b", log, [size[2], size[3], size[4]])  # 10-20, 20-30 (numbered 1, 2)
    with jobfiles.open_binary(job, jobfiles.CRAWL_LOG) as (source, stream):
        assert list(jobfiles.iter_lines(stream)) == LINES
    assert len(source.paths) == 4
    with jobfiles.open_binary(failed, jobfiles.CRAWL_LOG) as (_, stream):
        assert list(jobfiles.iter_lines(stream)) == LINES[:10]

    mine[0].unlink()  # a segment that cannot be read now: no crawl.log with a hole in it
    with pytest.raises(jobfiles.NotAvailable, match=f"its part in {mine[0].name} cannot be read now"):
        jobfiles.locate(job, jobfiles.CRAWL_LOG)
