"""QA figures through the API: the JobStats of a real crawl's job, summed per job, run and year, as the /qa/
pages show them (orchestrator/harvest/qa/stats.py)."""

from __future__ import annotations

import pytest

from orchestrator.harvest.models import JobStats
from orchestrator.harvest.qa import stats
from tests.orchestrator.crawled_job import DOMAINS, make_job, record

pytestmark = pytest.mark.django_db


def test_job_run_and_year_figures(viewer):
    job = record(make_job())
    row = JobStats.objects.get(job=job)
    figures = viewer.get(f"/jobs/{job.pk}/stats").json()
    assert figures["label"] == f"job {job.pk}" and figures["jobs"] == 1
    assert figures["objects"] == row.objects_count and figures["bytes"] == row.bytes_count
    assert figures["domains"] == len(DOMAINS) and figures["jobs_without_reports"] == 0
    assert figures["mime_types"] and sum(v[0] for v in figures["mime_types"].values()) == sum(
        v[0] for v in row.mime_types.values()
    )
    assert figures["status_codes"] == {k: v for k, v in sorted(row.status_codes.items(), key=lambda kv: -kv[1])}
    assert figures["stop_reasons"] == row.stop_reasons and sum(row.stop_reasons.values()) == len(DOMAINS)
    assert {d for d, _, _ in figures["top_domains"]} == set(DOMAINS)
    assert "selective" in figures["kinds"] and figures["mime_categories"]["text"][0] > 0

    runs = viewer.get(f"/definitions/{job.harvest_id}/runs").json()
    assert runs == [{"run": job.harvest_run, "jobs": 1, "objects": row.objects_count, "bytes": row.bytes_count}]
    run = viewer.get(f"/definitions/{job.harvest_id}/runs/{job.harvest_run}/stats").json()
    assert run["objects"] == row.objects_count and run["label"].endswith(f"run {job.harvest_run}")
    year = viewer.get(f"/qa/years/{row.year}").json()
    # Rows of the year made by other tests' committed stacks may exist: the year is every job of it.
    in_year = JobStats.objects.filter(year=row.year)
    assert year["jobs"] == in_year.count() and year["bytes"] == sum(s.bytes_count for s in in_year)
    assert viewer.get(f"/qa/years/{row.year - 1}").json()["jobs"] == JobStats.objects.filter(year=row.year - 1).count()
    assert year["objects"] == stats.year_figures(row.year).objects
    assert viewer.get("/jobs/999999/stats").status_code == 404
