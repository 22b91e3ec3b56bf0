"""Continuous harvest definitions in the web UI (issue 12): the form with the revisit policy's settings and
its errors, seeds that reach the running crawl, activate / run now / deactivate through the orchestrator's
services, and who may do it. Real PostgreSQL, and the real Redis broker the jobs and controls go to."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest
from django.urls import reverse

from harvester.revisit.policy import RevisitSettings
from orchestrator.harvest.jobs import continuous
from orchestrator.harvest.models import HarvestChannel, HarvestDefinition, Job, JobControl
from webui.forms.continuous import format_wait, parse_wait

pytestmark = pytest.mark.django_db


def text(response) -> str:
    return unescape(response.content.decode())


def form_data(**changes: object) -> dict[str, object]:
    """What the browser posts for a new continuous definition with the settings a curator would type."""
    data = {
        "name": "news, continuously",
        "channel": HarvestChannel.objects.get(name="continuous").pk,
        "fetch_budget_per_s": "2.5",
        "warc_rotate_s": "15m",
        "max_uris_per_host": "5000",
        "robots_validity_s": "2h",
        "dns_ttl_s": "30m",
        "policy": "heritrix",
        "fixed_interval_s": "1d",
        "initial_wait_text": "12h",
        "initial_wait_image": "2d",
        "initial_wait_audio_video": "1w",
        "initial_wait_other": "1d",
        "min_wait_s": "1h",
        "max_wait_s": "4w",
        "unchanged_factor": "1.5",
        "changed_factor": "2",
        "strip": '\n<span class="clock">[^<]*</span>\n',
        "mid_fetch_filter": "on",
        "pinned": "https://www.example.fr/ 30m\n",
    }
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


def test_waits_are_typed_as_people_say_them():
    assert [parse_wait(t) for t in ("90", "45m", "12h", "1h30m", "2d", "1w", "1D 2H")] == [
        90,
        2700,
        43200,
        5400,
        172800,
        604800,
        93600,
    ]
    assert [format_wait(s) for s in (90, 2700, 5400, 604800, 93600)] == ["1m30s", "45m", "1h30m", "1w", "1d2h"]
    with pytest.raises(ValueError, match="'12x' is not a duration: write e.g. 45m, 12h"):
        parse_wait("12x")


def test_curator_creates_a_continuous_definition_with_its_revisit_settings(curator, viewer):
    form = text(curator.get(reverse("webui:definition-create", args=["continuous"])))
    assert "New continuous harvest" in form and "Revisit policy" in form and "Strip regexes" in form
    assert re.search(r'<input type="radio" name="policy" value="adaptive"[^>]* checked>', form)  # the default
    assert 'name="initial_wait_text" value="12h"' in form and 'name="warc_rotate_s" value="15m"' in form
    response = curator.post(reverse("webui:definition-create", args=["continuous"]), form_data())
    assert response.status_code == 302, text(response)[:3000]
    hd = HarvestDefinition.objects.get(name="news, continuously")
    assert (hd.kind, hd.active, hd.fetch_budget_per_s, hd.warc_rotate_s) == ("continuous", False, 2.5, 900)
    assert (hd.max_uris_per_host, hd.robots_validity_s, hd.dns_ttl_s) == (5000, 7200, 1800)
    settings = RevisitSettings.from_dict(hd.revisit_settings)
    assert settings.policy == "heritrix" and settings.changed_factor == 2.0 and settings.mid_fetch_filter
    assert dict(settings.initial_wait_s) == {"text": 43200, "image": 172800, "audio_video": 604800, "other": 86400}
    assert (settings.min_wait_s, settings.max_wait_s) == (3600, 28 * 86400)
    assert settings.strip == ('<span class="clock">[^<]*</span>',)
    assert dict(settings.pinned) == {"https://www.example.fr/": 1800}

    page = text(viewer.get(reverse("webui:definition", args=[hd.pk])))
    assert "heritrix: first revisit after 12 h (text), 2 d (image), 7 d (audio/video), 1 d (other);" in page
    assert "waits within 1 h – 28 d, × 1.5 when unchanged, ÷ 2.0 when changed" in page
    assert "2.5 fetches/s" in page and "every 15 min (or when full)" in page
    assert "robots.txt obeyed for 2 h, then fetched again; DNS answers kept 30 min" in page
    assert "https://www.example.fr/ every 30 min" in page
    assert "none running: activate the harvest to start it" in page
    assert "Add seeds" not in page  # a viewer has no forms

    # Settings stored before a change of the policy's settings do not break the page, and say what is wrong.
    HarvestDefinition.objects.filter(pk=hd.pk).update(revisit_settings={**hd.revisit_settings, "retired_setting": 1})
    page = text(viewer.get(reverse("webui:definition", args=[hd.pk])))
    assert "The stored settings are not valid (revisit: unknown setting(s): retired_setting)" in page
    assert curator.post(reverse("webui:definition-edit", args=[hd.pk]), form_data()).status_code == 302  # mended
    hd.refresh_from_db()
    assert "retired_setting" not in hd.revisit_settings and hd.revisit_settings["policy"] == "heritrix"

    # Editing keeps the settings the form does not show (set by an engineer through the API or admin).
    HarvestDefinition.objects.filter(pk=hd.pk).update(revisit_settings={**hd.revisit_settings, "trust_after": 5})
    edit = text(curator.get(reverse("webui:definition-edit", args=[hd.pk])))
    assert 'value="12h"' in edit and 'value="15m"' in edit and "https://www.example.fr/ 30m" in edit
    assert (
        curator.post(
            reverse("webui:definition-edit", args=[hd.pk]), form_data(policy="adaptive", mid_fetch_filter=None)
        ).status_code
        == 302
    )
    hd.refresh_from_db()
    assert hd.revisit_settings["policy"] == "adaptive" and hd.revisit_settings["trust_after"] == 5
    assert hd.revisit_settings["mid_fetch_filter"] is False


def test_bad_settings_are_refused_field_by_field_and_nothing_is_saved(curator):
    url = reverse("webui:definition-create", args=["continuous"])
    page = text(
        curator.post(
            url,
            form_data(
                strip="<time>[^<]*</time>\n(?=ad)banner\n",
                pinned="https://ok.fr/ 1h\nftp://x.fr/ 1h\nhttps://y.fr/\n",
                initial_wait_text="12x",
                unchanged_factor="0.5",
                fetch_budget_per_s="0",
                robots_validity_s="0s",
            ),
        )
    )
    assert "line 2: lookahead (?=…) is not supported: revisit strip regexes use RE2" in page
    assert "line 2: 'ftp://x.fr/ 1h': only http:// and https:// URLs can be seeds" in page
    assert "line 3: 'https://y.fr/': write the URL, a space and its interval" in page
    assert "'12x' is not a duration" in page
    assert "Ensure this value is greater than or equal to 1.0" in page
    assert "Ensure this value is greater than or equal to 0.001" in page
    field = page[page.index('for="id_robots_validity_s"') : page.index('for="id_dns_ttl_s"')]
    assert "must be at least 1 second" in field
    assert not HarvestDefinition.objects.exists()
    # A cross-field rule of the policy lands on its field, in the form's words (labels, waits as typed).
    page = text(curator.post(url, form_data(min_wait_s="2d", max_wait_s="1d")))
    field = page[page.index('for="id_min_wait_s"') : page.index('for="id_max_wait_s"')]
    assert "must not exceed Maximum wait (1d)" in field
    assert not HarvestDefinition.objects.exists()


def make_definition(curator, seeds: str) -> HarvestDefinition:
    assert curator.post(reverse("webui:definition-create", args=["continuous"]), form_data()).status_code == 302
    hd = HarvestDefinition.objects.get(name="news, continuously")
    page = text(curator.post(reverse("webui:definition-seeds", args=[hd.pk]), {"seeds": seeds}, follow=True))
    assert "No job is running: the next one starts from these seeds." in page
    return hd


def test_activate_runs_one_job_and_seed_edits_reach_it(curator, viewer):
    hd = make_definition(curator, "https://www.example.fr/\nhttps://news.example.org/")
    assert hd.configurations.count() == 2

    page = text(curator.post(reverse("webui:definition-activate", args=[hd.pk]), follow=True))
    job = Job.objects.get(harvest=hd)
    assert f"news, continuously is active. Its continuous job {job.pk} is SUBMITTED on channel continuous" in page
    assert job.channel.name == "continuous" and job.spec["kind"] == "continuous"
    assert job.spec["continuous"]["budget_per_s"] == 2.5 and job.spec["continuous"]["warc_rotate_s"] == 900
    assert job.spec["continuous"]["max_uris_per_host"] == 5000
    assert (job.spec["continuous"]["robots_validity_s"], job.spec["continuous"]["dns_ttl_s"]) == (7200, 1800)
    assert job.spec["continuous"]["revisit"]["policy"] == "heritrix"
    detail = text(viewer.get(reverse("webui:definition", args=[hd.pk])))
    assert f'href="/jobs/{job.pk}/">job {job.pk}</a>' in detail

    # Run now does not make a second job of a continuous harvest.
    page = text(curator.post(reverse("webui:definition-run", args=[hd.pk]), follow=True))
    assert f"already has its continuous job {job.pk} (SUBMITTED)" in page
    assert Job.objects.filter(harvest=hd).count() == 1

    # Seeds pasted into the running definition reach its job as a `seeds` control…
    page = text(
        curator.post(
            reverse("webui:definition-seeds", args=[hd.pk]), {"seeds": "https://www.example.fr/live/"}, follow=True
        )
    )
    assert f"Sent to the running job {job.pk}" in page
    control = JobControl.objects.get(job=job, action="seeds")
    assert json.loads(control.argument) == {"add": ["https://www.example.fr/live/"], "remove": []}
    assert control.sent_at is not None and control.requested_by == "curator"
    # … and so do the seeds of a domain taken out of it.
    org = hd.configurations.get(domain__name="example.org")
    page = text(
        curator.post(reverse("webui:definition-remove", args=[hd.pk]), {"configurations": [org.pk]}, follow=True)
    )
    assert "1 domain configuration removed" in page and f"Sent to the running job {job.pk}" in page
    removal = JobControl.objects.filter(job=job, action="seeds").latest("requested_at")
    assert json.loads(removal.argument) == {"add": [], "remove": ["https://news.example.org/"]}

    page = text(curator.post(reverse("webui:definition-deactivate", args=[hd.pk]), follow=True))
    assert "its continuous job is told to stop" in page
    assert JobControl.objects.filter(job=job, action="stop").exists()
    assert continuous.live_job(hd) == job  # it ends when the harvester has closed its files and reported


def test_a_reader_cannot_create_activate_or_change_seeds(viewer, curator):
    hd = make_definition(curator, "https://www.example.fr/")
    for name, data in (
        ("definition-create", form_data(name="other")),
        ("definition-activate", {}),
        ("definition-run", {}),
        ("definition-seeds", {"seeds": "https://x.fr/"}),
        ("definition-edit", form_data(name="renamed")),
    ):
        args = ["continuous"] if name == "definition-create" else [hd.pk]
        response = viewer.post(reverse(f"webui:{name}", args=args), data)
        assert response.status_code == 403 and "curator role" in text(response), name
    hd.refresh_from_db()
    assert not hd.active and hd.name == "news, continuously" and hd.configurations.count() == 1
    assert not Job.objects.exists() and HarvestDefinition.objects.count() == 1


def test_seeds_pasted_while_the_broker_is_down_are_kept_and_the_curator_is_told(curator, broker_down):
    hd = make_definition(curator, "https://www.example.fr/")
    page = text(curator.post(reverse("webui:definition-activate", args=[hd.pk]), follow=True))
    job = Job.objects.get(harvest=hd)
    assert f"Its continuous job {job.pk} is NEW" in page  # made, sent once the broker answers
    assert Job.transition(job.pk, "NEW", "SUBMITTED")  # as if it had been sent before the broker went away
    page = text(
        curator.post(
            reverse("webui:definition-seeds", args=[hd.pk]), {"seeds": "https://www.example.fr/later/"}, follow=True
        )
    )
    assert "1 seed on 1 domain added" in page
    assert (
        f"The running job {job.pk} of {hd.name} is not told yet (the broker does not answer: seeds for job "
        f"{job.pk} is recorded and sent when the broker is back)"
    ) in page
    assert "https://www.example.fr/later/" in hd.configurations.get().seedlists.get().seeds  # stored all the same
    assert JobControl.objects.get(job=job, action="seeds").sent_at is None  # recorded, not sent


def test_deactivating_while_the_broker_is_down_says_so_in_one_line(curator, broker_down):
    """Review of issue 12: this was a 500 with the job left running."""
    hd = make_definition(curator, "https://www.example.fr/")
    curator.post(reverse("webui:definition-activate", args=[hd.pk]))
    job = Job.objects.get(harvest=hd)
    assert Job.transition(job.pk, "NEW", "SUBMITTED")  # as if it had been sent before the broker went away
    response = curator.post(reverse("webui:definition-deactivate", args=[hd.pk]), follow=True)
    assert response.status_code == 200
    assert (
        f"news, continuously is inactive; stop for job {job.pk} is recorded and sent when the broker is back"
        in text(response)
    )
    hd.refresh_from_db()
    assert not hd.active and JobControl.objects.get(job=job, action="stop").sent_at is None


def test_saving_a_running_definition_says_its_settings_apply_from_the_next_job(curator):
    hd = make_definition(curator, "https://www.example.fr/")
    page = text(curator.post(reverse("webui:definition-edit", args=[hd.pk]), form_data(), follow=True))
    assert "saved (inactive" in page and "next job" not in page
    curator.post(reverse("webui:definition-activate", args=[hd.pk]))
    job = Job.objects.get(harvest=hd)
    page = text(
        curator.post(reverse("webui:definition-edit", args=[hd.pk]), form_data(fetch_budget_per_s="1"), follow=True)
    )
    assert (
        f"Its running job {job.pk} keeps its settings (revisit, fetch budget, WARC rule, URIs per host, robots.txt "
        "and DNS periods): the changes apply from the next job (deactivate and activate the harvest to apply them "
        "now)."
    ) in page
    budget = Job.objects.get(pk=job.pk).spec["continuous"]["budget_per_s"]
    assert budget == 2.5  # the running job's spec is as it was
