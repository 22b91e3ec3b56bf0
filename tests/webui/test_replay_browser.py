"""Replay in a real browser (Playwright driving Debian's Chromium) against the live server and real pywb: a
job's pages open framed in the page with their images from the archive, and the archived page's scripts,
which run on the web UI's origin, can reach nothing of the web UI (no fetch, no form, no window on its pages).

Skipped, saying why, only when Chromium or the playwright package is absent (.ci/run installs both).
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from orchestrator.harvest.archive.captures import captures_of
from orchestrator.harvest.chain import steps as chain
from tests.indexer.conftest import TwoJobs
from tests.orchestrator import factories
from tests.orchestrator.chainhelp import harvest
from tests.orchestrator.conftest import storage_env  # noqa: F401 - a fixture
from tests.webui.browserhelp import MARKS, session_page, shot

pytestmark = MARKS

#: What a hostile archived page's script tries, run inside the replayed document: read a web UI page with the
#: user's cookies (directly, or through the frames above it) or open one in a window it keeps a handle on. Each
#: says "blocked" / "cut off", "archive" (it stayed inside replay: pywb's client-side rewriting sent it there),
#: or "UI" (it reached the web UI).
ATTEMPTS = """async () => {
  const ui = (html) => html.includes('name="csrfmiddlewaretoken"');  // every web UI page has its logout form
  const out = {};
  const tryFetch = async (f) => { try { const r = await f("/jobs/", {credentials: "include"});
    return ui(await r.text()) ? "UI" : "archive"; } catch (e) { return "blocked"; } };
  out.fetch = await tryFetch(window.fetch.bind(window));
  out.parentFetch = await tryFetch(parent.fetch.bind(parent));
  out.topFetch = await tryFetch(top.fetch.bind(top));
  const w = window.open("/definitions/");
  out.popup = "still loading after 20 s";
  for (let waited = 0; waited < 20000; waited += 250) {  // until the popup has loaded, or is out of reach
    await new Promise(r => setTimeout(r, 250));
    try {
      if (!w || w.closed) { out.popup = "cut off"; break; }
      if (ui(w.document.documentElement.outerHTML)) { out.popup = "UI"; break; }
      if (w.location.href !== "about:blank" && w.document.readyState === "complete") { out.popup = "archive"; break; }
    } catch (e) { out.popup = "cut off"; break; }
  }
  try { w && w.close(); } catch (e) {}
  return out;
}"""


@pytest.fixture
def browser_page(monkeypatch, live_server):
    user = User.objects.create_user("viewer", password="pw-long-enough")
    from django.contrib.auth.models import Group

    user.groups.add(Group.objects.get(name="viewer"))
    with session_page(monkeypatch, live_server, user, 1400) as tab:
        yield tab


def test_job_pages_replay_framed_and_archived_scripts_reach_nothing(
    replay_crawls: TwoJobs,
    storage_env,  # noqa: F811
    replay_service,
    live_server,
    browser_page,
):
    job = harvest(replay_crawls.job1, storage_env / "spool", factories.selective_definition("news"))
    assert not chain.run_pending().failed
    page = browser_page
    page.goto(f"{live_server.url}/jobs/{job.pk}/pages/")
    assert "netharvest test site" in page.inner_text("#pages")

    def content():
        return next((f for f in page.frames if "mp_/" in f.url), None)

    page.wait_for_function("() => true")  # the frames attach as they load
    for _ in range(100):
        if content() is not None:
            break
        page.wait_for_timeout(200)
    frame = content()
    assert frame is not None, [f.url for f in page.frames]
    frame.wait_for_load_state("load")
    assert frame.evaluate("document.title") == "netharvest test site"
    images = frame.evaluate(
        "Array.from(document.images).map(i => [i.currentSrc, i.complete && i.naturalWidth > 0, i.id])"
    )
    assert all("/replay/all/" in src for src, _, _ in images)  # from the archive, not the live site
    # Every image a crawler can find replays; the one the site's script builds at run time (js/app.js) was never
    # crawled: it is the gap page QA exists to find (tests/orchestrator/test_pageqa_stack.py patches it).
    found = [(src, ok) for src, ok, id_ in images if id_ != "js-banner"]
    assert found and all(ok for _, ok in found), images
    assert [ok for src, ok, id_ in images if id_ == "js-banner"] == [False], images
    shot(page, "replay-job-pages")

    # Inside the framed replay, pywb's rewriting keeps the page's requests in the archive, and the frames above
    # it (pywb's, then the web UI's page) allow no fetch of their own.
    attempts = frame.evaluate(ATTEMPTS)
    assert "UI" not in attempts.values(), attempts
    assert attempts["topFetch"] == "blocked", attempts

    # The archived bytes as they were (id_: no rewriting, the page's own scripts run unchanged on the web UI's
    # origin): the replay response's policy alone stops them, and the page's live links are not followed.
    raw = page.context.new_page()
    home = replay_crawls.site_urls[0]
    stamp = next(c.timestamp for c in captures_of(home) if c.job_id == job.pk)
    raw.goto(f"{live_server.url}/replay/all/{stamp}id_/{home}")
    assert raw.title() == "netharvest test site"
    assert raw.evaluate(ATTEMPTS) == {
        "fetch": "blocked",
        "parentFetch": "blocked",
        "topFetch": "blocked",
        "popup": "cut off",
    }
    assert raw.evaluate("Array.from(document.images).every(i => i.naturalWidth === 0)")  # no live leak

    # A page clicked far down a long list replays in view: the replay pane stays beside the list as it scrolls.
    page.set_viewport_size({"width": 1400, "height": 420})
    last = page.locator("#pages a.replay-link").last
    last.scroll_into_view_if_needed()
    last.click()
    box = page.evaluate("(() => { const r = document.querySelector('iframe.replay-frame').getBoundingClientRect(); "
                        "return [r.top, r.bottom, window.scrollY, window.innerHeight]; })()")  # fmt: skip
    assert box[2] > 0 and 0 <= box[0] < box[3], box  # scrolled down, and the frame's top is on screen
