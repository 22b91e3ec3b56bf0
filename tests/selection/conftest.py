"""Curators, collections and a small web on loopback (a DNS server and an HTTP server) for the selection."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.contrib.auth import get_user_model

from orchestrator.harvest.models import CrawlTemplate, HarvestChannel, HarvestDefinition
from orchestrator.selection.models import Collection, HarvestMapping, Record, SettingsMapping
from tests.preload.dns_server import DNSServer

NAMES = {"live.fr", "www.live.fr", "other.live.fr", "target.fr", "www.target.fr", "news.example.com"}

# path → (status, Location)
PAGES = {"/missing": (404, ""), "/broken": (500, ""), "/moved": (301, "http://www.target.fr/home")}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        status, location = PAGES.get(self.path, (200, ""))
        self.send_response(status)
        if location:
            self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def web(settings) -> Iterator[int]:
    """The HTTP server's port; names of NAMES resolve to 127.0.0.1 through the loopback DNS server."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    with DNSServer(lambda name: "127.0.0.1" if name in NAMES else None) as dns:
        settings.NETHARVEST_SELECTION_NAMESERVERS = f"127.0.0.1:{dns.port}"
        settings.NETHARVEST_SELECTION_CHECK_TIMEOUT = 3
        yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _curator(name: str):
    """A curator (the web UI's role; staff too, as the library's selection staff are)."""
    from django.contrib.auth.models import Group

    user = get_user_model().objects.create_user(name, password="pw", is_staff=True)
    user.groups.add(Group.objects.get(name="curator"))
    return user


@pytest.fixture
def curator(db):
    return _curator("anne")


@pytest.fixture
def other_curator(db):
    return _curator("bob")


@pytest.fixture
def collections(curator, other_curator):
    """Anne edits "Literature" and "Elections"; Bob edits only "Sciences"."""
    lit = Collection.objects.create(name="Literature")
    elections = Collection.objects.create(name="Elections")
    sciences = Collection.objects.create(name="Sciences")
    lit.editors.add(curator)
    elections.editors.add(curator)
    sciences.editors.add(other_curator)
    return {"lit": lit, "elections": elections, "sciences": sciences}


def make_record(collection: Collection, seeds: str, **fields: object) -> Record:
    fields = {"theme": "poetry", "budget": "small", "frequency": "monthly", "depth": "host", **fields}
    record = Record(collection=collection, seeds=seeds, **fields)
    record.full_clean()
    record.save()
    return record


@pytest.fixture
def mapped(collections):
    """Literature × monthly → "lit-monthly"; every budget × depth used in the tests → the default template."""
    channel = HarvestChannel.objects.get(name="focused")
    definition = HarvestDefinition.objects.create(name="lit-monthly", kind="selective", channel=channel)
    weekly = HarvestDefinition.objects.create(name="lit-weekly", kind="selective", channel=channel)
    HarvestMapping.objects.create(collection=collections["lit"], frequency="monthly", definition=definition)
    HarvestMapping.objects.create(collection=collections["lit"], frequency="weekly", definition=weekly)
    template = CrawlTemplate.objects.get(name="default")
    SettingsMapping.objects.create(budget="small", depth="host", template=template, max_objects=10000)
    SettingsMapping.objects.create(budget="medium", depth="host", template=template, max_objects=100000)
    return {"monthly": definition, "weekly": weekly}
