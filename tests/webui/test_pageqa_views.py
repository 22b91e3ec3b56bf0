"""The job's page QA page: pages worst first, missing URLs by host and type, thumbnails behind the login, the
curator's good/bad marks (kept with the job, shown in the domain's history), and who may run a pass or a patch.

The pass's findings are written here as rows (the real pass, with pywb and Chromium, is
tests/orchestrator/test_pageqa_stack.py); this tests the page a curator reads them in."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from orchestrator.harvest.models import JobStatus, MissingResource, QAMark, QAPage, QARun
from orchestrator.harvest.models.archive import IndexState
from orchestrator.harvest.qa import score as qascore
from tests.orchestrator import factories
from tests.orchestrator.conftest import purge_queues  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db

SITE = "http://127.0.0.1:8001/"


@pytest.fixture
def qa_run(settings, tmp_path):
    settings.NETHARVEST_QA_DIR = tmp_path / "qa"
    factories.domain("127.0.0.1")
    job = factories.job(domains=["127.0.0.1"], status=JobStatus.DONE)
    job.spec["domains"][0]["seeds"] = [SITE]
    job.save(update_fields=["spec"])
    factories.archive_file(job, f"{job.pk}-a.warc.gz", IndexState.CLEANED)
    run = QARun.objects.create(
        job=job, trigger=QARun.AUTO, status="DONE", pages_planned=3, pages_done=3, missing_urls=3, live_compared=True
    )
    pages = {
        key: QAPage.objects.create(run=run, timestamp="20261124000000", replay_status=200, **fields)
        for key, fields in {
            "alike": {
                "url": SITE + "about.html",
                "title": "About",
                "screenshot_similarity": 0.99,
                "text_similarity": 1.0,
            },
            "gaps": {
                "url": SITE,
                "is_seed": True,
                "title": "Home",
                "missing_count": 2,
                "screenshot_similarity": 0.7,
                "text_similarity": 0.95,
            },
            "one": {"url": SITE + "gallery.html", "title": "Gallery", "missing_count": 1, "screenshot_similarity": 0.8},
        }.items()
    }
    for page, url, kind in (
        (pages["gaps"], SITE + "hidden/banner.png", "image"),
        (pages["gaps"], "http://cdn.example.org/f.woff", "font"),
        (pages["one"], SITE + "hidden/banner.png", "image"),
        (pages["one"], SITE + "js/late.js", "script"),
    ):
        MissingResource.objects.create(page=page, run=run, url=url, host=url.split("/")[2], resource_type=kind)
    thumb = settings.NETHARVEST_QA_DIR / str(job.pk) / str(run.pk) / f"{pages['gaps'].pk}-replay.png"
    thumb.parent.mkdir(parents=True)
    thumb.write_bytes(qascore.thumbnail(_png()))
    QAPage.objects.filter(pk=pages["gaps"].pk).update(replay_thumb=str(thumb.relative_to(settings.NETHARVEST_QA_DIR)))
    return job, run, pages


def _png() -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (1280, 800), (200, 220, 240)).save(out, "PNG")
    return out.getvalue()


def test_pages_worst_first_and_missing_by_host(viewer, qa_run):
    job, run, pages = qa_run
    text = viewer.get(reverse("jobs:qa", args=[job.pk])).content.decode()
    order = re.findall(r'class="qa-page[^"]*" data-url="([^"]+)"', text)
    assert order == [SITE, SITE + "gallery.html", SITE + "about.html"]
    groups = text[text.index('id="missing-groups"') : text.index("Pages, worst first")]
    rows = re.findall(r"<tr><td>([^<]+)</td><td>([^<]+)</td><td>([^<]+)</td>", groups)
    assert rows[0][:2] == ("127.0.0.1:8001", "image") and rows[0][2] == SITE + "hidden/banner.png"
    assert ("cdn.example.org", "font", "http://cdn.example.org/f.woff") in rows
    assert "Mark good" not in text and "qa-patch" not in text  # a viewer reads, a curator acts
    assert f"/replay/harvest-{job.harvest_id}/20261124000000/{SITE}" in text  # one click to replay


def test_thumbnails_need_the_login(client, viewer, qa_run):
    job, run, pages = qa_run
    url = reverse("jobs:qa-thumb", args=[job.pk, pages["gaps"].pk, "replay"])
    assert client.get(url).status_code == 302
    response = viewer.get(url)
    assert response.status_code == 200 and b"".join(response.streaming_content).startswith(b"\x89PNG")
    assert viewer.get(reverse("jobs:qa-thumb", args=[job.pk, pages["gaps"].pk, "live"])).status_code == 404
    assert viewer.get(reverse("jobs:qa-thumb", args=[job.pk, pages["alike"].pk, "other"])).status_code == 404


def test_a_curator_marks_pages_and_the_domain_history_shows_it(curator, viewer, qa_run):
    job, run, pages = qa_run
    text = curator.get(reverse("jobs:qa", args=[job.pk])).content.decode()
    assert "Mark good" in text and 'id="qa-patch"' in text and "3 missing URL(s)" in text
    mark = reverse("jobs:qa-mark", args=[job.pk])
    curator.post(mark, {"url": SITE, "verdict": "bad", "note": "banner missing"})
    curator.post(mark, {"url": SITE + "about.html", "verdict": "good"})
    curator.post(mark, {"url": SITE, "verdict": "bad", "note": "banner missing, patch asked"})  # replaces
    assert viewer.post(mark, {"url": SITE, "verdict": "good"}).status_code == 403
    assert curator.post(mark, {"url": "http://elsewhere/", "verdict": "good"}).status_code == 302
    assert curator.post(mark, {"url": SITE, "verdict": "meh"}).status_code == 302
    marks = {m.url: m for m in QAMark.objects.filter(job=job)}
    assert set(marks) == {SITE, SITE + "about.html"}
    assert marks[SITE].verdict == "bad" and marks[SITE].note == "banner missing, patch asked"
    assert marks[SITE].domain.name == "127.0.0.1" and marks[SITE].marked_by == "curator"
    domain_page = viewer.get(reverse("webui:domain", args=["127.0.0.1"])).content.decode()
    history = domain_page[domain_page.index('id="qa-marks"') :]
    assert "banner missing, patch asked" in history and f"/jobs/{job.pk}/qa/" in history


def test_run_and_patch_need_the_curator_role(viewer, curator, qa_run, purge_queues):  # noqa: F811
    job, run, pages = qa_run
    assert viewer.post(reverse("jobs:qa-run", args=[job.pk])).status_code == 403
    assert viewer.post(reverse("jobs:qa-patch", args=[job.pk])).status_code == 403
    curator.post(reverse("jobs:qa-run", args=[job.pk]))
    assert QARun.objects.filter(job=job, trigger=QARun.REQUESTED, requested_by="curator").exists()
    curator.post(reverse("jobs:qa-patch", args=[job.pk]))
    patch_job = job.patched_by.get()
    assert sorted(s for d in patch_job.spec["domains"] for s in d["seeds"]) == [
        SITE + "hidden/banner.png",
        SITE + "js/late.js",
        "http://cdn.example.org/f.woff",
    ]
    text = curator.get(reverse("jobs:job", args=[patch_job.pk])).content.decode()
    assert f"/jobs/{job.pk}/qa/" in text  # the patch job says what it patches
