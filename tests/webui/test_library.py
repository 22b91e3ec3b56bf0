"""Crawl templates, schedules, channels and global trap lists: lists, forms, uploads, activation."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.forms.models import model_to_dict
from django.urls import reverse

from orchestrator.harvest.models import CrawlTemplate, GlobalCrawlerTrapList, HarvestChannel, Schedule
from webui.forms.library import TemplateForm

pytestmark = pytest.mark.django_db


def text(response) -> str:
    return response.content.decode()


def template_data(**changes) -> dict:
    data = {
        k: v
        for k, v in model_to_dict(CrawlTemplate.objects.get(name="default")).items()
        if k in TemplateForm.Meta.fields
    }
    data.update(changes)
    return {k: ("on" if v is True else "" if v is False else v) for k, v in data.items() if v is not False}


def test_template_list_and_create(engineer, viewer):
    assert "default" in text(viewer.get(reverse("webui:templates")))
    bad = engineer.post(
        reverse("webui:template-create"), template_data(name="default", user_agent="bot", host_valence=0)
    )
    page = text(bad)
    assert "already exists" in page and "operator contact" in page
    ok = engineer.post(reverse("webui:template-create"), template_data(name="deep", max_hops=50))
    assert ok.status_code == 302, text(ok)[:3000]
    assert CrawlTemplate.objects.get(name="deep").max_hops == 50


def test_schedule_form_explains_inconsistent_choices(curator, viewer):
    url = reverse("webui:schedule-create")
    bad = curator.post(url, {"name": "weekly", "every": "1", "unit": "week", "anytime": "on", "end": "runs"})
    page = text(bad)
    assert "needed to run at a given time" not in page and "give the number of runs" in page
    bad = curator.post(url, {"name": "weekly", "every": "1", "unit": "week", "end": "never", "at_hour": "3"})
    assert "needed to run at a given time every week" in text(bad)
    ok = curator.post(
        url,
        {
            "name": "weekly",
            "every": "2",
            "unit": "week",
            "end": "never",
            "at_hour": "3",
            "at_minute": "0",
            "at_weekday": "1",
        },
    )
    assert ok.status_code == 302
    listing = text(viewer.get(reverse("webui:schedules")))
    assert "every 2 weeks on Monday at 03:00 UTC" in listing
    assert listing.count(" 03:00 UTC<br>") == 2  # three coming events, all Mondays at 03:00
    assert Schedule.objects.count() == 1


def test_channel_form(engineer, viewer):
    url = reverse("webui:channel-create")
    bad = engineer.post(url, {"name": "Big Crawl", "priority": "low", "default_for": "snapshot"})
    page = text(bad)
    assert "lower-case letters" in page and "already the default channel for snapshot" in page
    assert engineer.post(url, {"name": "bulk", "priority": "low", "default_for": ""}).status_code == 302
    assert "harvest.bulk" in text(viewer.get(reverse("webui:channels")))
    assert HarvestChannel.objects.filter(name="bulk").exists()


def test_trap_list_upload_reports_bad_lines_and_saves_nothing(engineer):
    url = reverse("webui:trap-create")
    upload = SimpleUploadedFile("traps.txt", b".*/calendar/.*\n\n[unclosed\n.*\\?sessionid=.*\n(a\n")
    bad = engineer.post(url, {"name": "common", "traps": "", "active": "on", "upload": upload})
    page = text(bad)
    assert "traps.txt, line 3" in page and "traps.txt, line 5" in page and "line 1" not in page
    assert not GlobalCrawlerTrapList.objects.exists()
    latin1 = SimpleUploadedFile("traps.txt", "caf\xe9".encode("latin-1"))
    assert "not UTF-8" in text(engineer.post(url, {"name": "common", "upload": latin1}))
    good = SimpleUploadedFile("traps.txt", b".*/calendar/.*\n\n.*\\?sessionid=.*\n")
    assert engineer.post(url, {"name": "common", "traps": "ignored", "active": "on", "upload": good}).status_code == 302
    assert GlobalCrawlerTrapList.objects.get().traps == ".*/calendar/.*\n.*\\?sessionid=.*"


def test_trap_list_typed_text_is_validated_too(engineer):
    bad = engineer.post(reverse("webui:trap-create"), {"name": "x", "traps": "ok\n*bad"})
    assert "line 2" in text(bad) and not GlobalCrawlerTrapList.objects.exists()


def test_activate_and_deactivate_trap_list(engineer, viewer):
    traps = GlobalCrawlerTrapList.objects.create(name="common", traps="a")
    url = reverse("webui:trap-toggle", args=[traps.pk])
    response = engineer.post(url, {"active": "0"}, follow=True)
    assert "is now inactive" in text(response)
    assert GlobalCrawlerTrapList.active_traps() == []
    assert "was already inactive" in text(engineer.post(url, {"active": "0"}, follow=True))
    engineer.post(url, {"active": "1"})
    assert GlobalCrawlerTrapList.active_traps() == ["a"]
    page = text(viewer.get(reverse("webui:traps")))
    assert "common" in page and "Deactivate" not in page  # viewers see no buttons
