"""Harvest definitions: the curator's path from an empty selective harvest to jobs, and snapshots."""

from __future__ import annotations

from html import unescape

import pytest
from django.urls import reverse

from orchestrator.celery import app
from orchestrator.harvest.curation.domains import create_domains
from orchestrator.harvest.models import (
    Domain,
    DomainConfiguration,
    HarvestChannel,
    HarvestDefinition,
    Job,
    Schedule,
)
from tests.orchestrator import factories

pytestmark = pytest.mark.django_db


def text(response) -> str:
    return response.content.decode()


def test_selective_harvest_from_pasted_seeds_to_jobs(curator, viewer):
    schedule = Schedule.objects.create(
        name="weekly", every=1, unit="week", anytime=False, at_weekday=1, at_hour=3, at_minute=0
    )
    focused = HarvestChannel.objects.get(name="focused")
    form = text(curator.get(reverse("webui:definition-create", args=["selective"])))
    assert "Max objects per domain" not in form and "id_schedule" in form
    created = curator.post(
        reverse("webui:definition-create", args=["selective"]),
        {"name": "elections", "channel": focused.pk, "schedule": schedule.pk},
    )
    assert created.status_code == 302
    hd = HarvestDefinition.objects.get(name="elections")
    assert hd.kind == "selective" and not hd.active

    # Activation refuses an empty selection, and says so.
    page = text(curator.post(reverse("webui:definition-activate", args=[hd.pk]), follow=True))
    assert "no domain configurations" in page

    bad = curator.post(reverse("webui:definition-seeds", args=[hd.pk]), {"seeds": "http://ok.fr/\nnot a url at all"})
    assert "line 2" in text(bad) and not Domain.objects.exists()
    ok = curator.post(
        reverse("webui:definition-seeds", args=[hd.pk]),
        {"seeds": "https://www.ok.fr/politique/\nexample.org"},
        follow=True,
    )
    assert "2 seeds on 2 domains added" in text(ok)
    assert hd.configurations.count() == 2

    page = text(curator.post(reverse("webui:definition-activate", args=[hd.pk]), follow=True))
    assert "elections is active. Next run" in page
    hd.refresh_from_db()
    assert hd.active and hd.next_date.weekday() == 0 and hd.next_date.hour == 3
    detail = text(viewer.get(reverse("webui:definition", args=[hd.pk])))
    assert "Next runs" in detail and detail.count(" 03:00 UTC</li>") == 10
    assert "Run now" not in detail  # a viewer has no buttons

    page = text(curator.post(reverse("webui:definition-run", args=[hd.pk]), follow=True))
    assert "Run 1 of elections" in page
    jobs = list(Job.objects.filter(harvest=hd))
    assert jobs and {j.status for j in jobs} <= {"NEW", "SUBMITTED"}
    assert sum(j.domain_count for j in jobs) == 2
    detail = text(viewer.get(reverse("webui:definition", args=[hd.pk])))
    assert f"/jobs/{jobs[0].pk}/" in detail

    assert "is inactive" in text(curator.post(reverse("webui:definition-deactivate", args=[hd.pk]), follow=True))
    assert "already inactive" in text(curator.post(reverse("webui:definition-deactivate", args=[hd.pk]), follow=True))


def test_next_date_override_goes_through_the_scheduler(curator):
    schedule = Schedule.objects.create(name="daily", every=1, unit="day")
    hd = factories.selective_definition("news", schedule=schedule)
    response = curator.post(
        reverse("webui:definition-edit", args=[hd.pk]),
        {"name": "news", "channel": hd.channel_id, "schedule": schedule.pk, "next_date": "2031-05-01 12:30"},
    )
    assert response.status_code == 302
    hd.refresh_from_db()
    assert hd.next_date.isoformat() == "2031-05-01T12:30:00+00:00"


def test_definition_form_explains_errors_and_saves_nothing(curator):
    snapshot = HarvestChannel.objects.get(name="snapshot")
    response = curator.post(
        reverse("webui:definition-create", args=["snapshot"]),
        {
            "name": "",
            "channel": snapshot.pk,
            "max_objects": "-7",
            "max_bytes": "x",
            "max_job_running_time_s": "0",
            "crawler_traps": "((",
        },
    )
    page = text(response)
    assert "This field is required" in page and "must be -1 (unlimited) or a positive number" in page
    assert "Enter a whole number" in page and "line 1" in page
    assert not HarvestDefinition.objects.exists()
    assert curator.get(reverse("webui:definition-create", args=["weekly"])).status_code == 404  # no such kind


