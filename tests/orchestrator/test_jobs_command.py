from functools import partial

import pytest
from django.core.management import CommandError

from orchestrator.harvest.models import JobControl, JobStatus
from tests.orchestrator import factories
from tests.orchestrator.commands import command_output

pytestmark = pytest.mark.django_db


run = partial(command_output, "jobs")


def test_list_filters_and_aligns():
    done = factories.job(domains=["a.dk"], status=JobStatus.DONE)
    failed = factories.job(factories.selective_definition("other"), domains=["b.dk"], status=JobStatus.FAILED)
    text = run("list")
    header, rule, *rows = text.splitlines()
    assert header.split() == [
        "id",
        "harvest",
        "run",
        "channel",
        "status",
        "domains",
        "created",
        "(UTC)",
        "ended",
        "(UTC)",
    ]
    assert len(rows) == 2 and rows[0].startswith(str(failed.pk))
    ids = [line.split()[0] for line in run("list", "--status", "FAILED").splitlines()[2:]]
    assert ids == [str(failed.pk)] and str(done.pk) not in ids
    assert "other" in run("list", "--harvest", "other")


def test_show_prints_domains_files_and_spec():
    job = factories.job(domains=["a.dk"], status=JobStatus.STARTED)
    text = run("show", str(job.pk), "--spec")
    assert f"job {job.pk}: news run 1, channel focused, STARTED" in text
    assert '"harvest_name": "news"' in text


def test_unknown_job_and_wrong_states_are_clear_errors():
    with pytest.raises(CommandError, match="no job 424242"):
        run("show", "424242")
    job = factories.job(domains=["a.dk"], status=JobStatus.DONE)
    with pytest.raises(CommandError, match="only a FAILED job can be resubmitted"):
        run("resubmit", str(job.pk))
    with pytest.raises(CommandError, match="only a submitted or started job"):
        run("stop", str(job.pk))


def test_controls_are_recorded_with_who_and_sent():
    job = factories.job(domains=["a.dk"], status=JobStatus.STARTED)
    assert "sent add_trap .*/calendar/.* to job" in run("add-trap", str(job.pk), ".*/calendar/.*")
    run("stop", str(job.pk))
    controls = list(JobControl.objects.filter(job=job).values_list("action", "argument"))
    assert controls == [("add_trap", ".*/calendar/.*"), ("stop", "")]
    assert all(c.sent_at and c.requested_by.startswith("cli:") for c in JobControl.objects.all())
    with pytest.raises(CommandError, match="not a valid regular expression"):
        run("add-trap", str(job.pk), "(((")
    assert JobControl.objects.count() == 2
