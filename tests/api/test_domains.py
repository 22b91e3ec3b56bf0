"""Domains, seed lists and configurations through the API: real rows, the web UI's validation."""

from __future__ import annotations

import pytest

from orchestrator.harvest.models import Domain, DomainConfiguration, SeedList
from tests.api.conftest import errors
from tests.orchestrator import factories

pytestmark = pytest.mark.django_db


def test_create_domains_then_page_through_them_by_name(curator, viewer):
    response = curator.post("/domains", {"names": ["b.fr", "a.fr", "c.fr", "a.fr"]})
    assert response.status_code == 201 and sorted(response.json()["created"]) == ["a.fr", "b.fr", "c.fr"]
    assert curator.post("/domains", {"names": ["a.fr"]}).json() == {"created": [], "existing": 1}
    first = viewer.get("/domains", limit=2).json()
    assert [d["name"] for d in first["items"]] == ["a.fr", "b.fr"] and first["next_after"] == "b.fr"
    second = viewer.get("/domains", limit=2, after=first["next_after"]).json()
    assert [d["name"] for d in second["items"]] == ["c.fr"] and second["next_after"] is None
    assert [d["name"] for d in viewer.get("/domains", q="b").json()["items"]] == ["b.fr"]
    assert errors(viewer.get("/domains", field="password"))[0][0] == ["query", "field"]
    assert errors(viewer.get("/domains", limit=0))[0][0] == ["query", "limit"]
    # every new domain got its default seed list and configuration, as in the web UI
    assert Domain.objects.get(name="a.fr").default_configuration is not None


def test_a_host_name_is_refused_with_its_line(curator):
    found = errors(curator.post("/domains", {"names": ["ok.fr", "www.example.fr"]}))
    assert found[0][0] == ["body", "names"]
    assert "line 2" in found[0][1] and "the domain is example.fr" in found[0][1]
    assert not Domain.objects.filter(name="ok.fr").exists()


def test_change_a_domain_and_refuse_a_bad_trap(curator, viewer):
    factories.domain("example.fr")
    factories.domain("example.org")
    response = curator.patch("/domains/example.fr", {"crawler_traps": r".*/calendar/.*", "alias_of": "example.org"})
    assert response.status_code == 200, response.content
    assert response.json()["alias_of"] == "example.org" and response.json()["crawler_traps"] == r".*/calendar/.*"
    bad = errors(curator.patch("/domains/example.fr", {"crawler_traps": "ok/.*\n(?=lookahead)"}))
    assert bad[0][0] == ["body", "crawler_traps"] and "line 2" in bad[0][1]
    assert Domain.objects.get(name="example.fr").crawler_traps == r".*/calendar/.*"  # unchanged
    assert viewer.get("/domains/example.fr").json()["comments"] == ""
    assert viewer.get("/domains/nowhere.fr").status_code == 404


def test_seed_lists_and_configurations(curator, viewer):
    domain = factories.domain("example.fr")
    made = curator.post("/domains/example.fr/seedlists", {"name": "news", "seeds": "https://example.fr/news/"})
    assert made.status_code == 201, made.content
    seedlist = made.json()
    bad = errors(
        curator.patch(
            f"/domains/example.fr/seedlists/{seedlist['id']}", {"seeds": "https://example.fr/a\nftp://example.fr/b"}
        )
    )
    assert bad[0][0] == ["body", "seeds"] and bad[0][1].startswith("line 2:")
    renamed = curator.patch(f"/domains/example.fr/seedlists/{seedlist['id']}", {"seeds": "https://example.fr/x\n# old"})
    assert renamed.json()["seeds"] == "https://example.fr/x\n# old" and renamed.json()["name"] == "news"
    curator.patch(f"/domains/example.fr/seedlists/{seedlist['id']}", {"seeds": "https://example.fr/news/"})
    clash = errors(curator.post("/domains/example.fr/seedlists", {"name": "news", "seeds": "https://example.fr/"}))
    assert "already has a seed list called 'news'" in clash[0][1]

    config = curator.post(
        "/domains/example.fr/configurations",
        {
            "name": "news only",
            "template": "default",
            "seedlists": [seedlist["id"]],
            "max_objects": 500,
            "is_default": True,
        },
    )
    assert config.status_code == 201, config.content
    assert config.json()["is_default"] and config.json()["template"] == "default"
    # becoming the default took the flag from the old default, in one transaction
    assert list(DomainConfiguration.objects.filter(domain=domain, is_default=True).values_list("name", flat=True)) == [
        "news only"
    ]
    none = errors(curator.post("/domains/example.fr/configurations", {"name": "empty", "template": "default"}))
    assert none == [(["body", "seedlists"], "a configuration needs at least one seed list to crawl from")]
    unknown = errors(
        curator.post(
            "/domains/example.fr/configurations", {"name": "x", "template": "nope", "seedlists": [seedlist["id"]]}
        )
    )
    assert unknown[0][0] == ["body", "template"]
    changed = curator.patch(f"/domains/example.fr/configurations/{config.json()['id']}", {"max_bytes": 10_000})
    assert changed.json()["max_bytes"] == 10_000 and changed.json()["max_objects"] == 500  # the rest kept
    listed = viewer.get("/domains/example.fr/configurations").json()
    assert {c["name"] for c in listed} == {"defaultconfig", "news only"}
    assert {s["name"] for s in viewer.get("/domains/example.fr/seedlists").json()} == {"defaultseeds", "news"}
    assert SeedList.objects.get(name="news").seeds == "https://example.fr/news/"


def test_history_is_paginated(viewer):
    from orchestrator.harvest.models import HarvestInfo

    definition = factories.selective_definition()
    for _ in range(3):
        job = factories.job(definition, ["example.fr"])
        HarvestInfo.objects.create(
            job=job,
            harvest=definition,
            domain=Domain.objects.get(name="example.fr"),
            configuration=Domain.objects.get(name="example.fr").default_configuration,
            objects_count=10,
            bytes_count=1000,
            stop_reason="DOWNLOAD_COMPLETE",
        )
    page = viewer.get("/domains/example.fr/history", limit=2).json()
    assert page["count"] == 3 and len(page["items"]) == 2 and page["items"][0]["stop_reason"] == "DOWNLOAD_COMPLETE"
    assert len(viewer.get("/domains/example.fr/history", limit=2, offset=2).json()["items"]) == 1
