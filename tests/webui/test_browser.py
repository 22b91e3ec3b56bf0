"""The curator's path in a real browser (Playwright driving Debian's Chromium), against the live
Django server and a local test site:

log in → new selective harvest → paste seeds of the test site → set the domain's budget and template
→ run it now → the job is listed, and (on PostgreSQL + Redis, with a real harvester worker and the
orchestrator's intake worker started by ``netharvest up --only worker-high,indexer``) reaches DONE.

Screenshots of the pages passed through show the UI to a reader who does not run it: they are written to
``$NETHARVEST_SCREENSHOT_DIR`` when set (refresh the committed ones with
``NETHARVEST_SCREENSHOT_DIR=docs/screenshots .venv/bin/python -m pytest tests/webui/test_browser.py``),
otherwise to the test data directory, so an ordinary run leaves the work tree clean. Skipped, saying
why, only when Chromium or the playwright package is absent (.ci/run installs both).
"""

from __future__ import annotations

import time

from django.contrib.auth.models import Group, User

from orchestrator.harvest.models import CrawlTemplate, HarvestDefinition, Job
from tests.webui.browserhelp import MARKS, log_in, page, shot, site  # noqa: F401 - page, site: fixtures

pytestmark = MARKS


def test_curator_creates_a_selective_harvest_from_seeds_and_runs_it(live_server, site, page):  # noqa: F811
    user = User.objects.create_user("claire", password="pw-long-enough")
    user.groups.add(Group.objects.get(name="curator"))

    page.goto(live_server.url + "/definitions/")
    assert "/login/" in page.url  # nothing without logging in
    page.fill("#id_username", "claire")
    page.fill("#id_password", "pw-long-enough")
    shot(page, "login")
    page.click("button[type=submit]")
    page.wait_for_url(live_server.url + "/definitions/")

    page.click("a[href='/definitions/new/selective/']")
    page.fill("#id_name", "Local test site")
    page.click("button:has-text('Save')")
    page.wait_for_selector("h1:has-text('Local test site')")
    definition = HarvestDefinition.objects.get(name="Local test site")

    # A bad line is reported by number and nothing is added …
    page.fill("#id_seeds", f"{site.url}\nftp://nowhere.example/")
    page.click("button:has-text('Add seeds')")
    page.wait_for_selector(".field.invalid")
    assert "line 2" in page.inner_text(".field.invalid") and not definition.configurations.exists()
    shot(page, "seeds-error")
    # … the corrected paste goes in.
    page.fill("#id_seeds", f"{site.url}\n{site.url}news/")
    page.click("button:has-text('Add seeds')")
    page.wait_for_selector("text=2 seeds on 1 domain added")
    assert list(definition.configurations.values_list("domain__name", flat=True)) == ["127.0.0.1"]

    page.click("button:has-text('Run now')")
    page.wait_for_selector("text=Run 1 of Local test site")
    job = Job.objects.get(harvest=definition)
    assert job.spec["domains"][0]["seeds"] == [site.url, f"{site.url}news/"]
    assert page.is_visible(f"a[href='/jobs/{job.pk}/']")
    shot(page, "definition")

    for path, name in (
        ("/", "dashboard"),
        ("/domains/?q=127", "domains"),
        ("/domains/127.0.0.1/", "domain"),
        ("/definitions/", "definitions"),
        ("/schedules/", "schedules"),
        ("/templates/", "templates"),
        ("/jobs/", "jobs"),
    ):
        page.goto(live_server.url + path)
        shot(page, name)
    assert "Local test site" in page.content()


