"""What the real-browser tests share: Debian's Chromium driven by Playwright, the marks that skip (saying
why) when either is missing, and screenshots that never land in the work tree unless asked for."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from django.conf import settings

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

# Raises Skipped at import: a test module importing this is skipped as a whole, with the reason.
sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed "
                                                             "(pip install playwright)")

MARKS = [
    pytest.mark.skipif(not Path(CHROMIUM).exists(),
                       reason=f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)"),
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
