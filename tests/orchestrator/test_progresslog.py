"""The progress series behind the live charts: heartbeats through intake, thinned, pruned, bucketed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from orchestrator.harvest.jobs import intake, progresslog
from orchestrator.harvest.models import JobStatus, ProgressSample
from tests.orchestrator import factories

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)


def test_intake_keeps_one_sample_per_interval_and_only_for_running_jobs():
    job = factories.job(domains=["a.dk"], status=JobStatus.SUBMITTED)
    for n in (1, 2, 3):  # three heartbeats within a second: the first is kept, the others only update the job
        assert intake.record_progress({"job_id": job.pk, "at": "2026-11-24T10:00:00Z", "uris_done": n, "uri_rate": 2.5})
    samples = list(ProgressSample.objects.filter(job=job))
    assert [s.figures["uris_done"] for s in samples] == [1]
    assert samples[0].figures["uri_rate"] == 2.5
    job.refresh_from_db()
    assert job.progress["uris_done"] == 3

    ended = factories.job(domains=["b.dk"], status=JobStatus.DONE)
    assert not intake.record_progress({"job_id": ended.pk, "at": "2026-11-24T10:00:00Z", "uris_done": 9})
    assert not ProgressSample.objects.filter(job=ended).exists()


def test_samples_are_thinned_and_pruned_by_time():
    job = factories.job(domains=["a.dk"], status=JobStatus.STARTED)
    kept = [progresslog.record(job.pk, {"uris_done": i}, T0 + timedelta(seconds=5 * i)) for i in range(7)]
    # heartbeats every 5 s, samples at least SAMPLE_EVERY_S (15 s) apart: 0 s, 15 s, 30 s
    assert kept == [True, False, False, True, False, False, True]
    later = T0 + timedelta(seconds=progresslog.KEEP_S + 100)
    assert progresslog.record(job.pk, {"uris_done": 99}, later)
    assert [s.figures["uris_done"] for s in ProgressSample.objects.filter(job=job)] == [99]  # the week-old went


def test_figures_keep_numbers_and_the_continuous_section():
    figures = progresslog.figures_of(
        {
            "uris_done": 10,
            "uri_rate": 1.5,
            "paused": True,
            "alerts": ["x"],
            "domains": {"a.dk": {"objects": 1}},
            "continuous": {"fetch_rate": 4.2, "budget_per_s": 5.0, "changed": 3, "freshness": None, "queues": {}},
        }
    )
    assert figures == {"uris_done": 10, "uri_rate": 1.5, "c_fetch_rate": 4.2, "c_budget_per_s": 5.0, "c_changed": 3}


def test_series_means_per_bucket_and_leaves_gaps_out():
    job = factories.job(domains=["a.dk"], status=JobStatus.STARTED)
    for i, rate in enumerate([1.0, 3.0, 10.0, 20.0]):
        progresslog.record(
            job.pk, {"uri_rate": rate, **({"uris_done": i} if i % 2 else {})}, T0 + timedelta(seconds=30 * i)
        )
    series = progresslog.series(job.pk, T0, T0 + timedelta(seconds=120), points=2)  # 60 s buckets
    assert series.values["uri_rate"] == [2.0, 15.0]
    assert series.values["uris_done"] == [1.0, 3.0]
    assert series.times == [T0 + timedelta(seconds=30), T0 + timedelta(seconds=90)]  # each bucket's latest
    assert progresslog.series(job.pk, T0 - timedelta(hours=2), T0 - timedelta(hours=1)).times == []
