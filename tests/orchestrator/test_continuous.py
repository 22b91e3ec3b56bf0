"""Continuous harvests in the orchestrator (issue 12): one long-lived job per active definition, made by
activation / run-now / the scheduler exactly once, stopped by deactivation; seeds sent to the running
job; WARCs handed over while it runs (``record_files``) registered once and queued for the chain.
Real PostgreSQL and Redis (the control messages are read back from the job's control queue)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kombu.simple import SimpleQueue

from harvester.contracts import JobSpec, control_queue
from orchestrator.celery import app
from orchestrator.harvest.curation import seeding
from orchestrator.harvest.curation.domains import create_domains
from orchestrator.harvest.jobs import continuous, dispatch, intake, jobgen
from orchestrator.harvest.models import (
    ArchiveFile,
    DomainConfiguration,
    HarvestChannel,
    HarvestDefinition,
    Job,
    JobStatus,
)
from orchestrator.harvest.scheduling import scheduler

pytestmark = pytest.mark.django_db


@pytest.fixture
def purge_continuous():
    yield
    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge("harvest.continuous")


def definition(
    name: str = "news-live", domains: tuple[str, ...] = ("a.dk", "b.dk"), **fields: Any
) -> HarvestDefinition:
    create_domains(domains)
    channel = HarvestChannel.objects.get(name="continuous")  # made by migration 0011
    d = HarvestDefinition.objects.create(
        name=name,
        kind="continuous",
        channel=channel,
        revisit_settings={"policy": "heritrix", "min_wait_s": 60},
        fetch_budget_per_s=2.5,
        warc_rotate_s=120,
        **fields,
    )
    d.configurations.set(DomainConfiguration.objects.filter(domain__name__in=domains, is_default=True))
    return d


def controls(job_id: int) -> list[dict[str, Any]]:
    """What waits in the job's control queue (read, then put back as it was)."""
    with app.connection_for_write() as conn:
        queue = SimpleQueue(conn, control_queue(job_id))
        got = []
        while True:
            try:
                message = queue.get(block=False)
            except queue.Empty:
                break
            got.append(message)
        out = [m.payload if isinstance(m.payload, dict) else json.loads(m.payload) for m in got]
        for m in got:
            m.ack()
        queue.close()
    return out


def test_the_continuous_channel_is_its_own_and_the_default_for_continuous_definitions():
    channel = HarvestChannel.objects.get(name="continuous")
    assert channel.default_for == "continuous" and channel.queue == "harvest.continuous"


def test_jobgen_makes_one_job_with_every_configuration_and_the_continuous_section():
    create_domains(["c.dk"])
    d = definition(domains=("a.dk", "b.dk", "c.dk"), max_uris_per_host=500, robots_validity_s=600, dns_ttl_s=300)
    ids = jobgen.generate_jobs(d, run=1, max_configs=1)  # a chunk size never splits a continuous job
    assert len(ids) == 1
    job = Job.objects.get(pk=ids[0])
    spec = JobSpec.from_dict(job.spec)
    assert spec.kind == "continuous" and len(spec.domains) == 3 and job.domain_count == 3
    assert spec.continuous is not None and spec.continuous.budget_per_s == 2.5
    assert spec.continuous.warc_rotate_s == 120 and spec.continuous.revisit["policy"] == "heritrix"
    assert spec.continuous.revisit["min_wait_s"] == 60 and spec.continuous.max_uris_per_host == 500
    assert (spec.continuous.robots_validity_s, spec.continuous.dns_ttl_s) == (600, 300)
    assert all(dom.max_objects == -1 and dom.max_bytes == -1 for dom in spec.domains)
    assert spec.time_limit_s == 0


