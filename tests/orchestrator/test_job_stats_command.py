"""``netharvest job-stats``: catches up ended jobs without statistics, retries unreadable reports."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from orchestrator.harvest.models import JobStats, JobStatus
from tests.orchestrator.crawled_job import make_job, record

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("job_stats", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_computes_missing_statistics_and_retries_unreadable_reports() -> None:
    job = record(make_job())
    expected = JobStats.objects.get(job=job)
    JobStats.objects.all().delete()
    ended_without_files = make_job(status=JobStatus.FAILED)
    running = make_job(status=JobStatus.STARTED)
    out, err = run()
    assert "statistics computed for 2 job(s); 1 without readable reports" in out
    assert f"job {ended_without_files.pk}: " in err
    again = JobStats.objects.get(job=job)
    assert (again.mime_types, again.status_codes, again.tlds) == (
        expected.mime_types,
        expected.status_codes,
        expected.tlds,
    )
    assert not JobStats.objects.filter(job=running).exists()
    assert "computed for 0 job(s)" in run()[0]
    assert "computed for 1 job(s); 1 without" in run("--retry-reports")[0]
    assert "computed for 1 job(s); 0 without" in run(str(job.pk))[0]
    with pytest.raises(CommandError, match=f"no ended job {running.pk}"):
        run(str(running.pk))
