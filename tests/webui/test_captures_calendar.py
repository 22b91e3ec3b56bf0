"""A URL's captures across jobs (/jobs/captures/?url=…): a calendar of the days with captures and a table, each
capture one click from replay (real pywb behind the web UI's proxy), from real crawls through the real chain."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from orchestrator.harvest.chain import merging
from orchestrator.harvest.chain import steps as chain
from tests.indexer.conftest import TwoJobs
from tests.orchestrator import factories
from tests.orchestrator.chainhelp import harvest
from tests.orchestrator.conftest import storage_env  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db


def test_calendar_and_table_of_captures_across_jobs(
    replay_crawls: TwoJobs,
    storage_env,  # noqa: F811
    replay_service,
    viewer: Client,
):
    news, blogs = factories.selective_definition("news"), factories.selective_definition("blogs")
    job1 = harvest(replay_crawls.job1, storage_env / "spool", news)
    job2 = harvest(replay_crawls.job2, storage_env / "spool", blogs)
    assert not chain.run_pending().failed
    home = replay_crawls.site_urls[0]

    def page(query: dict[str, str]) -> str:
        response = viewer.get("/jobs/captures/", query)
        assert response.status_code == 200
        return response.content.decode()

    for merged in (False, True):
        text = page({"url": home})
        assert re.search(r'<strong id="capture-count">2</strong> captures', text)
        table = text.split('<table id="captures">')[1]
        assert table.index(f'/jobs/{job2.pk}/"') < table.index(f'/jobs/{job1.pk}/"')  # latest first
        assert "<td>text/html</td>" in table and "<td>200</td>" in table
        links = re.findall(r'<a href="(/replay/all/\d{14}/[^"]+)">replay</a>', table)
        assert len(links) == 2
        for link in links:
            assert viewer.get(link).status_code == 200
        # The calendar marks the capture day with a link to replay.
        day_links = re.findall(r'<td class="has"><a href="(/replay/all/\d{14}/[^"]+)"', text)
        assert day_links and all(link in links for link in day_links)
        if not merged:
            merging.merge()
            merging.bigmerge()

    # One definition's captures only.
    text = page({"url": home, "harvest": str(news.pk)})
    assert re.search(r'<strong id="capture-count">1</strong> capture ', text) and f"/jobs/{job1.pk}/" in text
    assert f"/jobs/{job2.pk}/" not in text
    # Never archived; not an address.
    assert "No capture of this address" in page({"url": home + "never-there.html"})
    assert "starting with http:// or https://" in page({"url": "ftp://example.com/"})
    assert "capture-count" not in page({})


def test_needs_login_and_role(db):
    assert Client().get("/jobs/captures/", {"url": "http://example.com/"}).status_code == 302
    roleless = Client()
    roleless.force_login(User.objects.create_user("nobody"))
    assert roleless.get("/jobs/captures/", {"url": "http://example.com/"}).status_code == 403
