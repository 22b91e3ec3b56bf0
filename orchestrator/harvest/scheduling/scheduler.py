"""The scheduler: due harvest definitions → runs → jobs, each run made exactly once.

**Exactly once.** Each due definition is taken in its own transaction with ``SELECT … FOR UPDATE
SKIP LOCKED``; the run is claimed with a conditional UPDATE (``WHERE runs = <seen> AND next_date =
<seen>``) and its jobs are generated in that same transaction. So:

- two beat processes never make the same run: the second skips the locked row, and once the first has
  committed, the row is no longer due (and its counters no longer match);
- a slow generation only holds its own definition; the other due definitions go on in parallel;
- a crash half-way rolls the claim back together with the half-written jobs: the run is made by the
  next round, not lost and not doubled.

**Catch-up.** A selective run whose time passed while the system was down runs once; the next date
then moves to the first event after now, and ``skipped_events`` counts the events in between
(:func:`orchestrator.harvest.scheduling.schedules.catch_up`).

A run made by :func:`run_now` while the broker is down stays committed with its jobs NEW (beat's
``submit_new_jobs`` sends them when the broker answers); a second run-now meanwhile makes no second run.

The web UI calls :func:`run_now`, :func:`set_next`, :func:`activate` and :func:`deactivate`; every
change is a conditional UPDATE, refused with a :class:`SchedulerError` saying why.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from orchestrator.harvest import signals
from orchestrator.harvest.jobs import continuous, dispatch, jobgen
from orchestrator.harvest.models import HarvestDefinition, Job, JobStatus
from orchestrator.harvest.scheduling.schedules import catch_up, first_event, utc

log = logging.getLogger(__name__)


class SchedulerError(Exception):
    """A request the definition's state does not allow; the message says what and why."""


def due_filter(now: datetime) -> Q:
    """Selective definitions whose next run has come; snapshot definitions that have not run yet.
    (Continuous definitions are not runs: :func:`orchestrator.harvest.jobs.continuous.due_definitions`.)"""
    selective = Q(kind=HarvestDefinition.SELECTIVE, schedule__isnull=False, next_date__lte=now)
    snapshot = Q(kind=HarvestDefinition.SNAPSHOT, runs=0)
    return Q(active=True) & (selective | snapshot)


def schedule_due_harvests(now: datetime | None = None) -> list[int]:
    """Make the run of every due definition; returns the new jobs' ids (NEW, not yet dispatched).

    A definition whose generation fails is logged and left due: the next round tries it again.
    """
    now = now or timezone.now()
    job_ids: list[int] = []
    for definition in continuous.due_definitions():
        try:
            job, made = continuous.start(definition, "scheduler")
        except Exception:
            log.exception(
                "continuous harvest %s (%s): starting its job failed; tried again next round",
                definition.pk,
                definition.name,
            )
            continue
        if made:
            job_ids.append(job.pk)
    tried: set[int] = set()
    while True:
        with transaction.atomic():
            definition = (
                HarvestDefinition.objects.select_for_update(skip_locked=True, of=("self",))
                .filter(due_filter(now))
                .exclude(pk__in=tried)
                .select_related("schedule", "channel")
                .order_by("next_date", "pk")
                .first()
            )
            if definition is None:
                break
            tried.add(definition.pk)
            try:
                with transaction.atomic():
                    job_ids += _make_due_run(definition, now)
            except Exception:
                log.exception(
                    "harvest %s (%s): generating its run failed; it stays due", definition.pk, definition.name
                )
    return job_ids


def _make_due_run(definition: HarvestDefinition, now: datetime) -> list[int]:
    """Claim the due run of ``definition`` (row locked by the caller) and generate its jobs."""
    run = definition.runs + 1
    claim = HarvestDefinition.objects.filter(pk=definition.pk, active=True, runs=definition.runs)
    if definition.kind == HarvestDefinition.SELECTIVE:
        due = definition.next_date
        result = catch_up(definition.schedule, due, now, runs_done=run)
        claimed = claim.filter(next_date=due).update(
            runs=run, next_date=result.next_date, skipped_events=F("skipped_events") + result.skipped
        )
        if result.skipped:
            log.warning(
                "harvest %s: %d scheduled event(s) passed while nothing ran; ran once at %s instead",
                definition.name,
                result.skipped,
                now.isoformat(),
            )
    else:
        claimed = claim.filter(runs=0).update(runs=run)
    if not claimed:
        return []  # another process made this run first
    signals.before_run.send(sender=HarvestDefinition, definition=definition)
    ids = jobgen.generate_jobs(definition, run, now)
    log.info("harvest %s run %d: %d job(s)", definition.name, run, len(ids))
    return ids


