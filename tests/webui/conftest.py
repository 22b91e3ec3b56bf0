"""Fixtures for the web UI tests: one logged-in client per role, and one of every object a URL names."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from orchestrator.harvest.models import (
    CrawlTemplate,
    Domain,
    GlobalCrawlerTrapList,
    HarvestChannel,
    HarvestDefinition,
    Schedule,
)
from tests.orchestrator import factories

ROLES = ("viewer", "curator", "crawl engineer", "admin")


def login(django_user_model, role: str) -> Client:
    """A client logged in as a fresh user in the group ``role`` (the groups come from the migration)."""
    user = django_user_model.objects.create_user(role.replace(" ", "_"), password="pw-long-enough")
    user.groups.add(Group.objects.get(name=role))
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def clients(db, django_user_model) -> dict[str, Client]:
    return {role: login(django_user_model, role) for role in ROLES}


@pytest.fixture
def curator(clients) -> Client:
    return clients["curator"]


@pytest.fixture
def engineer(clients) -> Client:
    return clients["crawl engineer"]


@pytest.fixture
def viewer(clients) -> Client:
    return clients["viewer"]


@dataclass
class Sample:
    domain: Domain
    selective: HarvestDefinition
    snapshot: HarvestDefinition
    schedule: Schedule
    template: CrawlTemplate
    channel: HarvestChannel
    traps: GlobalCrawlerTrapList


@pytest.fixture
def sample(db) -> Sample:
    schedule = Schedule.objects.create(name="daily", every=1, unit="day")
    return Sample(
        domain=factories.domain("example.fr"),
        selective=factories.selective_definition("news", schedule=schedule),
        snapshot=factories.snapshot_definition("broad 2026"),
        schedule=schedule,
        template=CrawlTemplate.objects.get(name="default"),
        channel=HarvestChannel.objects.get(name="focused"),
        traps=GlobalCrawlerTrapList.objects.create(name="calendars", traps=r".*/calendar/.*"),
    )


@pytest.fixture(scope="session")
def replay_crawls(tmp_path_factory: pytest.TempPathFactory):
    """Two real crawls of the bundled test site (the second deduplicated against the first: it holds revisits),
    their WARCs and metadata WARCs; the site keeps serving (``site_urls``) for comparison with the live pages."""
    from tests.indexer.conftest import TwoJobs
    from tests.indexer.warcs import crawl_two_jobs

    with crawl_two_jobs(tmp_path_factory.mktemp("replay-crawls")) as (job1, job2, index, urls):
        yield TwoJobs(job1, job2, index, urls)