def test_the_template_chosen_with_the_seeds_makes_a_fast_crawl_that_reaches_done(live_server, site, workers, page):  # noqa: F811
    """The same path to its end, as a new curator takes it: the seeds form offers the templates with what
    their pauses mean; choosing the quick one (instead of the default's 3–30 s between fetches) and a
    budget, the real harvester crawls the test site and the job shows DONE, its reports and crawl log
    inside the page, and the dashboard lists it as finished."""
    # What a crawl engineer prepared: a template with short pauses, for a local site.
    CrawlTemplate.objects.create(
        name="local test", min_delay_ms=0, max_delay_ms=0, delay_factor=0, max_hops=3, retry_delay_s=1, max_retries=1
    )
    log_in(page, live_server)
    page.goto(live_server.url + "/definitions/new/selective/")
    page.fill("#id_name", "Test site to DONE")
    page.click("button:has-text('Save')")
    page.wait_for_selector("h1:has-text('Test site to DONE')")

    # The default template is preselected and explained; the curator picks the quick one and a budget.
    default = page.inner_text("#id_template option:checked")
    assert default.startswith("default (the default) — 3 s–30 s between fetches from a host"), default
    page.fill("#id_seeds", site.url)
    page.select_option("#id_template", label=page.inner_text("#id_template option:has-text('local test')"))
    page.fill("#id_max_objects", "25")
    shot(page, "definition-seeds-form")
    page.click("button:has-text('Add seeds')")
    page.wait_for_selector("text=1 domain harvested with template local test, at most 25 objects per domain")

    page.click("button:has-text('Run now')")
    page.wait_for_selector("text=Run 1 of Test site to DONE")
    job = Job.objects.get(harvest__name="Test site to DONE")
    assert job.spec["template"] == "local test" and job.spec["settings"]["max_delay_ms"] == 0
    assert job.spec["domains"][0]["max_objects"] == 25
    deadline = time.monotonic() + 240
    while Job.objects.filter(pk=job.pk, status__in=["NEW", "SUBMITTED", "STARTED"]).exists():
        assert time.monotonic() < deadline, (
            f"job still {Job.objects.get(pk=job.pk).status}; workers' log:\n{workers.read_text()[-4000:]}"
        )
        time.sleep(2)
    job.refresh_from_db()
    assert job.status == "DONE", (job.error_category, job.error_detail, workers.read_text()[-4000:])
    page.reload()
    assert page.is_visible("td .badge.DONE")
    shot(page, "definition-done")

    # The job's page, its reports and crawl log open inside the layout, each with the way back.
    page.goto(f"{live_server.url}/jobs/{job.pk}/")
    shot(page, "job-done")
    page.click("a:has-text('mimetype-report.txt')")
    page.wait_for_selector("table.report")
    assert page.url.endswith(f"/jobs/{job.pk}/report/mimetype-report.txt/") and len(page.context.pages) == 1
    assert page.is_visible("a:has-text('Download raw mimetype-report.txt')")
    shot(page, "job-report")
    page.click(f"a:has-text('Back to job {job.pk}')")
    page.fill("input[name=search]", " 200 ")
    page.click("button:has-text('Search')")
    page.wait_for_selector("pre.log")
    assert " 200 " in page.inner_text("pre.log") and len(page.context.pages) == 1
    shot(page, "job-crawl-log")

    page.goto(live_server.url + "/")
    assert f"/jobs/{job.pk}/" in page.inner_html("#finished")
    shot(page, "dashboard")
    page.goto(live_server.url + "/domains/127.0.0.1/")
    assert "Test site to DONE" in page.inner_text("table:last-of-type")
    shot(page, "domain-history")


def test_the_selection_tool_opens_on_a_first_run_path_for_the_superuser(live_server, page):  # noqa: F811
    User.objects.create_superuser("root", password="pw-long-enough")
    page.goto(live_server.url + "/selection/")
    page.fill("#id_username", "root")
    page.fill("#id_password", "pw-long-enough")
    page.click("button[type=submit]")
    page.wait_for_selector("text=No collection yet")
    shot(page, "selection-first-run")
    page.fill("#id_name", "Elections 2027")
    page.click("button:has-text('Create collection')")
    page.wait_for_selector("text=Collection Elections 2027 created; you are its editor")
    assert page.url == live_server.url + "/selection/add/"
    shot(page, "selection-add")
