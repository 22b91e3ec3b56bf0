"""The curator's experience (issue 13, "measured against Browsertrix"): each fix a new curator asked for,
checked on the real pages against PostgreSQL.

- seeds pasted into a selective harvest get the template and budget the form shows (the default named and
  explained), not silently the 3–30 s ``default``;
- a one-run schedule reads "once", never "every day, 1 run", on every page;
- the selection tool has a first-run path and treats superusers and admins as editors (webui.access);
- reports and crawl-log searches open inside the layout, with the way back and a raw download;
- charts have axes and labels that do not overlap; a job's rate and queue are drawn over time and grow;
  the dashboard lists recently finished jobs;
- wording: plurals, "Alerts: none" not in red, copies "verified" / "not checked yet".
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from html import unescape

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from orchestrator.harvest.jobs import progresslog
from orchestrator.harvest.models import (
    ArchiveFile,
    ArchiveFileCopy,
    CrawlTemplate,
    DomainConfiguration,
    HarvestDefinition,
    Job,
    JobStatus,
    Schedule,
)
from orchestrator.harvest.scheduling import scheduler
from orchestrator.selection.models import Collection, Record
from tests.orchestrator import factories
from tests.orchestrator.crawled_job import crawled, make_job, record
from tests.selection.conftest import make_record
from webui import svg
from webui.jinja import duration, plural

pytestmark = pytest.mark.django_db


def text(response) -> str:  # type: ignore[no-untyped-def]
    return unescape(response.content.decode())


def follow(client: Client, response) -> str:  # type: ignore[no-untyped-def]
    assert response.status_code == 302, response.content[:800]
    return text(client.get(response["Location"]))


# -- seeds: the template and the budget are chosen, the default named and explained --------------------
def test_the_seeds_form_names_and_explains_the_default_template(curator: Client, sample) -> None:
    page = text(curator.get(reverse("webui:definition", args=[sample.selective.pk])))
    form = page[page.index('id="add-seeds"') :]
    # The default is preselected and says what its delays mean for a small site …
    default = re.search(r'<option value="(\d+)" selected>([^<]*)</option>', form)
    assert default and default.group(2).startswith("default (the default) — 3 s–30 s between fetches from a host")
    assert "≥ 5 min per 100 pages of a site" in default.group(2)
    # … and the budget fields are there, empty meaning unlimited.
    assert 'name="max_objects"' in form and 'name="max_megabytes"' in form and 'placeholder="unlimited"' in form


def test_seeds_get_the_chosen_template_and_budget_and_a_second_paste_keeps_them(curator: Client, sample) -> None:
    fast = CrawlTemplate.objects.create(name="quick local", min_delay_ms=100, max_delay_ms=1000, delay_factor=1)
    url = reverse("webui:definition-seeds", args=[sample.selective.pk])
    page = follow(
        curator,
        curator.post(
            url,
            {
                "seeds": "http://www.quick.fr/\nhttp://quick.fr/news/",
                "template": fast.pk,
                "max_objects": "150",
                "max_megabytes": "5",
            },
        ),
    )
    assert (
        "2 seeds on 1 domain added to news (1 new domain). 1 domain harvested with template quick local, "
        "at most 150 objects and 5.0 MB per domain."
    ) in page
    config = DomainConfiguration.objects.get(domain__name="quick.fr", name="news")
    assert (config.template, config.max_objects, config.max_bytes) == (fast, 150, 5 * 1024 * 1024)
    # The new domain's own defaults (used by snapshot harvests) keep the polite default template.
    assert DomainConfiguration.objects.get(domain__name="quick.fr", is_default=True).template.name == "default"
    # The job of a run carries them (the JobSpec is what the harvester obeys).
    sample.selective.configurations.remove(*sample.selective.configurations.exclude(pk=config.pk))
    jobs = scheduler.run_now(sample.selective, requested_by="test").jobs
    spec = Job.objects.get(pk=jobs[0].pk).spec
    assert spec["template"] == "quick local" and spec["settings"]["min_delay_ms"] == 100
    assert spec["domains"][0]["max_objects"] == 150
    # Pasting more seeds with the form's defaults does not reset what the curator chose.
    page = follow(curator, curator.post(url, {"seeds": "http://quick.fr/about/"}))
    assert (
        "1 seed on 1 domain added to news (0 new domains). 1 domain already in the harvest kept its "
        "template and budget." in page
    )
    config.refresh_from_db()
    assert (config.template, config.max_objects) == (fast, 150)


def test_a_bad_budget_is_refused_next_to_its_field(curator: Client, sample) -> None:
    response = curator.post(
        reverse("webui:definition-seeds", args=[sample.selective.pk]), {"seeds": "http://quick.fr/", "max_objects": "0"}
    )
    page = text(response)
    assert response.status_code == 200 and "Ensure this value is greater than or equal to 1." in page
    assert not DomainConfiguration.objects.filter(domain__name="quick.fr", name="news").exists()


# -- schedules: "once" --------------------------------------------------------------------------------
def test_a_one_run_schedule_reads_once_on_every_page(curator: Client, sample) -> None:
    once = Schedule.objects.create(name="Once", every=1, unit="day", end="runs", max_runs=1)
    assert once.describe() == "once, as soon as activated"
    later = Schedule(name="x", end="runs", max_runs=1, start=datetime(2027, 1, 2, 3, 4, tzinfo=UTC))
    assert later.describe() == "once, at 2027-01-02 03:04 UTC"
    assert Schedule(name="y", end="runs", max_runs=3).describe() == "every day, 3 runs"
    sample.selective.schedule = once
    sample.selective.save()
    for url in (
        reverse("webui:schedules"),
        reverse("webui:definitions"),
        reverse("webui:definition", args=[sample.selective.pk]),
    ):
        page = text(curator.get(url))
        assert "once, as soon as activated" in page and "1 run" not in page, url


# -- the selection tool: first run, admins and superusers edit ----------------------------------------
def _user(name: str, role: str | None = None, **flags: bool) -> Client:
    user = User.objects.create_user(name, password="pw-long-enough", **flags)
    if role:
        user.groups.add(Group.objects.get(name=role))
    client = Client()
    client.force_login(user)
    return client


def test_the_empty_selection_lets_a_superuser_create_the_first_collection_and_go_on() -> None:
    root = _user("root", is_superuser=True, is_staff=True)
    page = text(root.get(reverse("selection:collections")))
    assert "No collection yet" in page and "Create the first collection" in page
    # "Add a record" on an empty tool leads to the collection form, not to "ask an administrator".
    assert follow(root, root.get(reverse("selection:add"))).count("Create a collection first") == 1
    response = root.post(reverse("selection:collections"), {"name": "Elections 2027", "description": ""})
    assert response.status_code == 302 and response["Location"] == reverse("selection:add")
    collection = Collection.objects.get(name="Elections 2027")
    assert list(collection.editors.values_list("username", flat=True)) == ["root"]
    assert root.get(reverse("selection:add")).status_code == 200


def test_admins_edit_every_collection_and_viewers_read(sample) -> None:
    other = Collection.objects.create(name="Sciences")  # nobody made the admin its editor
    rec = make_record(other, "http://live.fr/")
    admin = _user("ada", "admin")
    page = text(admin.get(reverse("selection:collections")))
    assert "editor" in page and "you, as an administrator, edit them all" in page
    data = {
        "collection": other.pk,
        "seeds": "http://live.fr/",
        "budget": "small",
        "frequency": "monthly",
        "depth": "host",
        "theme": "physics",
        "active": "on",
    }
    assert admin.post(reverse("selection:record", args=[rec.pk]), data).status_code == 302
    assert Record.objects.get(pk=rec.pk).theme == "physics"
    assert "Transfer now" in text(admin.get(reverse("selection:transfer")))
    # A viewer reads (every role reads, as everywhere in the web UI) but edits nothing and creates nothing.
    viewer = _user("vic", "viewer")
    page = text(viewer.get(reverse("selection:collections")))
    assert "Sciences" in page and "reader" in page and "New collection" not in page
    assert viewer.post(reverse("selection:collections"), {"name": "Mine"}).status_code == 403
    assert viewer.post(reverse("selection:record", args=[rec.pk]), data).status_code == 403
    # A curator creates a collection and becomes its editor, not an editor of the others.
    curator = _user("cyd", "curator")
    follow(curator, curator.post(reverse("selection:collections"), {"name": "Literature"}))
    assert Collection.objects.get(name="Literature").can_edit(User.objects.get(username="cyd"))
    assert not other.can_edit(User.objects.get(username="cyd"))
    # No role at all: refused, naming the role to ask for.
    nobody = _user("nobody")
    response = nobody.get(reverse("selection:collections"))
    assert response.status_code == 403 and "viewer role" in text(response)


# -- reports and crawl log inside the page ---------------------------------------------------------------
def test_a_report_opens_inside_the_layout_with_the_way_back_and_a_raw_download(viewer: Client) -> None:
    job = record(make_job())
    detail = text(viewer.get(reverse("jobs:job", args=[job.pk])))
    assert 'target="_blank"' not in detail
    assert f'href="{reverse("jobs:report-page", args=[job.pk, "mimetype-report.txt"])}"' in detail
    page = text(viewer.get(reverse("jobs:report-page", args=[job.pk, "mimetype-report.txt"])))
    assert "<header>" in page and f'href="{reverse("jobs:job", args=[job.pk])}"' in page  # the way back
    assert f'href="{reverse("jobs:report", args=[job.pk, "mimetype-report.txt"])}" download' in page
    report = (crawled().job_dir / "reports" / "mimetype-report.txt").read_text().splitlines()
    header = re.findall(r"\[([^\]]*)\]", report[0])
    for column in header:
        assert f">{column}</th>" in page
    first = report[1].split(None, len(header) - 1)
    assert all(f">{cell}</td>" in page for cell in first)
    missing = viewer.get(reverse("jobs:report-page", args=[make_job().pk, "mimetype-report.txt"]))
    assert missing.status_code == 404 and "Not available" in text(missing) and "<header>" in text(missing)


def test_the_crawl_log_search_shows_its_lines_in_the_page(viewer: Client) -> None:
    job = record(make_job())
    log = (crawled().job_dir / "logs" / "crawl.log").read_text().splitlines()
    url = reverse("jobs:crawl-log-page", args=[job.pk])
    page = text(viewer.get(url, {"search": " 404 ", "limit": "50"}))
    expected = [line for line in log if " 404 " in line]
    assert expected and all(line in page for line in expected)
    assert f"{len(expected)} matching lines in the first {len(log)} lines" in page
    assert (
        f"{reverse('jobs:crawl-log', args=[job.pk])}?search=+404+&amp;limit=50"
        in viewer.get(url, {"search": " 404 ", "limit": "50"}).content.decode()
    )  # the raw download of the same lines
    tail = text(viewer.get(url))
    assert log[-1] in tail and "the last" in tail.lower()
    bad = viewer.get(url, {"search": "(x"})
    assert bad.status_code == 400 and "not a valid regular expression" in text(bad) and "<header>" in text(bad)


# -- charts ------------------------------------------------------------------------------------------------
def test_column_chart_has_a_value_axis_and_date_labels_that_do_not_overlap() -> None:
    days = [datetime(2026, 1, 1) + timedelta(days=i) for i in range(40)]
    chart = str(svg.columns([i * 1_000_000 for i in range(40)], [f"{d:%Y-%m-%d}" for d in days]))
    found = re.findall(r'<text x="([\d.]+)" y="\d+" text-anchor="\w+">(\d{4}-[^<]*)<', chart)
    labels = [(float(x), t) for x, t in found]
    assert 3 <= len(labels) < 40 and labels[-1][1] == "2026-02-09"  # the latest is always named
    width = 6.4 * len("2026-01-01")
    assert all(b[0] - a[0] >= width for a, b in zip(labels, labels[1:], strict=False))
    axis = re.findall(r'<text x="59" y="[\d.]+" text-anchor="end">([^<]+)</text>', chart)
    assert axis[0] == "0" and len(axis) == 5  # 0, ¼, ½, ¾ and a round top


def test_a_running_job_draws_its_rate_and_queue_over_time_and_the_chart_grows(viewer: Client) -> None:
    job = make_job(status=JobStatus.STARTED, started_at=timezone.now() - timedelta(minutes=10))
    t0 = timezone.now() - timedelta(minutes=9)
    for i in range(5):
        progresslog.record(
            job.pk, {"uri_rate": 2.0 + i, "uris_queued": 300 - 20 * i, "uris_done": 40 * i}, t0 + timedelta(minutes=i)
        )
    page = viewer.get(reverse("jobs:job", args=[job.pk])).content.decode()
    rate = page[page.index('id="chart-rate"') : page.index('id="chart-queue"')]
    assert "<polyline" in rate and rate.count("<circle") == 5 and "URI/s: 6" in rate
    before = viewer.get(reverse("jobs:progress-json", args=[job.pk])).json()["charts"]
    progresslog.record(job.pk, {"uri_rate": 9.0, "uris_queued": 150, "uris_done": 250}, t0 + timedelta(minutes=6))
    after = viewer.get(reverse("jobs:progress-json", args=[job.pk])).json()["charts"]
    assert after["rate"].count("<circle") == before["rate"].count("<circle") + 1 and "URI/s: 9" in after["rate"]
    assert "queued: 150" in after["queue"] and "done: 250" in after["queue"]


def test_an_ended_jobs_chart_ends_with_its_final_heartbeat(viewer: Client) -> None:
    """The job's end is the harvester's, to the second; its final heartbeat is kept when intake reads it, a moment
    later. The chart of a 17-second job stopped at its first sample (queued 2, done 0), the final one left out."""
    started = timezone.now().replace(microsecond=0) - timedelta(minutes=5)
    ended = started + timedelta(seconds=17)
    job = make_job(status=JobStatus.DONE, started_at=started, ended_at=ended)
    progresslog.record(job.pk, {"uri_rate": 0.0, "uris_queued": 2, "uris_done": 0}, started + timedelta(seconds=2))
    progresslog.record(job.pk, {"uri_rate": 8.0, "uris_queued": 4, "uris_done": 127}, ended + timedelta(seconds=0.4))
    page = viewer.get(reverse("jobs:job", args=[job.pk])).content.decode()
    queue = page[page.index('id="chart-queue"') :]
    assert "done: 127" in queue and queue.count("<circle") == 4  # two samples of two lines


def test_the_dashboard_lists_recently_finished_jobs(viewer: Client) -> None:
    now = timezone.now()
    recent = factories.job(
        status=JobStatus.DONE, started_at=now - timedelta(minutes=65), ended_at=now - timedelta(hours=1)
    )
    old = factories.job(
        factories.selective_definition("old one"),
        status=JobStatus.DONE,
        started_at=now - timedelta(days=9),
        ended_at=now - timedelta(days=8),
    )
    page = text(viewer.get(reverse("webui:home")))
    finished = page[page.index('id="finished"') : page.index("</table>", page.index('id="finished"'))]
    assert f'href="/jobs/{recent.pk}/"' in finished and "5 min" in finished  # webui.jinja.duration drops a zero tail
    assert f'href="/jobs/{old.pk}/"' not in finished


# -- wording ----------------------------------------------------------------------------------------------
def test_plurals_durations_and_alerts_in_red_only_when_there_are_some(viewer: Client) -> None:
    assert [plural(n, "domain") for n in (0, 1, 2, 4000)] == [
        "0 domains",
        "1 domain",
        "2 domains",
        "4\u202f000 domains",
    ]
    assert plural(1, "copy", "copies") == "1 copy" and plural(3, "copy", "copies") == "3 copies"
    assert [duration(timedelta(seconds=s)) for s in (42, 185, 7440, 97200)] == [
        "42 s",
        "3 min 05 s",
        "2 h 04 min",
        "1 d 3 h",
    ]
    assert [duration(s) for s in (300, 5400, 43200, 604800)] == ["5 min", "1 h 30 min", "12 h", "7 d"]  # waits
    job = make_job(status=JobStatus.STARTED, progress={"alerts": []})
    page = viewer.get(reverse("jobs:job", args=[job.pk])).content.decode()
    assert '<span id="alerts" class="good">none</span>' in page
    Job.objects.filter(pk=job.pk).update(progress={"alerts": ["disk almost full"]})
    page = viewer.get(reverse("jobs:job", args=[job.pk])).content.decode()
    assert '<span id="alerts" class="alert">disk almost full</span>' in page


def test_file_copies_say_verified_or_not_checked_yet(viewer: Client) -> None:
    job = record(make_job())
    for f in ArchiveFile.objects.filter(job=job):
        ArchiveFileCopy.objects.create(file=f, location="primary", path=f"/archive/{f.name}")
    copies = ArchiveFileCopy.objects.filter(file__job=job)
    page = text(viewer.get(reverse("jobs:job", args=[job.pk])))
    assert "not checked yet" in page and "verified ok" not in page
    copies.update(verified_ok=True, verified_at=timezone.now())
    assert "✓ verified" in text(viewer.get(reverse("jobs:job", args=[job.pk])))
    copies.update(verified_ok=False)  # checked, and found wrong
    assert "verification failed" in text(viewer.get(reverse("jobs:job", args=[job.pk])))


# -- one style sheet --------------------------------------------------------------------------------------
def test_every_page_takes_the_one_style_sheet(viewer: Client, sample) -> None:
    css = viewer.get("/static/webui/netharvest.css")
    assert css.status_code == 200 and b".badge" in b"".join(css.streaming_content if css.streaming else [css.content])
    for url in (
        reverse("webui:home"),
        reverse("webui:definitions"),
        reverse("jobs:list"),
        reverse("qa:index"),
        reverse("selection:collections"),
    ):
        page = viewer.get(url).content.decode()
        assert '<link rel="stylesheet" href="/static/webui/netharvest.css">' in page, url
        assert "<style>" not in page, url  # no page carries its own copy of the rules any more
    assert HarvestDefinition.objects.exists()


def test_a_first_sample_alone_does_not_pile_the_time_labels_on_one_spot() -> None:
    at = datetime(2026, 11, 24, 4, 54, 12, tzinfo=UTC)
    chart = str(svg.line_chart([("URI/s", [(at, 3.5)])]))
    xs = [float(x) for x in re.findall(r'<text x="([\d.]+)" y="\d+" text-anchor="(?:start|middle|end)">\d\d:', chart)]
    assert len(xs) == 3 and xs[0] < xs[1] < xs[2]


def test_a_job_shorter_than_a_sample_ends_its_chart_at_its_last_heartbeat(viewer: Client) -> None:
    """Samples are kept every 15 s: a demo job of 9 seconds kept its first heartbeat only, and its chart said
    "done 0" beside 150 done. The chart ends with the job's last heartbeat, sample or not."""
    from orchestrator.harvest.jobs import intake

    job = make_job(status=JobStatus.STARTED, started_at=timezone.now() - timedelta(seconds=9))
    for done, queued in ((0, 4), (150, 0)):
        now = timezone.now().isoformat()
        assert intake.record_progress({"job_id": job.pk, "at": now, "uris_done": done, "uris_queued": queued})
    assert progresslog.series(job.pk, timezone.now() - timedelta(minutes=1), timezone.now()).times  # one sample
    job.__class__.objects.filter(pk=job.pk).update(status=JobStatus.DONE, ended_at=timezone.now())
    page = viewer.get(reverse("jobs:job", args=[job.pk])).content.decode()
    queue = page[page.index('id="chart-queue"') :]
    assert "done: 150" in queue and "queued: 0" in queue
