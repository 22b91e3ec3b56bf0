"""A continuous harvest through the real stack (issue 12): ``netharvest up``'s continuous worker and the
indexer on Redis and PostgreSQL, a changing site over HTTP.

Activating the definition makes its one job on the ``continuous`` channel; while it runs, its WARCs
(closed every 3 s) reach the archive: ArchiveFile rows appear and go through the whole indexer chain
(CDX, PATH, dedup index) with the job still STARTED, and its heartbeat carries Progress.continuous; a
seed pasted into the definition reaches the running crawl; deactivating stops it, DONE, every file
indexed once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from orchestrator.harvest.curation import seeding
from orchestrator.harvest.models import ArchiveFile, CrawlTemplate, HarvestChannel, HarvestDefinition, Job
from orchestrator.harvest.scheduling import scheduler
from tests.changingsite import CLOCK_STRIP, ChangingSite
from tests.conftest import wait_for

pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def wait_while_running(job: Job, condition: Callable[[], bool], what: str, log: Path) -> None:
    """Wait up to 180 s for ``condition``; on a timeout, fail with the job's state, its files' states and the
    workers' log (``log``), which is what tells a slow stack from a broken one."""
    try:
        wait_for(condition, 180, what)
    except AssertionError:
        job.refresh_from_db()
        files = list(ArchiveFile.objects.filter(job=job).values_list("name", "index_state"))
        raise AssertionError(
            f"job {job.pk} {job.status} {job.error_detail[-500:]} files {files}\n" + log.read_text()[-6000:]
        ) from None


def activate_live_definition(site: ChangingSite) -> tuple[HarvestDefinition, Job]:
    """A continuous definition of ``site`` in accelerated time (waits of seconds, WARCs closed every 3 s),
    activated: its one job is on its way to the continuous worker."""
    template = CrawlTemplate.objects.create(
        name="live site", min_delay_ms=100, max_delay_ms=100, delay_factor=0, retry_delay_s=1, max_retries=1
    )
    definition = HarvestDefinition.objects.create(
        name="live news",
        kind="continuous",
        channel=HarvestChannel.objects.get(name="continuous"),
        revisit_settings={
            "policy": "heritrix",
            "initial_wait_s": {"text": 2, "other": 2},
            "min_wait_s": 1,
            "max_wait_s": 10,
            "strip": [CLOCK_STRIP],
        },
        fetch_budget_per_s=5,
        warc_rotate_s=3,
    )
    assert seeding.add_seeds(definition, site.url, template).ok
    scheduler.activate(definition)
    (job,) = Job.objects.filter(harvest=definition)
    return definition, job


def test_a_continuous_harvest_runs_hands_over_and_indexes_while_running(continuous_workers: Path) -> None:
    site = ChangingSite().start()
    try:
        definition, job = activate_live_definition(site)
        assert job.channel.name == "continuous"

        def indexed_while_running() -> bool:
            done = ArchiveFile.objects.filter(job=job, kind="warc", index_state="CLEANED").count()
            return done >= 2 and Job.objects.get(pk=job.pk).status == "STARTED"

        wait_while_running(job, indexed_while_running, "WARCs indexed while the job runs", continuous_workers)
        job.refresh_from_db()
        cont = job.progress["continuous"]
        assert cont["visits"] > 0 and cont["budget_per_s"] == 5 and cont["warcs_closed"] >= 1  # a heartbeat lags

        template = CrawlTemplate.objects.get(name="live site")
        assert seeding.add_seeds(definition, f"{site.url}new-1", template).ok  # reaches the running crawl
        wait_for(lambda: site.hits("/new-1"), 60, "the added seed to be fetched")
        assert Job.objects.get(pk=job.pk).status == "STARTED"

        scheduler.deactivate(definition)
        wait_for(lambda: Job.objects.get(pk=job.pk).status in ("DONE", "FAILED"), 120, "the job to stop")
        job.refresh_from_db()
        assert job.status == "DONE", (job.error_category, job.error_detail, continuous_workers.read_text()[-3000:])
        wait_for(
            lambda: set(ArchiveFile.objects.filter(job=job).values_list("index_state", flat=True)) == {"CLEANED"},
            180,
            "every file through the chain",
        )
        names = list(ArchiveFile.objects.filter(job=job).values_list("name", flat=True))
        assert len(names) == len(set(names)) and sum(n.endswith("-metadata-1.warc.gz") for n in names) == 1
        assert Job.objects.filter(harvest=definition).count() == 1
    finally:
        site.shutdown()
