"""What the real-browser tests share: Debian's Chromium driven by Playwright, the marks that skip (saying
why) when either is missing, the ``page`` and ``site`` fixtures (import them into a test module), and
screenshots that never land in the work tree unless asked for."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections

from harvester.testsite import serve_in_thread

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

# Under CI (.ci/run sets NETHARVEST_REQUIRE_SERVICES=1, and installs both) a missing browser is a failure;
# elsewhere the browser tests are skipped, saying why.
REQUIRED = os.environ.get("NETHARVEST_REQUIRE_SERVICES") == "1"
MISSING = "" if Path(CHROMIUM).exists() else f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)"
try:
    from playwright import sync_api
except ImportError:
    if REQUIRED:
        raise
    pytest.skip("the playwright package is not installed (pip install playwright)", allow_module_level=True)

MARKS = [
    pytest.mark.skipif(bool(MISSING) and not REQUIRED, reason=MISSING),
    # The live server needs committed rows; serialized_rollback brings back the roles, channels and default
    # template that migrations made, for the tests that run after these.
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


def launch(pw):
    return pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])


def shot(page, name: str) -> None:
    """A full-page screenshot into the test data directory, or ``$NETHARVEST_SCREENSHOT_DIR``
    (``docs/screenshots`` refreshes the committed ones)."""
    shots = Path(os.environ.get("NETHARVEST_SCREENSHOT_DIR") or settings.DATA_DIR / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"{name}.png"), full_page=True)


@pytest.fixture
def site():
    """The bundled test site on a free loopback port."""
    server = serve_in_thread()
    yield server
    server.shutdown()


@pytest.fixture
def page(monkeypatch):
    """A Chromium page (1280×900) that accepts confirmation dialogs ("Run now?")."""
    # Playwright's sync API runs an event loop in this thread; the ORM calls here are plain blocking ones.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_api.sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("dialog", lambda dialog: dialog.accept())
        yield page
        browser.close()
        # ORM calls made while Playwright's loop runs get their own connection (another context);
        # close it here, or the test database cannot be dropped at the end of the session.
        connections.close_all()


@contextmanager
def session_page(monkeypatch, live_server, user, width: int) -> Iterator:
    """A Chromium page (``width``×900) already logged in as ``user``: the session cookie of a test client's
    login, so the test starts on the page it is about rather than on the login form."""
    from django.test import Client

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # ORM calls while Playwright's loop runs
    client = Client()
    client.force_login(user)
    with sync_api.sync_playwright() as pw:
        browser = launch(pw)
        context = browser.new_context(viewport={"width": width, "height": 900})
        context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
        yield context.new_page()
        browser.close()
        connections.close_all()


def log_in(tab, live_server, username: str = "claire", role: str = "curator") -> None:
    """A new user in the group ``role``, logged in through the login page (lands on the dashboard)."""
    from django.contrib.auth.models import Group, User

    User.objects.create_user(username, password="pw-long-enough").groups.add(Group.objects.get(name=role))
    tab.goto(live_server.url + "/login/")
    tab.fill("#id_username", username)
    tab.fill("#id_password", "pw-long-enough")
    tab.click("button[type=submit]")
    tab.wait_for_url(live_server.url + "/")
