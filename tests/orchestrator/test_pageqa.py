"""Page QA's parts on their own: the scores (SSIM, shingles), grouping and ordering, reading a replay address,
a hanging page cut at its time limit (real Chromium), automatic scheduling once a job's WARCs are stored, and the
patch job's spec (same template and dedup, 0 hops, each URL under its domain; one patch at a time). The whole path
through real pywb and a real harvester is tests/orchestrator/test_pageqa_stack.py."""

from __future__ import annotations

import io
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.management import call_command
from django.db import connections
from PIL import Image, ImageDraw

from orchestrator.harvest.jobs import patch
from orchestrator.harvest.models import ArchiveFile, Job, JobStatus, MissingResource, QAPage, QARun
from orchestrator.harvest.models.archive import IndexState
from orchestrator.harvest.qa import pageqa
from orchestrator.harvest.qa import score as qascore
from orchestrator.harvest.qa.browser import PageLoader, archived_url
from tests.orchestrator import factories
from tests.webui.browserhelp import CHROMIUM, MISSING, REQUIRED


def png(draw=None, size=(640, 400)) -> bytes:
    image = Image.new("RGB", size, (250, 250, 250))
    pen = ImageDraw.Draw(image)
    for y in range(20, size[1], 40):  # lines of "text"
        pen.rectangle([20, y, size[0] - 40, y + 12], fill=(40, 40, 40))
    if draw:
        draw(pen)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def test_screenshot_similarity_orders_identical_damaged_and_unrelated():
    page = png()
    banner = png(lambda pen: pen.rectangle([100, 60, 460, 150], fill=(24, 104, 160)))
    noise = Image.effect_noise((640, 400), 90).convert("RGB")
    out = io.BytesIO()
    noise.save(out, "PNG")
    same = qascore.screenshot_similarity(page, page)
    damaged = qascore.screenshot_similarity(banner, page)
    unrelated = qascore.screenshot_similarity(page, out.getvalue())
    assert same == 1.0
    assert 0.5 < damaged < 0.98  # one banner gone: clearly less than identical, far from unrelated
    assert unrelated < 0.3 < damaged
    bigger = io.BytesIO()
    Image.open(io.BytesIO(page)).resize((1280, 800)).save(bigger, "PNG")
    assert qascore.screenshot_similarity(page, bigger.getvalue()) > 0.95  # scaled to one shape


def test_text_similarity_by_shingles():
    text = "The curators browse every selective harvest before it is accepted by the library"
    assert qascore.text_similarity(text, text) == 1.0
    assert qascore.text_similarity("", "") == 1.0
    assert qascore.text_similarity(text, "") == 0.0
    assert qascore.text_similarity(text, text.upper()) == 1.0  # case does not count
    one_word_changed = qascore.text_similarity(text, text.replace("selective", "broad"))
    assert 0.5 < one_word_changed < 1.0
    assert qascore.text_similarity(text, "Something else entirely, about weather") == 0.0


def test_thumbnail_is_a_small_png():
    thumb = qascore.thumbnail(png(size=(1280, 800)))
    image = Image.open(io.BytesIO(thumb))
    assert image.format == "PNG" and image.size == (320, 200)


def test_missing_resources_grouped_by_host_then_type_most_first():
    m = qascore.Missing
    groups = qascore.group_missing(
        [
            m("http://cdn.example/a.png", "cdn.example", "image", "http://site/"),
            m("http://cdn.example/b.png", "cdn.example", "image", "http://site/"),
            m("http://cdn.example/a.png", "cdn.example", "image", "http://site/news/"),
            m("http://cdn.example/s.css", "cdn.example", "stylesheet", "http://site/"),
            m("http://site/x.js", "site", "script", "http://site/"),
        ]
    )
    assert [g["host"] for g in groups] == ["cdn.example", "site"]
    cdn = groups[0]
    assert cdn["count"] == 3
    assert [t["type"] for t in cdn["types"]] == ["image", "stylesheet"]
    assert cdn["types"][0]["urls"][0] == {
        "url": "http://cdn.example/a.png",
        "pages": ["http://site/", "http://site/news/"],
    }


