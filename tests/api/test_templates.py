"""Crawl templates, channels and schedules through the API."""

from __future__ import annotations

import pytest

from orchestrator.harvest.models import CrawlTemplate, Schedule
from tests.api.conftest import errors

pytestmark = pytest.mark.django_db


def test_templates_list_create_change(engineer, viewer, curator):
    listed = viewer.get("/templates").json()
    assert "default" in {t["name"] for t in listed}
    made = engineer.post("/templates", {"name": "deep", "max_hops": 50})
    assert made.status_code == 201, made.content
    body = made.json()
    assert body["max_hops"] == 50 and body["active"] is True  # the unset fields took the model's defaults
    assert body["robots"] == CrawlTemplate.objects.get(name="default").robots
    changed = engineer.patch(f"/templates/{body['id']}", {"delay_factor": 2.5})
    assert changed.json()["delay_factor"] == 2.5 and changed.json()["max_hops"] == 50
    bad = errors(engineer.patch(f"/templates/{body['id']}", {"user_agent": "no contact here"}))
    assert bad[0][0] == ["body", "user_agent"] and "operator contact" in bad[0][1]
    assert curator.post("/templates", {"name": "nope"}).status_code == 403  # templates are the engineer's
    assert viewer.get(f"/templates/{body['id']}").json()["name"] == "deep"


def test_channels_are_listed_with_their_queue(viewer):
    channels = {c["name"]: c for c in viewer.get("/channels").json()}
    assert channels["focused"]["queue"] == "harvest.focused" and channels["focused"]["priority"] == "high"


def test_schedules_create_change_and_refuse(curator, viewer):
    made = curator.post(
        "/schedules", {"name": "nightly", "unit": "day", "anytime": False, "at_hour": 3, "at_minute": 0}
    )
    assert made.status_code == 201, made.content
    body = made.json()
    assert body["description"] == "every day at 03:00 UTC" and len(body["preview"]) == 3
    assert all(when.endswith(("03:00:00Z", "03:00:00+00:00")) for when in body["preview"])
    bad = errors(curator.post("/schedules", {"name": "ends", "end": "date"}))
    assert bad == [(["body", "end_date"], "give the date the schedule ends")]
    assert not Schedule.objects.filter(name="ends").exists()
    changed = curator.patch(f"/schedules/{body['id']}", {"every": 2})
    assert changed.json()["description"] == "every 2 days at 03:00 UTC"
    assert [s["name"] for s in viewer.get("/schedules").json()] == ["nightly"]
