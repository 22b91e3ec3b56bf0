"""Harvest definitions through the API: create with seeds in one call (all or nothing), change, add seeds,
activate, deactivate, run now (jobs on the real broker)."""

from __future__ import annotations

import pytest

from harvester.revisit.policy import RevisitSettings
from orchestrator.harvest.models import DomainConfiguration, HarvestDefinition, Job, Schedule
from tests.api.conftest import errors

pytestmark = pytest.mark.django_db

SEEDS = "https://www.example.fr/news/\nexample.org\n# a comment\nhttps://www.example.fr/sport/"


def test_create_a_selective_harvest_with_seeds_and_activate_it(curator, viewer):
    Schedule.objects.create(name="nightly", unit="day", anytime=False, at_hour=3, at_minute=0)
    response = curator.post(
        "/definitions",
        {
            "kind": "selective",
            "name": "news",
            "seeds": SEEDS,
            "template": "default",
            "schedule": "nightly",
            "max_objects": 2000,
            "activate": True,
            "revisit_settings": None,  # a continuous harvest's: nothing for a selective one
        },
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert HarvestDefinition.objects.get(name="news").revisit_settings == {}
    assert (
        body["seeds"] == 3 and body["domains"] == 2 and sorted(body["created_domains"]) == ["example.fr", "example.org"]
    )
    d = body["definition"]
    assert d["active"] and d["schedule"] == "nightly" and d["channel"] == "focused" and d["next_date"]
    configs = DomainConfiguration.objects.filter(harvest_definitions__name="news")
    assert sorted(c.domain.name for c in configs) == ["example.fr", "example.org"]
    assert {c.max_objects for c in configs} == {2000} and {c.name for c in configs} == {"news"}
    refused = curator.patch(f"/definitions/{d['id']}", {"revisit_settings": {"min_wait_s": 60}})
    assert errors(refused) == [(["body", "revisit_settings"], "a selective harvest has no revisit settings")]
    again = curator.post("/definitions", {"kind": "selective", "name": "news", "seeds": SEEDS})
    assert errors(again) == [(["body", "name"], "Harvest definition with this Name already exists.")]
    shown = viewer.get(f"/definitions/{d['id']}").json()
    assert shown["configurations"] == 2 and len(shown["upcoming"]) == 10 and shown["recent_runs"] == []
    assert [x["name"] for x in viewer.get("/definitions", kind="selective").json()["items"]] == ["news"]


def test_a_bad_seed_line_creates_nothing_and_names_the_line(curator):
    response = curator.post(
        "/definitions",
        {"kind": "selective", "name": "news", "seeds": "https://example.fr/\nexample.org\nmailto:someone@example.fr"},
    )
    ((loc, message),) = errors(response)
    assert loc == ["body", "seeds", 3] and message.startswith("line 3: 'mailto:someone@example.fr'")
    assert not HarvestDefinition.objects.filter(name="news").exists()
    from orchestrator.harvest.models import Domain

    assert not Domain.objects.filter(name="example.org").exists()  # the transaction took all of it back


def test_refusals_name_the_field(curator, sample):
    assert errors(curator.post("/definitions", {"kind": "selective", "name": "x", "schedule": "no such"})) == [
        (["body", "schedule"], "no schedule named or numbered 'no such'")
    ]
    assert errors(curator.post("/definitions", {"kind": "selective", "name": "news"}))[0][0] == ["body", "name"]
    bad_trap = errors(curator.post("/definitions", {"kind": "selective", "name": "y", "crawler_traps": "a(b"}))
    assert bad_trap[0][0] == ["body", "crawler_traps"] and "line 1" in bad_trap[0][1]
    assert errors(curator.post("/definitions", {"kind": "snapshot", "name": "z", "seeds": "x.fr"}))[0][0] == [
        "body",
        "seeds",
    ]
    assert errors(curator.post("/definitions", {"kind": "weekly", "name": "w"}))[0][0] == ["body", "kind"]
    # activation refused by the scheduler: 409, and the definition was not made either
    response = curator.post("/definitions", {"kind": "selective", "name": "v", "activate": True})
    assert response.status_code == 409 and "has no schedule" in response.json()["detail"]
    assert not HarvestDefinition.objects.filter(name="v").exists()


def test_change_add_seeds_activate_deactivate(curator, sample):
    pk = sample.selective.pk
    changed = curator.patch(f"/definitions/{pk}", {"comments": "daily news", "next_date": "2031-01-02T03:04:00Z"})
    assert changed.status_code == 200, changed.content
    assert changed.json()["comments"] == "daily news" and changed.json()["next_date"].startswith("2031-01-02T03:04")
    assert changed.json()["schedule"] == "daily"  # untouched fields keep their values
    added = curator.post(f"/definitions/{pk}/seeds", {"seeds": "https://example.fr/a\nhttps://example.org/"})
    assert added.status_code == 201 and added.json()["domains"] == 2
    bad = errors(curator.post(f"/definitions/{pk}/seeds", {"seeds": "https://ok.fr/\nhttp://"}))
    assert bad[0][0] == ["body", "seeds", 2]
    assert curator.post(f"/definitions/{pk}/activate").json()["active"] is True
    again = curator.post(f"/definitions/{pk}/activate")
    assert again.status_code == 409 and again.json()["detail"] == "news is already active"
    assert curator.post(f"/definitions/{pk}/deactivate").json()["active"] is False
    assert curator.post(f"/definitions/{sample.snapshot.pk}/seeds", {"seeds": "x.fr"}).status_code == 422
    assert errors(curator.patch(f"/definitions/{sample.snapshot.pk}", {"schedule": "daily"})) == [
        (["body", "schedule"], "a snapshot harvest has no such setting (only selective ones)")
    ]  # a snapshot's form has no schedule
    assert errors(curator.patch(f"/definitions/{sample.snapshot.pk}", {"max_objects": -7}))[0][0] == [
        "body",
        "max_objects",
    ]


def test_run_now_makes_and_dispatches_the_run(curator, viewer, sample, broker_queues):
    pk = sample.selective.pk
    refused = curator.post(f"/definitions/{pk}/run")
    assert refused.status_code == 409 and "no domain configuration" in refused.json()["detail"]
    curator.post(f"/definitions/{pk}/seeds", {"seeds": "https://example.fr/"})
    response = curator.post(f"/definitions/{pk}/run")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["run"] == 1 and body["made"] and body["waiting"] == 0
    assert [j["status"] for j in body["jobs"]] == ["SUBMITTED"]
    assert Job.objects.get(pk=body["jobs"][0]["id"]).status == "SUBMITTED"
    runs = viewer.get(f"/definitions/{pk}").json()["recent_runs"]
    assert runs == [{"run": 1, "jobs": 1, "statuses": {"SUBMITTED": 1}}]


def test_run_now_while_the_broker_is_down_is_202_and_not_doubled(curator, sample, broker_down):
    pk = sample.selective.pk
    curator.post(f"/definitions/{pk}/seeds", {"seeds": "https://example.fr/"})
    first = curator.post(f"/definitions/{pk}/run")
    assert first.status_code == 202 and first.json()["waiting"] == 1 and "broker" in first.json()["message"]
    second = curator.post(f"/definitions/{pk}/run")
    assert second.status_code == 202 and second.json()["made"] is False and second.json()["run"] == 1
    assert Job.objects.filter(harvest_id=pk).count() == 1


def test_list_and_remove_the_selected_configurations(curator, viewer, sample):
    pk = sample.selective.pk
    curator.post(f"/definitions/{pk}/seeds", {"seeds": "https://example.fr/a\nhttps://example.org/\nhttps://b.dk/"})
    selected = viewer.get(f"/definitions/{pk}/configurations").json()
    assert selected["count"] == 3 and [c["domain"] for c in selected["items"]] == ["b.dk", "example.fr", "example.org"]
    left = curator.post(f"/definitions/{pk}/remove", {"configurations": [selected["items"][0]["id"]]})
    assert left.status_code == 200 and [c["domain"] for c in left.json()] == ["example.fr", "example.org"]
    assert errors(curator.post(f"/definitions/{pk}/remove", {"configurations": [999999]}))[0][0] == [
        "body",
        "configurations",
    ]
    assert DomainConfiguration.objects.filter(domain__name="b.dk", name="news").exists()  # the domain's stays
    assert viewer.post(f"/definitions/{pk}/remove", {"configurations": []}).status_code == 403


def test_a_continuous_harvest_through_the_api(curator, viewer, broker_queues):
    """Review of issue 12: the API had no revisit settings, budget or WARC rule, refused seed changes of a
    continuous definition, and activated it (publishing its job) inside the creating transaction."""
    import json

    from orchestrator.harvest.models import JobControl

    bad = curator.post(
        "/definitions",
        {
            "kind": "continuous",
            "name": "live",
            "seeds": "https://www.example.fr/",
            "revisit_settings": {"policy": "heritrix", "min_wait_s": -5},
        },
    )
    assert errors(bad)[0][0][:2] == ["body", "revisit_settings"], errors(bad)
    assert not HarvestDefinition.objects.filter(name="live").exists()
    response = curator.post(
        "/definitions",
        {
            "kind": "continuous",
            "name": "live",
            "seeds": "https://www.example.fr/\nhttps://news.example.org/",
            "revisit_settings": {
                "policy": "heritrix",
                "min_wait_s": 600,
                "strip": ["<span>[0-9:]+</span>"],
                "use_overdue_time": True,  # not on the web form: kept all the same
            },
            "fetch_budget_per_s": 2.5,
            "warc_rotate_s": 300,
            "max_uris_per_host": 2000,
            "robots_validity_s": 3600,
            "activate": True,
        },
    )
    assert response.status_code == 201, response.content
    d = response.json()["definition"]
    assert d["active"] and d["channel"] == "continuous" and d["fetch_budget_per_s"] == 2.5
    assert d["warc_rotate_s"] == 300 and d["revisit_settings"]["min_wait_s"] == 600
    assert d["revisit_settings"]["strip"] == ["<span>[0-9:]+</span>"] and d["revisit_settings"]["use_overdue_time"]
    job = Job.objects.get(harvest_id=d["id"])
    assert job.status == "SUBMITTED" and job.spec["continuous"]["budget_per_s"] == 2.5
    assert job.spec["continuous"]["revisit"]["min_wait_s"] == 600
    assert d["max_uris_per_host"] == 2000 and job.spec["continuous"]["max_uris_per_host"] == 2000
    assert (d["robots_validity_s"], d["dns_ttl_s"]) == (3600, 21600)  # the DNS default, unchanged
    assert (job.spec["continuous"]["robots_validity_s"], job.spec["continuous"]["dns_ttl_s"]) == (3600, 21600)
    changed = curator.patch(
        f"/definitions/{d['id']}",
        {
            "warc_rotate_s": 600,
            "revisit_settings": {"policy": "fixed", "fixed_interval_s": 3600, "replan_interval_s": 60},
        },
    )
    assert changed.status_code == 200, changed.content
    assert changed.json()["warc_rotate_s"] == 600 and changed.json()["revisit_settings"]["policy"] == "fixed"
    # The whole RevisitSettings: what it leaves out takes the defaults, what the form does not show is kept.
    assert changed.json()["revisit_settings"]["replan_interval_s"] == 60
    assert not changed.json()["revisit_settings"]["use_overdue_time"]
    # null: the policy's defaults, every one of them (not the defaults for the form's fields and the rest kept)
    reset = curator.patch(f"/definitions/{d['id']}", {"revisit_settings": None})
    assert reset.status_code == 200, reset.content
    assert reset.json()["revisit_settings"] == RevisitSettings().to_dict()

    # Seeds added to and domains taken out of a running continuous definition reach its job.
    added = curator.post(f"/definitions/{d['id']}/seeds", {"seeds": "https://www.example.fr/live/"})
    assert added.status_code == 201, added.content
    control = JobControl.objects.get(job=job, action="seeds")
    assert json.loads(control.argument) == {"add": ["https://www.example.fr/live/"], "remove": []}
    org = DomainConfiguration.objects.get(harvest_definitions__id=d["id"], domain__name="example.org")
    left = curator.post(f"/definitions/{d['id']}/remove", {"configurations": [org.pk]})
    assert left.status_code == 200 and [c["domain"] for c in left.json()] == ["example.fr"]
    removal = JobControl.objects.filter(job=job, action="seeds").latest("pk")
    assert json.loads(removal.argument) == {"add": [], "remove": ["https://news.example.org/"]}