@dataclass
class RunNow:
    """What :func:`run_now` did: the run (``made`` False: an earlier run still waiting to be sent, no new one),
    its jobs as they are now, and why some of them are still NEW (the broker's one-line reason), if so."""

    definition: str
    run: int
    jobs: list[Job]
    made: bool
    broker_error: str = ""
    #: A continuous definition: its one job was alive already (run-now makes no second one).
    running: bool = False

    @property
    def waiting(self) -> list[Job]:
        """Jobs not yet sent: beat's ``submit_new_jobs`` sends them once the broker answers."""
        return [j for j in self.jobs if j.status == JobStatus.NEW]

    def describe(self) -> str:
        """One line for the CLI and the web UI."""
        waiting = len(self.waiting)
        if self.running:
            job = self.jobs[0]
            return f"no new job of {self.definition!r}: its continuous job {job.pk} is {job.status} (it has one job)"
        if self.made:
            what = f"run {self.run} of {self.definition!r} made"
        else:
            what = f"no new run of {self.definition!r}: run {self.run} is " + (
                "still waiting to be dispatched" if waiting else "dispatched now (it was still waiting)"
            )
        if not waiting:
            return f"{what}: {len(self.jobs)} job(s) submitted"
        sent = len(self.jobs) - waiting
        return (
            f"{what}: {waiting} job(s) will be dispatched when the broker answers (it does not now: "
            f"{self.broker_error or 'not tried'})" + (f"; {sent} job(s) submitted" if sent else "")
        )


def waiting_run(definition: HarvestDefinition) -> int | None:
    """The latest run of ``definition`` with jobs still NEW (made, not yet sent to the broker), if any."""
    return (
        Job.objects.filter(harvest=definition, status=JobStatus.NEW)
        .order_by("-harvest_run")
        .values_list("harvest_run", flat=True)
        .first()
    )


def run_now(definition: HarvestDefinition, requested_by: str, force: bool = False) -> RunNow:
    """Make a run of ``definition`` now, whatever its schedule, and dispatch its jobs.

    Does not move the definition's next date. Refused if the run would harvest nothing. If a run of the
    definition is still waiting to be dispatched (jobs NEW: the broker was down), no new run is made unless
    ``force``: its jobs are sent now if the broker answers, so repeating a run-now that met a broker outage
    never makes a duplicate run. A broker that does not answer is not an error: the run is made (committed)
    and beat's ``submit_new_jobs`` sends its jobs once the broker is back.
    """
    if definition.kind == HarvestDefinition.CONTINUOUS:
        return _start_continuous(definition, requested_by)
    with transaction.atomic():
        current = HarvestDefinition.locked(definition.pk)
        if current is None:
            raise SchedulerError(f"harvest definition {definition.pk} no longer exists")
        waiting = None if force else waiting_run(current)  # read under the definition's lock: no race
        if waiting is None:
            run = current.take_run()
            signals.before_run.send(sender=HarvestDefinition, definition=current)
            ids = jobgen.generate_jobs(current, run)
            if not ids:
                raise SchedulerError(
                    f"{current.name} has no domain configuration to harvest"
                    + (" (none chosen)" if current.kind == current.SELECTIVE else "")
                )
        else:
            run = waiting
            ids = list(Job.objects.filter(harvest=current, harvest_run=run).values_list("id", flat=True))
    if waiting is None:
        log.info("harvest %s run %d made now by %s: %d job(s)", current.name, run, requested_by, len(ids))
    else:
        log.info(
            "harvest %s: run-now by %s made no new run, run %d is still waiting to be dispatched",
            current.name,
            requested_by,
            run,
        )
    error = ""
    try:
        dispatch.submit_jobs(ids)
    except dispatch.BrokerUnavailable as exc:
        error = exc.reason
    return RunNow(current.name, run, list(Job.objects.filter(pk__in=ids).order_by("id")), waiting is None, error)


