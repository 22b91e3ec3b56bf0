"""Fixtures for the indexer tests: two real harvester jobs over the bundled test site."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.indexer.warcs import crawl_two_jobs


@dataclass
class TwoJobs:
    """Job 1's and job 2's WARCs (content WARCs, then the metadata WARC); job 2 ran with the
    dedup index fed from job 1. ``site_urls`` are the test site's two base URLs (still serving)."""

    job1: list[Path]
    job2: list[Path]
    dedup_index: Path
    site_urls: list[str] = field(default_factory=list)

    @property
    def all_warcs(self) -> list[Path]:
        return [*self.job1, *self.job2]


@pytest.fixture(scope="session")
def two_jobs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TwoJobs]:
    root = tmp_path_factory.mktemp("two-jobs")
    with crawl_two_jobs(root) as (job1, job2, index, urls):
        yield TwoJobs(job1, job2, index, urls)
