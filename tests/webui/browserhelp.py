"""What the real-browser tests share: Debian's Chromium driven by Playwright, the marks that skip (saying
why) when either is missing, and screenshots that never land in the work tree unless asked for."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from django.conf import settings

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

# Under CI (.ci/run sets NETHARVEST_REQUIRE_SERVICES=1, and installs both) a missing browser is a failure;
# elsewhere the browser tests are skipped, saying why.
REQUIRED = os.environ.get("NETHARVEST_REQUIRE_SERVICES") == "1"
MISSING = "" if Path(CHROMIUM).exists() else f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)"
try:
    from playwright import sync_api  # noqa: F401  (the browser tests take it from here)
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
