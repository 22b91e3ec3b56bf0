"""Page QA and the patch crawl through the real stack (issue 13), nothing mocked: the bundled test site, a real
harvester worker and the orchestrator's intake + indexer worker (``netharvest up --only worker-high,indexer``),
real pywb over what the chain stored (tests/replayhelp.py) and Debian's Chromium driven by Playwright.

The test site's home page loads a banner from JavaScript, its address assembled at run time so no link extractor
finds it (harvester/testsite/site/js/app.js). So the crawl misses it, the QA pass sees the replayed page ask for
it and pywb answer "not in the archive", the patch job fetches exactly it, the chain indexes it, replay then
serves it, and the pass the patch starts by itself finds less missing.
"""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from harvester.testsite import SITE_DIR, serve_in_thread
from orchestrator.harvest.archive import replay
from orchestrator.harvest.curation import seeding
from orchestrator.harvest.jobs import jobfiles, patch
from orchestrator.harvest.models import CrawlTemplate, Job, MissingResource, QARun
from orchestrator.harvest.qa import pageqa
from orchestrator.harvest.scheduling import scheduler
from tests.conftest import wait_for
from tests.orchestrator import factories
from tests.orchestrator.realstack import wait_indexed
from tests.webui.browserhelp import CHROMIUM, MISSING, REQUIRED

pytestmark = [
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.skipif(bool(MISSING) and not REQUIRED, reason=MISSING),
]


def run_of(job: Job, trigger: str) -> QARun:
    """The pass the chain queued for ``job`` (nobody consumes queue qa here: this test runs it in-process)."""
    wait_for(lambda: QARun.objects.filter(job=job, trigger=trigger).exists(), 60, f"a {trigger} QA run of {job.pk}")
    run = pageqa.run_pass(QARun.objects.get(job=job, trigger=trigger).pk)
    assert run is not None and run.status == "DONE", run and run.error
    return run


def test_qa_finds_the_js_image_and_the_patch_crawl_brings_it_into_replay(
    own_index, workers: Path, replay_service, settings
):
    settings.NETHARVEST_QA_MAX_PAGES = 2
    settings.NETHARVEST_QA_CHROMIUM = CHROMIUM
    site = serve_in_thread()
    try:
        template = CrawlTemplate.objects.create(
            name="local test",
            min_delay_ms=0,
            max_delay_ms=0,
            delay_factor=0,
            max_hops=2,
            retry_delay_s=1,
            max_retries=1,
        )
        definition = factories.selective_definition("QA of the test site")
        assert definition.page_qa  # on by default for selective harvests
        assert seeding.add_seeds(definition, site.url, template).ok
        (job,) = scheduler.run_now(definition, requested_by="test").jobs
        job = wait_indexed(job, workers)
        banner = site.url + "hidden/banner.png"

        first = run_of(job, QARun.AUTO)
        home = first.pages.get(url=site.url)
        assert home.is_seed and home.replay_status == 200 and home.title == "netharvest test site"
        missing = {(m.url, m.resource_type, m.host) for m in MissingResource.objects.filter(page=home)}
        assert (banner, "image", f"127.0.0.1:{site.port}") in missing
        assert home.missing_count == len({m[0] for m in missing})
        # The live page showed the banner, the replay did not: the scores say so, short of identical.
        assert home.live_status == 200 and home.screenshot_similarity is not None and home.screenshot_similarity < 1
        assert home.text_similarity is not None
        for thumb in (home.replay_thumb, home.live_thumb):
            assert (pageqa.qa_dir() / thumb).read_bytes().startswith(b"\x89PNG")
        assert "netharvest test site" in home.text

        new = patch.create_patch_job(job, requested_by="test")
        assert new.patches_id == job.pk and new.harvest_id == job.harvest_id
        seeds = [s for d in new.spec["domains"] for s in d["seeds"]]
        assert banner in seeds and set(seeds) == set(
            MissingResource.objects.filter(run=first).values_list("url", flat=True)
        )
        assert new.spec["settings"]["max_hops"] == 0 and new.spec["settings"]["max_embed_hops"] == 0
        assert new.spec["settings"]["dedup"] == job.spec["settings"]["dedup"]
        assert new.spec["dedup_index"] == job.spec["dedup_index"]
        wait_indexed(new, workers)
        # exactly those URLs: no page, embed or sitemap beyond them (robots.txt and DNS are prerequisites)
        with jobfiles.open_binary(new, jobfiles.CRAWL_LOG) as (_, stream):
            fields = [line.split() for line in stream.read().decode().splitlines() if line.strip()]
        fetched = {f[3] for f in fields if int(f[1]) > 0}  # the links refused are logged -4001
        assert {u for u in fetched if not u.startswith("dns:") and not u.endswith("/robots.txt")} == set(seeds)

        # Replay now has the banner, in the definition's collection, at the original page's time.
        address = django_settings.NETHARVEST_REPLAY_URL + replay.replay_url(
            banner, home.timestamp, replay.collection_of(job.harvest_id), mode="id_"
        )
        with urllib.request.urlopen(address, timeout=30) as answer:
            assert answer.status == 200
            assert answer.read() == (SITE_DIR / "hidden" / "banner.png").read_bytes()

        second = run_of(job, QARun.AFTER_PATCH)  # started by the chain once the patch job was stored
        assert second.patch_job_id == new.pk
        home_again = second.pages.get(url=site.url)
        assert not MissingResource.objects.filter(run=second, url=banner).exists()
        assert home_again.missing_count < home.missing_count
        assert second.missing_urls < first.missing_urls
    finally:
        site.shutdown()
