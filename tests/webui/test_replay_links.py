"""One click from a capture the web UI shows to replay: a crawl.log line of the job page, a seed of the job's
seeds report and of a domain's seed lists, a run of a domain's history; each link goes through the web UI's
/replay/ to real pywb over what the real chain stored."""

from __future__ import annotations

import html
import re
from urllib.parse import unquote

import pytest
from django.test import Client

from orchestrator.harvest.archive.captures import captures_of
from orchestrator.harvest.chain import steps as chain
from orchestrator.harvest.models import Domain, SeedList
from tests.indexer.conftest import TwoJobs
from tests.orchestrator import factories
from tests.orchestrator.chainhelp import harvest
from tests.orchestrator.conftest import storage_env  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db


def links(page: str) -> list[str]:
    return [html.unescape(u) for u in re.findall(r'<a href="([^"]+)" class="replay-link">', page)]


def test_crawl_log_lines_seeds_and_history_open_in_replay(
    replay_crawls: TwoJobs,
    storage_env,  # noqa: F811
    replay_service,
    viewer: Client,
):
    home = replay_crawls.site_urls[0]
    # The job's frozen JobSpec seeds example.fr with the test site's home (the capture is at 127.0.0.1, not at
    # http://example.fr/: a domain's history must link what the run crawled, not guess an address).
    SeedList.objects.filter(domain=factories.domain("example.fr")).update(seeds=home)
    job = harvest(replay_crawls.job1, storage_env / "spool", factories.selective_definition("news"))
    assert not chain.run_pending().failed

    page = viewer.get(f"/jobs/{job.pk}/").content.decode()
    assert f'href="/jobs/{job.pk}/pages/"' in page
    seeds = links(page.split("<h2>Seeds report</h2>")[1].split("<h2>")[0])
    assert len(seeds) == 1 and seeds[0].startswith("/replay/all/") and seeds[0].endswith(f"/{home}")
    assert viewer.get(seeds[0]).status_code == 200
    log_links = links(page.split('<pre class="log">')[1].split("</pre>")[0])
    assert len(log_links) > 5  # one per crawl.log line that stored something
    for link in log_links[:8]:
        assert link.startswith("/replay/all/")
        response = viewer.get(link)
        assert response.status_code == 200, link
        b"".join(response.streaming_content)

    # A domain's seed lists and its harvest history.
    domain = Domain.objects.get(name="example.fr")
    SeedList.objects.filter(domain=domain).update(seeds=f"{home}\n# http://inactive.example.fr/")
    page = viewer.get(f"/domains/{domain.name}/").content.decode()
    seed_links = links(page.split("<h2>Seed lists</h2>")[1].split("<h2>")[0])
    assert seed_links == [f"/replay/all/{home}"]  # the latest capture; the inactive line has none
    assert viewer.get(seed_links[0]).status_code in (200, 302)
    assert [unquote(u) for u in re.findall(r'href="/jobs/captures/\?url=([^"]+)"', page)] == [home]
    history = links(page.split("<h2>Harvest history</h2>")[1])
    assert len(history) == 1
    _, target = re.fullmatch(r"/replay/all/(\d{14})/(.+)", history[0]).groups()
    assert target == home  # the run's seed, from its JobSpec, even though the seed list has changed since
    found = captures_of(target)
    assert job.pk in {c.job_id for c in found}  # the link's target is a capture of that very run
    response = viewer.get(history[0])
    assert response.status_code == 200
    assert b"".join(response.streaming_content)
