"""The scheduler: due definitions, catch-up, run-now/set-next/activate/deactivate, and exactly-once runs
under concurrency (threads and OS processes against PostgreSQL, a crash half-way)."""

import os
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime

import pytest
from django.db import close_old_connections, connection, transaction

from orchestrator.harvest.curation.domains import create_domains
from orchestrator.harvest.models import DomainConfiguration, HarvestDefinition, Job, JobDomain, Schedule
from orchestrator.harvest.scheduling import scheduler
from tests.orchestrator import factories


def t(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def selective(
    name: str, next_date: datetime | None, domains: tuple[str, ...] = ("a.dk", "b.dk"), **schedule: object
) -> HarvestDefinition:
    create_domains(domains)
    sched, _ = Schedule.objects.get_or_create(name=f"s-{name}", defaults={"unit": "day", **schedule})
    definition = factories.selective_definition(name, schedule=sched, next_date=next_date, active=True)
    definition.configurations.set(DomainConfiguration.objects.filter(domain__name__in=domains, is_default=True))
    return definition


def runs_made(definition: HarvestDefinition) -> list[int]:
    return sorted(set(Job.objects.filter(harvest=definition).values_list("harvest_run", flat=True)))


@pytest.mark.django_db
def test_due_selective_and_unrun_snapshot_definitions_run():
    now = t("2026-01-14 10:00")
    due = selective("due", t("2026-01-14 09:59"))
    later = selective("later", t("2026-01-14 10:01"))
    inactive = selective("inactive", t("2026-01-01 00:00"))
    HarvestDefinition.objects.filter(pk=inactive.pk).update(active=False)
    create_domains(["broad.dk"])
    snap = factories.snapshot_definition(active=True)
    ran_snap = factories.snapshot_definition("ran", active=True)
    HarvestDefinition.objects.filter(pk=ran_snap.pk).update(runs=1)
    ids = scheduler.schedule_due_harvests(now)
    assert {j.harvest.name for j in Job.objects.filter(pk__in=ids)} == {"due", "broad"}
    due.refresh_from_db()
    snap.refresh_from_db()
    assert (due.runs, due.next_date, due.skipped_events) == (1, t("2026-01-15 09:59"), 0)
    assert snap.runs == 1 and runs_made(snap) == [1]
    assert runs_made(later) == runs_made(inactive) == []
    assert scheduler.schedule_due_harvests(now) == []  # nothing is due twice


@pytest.mark.django_db
def test_a_run_missed_while_down_runs_once_and_skips_forward():
    definition = selective("daily", t("2026-01-12 03:00"), anytime=False, at_hour=3, at_minute=0)
    ids = scheduler.schedule_due_harvests(t("2026-01-15 10:00"))
    assert len(ids) == 1
    definition.refresh_from_db()
    assert (definition.runs, definition.next_date, definition.skipped_events) == (1, t("2026-01-16 03:00"), 3)
    assert scheduler.schedule_due_harvests(t("2026-01-15 23:00")) == []
    assert len(scheduler.schedule_due_harvests(t("2026-01-16 03:00:10"))) == 1
    definition.refresh_from_db()
    assert (definition.runs, definition.skipped_events) == (2, 3)


@pytest.mark.django_db
def test_schedule_end_stops_the_runs():
    definition = selective("twice", t("2026-01-01 00:00"), end="runs", max_runs=2)
    scheduler.schedule_due_harvests(t("2026-01-01 00:00"))
    scheduler.schedule_due_harvests(t("2026-01-02 00:00"))
    definition.refresh_from_db()
    assert (definition.runs, definition.next_date) == (2, None)
    assert scheduler.schedule_due_harvests(t("2026-02-01 00:00")) == []


@pytest.mark.django_db
def test_run_now_set_next_activate_deactivate(settings, purge_queues):
    definition = selective("manual", None)
    HarvestDefinition.objects.filter(pk=definition.pk).update(active=False)
    jobs = scheduler.run_now(definition, requested_by="test").jobs
    assert [j.status for j in jobs] == ["SUBMITTED"] and jobs[0].harvest_run == 1
    definition.refresh_from_db()
    assert definition.runs == 1 and definition.next_date is None
    now = datetime.now(UTC)
    scheduler.activate(definition)
    assert definition.active and now <= definition.next_date <= datetime.now(UTC)
    with pytest.raises(scheduler.SchedulerError, match="already active"):
        scheduler.activate(definition)
    when = t("2030-05-01 12:00")
    assert scheduler.set_next(definition, when).next_date == when
    scheduler.deactivate(definition)
    with pytest.raises(scheduler.SchedulerError, match="already inactive"):
        scheduler.deactivate(definition)
    assert scheduler.activate(definition).next_date == when  # a future date set by hand is kept
    with pytest.raises(ValueError, match="no time zone"):
        scheduler.set_next(definition, datetime(2030, 1, 1))


@pytest.mark.django_db
def test_wrong_states_are_refused_with_reasons():
    empty = factories.selective_definition("empty")
    with pytest.raises(scheduler.SchedulerError, match="no schedule"):
        scheduler.activate(empty)
    empty.schedule = Schedule.objects.create(name="daily")
    empty.save()
    with pytest.raises(scheduler.SchedulerError, match="no domain configurations"):
        scheduler.activate(empty)
    with pytest.raises(scheduler.SchedulerError, match="no domain configuration to harvest"):
        scheduler.run_now(empty, requested_by="test")
    empty.refresh_from_db()
    assert empty.runs == 0  # the refused run left nothing behind
    snap = factories.snapshot_definition()
    with pytest.raises(scheduler.SchedulerError, match="only selective harvests run on a schedule"):
        scheduler.set_next(snap, t("2030-01-01 00:00"))
    HarvestDefinition.objects.filter(pk=snap.pk).update(runs=1)
    with pytest.raises(scheduler.SchedulerError, match="already run"):
        scheduler.activate(snap)


@pytest.mark.django_db
def test_a_failing_generation_leaves_the_run_due(monkeypatch):
    definition = selective("flaky", t("2026-01-01 00:00"))

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr("orchestrator.harvest.jobs.jobgen.SpecFreezer.freeze", boom)
    assert scheduler.schedule_due_harvests(t("2026-01-01 00:01")) == []
    definition.refresh_from_db()
    assert (definition.runs, definition.next_date) == (0, t("2026-01-01 00:00"))
    assert not Job.objects.exists() and not JobDomain.objects.exists()
    monkeypatch.undo()
    assert len(scheduler.schedule_due_harvests(t("2026-01-01 00:01"))) == 1


def _needs_postgres() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("row locks and concurrent writers need PostgreSQL")


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_locked_definition_is_skipped_not_waited_for_nor_doubled():
    """A slow generation holds its definition; another beat round skips it and does the rest."""
    _needs_postgres()
    slow = selective("slow", t("2026-01-01 00:00"), domains=("s.dk",))
    other = selective("other", t("2026-01-01 00:00"), domains=("o.dk",))
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with transaction.atomic():
                HarvestDefinition.objects.select_for_update().get(pk=slow.pk)
                locked.set()
                release.wait(30)
        finally:
            connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    assert locked.wait(30)
    ids = scheduler.schedule_due_harvests(t("2026-01-01 00:01"))
    assert {Job.objects.get(pk=i).harvest_id for i in ids} == {other.pk}
    release.set()
    holder.join()
    ids = scheduler.schedule_due_harvests(t("2026-01-01 00:01"))
    assert {Job.objects.get(pk=i).harvest_id for i in ids} == {slow.pk}
    assert runs_made(slow) == runs_made(other) == [1]


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_racing_beat_processes_make_each_run_exactly_once():
    """Four OS processes run the scheduler at the same moment over five due definitions."""
    _needs_postgres()
    definitions = [
        selective(f"race{i}", t("2026-01-01 00:00"), domains=(f"r{i}a.dk", f"r{i}b.dk", f"r{i}c.dk")) for i in range(5)
    ]
    create_domains([f"snap{i}.dk" for i in range(20)])
    snap = factories.snapshot_definition(active=True)
    start = time.time() + 4
    outputs = _run_processes(
        4,
        (
            f"import time; time.sleep(max(0, {start} - time.time()));"
            "from datetime import datetime, UTC;"
            "from orchestrator.harvest.scheduling.scheduler import schedule_due_harvests;"
            "print(len(schedule_due_harvests(datetime(2026, 1, 1, 0, 1, tzinfo=UTC))))"
        ),
    )
    assert sum(int(o) for o in outputs) == Job.objects.count()
    for definition in [*definitions, snap]:
        definition.refresh_from_db()
        assert definition.runs == 1 and runs_made(definition) == [1]
    assert JobDomain.objects.count() == 5 * 3 + 35  # every configuration once (the snapshot: all 35), none twice


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_crash_half_way_loses_nothing_and_doubles_nothing():
    """A beat process killed in the middle of writing a run's jobs: the next round makes the run."""
    _needs_postgres()
    definition = selective("crash", t("2026-01-01 00:00"), domains=("c1.dk", "c2.dk", "c3.dk"))
    [output] = _run_processes(
        1,
        (
            "import os; from datetime import datetime, UTC;"
            "from orchestrator.harvest.jobs import jobgen; from orchestrator.harvest.scheduling import scheduler;"
            "original = jobgen.SpecFreezer.freeze;"
            "jobgen.SpecFreezer.freeze = lambda self, *args: (original(self, *args), os._exit(9));"
            "scheduler.schedule_due_harvests(datetime(2026, 1, 1, 0, 1, tzinfo=UTC))"
        ),
        expect_status=9,
    )  # killed exactly where the crash was put, not by anything else
    assert output == ""
    definition.refresh_from_db()
    assert definition.runs == 0 and not Job.objects.exists()
    ids = scheduler.schedule_due_harvests(t("2026-01-01 00:01"))
    assert len(ids) == 1 and runs_made(definition) == [1]
    assert JobDomain.objects.count() == 3


def _run_processes(n: int, code: str, expect_status: int = 0) -> list[str]:
    s = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "NETHARVEST_DATABASE_URL": f"postgres://{s['USER']}@{s['HOST']}:{s['PORT']}/{s['NAME']}",
    }
    script = f"import django; django.setup(); {code}"
    procs = [
        subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True) for _ in range(n)
    ]
    outputs = []
    for p in procs:
        out, _ = p.communicate(timeout=120)
        assert p.returncode == expect_status
        outputs.append(out.strip())
    close_old_connections()
    return outputs
