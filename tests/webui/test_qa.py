"""QA statistics pages: per job, per run (compared with the previous run), per year (compared with the
year before), inline SVG charts, CSV export, permissions. Figures from a real harvest."""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from orchestrator.harvest.models import Job, JobStats
from tests.orchestrator import factories
from tests.orchestrator.crawled_job import DOMAINS, make_job, previous_harvester, record

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    cache.clear()  # summed figures are cached by scope (e.g. the year), across test databases


@pytest.fixture
def runs() -> tuple[Job, Job, Job]:
    news = factories.selective_definition("news")
    # the first as recorded before issue 16 (figures read from its text reports), the others with the figures as data
    first, second = record(make_job(news), previous_harvester()), record(make_job(news))
    for model in (Job, JobStats):
        model.objects.filter(**{"pk" if model is Job else "job": second.pk}).update(harvest_run=2)
    last_year = record(make_job(factories.snapshot_definition("broad")))
    Job.objects.filter(pk=last_year.pk).update(ended_at=datetime(2025, 6, 1, tzinfo=UTC))
    JobStats.objects.filter(job=last_year).update(year=2025)
    return first, second, last_year


def test_pages_need_login_and_permission(runs: tuple[Job, Job, Job]) -> None:
    first = runs[0]
    nobody = Client()
    nobody.force_login(User.objects.create_user("nobody"))
    for url in (
        reverse("qa:index"),
        reverse("qa:job", args=[first.pk]),
        reverse("qa:harvest", args=[first.harvest_id]),
        reverse("qa:run", args=[first.harvest_id, 1]),
        reverse("qa:year", args=[2025]),
    ):
        assert Client().get(url).status_code == 302, url
        assert nobody.get(url).status_code == 403, url


def test_job_page_charts_and_tables(viewer: Client, runs: tuple[Job, Job, Job]) -> None:
    first = runs[0]
    stats = JobStats.objects.get(job=first)
    text = viewer.get(reverse("qa:job", args=[first.pk])).content.decode()
    charts = re.findall(r"<svg.*?</svg>", text, re.S)
    assert len(charts) >= 10
    for chart in charts:  # well-formed SVG, labels escaped
        assert ET.fromstring(chart).tag == "{http://www.w3.org/2000/svg}svg"
    for title in ("MIME categories", "HTTP status codes", "TLDs", "Domain size", "Top domains", "Selective vs broad"):
        assert title in text
    assert "text/html" in text and ">fr<" in text and ">dk<" in text
    for name in DOMAINS:
        assert name in text
    assert f"{stats.mime_types['text/html'][0]:,}".replace(",", "\u202f") in text
    assert "spool" in text  # says where the MIME/status figures come from
    assert "figures from: JobResult" in viewer.get(reverse("qa:job", args=[runs[1].pk])).content.decode()


def test_run_page_compares_with_the_previous_run_and_exports_csv(viewer: Client, runs: tuple[Job, Job, Job]) -> None:
    first, second, _ = runs
    url = reverse("qa:run", args=[first.harvest_id, 2])
    text = viewer.get(url).content.decode()
    assert "compared with news run 1" in text and "0%" in text
    response = viewer.get(url, {"format": "csv"})
    assert response["Content-Type"].startswith("text/csv")
    assert 'filename="qa-' in response["Content-Disposition"] and "run-2-vs-1" in response["Content-Disposition"]
    table = list(csv.reader(io.StringIO(response.content.decode())))
    assert table[0] == ["section", "key", "measure", "news run 1", "news run 2", "change"]
    objects = JobStats.objects.get(job=second).objects_count
    assert ["totals", "objects", "count", str(objects), str(objects), "0%"] in table
    alone = viewer.get(url, {"compare": ""}).content.decode()
    assert "compared with" not in alone
    assert viewer.get(reverse("qa:run", args=[first.harvest_id, 9])).status_code == 404
    assert viewer.get(url, {"compare": "abc"}).status_code == 404
    runs_page = viewer.get(reverse("qa:harvest", args=[first.harvest_id])).content.decode()
    assert "run 1" in runs_page and "run 2" in runs_page and "<svg" in runs_page


def test_year_page_compares_with_the_year_before(viewer: Client, runs: tuple[Job, Job, Job]) -> None:
    year = datetime.now(UTC).year
    index = viewer.get(reverse("qa:index")).content.decode()
    assert f"/qa/year/{year}/" in index and "/qa/year/2025/" in index and "news" in index
    text = viewer.get(reverse("qa:year", args=[year])).content.decode()
    if year - 1 == 2025:
        assert "compared with 2025" in text
    export = viewer.get(reverse("qa:year", args=[year]), {"compare": "2025", "format": "csv"})
    table = list(csv.reader(io.StringIO(export.content.decode())))
    rows = {(r[0], r[1], r[2]): r[3:] for r in table[1:]}
    assert rows[("totals", "jobs", "count")] == ["1", "2", "+100.0%"]
    assert rows[("harvest kind", "broad (snapshot)", "objects")][1] == "0"
    assert int(rows[("harvest kind", "selective", "objects")][1]) > 0
    assert viewer.get(reverse("qa:year", args=[1999])).status_code == 404
    record(make_job(runs[0].harvest))  # ends now: the cached sums of this year miss it, and say so
    assert "1 job recorded since is not counted yet" in viewer.get(reverse("qa:year", args=[year])).content.decode()