def test_worst_first():
    pages = [
        ("ok", 0, False, (0.99, 1.0)),
        ("many", 5, False, (None, None)),
        ("few", 1, False, (0.5, 0.9)),
        ("few-alike", 1, False, (0.95, 0.98)),
        ("broken", 0, True, (None, None)),
    ]
    order = sorted(pages, key=lambda p: qascore.worst_first(p[1], p[2], p[3], p[0]))
    assert [p[0] for p in order] == ["broken", "many", "few", "few-alike", "ok"]


def test_archived_url_of_a_replay_address():
    assert (
        archived_url("http://127.0.0.1:8090/replay/harvest-3/20261124050000im_/http://a.fr/x.png?v=1")
        == "http://a.fr/x.png?v=1"
    )
    assert archived_url("http://r/replay/all/20261124mp_/https://a.fr/") == "https://a.fr/"
    assert archived_url("http://r/replay/all/http://a.fr/") == "http://a.fr/"
    assert archived_url("http://r/static/wombat.js") is None


class _Hostile(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/never.png":
            time.sleep(30)
            return
        bodies = {
            "/spin": b"<html><head><title>spin</title></head><body>x<script>while(true){}</script></body></html>",
            "/stall": b"<html><head><title>stall</title></head><body>y<img src='/never.png'></body></html>",
        }
        body = bodies.get(self.path, b"")
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.mark.skipif(bool(MISSING) and not REQUIRED, reason=MISSING)
def test_a_page_that_hangs_is_cut_at_its_time_limit_and_the_next_one_loads():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with PageLoader(timeout_s=3, executable=CHROMIUM) as browser:
            spin = browser.load(base + "/spin")  # a script that never yields
            stall = browser.load(base + "/stall")  # an image that never comes
            after = browser.load(base + "/stall")
    finally:
        server.shutdown()
    assert spin.timed_out and "did not finish loading within 3 s" in spin.errors[0]
    assert stall.timed_out and stall.title == "stall" and stall.text == "y" and stall.screenshot
    assert after.timed_out and after.status == 200  # the browser survived both


# --- scheduling and patching (database) -----------------------------------------------------------------


def stored_job(definition=None, status=JobStatus.DONE) -> Job:
    factories.domain("127.0.0.1")
    job = factories.job(definition, domains=["127.0.0.1"], status=status)
    job.spec["domains"][0]["seeds"] = ["http://127.0.0.1:8001/"]
    Job.objects.filter(pk=job.pk).update(spec=job.spec)
    job.refresh_from_db()
    for n, state in enumerate((IndexState.BACKED_UP, IndexState.INDEXED)):
        factories.archive_file(job, f"{job.pk}-w{n}.warc.gz", state)
    return job


@pytest.mark.django_db
def test_the_automatic_pass_waits_for_every_warc_and_comes_once():
    job = stored_job()
    assert pageqa.after_stored(job.pk) is None  # one WARC still in the chain
    ArchiveFile.objects.filter(job=job).update(index_state=IndexState.CLEANED)
    run = pageqa.after_stored(job.pk)
    assert run is not None and run.trigger == QARun.AUTO and run.status == "QUEUED"
    assert pageqa.after_stored(job.pk) is None  # the other worker's call finds it made
    assert QARun.objects.filter(job=job).count() == 1
    off = stored_job(factories.selective_definition("no qa", page_qa=False))
    ArchiveFile.objects.filter(job=off).update(index_state=IndexState.CLEANED)
    assert pageqa.after_stored(off.pk) is None
    broad = stored_job(factories.snapshot_definition("broad"))
    ArchiveFile.objects.filter(job=broad).update(index_state=IndexState.CLEANED)
    assert pageqa.after_stored(broad.pk) is None  # on demand only
    assert pageqa.request(broad, "claire").trigger == QARun.REQUESTED


@pytest.mark.django_db
def test_a_pass_is_refused_without_a_stored_warc():
    job = stored_job()
    ArchiveFile.objects.filter(job=job).update(index_state=IndexState.INDEXED)
    with pytest.raises(pageqa.QAError, match="no stored WARC yet"):
        pageqa.request(job, "claire")


def finished_run(job: Job, missing: dict[str, str]) -> QARun:
    """A finished pass with ``missing`` (URL → type) found on the job's seed page."""
    run = QARun.objects.create(job=job, trigger=QARun.REQUESTED, status="DONE", missing_urls=len(missing))
    page = QAPage.objects.create(run=run, url="http://127.0.0.1:8001/", timestamp="20261124000000", is_seed=True)
    MissingResource.objects.bulk_create(
        MissingResource(page=page, run=run, url=u, host=u.split("/")[2], resource_type=t) for u, t in missing.items()
    )
    return run


@pytest.mark.django_db
def test_patch_job_fetches_exactly_the_missing_urls(purge_queues, capsys):
    job = stored_job()
    with pytest.raises(patch.PatchError, match="no finished QA pass"):
        patch.create_patch_job(job, "claire")
    finished_run(job, {})
    with pytest.raises(patch.PatchError, match="nothing missing"):
        patch.create_patch_job(job, "claire")
    finished_run(job, {"http://127.0.0.1:8001/hidden/banner.png": "image", "http://cdn.example.org/font.woff": "font"})
    call_command("jobs", "patch", str(job.pk))
    assert "0 hops" in capsys.readouterr().out
    new = Job.objects.get(patches=job)
    assert new.status == JobStatus.SUBMITTED and new.harvest_id == job.harvest_id and new.channel_id == job.channel_id
    assert new.spec["job_id"] == new.pk and new.spec["template"] == job.spec["template"]
    assert new.spec["settings"] == {**job.spec["settings"], "max_hops": 0, "max_embed_hops": 0}
    assert new.spec.get("dedup_index") == job.spec.get("dedup_index")
    (domain,) = new.spec["domains"]  # the off-site font goes with the page that needed it
    assert domain["name"] == "127.0.0.1" and sorted(domain["seeds"]) == [
        "http://127.0.0.1:8001/hidden/banner.png",
        "http://cdn.example.org/font.woff",
    ]
    assert list(new.domains.values_list("configuration_id", flat=True)) == list(
        job.domains.values_list("configuration_id", flat=True)
    )
    with pytest.raises(patch.PatchError, match=f"job {new.pk} already patches job {job.pk}"):
        patch.create_patch_job(job, "claire")  # a double click makes one job
    # Once the patch job's WARCs are stored, the job it patched gets a new pass, once.
    Job.objects.filter(pk=new.pk).update(status=JobStatus.DONE)
    factories.archive_file(new, f"{new.pk}-w.warc.gz", IndexState.CLEANED)
    again = pageqa.after_stored(new.pk)
    assert again.job_id == job.pk and again.trigger == QARun.AFTER_PATCH and again.patch_job_id == new.pk
    assert pageqa.after_stored(new.pk) is None


@pytest.mark.django_db
def test_the_sweep_starts_passes_the_hook_missed_and_the_cli_queues_one(capsys):
    job = stored_job()
    ArchiveFile.objects.filter(job=job).update(index_state=IndexState.CLEANED)
    Job.objects.filter(pk=job.pk).update(ended_at=job.created)
    assert pageqa.sweep() == 1  # the chain's hook never ran (a crash between its step and the scheduling)
    assert QARun.objects.filter(job=job, trigger=QARun.AUTO).count() == 1
    assert pageqa.sweep() == 0
    call_command("jobs", "qa", str(job.pk))
    assert "queued for the qa worker" in capsys.readouterr().out
    assert QARun.objects.filter(job=job, trigger=QARun.REQUESTED).count() == 1


class _SlowReplay(BaseHTTPRequestHandler):
    """A replay service that takes a second per answer, and has nothing."""

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        time.sleep(1)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.skipif(bool(MISSING) and not REQUIRED, reason=MISSING)
def test_a_pass_stops_between_pages_when_the_worker_shuts_down_and_is_left_queued(settings, tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SlowReplay)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.NETHARVEST_REPLAY_URL = f"http://127.0.0.1:{server.server_address[1]}"
    settings.NETHARVEST_QA_LIVE = False
    settings.NETHARVEST_QA_CHROMIUM = CHROMIUM
    job = stored_job()
    cdx = tmp_path / "a.cdx"
    cdx.write_text(
        " CDX N b a m s k r M S V g\n"
        + "".join(
            f"127,0,0,1:8001)/p{n}.html 20261124000000 http://127.0.0.1:8001/p{n}.html text/html 200 AAAA - - 100 0 "
            "w.warc.gz\n"
            for n in range(5)
        )
    )
    ArchiveFile.objects.filter(job=job).update(index_state=IndexState.CLEANED, cdx_path=str(cdx))
    assert len(pageqa.targets(job)) == 5
    run = pageqa.request(job, "claire")
    done: list[QARun | None] = []

    def work() -> None:
        try:
            done.append(pageqa.run_pass(run.pk))
        finally:
            connections.close_all()  # this thread's own database connection

    worker = threading.Thread(target=work)
    try:
        worker.start()
        deadline = time.monotonic() + 60
        while QARun.objects.get(pk=run.pk).status != "RUNNING" and time.monotonic() < deadline:
            time.sleep(0.1)
        pageqa.request_stop()  # what the qa worker's shutdown signal does
        worker.join(120)
        assert pageqa.run_pass(run.pk) is None  # a stopping worker takes no run
    finally:
        pageqa._stopping.clear()
        server.shutdown()
    stopped = done[0]
    assert stopped.status == "QUEUED" and stopped.started_at is None and not stopped.pages.exists()
    assert pageqa.claim(run.pk)  # the next worker takes it


def test_only_a_not_archived_4xx_is_a_gap_in_the_archive():
    from orchestrator.harvest.qa.browser import Failed, PageLoad

    base = "http://127.0.0.1:8090/replay/harvest-1/20261124000000"
    load = PageLoad(
        f"{base}/http://a.fr/",
        status=200,
        failed=[
            Failed(f"{base}im_/http://a.fr/gone.png", "image", 404, archived=False),  # pywb: not in the archive
            Failed(f"{base}im_/http://a.fr/gone.png", "image", 404, archived=False),  # asked twice: once
            Failed(f"{base}im_/http://a.fr/was-404.png", "image", 404, archived=True),  # the site's own 404, captured
            Failed(f"{base}cs_/http://a.fr/s.css", "stylesheet", 503, archived=False),  # replay failing
            Failed(f"{base}js_/http://a.fr/x.js", "script", None, archived=False),  # no answer
            Failed(f"{base}mp_/http://a.fr/", "document", 404, archived=False),  # the page itself
        ],
    )
    assert pageqa.missing_of(load, "http://a.fr/") == [
        qascore.Missing("http://a.fr/gone.png", "a.fr", "image", "http://a.fr/")
    ]
    errors = pageqa._replay_errors(load, "http://a.fr/")
    assert any("replay failed (503)" in e and "s.css" in e for e in errors)
    assert any(e.startswith("no answer for") and "x.js" in e for e in errors)


@pytest.mark.django_db
@pytest.mark.parametrize("browser", ["missing", "/bin/false"])
def test_a_pass_without_a_browser_fails_with_one_clear_line(settings, tmp_path, caplog, browser):
    """No Chromium (or one that does not start): the run fails with one line saying what and how to fix it,
    before any page is tried, and the log holds that line, not a traceback."""
    settings.NETHARVEST_QA_CHROMIUM = str(tmp_path / "no-chromium") if browser == "missing" else browser
    settings.NETHARVEST_QA_LIVE = False
    job = stored_job()
    cdx = tmp_path / "a.cdx"
    cdx.write_text(
        " CDX N b a m s k r M S V g\n127,0,0,1:8001)/ 20261124000000 http://127.0.0.1:8001/ text/html "
        "200 AAAA - - 100 0 w.warc.gz\n"
    )
    ArchiveFile.objects.filter(job=job).update(index_state=IndexState.CLEANED, cdx_path=str(cdx))
    run = pageqa.run_pass(pageqa.request(job, "claire").pk)
    assert run.status == "FAILED" and not run.pages.exists() and run.ended_at is not None
    assert "\n" not in run.error
    if browser == "missing":
        assert run.error.startswith(f"Chromium not found at {settings.NETHARVEST_QA_CHROMIUM}")
        assert "apt-get install chromium" in run.error
    else:
        assert run.error.startswith("Chromium at /bin/false failed to start: ")
    failures = [r for r in caplog.records if f"QA run {run.pk}" in r.getMessage()]
    assert len(failures) == 1 and failures[0].exc_info is None
