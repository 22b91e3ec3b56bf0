"""The curator's path in a real browser (Playwright driving Debian's Chromium), against the live
Django server and a local test site:

log in → new selective harvest → paste seeds of the test site → run it now → the job is listed.

Screenshots of the pages passed through go to docs/screenshots/, so a reader sees the UI without
running it. Skipped, saying why, only when Chromium or the playwright package is absent (.ci/run
installs both).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.db import connections

from harvester.testsite import serve_in_thread
from orchestrator.harvest.models import HarvestDefinition, Job

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"

sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed "
                                                             "(pip install playwright)")
pytestmark = [
    pytest.mark.skipif(not Path(CHROMIUM).exists(),
                       reason=f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)"),
    # serialized_rollback: the live server needs committed rows, and the roles, channels and default
    # template that migrations made must be back for the tests that run after this one.
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


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
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("dialog", lambda dialog: dialog.accept())  # "Run now?" confirmation
        yield page
        browser.close()
        # ORM calls made while Playwright's loop runs get their own connection (another context);
        # close it here, or the test database cannot be dropped at the end of the session.
        connections.close_all()


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


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

