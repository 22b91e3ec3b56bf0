"""A continuous harvest from the web UI in a real browser (Playwright driving Debian's Chromium), against the
live Django server and the bundled test site (issue 12):

log in as a curator → new continuous harvest → a strip regex RE2 refuses is reported on its line and
nothing is saved → the settings saved → seeds pasted → Activate: its one job is made and sent to the
continuous channel, and the job page has its continuous section. With a real continuous harvester worker
and the intake/indexer worker (``netharvest up --only worker-continuous,indexer``), the job page then shows
the crawl revisiting the site, and WARC files closed and indexed while it runs; Deactivate stops it.

Screenshots as in tests/webui/test_browser.py (``$NETHARVEST_SCREENSHOT_DIR``, else the test data directory).
"""

from __future__ import annotations

import re
import time

from orchestrator.harvest.models import ArchiveFile, CrawlTemplate, HarvestDefinition, Job
from orchestrator.harvest.models.archive import IndexState
from tests.webui.browserhelp import MARKS, log_in, page, shot, site  # noqa: F401 - page, site: fixtures

pytestmark = MARKS


def create_and_activate(tab, live_server, testsite, name: str, template: str = "", **waits: str) -> HarvestDefinition:
    """The curator's path from the definitions list to an active continuous harvest of the test site."""
    tab.goto(live_server.url + "/definitions/")
    tab.click("a[href='/definitions/new/continuous/']")
    tab.fill("#id_name", name)
    tab.check("input[name=policy][value=heritrix]")
    tab.fill("#id_fetch_budget_per_s", "4")
    for field, value in waits.items():
        tab.fill(f"#id_{field}", value)
    tab.fill("#id_strip", '<span class="clock">[^<]*</span>\n(?<=ad)banner')
    tab.click("button:has-text('Save')")
    tab.wait_for_selector(".field.invalid")
    assert "line 2: lookbehind (?<=…) is not supported" in tab.inner_text(".field.invalid")
    assert not HarvestDefinition.objects.filter(name=name).exists()
    shot(tab, "continuous-form-error")
    tab.fill("#id_strip", '<span class="clock">[^<]*</span>')
    tab.click("button:has-text('Save')")
    tab.wait_for_selector(f"h1:has-text('{name}')")
    definition = HarvestDefinition.objects.get(name=name)
    assert definition.kind == "continuous" and definition.revisit_settings["policy"] == "heritrix"

    tab.fill("#id_seeds", testsite.url)
    if template:  # how the seeds' domain is crawled: chosen with the paste
        tab.select_option("#id_template", label=tab.inner_text(f"#id_template option:has-text('{template}')"))
    tab.click("button:has-text('Add seeds')")
    tab.wait_for_selector("text=No job is running: the next one starts from these seeds.")
    return definition


def test_curator_creates_and_activates_a_continuous_harvest(live_server, site, page):  # noqa: F811
    log_in(page, live_server)
    definition = create_and_activate(page, live_server, site, "Test site, continuously")
    page.click("button:has-text('Activate')")
    page.wait_for_selector("text=Test site, continuously is active.")
    job = Job.objects.get(harvest=definition)
    assert f"Its continuous job {job.pk} is {job.status} on channel continuous" in page.inner_text(".messages")
    assert job.spec["kind"] == "continuous" and job.spec["continuous"]["budget_per_s"] == 4.0
    assert job.spec["domains"][0]["seeds"] == [site.url]
    shot(page, "continuous-definition")

    page.click(f"a[href='/jobs/{job.pk}/']")
    page.wait_for_selector("#continuous h2:has-text('Continuous harvesting')")
    assert "No adaptive-revisit figures received yet" in page.inner_text("#continuous")

    page.goto(live_server.url + f"/definitions/{definition.pk}/")
    page.click("button:has-text('Deactivate')")
    page.wait_for_selector("text=its continuous job is told to stop")
    assert job.controls.filter(action="stop").exists()


def test_the_continuous_job_revisits_and_hands_over_its_warcs_live(live_server, site, continuous_workers, page):  # noqa: F811
    """End to end: a real continuous harvester revisits the test site in accelerated time (waits of seconds),
    and the job page, refreshing itself, shows the revisits and the WARCs closed and indexed while it runs."""
    CrawlTemplate.objects.create(
        name="local test", min_delay_ms=0, max_delay_ms=0, delay_factor=0, max_hops=2, retry_delay_s=1, max_retries=1
    )
    log_in(page, live_server)
    definition = create_and_activate(
        page,
        live_server,
        site,
        "Test site, revisited",
        template="local test",
        initial_wait_text="5s",
        initial_wait_image="5s",
        initial_wait_audio_video="5s",
        initial_wait_other="5s",
        min_wait_s="3s",
        max_wait_s="20s",
        warc_rotate_s="5s",
    )
    assert definition.configurations.get().template.name == "local test"  # no politeness delay for 127.0.0.1
    page.click("button:has-text('Activate')")
    page.wait_for_selector("text=Test site, revisited is active.")
    job = Job.objects.get(harvest=definition)
    page.goto(live_server.url + f"/jobs/{job.pk}/")

    def figure(label: str) -> int:
        row = page.locator("#continuous table.c-outcomes tr", has_text=label).first
        return int(re.sub(r"\D", "", row.locator("td").nth(1).inner_text()) or 0)

    deadline = time.monotonic() + 180
    while True:  # the page refreshes its section itself every 5 s: no reload here
        text = page.inner_text("#continuous") if page.locator("#continuous table.c-outcomes").count() else ""
        indexed = ArchiveFile.objects.filter(
            job=job,
            kind="warc",
            index_state__in=[IndexState.INDEXED, IndexState.TRANSFERRED, IndexState.BACKED_UP, IndexState.CLEANED],
        ).count()
        if (
            text
            and figure("unchanged (same content digest)") > 0
            and indexed
            and "indexed" in text
            and not re.search(r" 0 indexed", text)
        ):
            break
        assert time.monotonic() < deadline, (
            Job.objects.get(pk=job.pk).status,
            text[:2000],
            continuous_workers.read_text()[-4000:],
        )
        time.sleep(2)
    assert figure("changed (new version)") > 0  # the first visits, full responses
    assert page.locator("#continuous svg polyline").count() >= 1  # the fetch-rate chart has points
    assert page.locator("#c-due a").count() >= 1
    shot(page, "continuous-job-live")

    # A URI's history: the home page visited more than once, its waits from the policy's annotations.
    page.goto(live_server.url + f"/jobs/{job.pk}/uri/?uri={site.url}")
    visits = int(page.inner_text("#u-visits").replace("\u202f", "").replace(",", ""))
    assert visits >= 2, page.inner_text("main")[:2000]
    shot(page, "continuous-uri-history")

    page.goto(live_server.url + f"/definitions/{definition.pk}/")
    page.click("button:has-text('Deactivate')")
    page.wait_for_selector("text=its continuous job is told to stop")
    deadline = time.monotonic() + 120
    while Job.objects.filter(pk=job.pk, status__in=["SUBMITTED", "STARTED"]).exists():
        assert time.monotonic() < deadline, continuous_workers.read_text()[-4000:]
        time.sleep(2)
    assert Job.objects.get(pk=job.pk).status == "DONE"
