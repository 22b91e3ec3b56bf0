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

import pytest
from django.contrib.auth.models import Group, User
from django.db import connections

from harvester.testsite import serve_in_thread
from orchestrator.harvest.models import CrawlTemplate, HarvestDefinition, Job
from tests.webui.browserhelp import MARKS, launch, shot, sync_api

pytestmark = MARKS


@pytest.fixture
def site():
    server = serve_in_thread()
    yield server
    server.shutdown()


@pytest.fixture
def page(monkeypatch):
    # Playwright's sync API runs an event loop in this thread; the ORM calls here are plain blocking ones.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_api.sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("dialog", lambda dialog: dialog.accept())  # "Run now?" confirmation
        yield page
        browser.close()
        # ORM calls made while Playwright's loop runs get their own connection (another context);
        # close it here, or the test database cannot be dropped at the end of the session.
        connections.close_all()



def test_curator_creates_a_selective_harvest_from_seeds_and_runs_it(live_server, site, page):
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
    page.wait_for_selector("text=2 seed(s) on 1 domain(s) added")
    assert list(definition.configurations.values_list("domain__name", flat=True)) == ["127.0.0.1"]

    page.click("button:has-text('Run now')")
    page.wait_for_selector("text=Run 1 of Local test site")
    job = Job.objects.get(harvest=definition)
    assert job.spec["domains"][0]["seeds"] == [site.url, f"{site.url}news/"]
    assert page.is_visible(f"a[href='/jobs/{job.pk}/']")
    shot(page, "definition")

    for path, name in (("/", "dashboard"), ("/domains/?q=127", "domains"), ("/domains/127.0.0.1/", "domain")):
        page.goto(live_server.url + path)
        shot(page, name)
    assert "Local test site" in page.content()



def test_the_job_of_a_run_now_reaches_done(live_server, site, workers, page):
    """The same path to its end: a real harvester crawls the test site and the job shows DONE."""
    # What a crawl engineer prepared: a template without politeness delays, for a local site.
    CrawlTemplate.objects.create(name="local test", min_delay_ms=0, max_delay_ms=0, delay_factor=0, max_hops=3,
                                 retry_delay_s=1, max_retries=1)
    user = User.objects.create_user("claire", password="pw-long-enough")
    user.groups.add(Group.objects.get(name="curator"))
    page.goto(live_server.url + "/login/")
    page.fill("#id_username", "claire")
    page.fill("#id_password", "pw-long-enough")
    page.click("button[type=submit]")
    page.wait_for_url(live_server.url + "/")
    page.goto(live_server.url + "/definitions/new/selective/")
    page.fill("#id_name", "Test site to DONE")
    page.click("button:has-text('Save')")
    page.wait_for_selector("h1:has-text('Test site to DONE')")
    page.fill("#id_seeds", site.url)
    page.click("button:has-text('Add seeds')")
    page.wait_for_selector("text=1 seed(s) on 1 domain(s) added")

    # The curator gives the domain's configuration for this harvest the local template and a budget.
    page.click("a:has-text('127.0.0.1')")
    page.click("a:has-text('Test site to DONE')")
    page.select_option("#id_template", label="local test")
    page.fill("#id_max_objects", "25")
    page.click("button:has-text('Save')")
    page.wait_for_selector("text=Configuration Test site to DONE of 127.0.0.1 saved")

    page.goto(live_server.url + "/definitions/")
    page.click("a:has-text('Test site to DONE')")
    page.click("button:has-text('Run now')")
    page.wait_for_selector("text=Run 1 of Test site to DONE")
    job = Job.objects.get(harvest__name="Test site to DONE")
    assert job.spec["domains"][0]["max_objects"] == 25
    deadline = time.monotonic() + 240
    while Job.objects.filter(pk=job.pk, status__in=["NEW", "SUBMITTED", "STARTED"]).exists():
        assert time.monotonic() < deadline, f"job still {Job.objects.get(pk=job.pk).status}; " \
                                            f"workers' log:\n{workers.read_text()[-4000:]}"
        time.sleep(2)
    job.refresh_from_db()
    assert job.status == "DONE", (job.error_category, job.error_detail, workers.read_text()[-4000:])
    page.reload()
    assert page.is_visible("td .badge.DONE")
    shot(page, "definition-done")
    page.goto(live_server.url + "/domains/127.0.0.1/")
    assert "Test site to DONE" in page.inner_text("table:last-of-type")
    shot(page, "domain-history")