def _start_continuous(definition: HarvestDefinition, requested_by: str) -> RunNow:
    """Run-now of a continuous definition: its one job (made unless one is alive: a second run-now makes
    no second job)."""
    before = continuous.live_job(definition)
    try:
        job, made = continuous.start(definition, requested_by)
    except continuous.ContinuousError as exc:
        raise SchedulerError(str(exc)) from None
    error = "" if job.status != JobStatus.NEW else "not answering (the job is sent once it does)"
    alive = before is not None and before.status != JobStatus.NEW  # a NEW one it sent now was not running
    return RunNow(definition.name, job.harvest_run, [job], made, error, running=alive)


def set_next(definition: HarvestDefinition, when: datetime) -> HarvestDefinition:
    """Override the next run of a selective definition (UTC); the schedule carries on from there."""
    when = utc(when)
    if definition.kind != HarvestDefinition.SELECTIVE:
        raise SchedulerError(
            f"{definition.name} is a {definition.kind} harvest: only selective harvests run on a schedule"
        )
    HarvestDefinition.objects.filter(pk=definition.pk, kind=HarvestDefinition.SELECTIVE).update(next_date=when)
    definition.refresh_from_db()
    return definition


def activate(definition: HarvestDefinition, now: datetime | None = None) -> HarvestDefinition:
    """Switch a definition on. A selective one gets its next date from its schedule unless a future
    one was set by hand; a snapshot one runs at the scheduler's next round."""
    now = now or timezone.now()
    definition.refresh_from_db()
    fields: dict[str, object] = {"active": True}
    if definition.kind == HarvestDefinition.SELECTIVE:
        if definition.schedule is None:
            raise SchedulerError(f"{definition.name} has no schedule: give it one before activating it")
        if not definition.configurations.exists():
            raise SchedulerError(f"{definition.name} has no domain configurations: add some before activating it")
        if definition.next_date is None or definition.next_date < now:
            fields["next_date"] = first_event(definition.schedule, now, definition.runs)
            if fields["next_date"] is None:
                raise SchedulerError(
                    f"the schedule of {definition.name} ({definition.schedule.describe()}) has "
                    "ended: set a next date or change the schedule first"
                )
    elif definition.kind == HarvestDefinition.CONTINUOUS:
        if not definition.configurations.exists():
            raise SchedulerError(f"{definition.name} has no domain configurations: add some before activating it")
    elif definition.runs:
        raise SchedulerError(
            f"{definition.name} is a snapshot harvest that has already run: use run-now for another run"
        )
    if not HarvestDefinition.objects.filter(pk=definition.pk, active=False).update(**fields):
        raise SchedulerError(f"{definition.name} is already active")
    definition.refresh_from_db()
    if definition.kind == HarvestDefinition.CONTINUOUS:
        # Active means crawling: its one long-lived job starts now (the scheduler's round would anyway).
        try:
            continuous.start(definition, "activation")
        except continuous.ContinuousError as exc:
            HarvestDefinition.objects.filter(pk=definition.pk, active=True).update(active=False)
            definition.refresh_from_db()
            raise SchedulerError(str(exc)) from None
    return definition


def deactivate(definition: HarvestDefinition) -> HarvestDefinition:
    """Switch a definition off; a run already being generated finishes, no new run starts."""
    if not HarvestDefinition.objects.filter(pk=definition.pk, active=True).update(active=False):
        raise SchedulerError(f"{definition.name} is already inactive")
    definition.refresh_from_db()
    if definition.kind == HarvestDefinition.CONTINUOUS:
        try:
            continuous.stop(definition, "deactivation")  # its long-lived job closes its files and ends
        except dispatch.BrokerUnavailable as exc:
            # Deactivated all the same: the stop is recorded, and beat's submit_new_jobs sweep sends it
            # (dispatch.resend_controls) once the broker answers. The caller shows this one line.
            raise dispatch.BrokerUnavailable(f"{definition.name} is inactive; {exc.reason}") from None
    return definition
