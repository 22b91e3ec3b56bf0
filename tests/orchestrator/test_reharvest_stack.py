"""A second harvest of an unchanged site captures the whole site, through the real stack (issue 11).

A static site served by the standard library's ``http.server`` (Last-Modified, If-Modified-Since
answered 304); a selective definition over it; ``run-now`` (the scheduler) → the harvester worker
(real Celery process on Redis) → the intake → the indexer chain (which feeds the dedup index) →
``run-now`` again. The second job's crawl.log holds the same URIs as the first's and its WARCs hold
revisit records for the unchanged content. Before the fix it captured the seed and robots.txt only,
stop reason DOWNLOAD_COMPLETE.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from orchestrator.harvest.curation import seeding
from orchestrator.harvest.jobs import jobfiles
from orchestrator.harvest.models import ArchiveFileCopy, CrawlTemplate, HarvestInfo, Job
from orchestrator.harvest.scheduling import scheduler
from tests.orchestrator import factories
from tests.orchestrator.realstack import wait_indexed
from tests.staticsite import StaticServer, write_site

pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True)]

IDENTICAL = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"


def run_through_the_chain(definition, log: Path) -> Job:
    """Run the definition now; wait until its job is DONE and every file of it CLEANED (so its
    captures are in the dedup index the next job consults)."""
    (job,) = scheduler.run_now(definition, requested_by="test").jobs
    return wait_indexed(job, log)


def crawled(job: Job) -> set[str]:
    """The URIs of the job's crawl.log (read where the chain left it: the stored metadata WARC)."""
    with jobfiles.open_binary(job, jobfiles.CRAWL_LOG) as (_, stream):
        return {line.split()[3] for line in jobfiles.iter_lines(stream) if line.strip()}


def revisits(job: Job) -> dict[str, str]:
    """URI → revisit profile of the revisit records in the job's stored WARCs."""
    out = {}
    for copy in ArchiveFileCopy.objects.filter(file__job=job, file__kind="warc", is_replica=False):
        with open(copy.path, "rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_type == "revisit":
                    out[rec.rec_headers.get_header("WARC-Target-URI")] = rec.rec_headers.get_header("WARC-Profile")
    return out


def test_an_unchanged_site_harvested_twice_through_the_stack(tmp_path: Path, workers: Path) -> None:
    paths = write_site(tmp_path / "site", pages=60)
    server = StaticServer(tmp_path / "site")
    try:
        template = CrawlTemplate.objects.create(
            name="local static site", min_delay_ms=0, max_delay_ms=0, delay_factor=0, retry_delay_s=1, max_retries=1
        )
        definition = factories.selective_definition("static site twice")
        assert seeding.add_seeds(definition, server.url, template).ok
        first = run_through_the_chain(definition, workers)
        second = run_through_the_chain(definition, workers)
    finally:
        server.shutdown()
    expected = {server.url + p.lstrip("/") for p in paths}
    assert crawled(first) == expected
    assert crawled(second) == expected
    found = revisits(second)
    assert found[server.url + "p59.html"] == IDENTICAL  # fetched in full (links read), stored as a revisit
    assert found[server.url + "img/i59.png"] == NOT_MODIFIED  # asked conditionally, answered 304
    assert set(found) == expected  # nothing changed: nothing stored twice
    (info,) = HarvestInfo.objects.filter(job=second)
    assert info.stop_reason == "DOWNLOAD_COMPLETE" and info.objects_count == len(expected)
