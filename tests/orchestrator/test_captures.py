"""A URL's captures across jobs (orchestrator.harvest.archive.captures), from the index replay uses: real WARCs of two
real crawls through the real chain, before the merges (per-WARC CDX files) and after (master, sub-indexes)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from orchestrator.harvest.archive.captures import captures_of
from orchestrator.harvest.chain import merging
from orchestrator.harvest.chain import steps as chain
from tests.indexer.conftest import TwoJobs
from tests.indexer.warcs import crawl_two_jobs
from tests.orchestrator import factories
from tests.orchestrator.chainhelp import harvest

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def crawls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TwoJobs]:
    with crawl_two_jobs(tmp_path_factory.mktemp("captures")) as (job1, job2, index, urls):
        yield TwoJobs(job1, job2, index, urls)


def test_captures_across_jobs_and_definitions(crawls, storage_env):
    news, blogs = factories.selective_definition("news"), factories.selective_definition("blogs")
    job1 = harvest(crawls.job1, storage_env / "spool", news)
    job2 = harvest(crawls.job2, storage_env / "spool", blogs)
    assert not chain.run_pending().failed
    home = crawls.site_urls[0]

    def check() -> None:
        found = captures_of(home)
        assert [c.job_id for c in found] == [job1.pk, job2.pk]  # oldest first
        first, second = found
        assert first.status == "200" and first.mime == "text/html" and not first.revisit
        assert first.harvest_id == news.pk and second.harvest_id == blogs.pk
        assert first.filename.startswith(f"{job1.pk}-") and first.length > 0 and len(first.digest) == 32
        assert first.timestamp < second.timestamp and first.when.year >= 2026
        assert first.replay_url() == f"/replay/all/{first.timestamp}/{home}"
        assert [c.job_id for c in captures_of(home, harvest_id=blogs.pk)] == [job2.pk]
        assert captures_of(home + "never-there.html") == []
        # The revisits of job 2 are captures too (replay resolves their payload).
        revisits = [c for u in {c.url for c in captures_of(home)} for c in captures_of(u) if c.revisit]
        assert revisits and all(c.job_id == job2.pk for c in revisits)

    check()  # from the per-WARC CDX files, before any merge
    merging.merge()
    check()  # from a daily not bigmerged yet
    merging.bigmerge()
    check()  # from the master and the definitions' sub-indexes
    assert len(captures_of(home, limit=1)) == 1 and captures_of(home, limit=1)[0].job_id == job2.pk