def test_activation_makes_one_job_a_second_activation_or_run_now_none(purge_continuous):
    d = definition()
    scheduler.activate(d)
    jobs = list(Job.objects.filter(harvest=d))
    assert len(jobs) == 1 and jobs[0].status == JobStatus.SUBMITTED and jobs[0].channel.name == "continuous"
    with pytest.raises(scheduler.SchedulerError, match="already active"):
        scheduler.activate(d)
    again = scheduler.run_now(d, requested_by="test")
    assert not again.made and [j.pk for j in again.jobs] == [jobs[0].pk]
    # said as it is, not as a waiting run "dispatched now" (a newcomer's reading of the CLI's line)
    said = f"no new job of 'news-live': its continuous job {jobs[0].pk} is SUBMITTED (it has one job)"
    assert again.describe() == said
    assert scheduler.schedule_due_harvests() == []  # the scheduler sees the live job: nothing new
    assert Job.objects.filter(harvest=d).count() == 1

    # Seeds added / removed reach the running job as a "seeds" control; bad ones are refused first.
    control = continuous.change_seeds(d, add=["http://a.dk/new"], remove=["http://b.dk/"], requested_by="curator")
    assert control is not None and control.action == "seeds"
    with pytest.raises(Exception, match="add\\[0\\]"):
        continuous.change_seeds(d, add=["not a url"])
    # Deactivation stops it.
    scheduler.deactivate(d)
    sent = controls(jobs[0].pk)
    assert [c["action"] for c in sent] == ["seeds", "stop"]
    assert json.loads(sent[0]["argument"]) == {"add": ["http://a.dk/new"], "remove": ["http://b.dk/"]}


def test_next_job_continues_the_previous_one_and_a_failed_one_is_not_restarted(purge_continuous):
    d = definition()
    first, made = continuous.start(d, "test")
    assert made
    Job.transition(first.pk, JobStatus.SUBMITTED, JobStatus.STARTED)
    Job.transition(first.pk, JobStatus.STARTED, JobStatus.DONE)
    HarvestDefinition.objects.filter(pk=d.pk).update(active=True)
    made_ids = scheduler.schedule_due_harvests()  # active, no live job: the scheduler starts it again
    assert len(made_ids) == 1
    second = Job.objects.get(pk=made_ids[0])
    assert second.spec["continues_job"] == first.pk and second.harvest_run == 2
    Job.transition(second.pk, JobStatus.SUBMITTED, JobStatus.FAILED)
    assert scheduler.schedule_due_harvests() == []  # a FAILED job waits for a resubmit or a reject
    with pytest.raises(scheduler.SchedulerError, match="FAILED"):
        scheduler.run_now(d, requested_by="test")
    third = dispatch.resubmit(second)
    assert third.spec["continues_job"] == second.pk and third.status == JobStatus.SUBMITTED


def test_record_files_registers_each_file_once_and_the_result_does_not_register_it_again(tmp_path: Path):
    d = definition()
    job = Job.objects.get(pk=jobgen.generate_jobs(d, run=1)[0])
    Job.objects.filter(pk=job.pk).update(status=JobStatus.STARTED)
    one = {
        "name": f"{job.pk}-{d.pk}-20261124000000-00000-h.warc.gz",
        "path": str(tmp_path / "a"),
        "size": 10,
        "sha256": "a" * 64,
        "kind": "warc",
    }
    two = {**one, "name": f"{job.pk}-{d.pk}-20261124001500-00001-h.warc.gz", "path": str(tmp_path / "b")}
    assert intake.record_files(job.pk, [one]) == 1
    assert intake.record_files(job.pk, [one, two]) == 1  # a redelivery adds only what is new
    assert intake.record_files(job.pk, [{"name": "x"}]) == 0  # malformed: refused whole
    assert set(ArchiveFile.objects.filter(job=job).values_list("name", flat=True)) == {one["name"], two["name"]}
    other = Job.objects.create(harvest=d, harvest_run=1, channel=d.channel, spec={}, status=JobStatus.STARTED)
    assert intake.record_files(other.pk, [one]) == 0  # a name another job has: refused
    last = {**one, "name": f"{job.pk}-{d.pk}-20261124003000-00002-h.warc.gz", "path": str(tmp_path / "c")}
    meta = {**one, "name": f"{job.pk}-metadata-1.warc.gz", "path": str(tmp_path / "m"), "kind": "metadata"}
    done = intake.record_result(
        {
            "version": 1,
            "job_id": job.pk,
            "status": "DONE",
            "started": None,
            "ended": "2026-11-24T01:00:00Z",
            "files": [one, two, last, meta],
            "domains": [],
        }
    )
    assert done.status == JobStatus.DONE
    assert ArchiveFile.objects.filter(job=job).count() == 4
    assert intake.record_files(job.pk, [last]) == 0  # the job has ended: a late copy is ignored