def test_snapshot_with_budgets_continuing_a_previous_one(curator, viewer):
    snapshot = HarvestChannel.objects.get(name="snapshot")
    first = factories.snapshot_definition("broad 2025")
    form = text(curator.get(reverse("webui:definition-create", args=["snapshot"])))
    assert "id_schedule" not in form and "Continue snapshot" in form
    response = curator.post(
        reverse("webui:definition-create", args=["snapshot"]),
        {
            "name": "broad 2026",
            "channel": snapshot.pk,
            "max_objects": "10000",
            "max_bytes": str(100 * 1024**2),
            "max_job_running_time_s": "86400",
            "previous": first.pk,
        },
    )
    assert response.status_code == 302
    hd = HarvestDefinition.objects.get(name="broad 2026")
    assert hd.previous == first and hd.max_bytes == 100 * 1024**2
    page = text(viewer.get(reverse("webui:definition", args=[hd.pk])))
    assert "100.0 MB" in page and "broad 2025" in page and "only the domains it did not finish" in page
    listing = text(viewer.get(reverse("webui:definitions"), {"kind": "snapshot"}))
    assert "broad 2026" in listing


def test_remove_domains_from_a_selection(curator):
    hd = factories.selective_definition("news")
    from orchestrator.harvest.curation import seeding

    seeding.add_seeds(hd, "http://a.fr/\nhttp://b.fr/")
    keep, drop = hd.configurations.order_by("domain__name")
    response = curator.post(
        reverse("webui:definition-remove", args=[hd.pk]), {"configurations": [drop.pk]}, follow=True
    )
    assert "1 domain configuration removed" in text(response)
    assert list(hd.configurations.all()) == [keep]
    response = curator.post(reverse("webui:definition-remove", args=[hd.pk]), {}, follow=True)
    assert "tick the domains" in text(response)


def test_extended_fields_of_definitions_are_typed_and_required(curator):
    from orchestrator.harvest.models import ExtendedField

    ExtendedField.objects.create(
        owner="harvest",
        name="legal_basis",
        label="Legal basis",
        kind="choice",
        choices="deposit\nagreement",
        required=True,
    )
    focused = HarvestChannel.objects.get(name="focused")
    url = reverse("webui:definition-create", args=["selective"])
    bad = curator.post(url, {"name": "x", "channel": focused.pk, "ext_legal_basis": ""})
    assert "Legal basis is required" in text(bad) and not HarvestDefinition.objects.exists()
    ok = curator.post(url, {"name": "x", "channel": focused.pk, "ext_legal_basis": "deposit"})
    assert ok.status_code == 302
    assert HarvestDefinition.objects.get().extended == {"legal_basis": "deposit"}


def news_with(domains: list[str]) -> HarvestDefinition:
    create_domains(domains)
    definition = factories.selective_definition("news")
    definition.configurations.set(DomainConfiguration.objects.filter(domain__name__in=domains, is_default=True))
    return definition


def test_run_now_with_the_broker_down_says_the_run_waits_and_a_second_click_makes_no_second_run(broker_down, curator):
    """Before: a 500 (the publish's traceback) and a second run per click."""
    definition = news_with(["a.fr"])
    url = reverse("webui:definition-run", args=[definition.pk])
    page = curator.post(url, follow=True)
    assert page.status_code == 200
    assert "Run 1 of 'news' made: 1 job(s) will be dispatched when the broker answers" in unescape(text(page))
    again = unescape(text(curator.post(url, follow=True)))
    assert "No new run of 'news': run 1 is still waiting to be dispatched" in again
    assert list(Job.objects.values_list("harvest_run", "status")) == [(1, "NEW")]

    broker_down()  # the broker answers again: the next click sends the waiting run, still no second run
    sent = unescape(text(curator.post(url, follow=True)))
    assert "run 1 is dispatched now (it was still waiting): 1 job(s) submitted" in sent
    assert list(Job.objects.values_list("harvest_run", "status")) == [(1, "SUBMITTED")]
    assert HarvestDefinition.objects.get(pk=definition.pk).runs == 1
    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge(definition.channel.queue)
