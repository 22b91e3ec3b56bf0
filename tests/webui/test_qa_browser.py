"""Issue 13's "done means", in a real browser (Playwright driving Debian's Chromium) against the live web UI:

a curator runs the demo harvest → opens its home page in replay → the automatic QA pass (a real ``qa`` worker:
headless Chromium through real pywb) reports the banner the test site loads from JavaScript, which no link
extractor can find, as missing → one click on "Patch crawl" → the patch job (a real harvester worker) fetches it
and the chain indexes it → the pass the patch starts by itself shows nothing missing on that page → replay shows
the banner.

Screenshots of each step go to ``$NETHARVEST_SCREENSHOT_DIR`` when set (the committed ones in docs/screenshots are
refreshed with ``NETHARVEST_SCREENSHOT_DIR=docs/screenshots``), otherwise to the test data directory.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import Group, User

from harvester.testsite import serve_in_thread
from orchestrator.harvest.curation.demo import DEMO_DEFINITION, ensure_demo_definition
from orchestrator.harvest.models import Job, QARun
from tests.orchestrator.realstack import start_worker, stop_worker, worker_env
from tests.webui.browserhelp import CHROMIUM, MARKS, page, shot  # noqa: F401 (page: the shared fixture)

pytestmark = MARKS


@pytest.fixture
def demo_site():
    site = serve_in_thread()
    peer = serve_in_thread(peer_port=site.port)
    site.peer_port = peer.port
    yield site, peer
    site.shutdown()
    peer.shutdown()


@pytest.fixture
def qa_worker(workers, replay_service):
    """The ``qa`` queue's worker as deploy/Procfile runs it, on this test's database, broker and replay service."""
    from orchestrator.celery import app

    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge("qa")  # runs queued by other tests' databases are not ours
    env = {
        **worker_env(Path(django_settings.DATA_DIR)),
        "NETHARVEST_REPLAY_URL": replay_service.url,
        "NETHARVEST_QA_MAX_PAGES": "2",
        "NETHARVEST_QA_CHROMIUM": CHROMIUM,
        "NETHARVEST_DEMO": "0",
    }
    log = Path(django_settings.DATA_DIR) / "qa-worker.log"
    worker = start_worker("orchestrator", "qa", "qa", env, log)
    yield log
    stop_worker(worker)


def images_loaded(tab) -> None:
    """The QA page's thumbnails drawn before its screenshot is taken."""
    tab.wait_for_function("Array.from(document.images).every(i => i.complete)")


def wait(predicate, seconds: float, what: str, logs: list[Path]) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}:\n" + "\n".join(p.read_text()[-3000:] for p in logs))
        time.sleep(1)


def test_curator_finds_the_js_banner_missing_patches_it_and_replay_shows_it(
    live_server,
    demo_site,
    own_index,
    workers,
    qa_worker,
    page,  # noqa: F811
):
    site, peer = demo_site
    logs = [workers, qa_worker]
    definition, _ = ensure_demo_definition(site.port, peer.port)
    user = User.objects.create_user("claire", password="pw-long-enough")
    user.groups.add(Group.objects.get(name="curator"))
    page.goto(live_server.url + "/login/")
    page.fill("#id_username", "claire")
    page.fill("#id_password", "pw-long-enough")
    page.click("button[type=submit]")
    page.wait_for_url(live_server.url + "/")

    # 1. The demo harvest, run now from its definition's page.
    page.goto(f"{live_server.url}/definitions/{definition.pk}/")
    page.click("button:has-text('Run now')")
    page.wait_for_selector(f"text=Run 1 of {DEMO_DEFINITION}")
    job = Job.objects.get(harvest=definition, patches__isnull=True)
    wait(lambda: Job.objects.get(pk=job.pk).status in ("DONE", "FAILED"), 240, "the demo job to end", logs)
    assert Job.objects.get(pk=job.pk).status == "DONE"
    page.goto(f"{live_server.url}/jobs/{job.pk}/")
    shot(page, "qa-1-demo-job-done")

    # 2. The automatic QA pass (started by the chain once the job's WARCs are stored) runs on the qa worker.
    wait(
        lambda: QARun.objects.filter(job=job, trigger=QARun.AUTO, status__in=["DONE", "FAILED"]).exists(),
        300,
        "the automatic QA pass",
        logs,
    )
    page.click("#page-qa")
    page.wait_for_selector("#missing-groups")
    banner = f"{site.url}hidden/banner.png"
    assert banner in page.inner_text("#missing-groups")
    home = page.locator(f".qa-page[data-url='{site.url}']")
    assert int(home.locator(".missing-count").inner_text()) >= 1
    home.locator("textarea[name=note]").fill("JS banner missing: patch crawl asked")
    home.locator("button[value=bad]").click()
    page.wait_for_selector("text=marked bad")
    home = page.locator(f".qa-page[data-url='{site.url}']")
    assert "JS banner missing" in home.inner_text()
    images_loaded(page)
    shot(page, "qa-2-missing-banner")

    # 3. The home page in replay, one click from the QA page: the banner is not there.
    with page.expect_popup() as popup:
        home.locator("h3 a").click()
    replayed = popup.value
    replayed.wait_for_load_state("load")
    frame = next(f for f in replayed.frames if "mp_/" in f.url)
    frame.wait_for_selector("#js-banner", state="attached")
    assert frame.evaluate("document.getElementById('js-banner').naturalWidth") == 0
    shot(replayed, "qa-3-replay-without-banner")
    replayed.close()

    # 4. Patch crawl: one click; the patch job crawls, is indexed, and a new pass runs by itself.
    page.click("#qa-patch")
    page.wait_for_selector("text=Patch job")
    shot(page, "qa-4-patch-job-started")
    patch_job = Job.objects.get(patches=job)
    assert banner in [s for d in patch_job.spec["domains"] for s in d["seeds"]]
    wait(
        lambda: QARun.objects.filter(job=job, trigger=QARun.AFTER_PATCH, status__in=["DONE", "FAILED"]).exists(),
        420,
        "the QA pass after the patch crawl",
        logs,
    )
    after = QARun.objects.get(job=job, trigger=QARun.AFTER_PATCH)
    first = QARun.objects.get(job=job, trigger=QARun.AUTO)
    assert after.status == "DONE" and after.missing_urls < first.missing_urls
    page.goto(f"{live_server.url}/jobs/{job.pk}/qa/")
    assert banner not in page.inner_text("body").split("Pages, worst first")[0]
    images_loaded(page)
    shot(page, "qa-5-after-patch")
    replay_link = page.locator(f".qa-page[data-url='{site.url}'] h3 a").get_attribute("href")
    page.goto(f"{live_server.url}/domains/127.0.0.1/")  # the mark is in the domain's history
    assert "JS banner missing: patch crawl asked" in page.inner_text("#qa-marks")

    # 5. Replay now shows the banner.
    page.goto(live_server.url + replay_link)
    frame = next(f for f in page.frames if "mp_/" in f.url)
    frame.wait_for_function(
        "document.getElementById('js-banner') && document.getElementById('js-banner').naturalWidth > 0"
    )
    shot(page, "qa-6-replay-with-banner")