def test_the_command_line_shows_a_continuous_job_and_sends_seeds(purge_continuous):
    import io

    from django.core.management import call_command
    from django.core.management.base import CommandError

    d = definition()
    out = io.StringIO()
    call_command("harvests", "activate", d.name, stdout=out)
    job = continuous.live_job(d)
    assert f"its continuous job {job.pk} is SUBMITTED on channel continuous" in out.getvalue()
    shown = io.StringIO()
    call_command("harvests", "show", d.name, stdout=shown)
    assert f"job: {job.pk} (SUBMITTED); fetch budget 2.5/s; WARCs closed every 120 s" in shown.getvalue()
    assert "at most 100,000 URIs per host; robots.txt obeyed 86400 s, DNS answers kept 21600 s" in shown.getvalue()
    Job.objects.filter(pk=job.pk).update(
        status=JobStatus.STARTED,
        progress={
            "job_id": job.pk,
            "at": "2026-11-24T00:00:00Z",
            "continuous": {
                "budget_per_s": 2.5,
                "fetch_rate": 2.4,
                "visits": 40,
                "changed": 10,
                "unchanged": 30,
                "header_skipped": 12,
                "not_modified": 0,
                "errors": 1,
                "validator_misses": 2,
                "warcs_closed": 3,
                "freshness": 0.8,
                "queues": {"ready": 1, "snoozed": 2, "busy": 0, "empty": 0},
                "hosts": [],
                "due_next": [
                    {"uri": "http://a.dk/", "at": "2026-11-24T00:01:00Z", "wait_s": 60, "visits": 4, "versions": 2}
                ],
            },
        },
    )
    out = io.StringIO()
    call_command("jobs", "show", str(job.pk), stdout=out)
    text = out.getvalue()
    assert "2.40 fetches/s (budget 2.5/s), 40 visits: 10 changed, 30 unchanged (12 by headers" in text
    assert "freshness 80%" in text and "1 ready, 2 snoozed, 0 busy, 0 empty" in text
    assert "due 2026-11-24T00:01:00Z: http://a.dk/ (wait 60 s, 4 visits, 2 versions)" in text
    out = io.StringIO()
    call_command("harvests", "seeds", d.name, "--add", "http://a.dk/live", stdout=out)
    assert f"1 seed(s) added, 0 removed; sent to its running job {job.pk}" in out.getvalue()
    # stored too: the next job starts from it (before 2026-11-29 the command only told the running job)
    assert "http://a.dk/live" in seeding.seeds_of(d.configurations.all())
    with pytest.raises(CommandError, match="--add ftp://a.dk/x: .*nothing was changed"):
        call_command("harvests", "seeds", d.name, "--add", "ftp://a.dk/x", "--remove", "http://a.dk/live")
    with pytest.raises(CommandError, match="--remove http://a.dk/never: not a seed of news-live; nothing was changed"):
        call_command("harvests", "seeds", d.name, "--remove", "http://a.dk/never")
    assert "http://a.dk/live" in seeding.seeds_of(d.configurations.all())
    call_command("harvests", "seeds", d.name, "--remove", "http://a.dk/live", stdout=out)
    assert "http://a.dk/live" not in seeding.seeds_of(d.configurations.all())
    sent = [json.loads(c["argument"]) for c in controls(job.pk)]
    assert sent == [{"add": ["http://a.dk/live"], "remove": []}, {"add": [], "remove": ["http://a.dk/live"]}]


def _point_broker_at(url: str) -> None:
    """As tests.conftest.broker_down does: the next publish connects to ``url``."""
    app.conf.broker_url, app._pool, app.amqp._producer_pool = url, None, None


