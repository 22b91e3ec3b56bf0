"""A job's pages (/jobs/<id>/pages/): the HTML pages of a real crawl, seeds first, with titles read from the
archived records, status and size, each one click from replay (real pywb behind the web UI's proxy), the
first shown framed in the page; a deduplicated job's unchanged pages with their original's title."""

from __future__ import annotations

import re
import urllib.request

import pytest
from django.test import Client

from orchestrator.harvest.archive.pages import job_pages
from orchestrator.harvest.chain import steps as chain
from tests.indexer.conftest import TwoJobs
from tests.orchestrator import factories
from tests.orchestrator.chainhelp import harvest
from tests.orchestrator.conftest import storage_env  # noqa: F401 - a fixture
from tests.orchestrator.crawled_job import make_job

pytestmark = pytest.mark.django_db


def text(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_pages_list_with_titles_and_framed_replay(
    replay_crawls: TwoJobs,
    storage_env,  # noqa: F811
    replay_service,
    viewer: Client,
):
    news = factories.selective_definition("news")
    job1 = harvest(replay_crawls.job1, storage_env / "spool", news)
    job2 = harvest(replay_crawls.job2, storage_env / "spool", news)
    assert not chain.run_pending().failed  # stored and indexed; the spool copies are gone: crawl.log from the WARC
    home = replay_crawls.site_urls[0]

    page = text(viewer, f"/jobs/{job1.pk}/pages/")
    rows = re.findall(r'<tr class="(seed)?">\s*<td class="url">(.*?)</td>', page, re.S)
    assert rows and rows[0][0] == "seed" and home in rows[0][1] and "netharvest test site" in rows[0][1]
    assert sum(1 for seed, _ in rows if seed) == 1  # one seed, listed first
    assert ">About</a>" in page  # titles from the archived records
    # The first page replays framed in the page, through the web UI's proxy.
    frame = re.search(r'<iframe name="replay" class="replay-frame" title="replay" src="([^"]+)"', page)
    assert frame and frame.group(1).startswith("/replay/all/") and frame.group(1).endswith(home)
    assert viewer.get(frame.group(1)).status_code == 200
    links = re.findall(r'<a href="(/replay/all/\d{14}/[^"]+)" target="replay"', page)
    assert len(links) == len(rows)
    about = next(link for link in links if link.endswith("about.html"))
    stamp, url = re.match(r"/replay/all/(\d{14})/(.*)", about).groups()
    with urllib.request.urlopen(url, timeout=30) as r:
        assert body(viewer.get(f"/replay/all/{stamp}id_/{url}")) == r.read()

    # Job 2 fetched the same pages unchanged: listed as such, with the title of the capture they point to.
    page2 = text(viewer, f"/jobs/{job2.pk}/pages/")
    assert "(unchanged)" in page2 and ">About</a>" in page2 and "netharvest test site" in page2
    # Its replay links open job 2's own captures (revisits, resolved by replay to the original payload).
    listed = job_pages(job2, 0, 50).pages
    assert listed and all(p.capture.job_id == job2.pk for p in listed)
    assert any(p.duplicate and p.capture.revisit and p.title for p in listed)
    for p in listed:
        assert f'<a href="{p.capture.replay_url()}" target="replay"' in page2


def test_paging_keeps_seeds_first_and_covers_every_page(replay_crawls: TwoJobs, storage_env):  # noqa: F811
    job = harvest(replay_crawls.job1, storage_env / "spool", factories.selective_definition("news"))
    assert not chain.run_pending().failed
    everything = job_pages(job, 0, 10_000)
    assert everything.total == len(everything.pages) > 5 and everything.pages[0].seed
    urls = [p.url for p in everything.pages]
    assert len(set(urls)) == len(urls)
    for size in (1, 3, 7):
        paged = [p.url for offset in range(0, everything.total, size) for p in job_pages(job, offset, size).pages]
        assert paged == urls
    assert all(p.status > 0 and p.capture is not None for p in everything.pages)


def test_a_job_without_crawl_log_says_so(viewer: Client):
    job = make_job()
    page = text(viewer, f"/jobs/{job.pk}/pages/")
    assert "No page list" in page and "<iframe" not in page


@pytest.mark.parametrize("kind", ["selective", "continuous"])
def test_a_continuous_jobs_pages_are_listed_once_with_their_visits(kind: str, viewer: Client):
    """A continuous job's crawl.log names each page at every visit: its page list shows each page once, as its
    latest visit found it, with the number of visits (a newcomer saw the same address dozens of times). A
    one-off job's rows stay as its crawl.log has them."""
    import shutil

    from harvester.runtime import spool_dir
    from orchestrator.harvest.models import HarvestChannel
    from tests.orchestrator.crawled_job import crawled

    definition = factories.selective_definition(f"pages {kind}")
    if kind == "continuous":
        definition.kind, definition.channel = "continuous", HarvestChannel.objects.get(name="continuous")
        definition.save()
    job = factories.job(definition, domains=["a.dk"])
    logs = spool_dir() / str(job.pk) / "logs"
    logs.mkdir(parents=True)
    shutil.copy(crawled().job_dir / "logs" / "crawl.log", logs / "crawl.log")
    once = job_pages(job, 0, 10_000)
    lines = (logs / "crawl.log").read_text()
    (logs / "crawl.log").write_text(lines + lines)  # a second visit to every page
    twice = job_pages(job, 0, 10_000)
    if kind == "selective":
        assert twice.total == 2 * once.total
        return
    assert [p.url for p in twice.pages] == [p.url for p in once.pages] and twice.total == once.total
    assert all(p.visits == 2 for p in twice.pages) and twice.pages[0].seed
    assert "2 visits" in text(viewer, f"/jobs/{job.pk}/pages/")
