from functools import partial

import pytest
from django.core.management import CommandError
from django.utils import timezone

from orchestrator.harvest.models import HarvestInfo, JobControl, JobStatus
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


def test_a_paused_job_says_so_in_list_and_show():
    job = factories.job(domains=["a.dk"], status=JobStatus.STARTED)
    job.progress = {"uris_done": 97, "uris_queued": 130, "paused": True}  # the crawl's heartbeat while paused
    job.save(update_fields=["progress"])
    assert f"job {job.pk}: news run 1, channel focused, STARTED (paused)" in run("show", str(job.pk))
    assert "STARTED (paused)" in run("list").splitlines()[2]
    job.progress = {"uris_done": 98, "uris_queued": 129, "paused": False}  # resumed
    job.save(update_fields=["progress"])
    assert "paused" not in run("show", str(job.pk)) and "paused" not in run("list")
    ended = factories.job(domains=["b.dk"], status=JobStatus.DONE, ended_at=timezone.now())
    ended.progress = {"uris_done": 5, "paused": True}  # stopped while paused: its last heartbeat says paused
    ended.save(update_fields=["progress"])
    assert f"job {ended.pk}: news run 1, channel focused, DONE\n" in run("show", str(ended.pk))


def test_show_of_a_finished_job_gives_the_final_reports_not_the_last_heartbeat_as_progress():
    job = factories.job(domains=["a.dk", "b.dk"], status=JobStatus.DONE, ended_at=timezone.now())
    job.progress = {"uris_done": 2081, "uris_queued": 23}  # the last heartbeat, a moment before the end
    job.save(update_fields=["progress"])
    for jd, objects in zip(job.domains.select_related("configuration__domain"), (2000, 105), strict=True):
        config = jd.configuration
        HarvestInfo.objects.create(
            job=job, harvest=job.harvest, domain=config.domain, configuration=config,
            objects_count=objects, bytes_count=1 << 20, stop_reason="DOWNLOAD_COMPLETE",
        )  # fmt: skip
    text = run("show", str(job.pk))
    assert "harvested: 2105 objects, 2.0 MB (final reports)" in text
    assert "last heartbeat before the end: 2081 URIs done, 23 queued" in text
    assert "progress:" not in text


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