def test_deactivation_while_the_broker_is_down_records_the_stop_and_the_sweep_sends_it(purge_continuous):
    """Review of issue 12: deactivating with the broker away gave a 500 and left the job running. Now the
    definition is inactive, the stop is recorded (unsent), the caller gets one line, and beat's
    submit_new_jobs sweep sends it once the broker is back."""
    from orchestrator.harvest.jobs import tasks
    from orchestrator.harvest.models import JobControl
    from tests.conftest import closed_broker_url

    d = definition()
    scheduler.activate(d)
    job = Job.objects.get(harvest=d)
    Job.transition(job.pk, JobStatus.SUBMITTED, JobStatus.STARTED)
    real = app.conf.broker_url
    _point_broker_at(closed_broker_url())
    try:
        with pytest.raises(dispatch.BrokerUnavailable) as down:
            scheduler.deactivate(d)
        assert "\n" not in str(down.value) and "news-live is inactive" in str(down.value)
        assert "sent when the broker is back" in str(down.value)
        d.refresh_from_db()
        assert not d.active
        stop = JobControl.objects.get(job=job, action="stop")
        assert stop.sent_at is None
        tasks.submit_new_jobs()  # the broker still down: a logged line, nothing sent
        assert JobControl.objects.get(pk=stop.pk).sent_at is None
    finally:
        _point_broker_at(real)
    tasks.submit_new_jobs()  # the broker is back: the sweep sends the recorded stop
    assert JobControl.objects.get(pk=stop.pk).sent_at is not None
    assert [(c["action"], c["id"]) for c in controls(job.pk)] == [("stop", stop.pk)]
    tasks.submit_new_jobs()  # sent once, not again (controls() took the first one off the queue)
    assert controls(job.pk) == []


def test_a_new_job_stopped_by_deactivation_lets_the_next_activation_start_afresh(purge_continuous, broker_down):
    """Review of issue 12: a job still NEW (broker down at activation) that deactivation stopped was left
    FAILED and not rejected, so the next activation refused ("resubmit or reject it"); and the next job
    carries on from the last job that reached a harvester, not from one that never ran."""
    from tests.conftest import closed_broker_url

    d = definition()
    scheduler.activate(d)  # the broker is down: the job stays NEW
    first = Job.objects.get(harvest=d)
    assert first.status == JobStatus.NEW
    scheduler.deactivate(d)
    first.refresh_from_db()
    assert first.status == JobStatus.FAILED and first.rejected_at is not None
    assert first.rejected_by == "deactivation" and first.error_category == "stopped"
    broker_down()  # the real broker again
    scheduler.activate(d)
    second = Job.objects.filter(harvest=d).order_by("-pk").first()
    assert second.pk != first.pk and second.status == JobStatus.SUBMITTED
    assert second.spec.get("continues_job") is None  # the stopped job never ran: nothing to carry on from
    Job.transition(second.pk, JobStatus.SUBMITTED, JobStatus.STARTED)
    Job.transition(second.pk, JobStatus.STARTED, JobStatus.DONE)
    _point_broker_at(closed_broker_url())  # the third job stays NEW, and is stopped so
    try:
        third, _ = continuous.start(d, "test")
        scheduler.deactivate(d)
    finally:
        broker_down()  # the real broker again
    assert third.spec["continues_job"] == second.pk
    HarvestDefinition.objects.filter(pk=d.pk).update(active=False)
    scheduler.activate(d)
    fourth = Job.objects.filter(harvest=d).order_by("-pk").first()
    assert fourth.spec["continues_job"] == second.pk  # not the third, which never reached a harvester


def test_a_continuous_definition_and_the_continuous_channel_stay_apart():
    """Review of issue 12: a continuous job never ends, so it must not hold a selective/snapshot channel's
    harvester, and no selective or snapshot harvest may queue behind continuous jobs."""
    from django.core.exceptions import ValidationError

    from tests.orchestrator import factories

    d = definition()
    d.full_clean()  # on the continuous channel: fine
    d.channel = HarvestChannel.objects.exclude(default_for="continuous").first()
    with pytest.raises(ValidationError, match="not the continuous channel"):
        d.full_clean()
    selective = factories.selective_definition("news")
    selective.channel = HarvestChannel.objects.get(default_for="continuous")
    with pytest.raises(ValidationError, match="only continuous harvests run there"):
        selective.full_clean()


def test_migration_0011_reuses_a_continuous_channel_that_exists_and_moves_continuous_definitions():
    """The migration's channel step, on the real tables: a channel already marked default_for="continuous"
    (under another name) is reused, not doubled (which the one-default-per-kind constraint refuses), and
    continuous definitions on other channels move to it."""
    import importlib

    from django.apps import apps

    step = importlib.import_module("orchestrator.harvest.migrations.0001_squashed_0017").continuous_channel
    d = definition()
    focused = HarvestChannel.objects.exclude(default_for="continuous").first()
    HarvestDefinition.objects.filter(pk=d.pk).update(channel=focused)
    HarvestChannel.objects.filter(name="continuous").update(default_for="", name="spare")
    live = HarvestChannel.objects.create(name="live", priority="high", default_for="continuous")
    step(apps, None)
    assert list(HarvestChannel.objects.filter(default_for="continuous")) == [live]
    assert HarvestDefinition.objects.get(pk=d.pk).channel == live
    step(apps, None)  # run again: nothing changes
    assert HarvestChannel.objects.filter(default_for="continuous").count() == 1


def test_a_domain_seed_list_edit_reaches_the_running_continuous_job(
    purge_continuous, django_capture_on_commit_callbacks
):
    """Issue 12's gap: a seed list edited on the domain's page (any save of the row: web UI, API, admin)
    while a continuous harvest of it runs is sent to that job; a seed still in another list of the
    definition is not removed; nothing is sent before the edit is committed."""
    from orchestrator.harvest.models import SeedList

    d = definition()
    job, _ = continuous.start(d)
    Job.objects.filter(pk=job.pk).update(status=JobStatus.STARTED)
    edited = SeedList.objects.get(domain__name="a.dk", configurations__is_default=True)
    before = edited.active_seeds
    other = SeedList.objects.create(domain=edited.domain, name="kept", seeds=before[-1])
    DomainConfiguration.objects.get(domain__name="a.dk", is_default=True).seedlists.add(other)

    edited.seeds = "http://a.dk/live/new\n" + "\n".join(f"# {s}" for s in before)
    edited.full_clean()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        edited.save()
    assert controls(job.pk) == []  # not before the commit
    for callback in callbacks:
        callback()
    (sent,) = controls(job.pk)
    assert sent["action"] == "seeds"
    assert json.loads(sent["argument"]) == {"add": ["http://a.dk/live/new"], "remove": before[:-1]}
    edited.comments = "no seed changed"
    with django_capture_on_commit_callbacks(execute=True):
        edited.save()
    assert controls(job.pk) == []


def test_seeds_pasted_into_one_definition_reach_another_running_harvest_of_that_list_once(
    purge_continuous, django_capture_on_commit_callbacks
):
    """Review: the seeds service wrote lists with update(), past the save signals, so a paste into one
    definition never reached another running continuous harvest of the same list; the pasted-into
    definition itself is told once (by add_seeds), not twice."""
    from orchestrator.harvest.curation import seeding

    first = definition("paste-target", domains=("c.dk",))
    with django_capture_on_commit_callbacks(execute=True):
        assert seeding.add_seeds(first, "http://c.dk/one").ok
    other = definition("other-live", domains=("d.dk",))
    other.configurations.add(*first.configurations.filter(name="paste-target"))
    jobs = {}
    for d in (first, other):
        jobs[d.pk], _ = continuous.start(d)
        Job.objects.filter(pk=jobs[d.pk].pk).update(status=JobStatus.STARTED)
        controls(jobs[d.pk].pk)  # job ids repeat across tests, and a control queue outlives its test's rows
    with django_capture_on_commit_callbacks(execute=True):
        assert seeding.add_seeds(first, "http://c.dk/two").ok
    told_first, told_other = controls(jobs[first.pk].pk), controls(jobs[other.pk].pk)
    assert [json.loads(c["argument"])["add"] for c in told_first] == [["http://c.dk/two"]]
    assert [json.loads(c["argument"])["add"] for c in told_other] == [["http://c.dk/two"]]
