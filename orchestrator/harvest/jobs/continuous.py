"""Continuous harvests: one long-lived job per active definition (issue 12; seeds 000 and 002).

A continuous definition is not run as a series of runs on a schedule: while it is active, exactly one
job of it crawls, on a channel of its own (the ``continuous`` channel by default, whose workers never
hold a selective or snapshot harvester), and never ends by itself. So:

- :func:`start` (activation, run-now, the scheduler's round) makes that job unless one is alive
  (NEW, SUBMITTED or STARTED): under the definition's row lock, so two activations, a run-now and the
  scheduler racing each other make one job, never two. A new job carries on from the definition's
  previous job (``continues_job``): a harvester that still has its spool takes over its URI states
  (waits, visits, versions, digests, validators: :mod:`harvester.takeover`), so a restart is not a
  fresh start. A FAILED job is not restarted behind the operator's back: resubmit or reject it first,
  as for any job (one whose harvester died is resubmitted by the reaper, as any job: :mod:`.reaper`).
- :func:`stop` (deactivation) tells the live job to stop (a Control ``stop``): it closes its files
  and reports DONE.
- :func:`change_seeds` sends the seeds added to or removed from the definition to the live job
  (a Control ``seeds``, ``{"add": [...], "remove": [...]}``), so they reach the crawl without a restart.
  An edit of a domain's seed list (web UI, API, admin: any save of the row) reaches the live job of every
  active continuous definition that harvests it the same way (:func:`seed_list_saved`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import transaction
from django.utils import timezone

from harvester.contracts import ContractError, validate_seed
from orchestrator.harvest.jobs import dispatch, jobgen, specs
from orchestrator.harvest.models import HarvestDefinition, Job, JobControl, JobStatus, SeedList

log = logging.getLogger(__name__)

LIVE = (JobStatus.NEW, JobStatus.SUBMITTED, JobStatus.STARTED)


class ContinuousError(Exception):
    """A request the definition's state does not allow; the message says what and why."""


def live_job(definition: HarvestDefinition) -> Job | None:
    """The definition's job that is (or is about to be) crawling, if any."""
    return Job.objects.filter(harvest=definition, status__in=LIVE).order_by("-pk").first()


def start(definition: HarvestDefinition, requested_by: str = "system") -> tuple[Job, bool]:
    """Make sure the definition's one job exists and is dispatched: ``(job, made)``; ``made`` is False when
    a live job was already there (it is dispatched now if it was still NEW)."""
    with transaction.atomic():
        current = HarvestDefinition.locked(definition.pk)
        if current is None:
            raise ContinuousError(f"harvest definition {definition.pk} no longer exists")
        if current.kind != HarvestDefinition.CONTINUOUS:
            raise ContinuousError(f"{current.name} is a {current.kind} harvest, not a continuous one")
        job = live_job(current)
        made = job is None
        if job is None:
            previous = Job.objects.filter(harvest=current).order_by("-pk").first()
            if previous is not None and previous.status == JobStatus.FAILED and previous.rejected_at is None:
                raise ContinuousError(
                    f"{current.name}: its job {previous.pk} FAILED; resubmit it (it carries on "
                    "where it was) or reject it before starting a new one"
                )
            run = current.take_run()
            ids = jobgen.generate_jobs(current, run)
            if not ids:
                raise ContinuousError(f"{current.name} has no domain configuration with a seed to harvest")
            job = Job.objects.get(pk=ids[0])
            # It carries on from the last job that was sent to a harvester (one stopped while still NEW has no
            # spool: the URI states are in the job before it).
            sent = Job.objects.filter(harvest=current, submitted_at__isnull=False).exclude(pk=job.pk).order_by("-pk")
            previous = sent.first()
            if previous is not None:
                specs.store(
                    job.pk,
                    specs.derive(job, **specs.continuation(previous, continues_done=previous.status == JobStatus.DONE)),
                )
            log.info("continuous harvest %s: job %s made by %s (run %d)", current.name, job.pk, requested_by, run)
    try:
        dispatch.submit_jobs([job.pk])
    except dispatch.BrokerUnavailable as exc:
        log.warning("continuous job %s stays NEW until the broker answers: %s", job.pk, exc.reason)
    job.refresh_from_db()
    return job, made


def stop(definition: HarvestDefinition, requested_by: str = "system") -> JobControl | None:
    """Tell the definition's live job to stop (None if there is none).

    A job still NEW (the broker was down at activation) never reached a harvester: it ends here as FAILED
    *and rejected* (it crawled nothing, there is nothing to resubmit), so nothing is left in limbo and a
    later activation starts a fresh job instead of asking to resubmit or reject this one. Raises
    :class:`dispatch.BrokerUnavailable` when the stop is recorded but the broker is down (it is sent later).
    """
    job = live_job(definition)
    if job is None:
        return None
    if job.status == JobStatus.NEW:
        if Job.transition(
            job.pk,
            JobStatus.NEW,
            JobStatus.FAILED,
            error_category="stopped",
            error_detail=f"stopped by {requested_by} before it was dispatched",
            rejected_at=timezone.now(),
            rejected_by=requested_by,
        ):
            return None
        job.refresh_from_db()  # a dispatcher submitted it meanwhile: it is stopped like any running job
        if job.status not in LIVE:
            return None
    return dispatch.send_control(job, "stop", requested_by=requested_by)


def change_seeds(
    definition: HarvestDefinition, add: Iterable[str] = (), remove: Iterable[str] = (), requested_by: str = "system"
) -> JobControl | None:
    """Send seeds added to / removed from ``definition`` to its running job (None: no job is running; the
    next job starts from the definition's seed lists anyway). Each seed is validated first."""
    add = [validate_seed(s, f"add[{i}]") for i, s in enumerate(add)]
    remove = [validate_seed(s, f"remove[{i}]") for i, s in enumerate(remove)]
    if not (add or remove):
        return None
    job = live_job(definition)
    if job is None or job.status == JobStatus.NEW:
        return None  # a NEW job's spec is frozen already; it gets this change at its next start
    return dispatch.send_control(job, "seeds", json.dumps({"add": add, "remove": remove}), requested_by)


#: Definitions whose caller tells their live job itself (seeding.add_seeds sends every pasted seed): the seed
#: list signals leave them out, so a paste makes one control, not two.
_telling: ContextVar[frozenset[int]] = ContextVar("continuous_telling", default=frozenset())


@contextmanager
def telling_itself(definition_id: int) -> Iterator[None]:
    """Within this block, seed list saves do not tell ``definition_id``'s live job (its caller will)."""
    token = _telling.set(_telling.get() | {definition_id})
    try:
        yield
    finally:
        _telling.reset(token)


def seed_list_before_save(sender: type, instance: SeedList, **kwargs: object) -> None:
    """pre_save: remember the list's active seeds as stored, for :func:`seed_list_saved`."""
    stored = SeedList.objects.filter(pk=instance.pk).values_list("seeds", flat=True).first() if instance.pk else None
    instance._seeds_before = SeedList(seeds=stored).active_seeds if stored is not None else None


def seed_list_saved(sender: type, instance: SeedList, created: bool = False, **kwargs: object) -> None:
    """post_save: once committed, send the seeds the edit added and removed to the live job of each
    continuous definition whose configurations use this list. A seed removed here but still in another list
    of that definition stays. A broker outage leaves the control recorded (the minute sweep sends it); any
    other failure is logged: the edit itself is saved either way."""
    before = getattr(instance, "_seeds_before", None)
    if created or before is None:
        return
    after = instance.active_seeds
    had, has = set(before), set(after)
    added = [s for s in after if s not in had]
    removed = [s for s in before if s not in has]
    if added or removed:
        skip = _telling.get()
        transaction.on_commit(lambda: _tell_live_jobs(instance, added, removed, skip))


def _tell_live_jobs(seed_list: SeedList, added: list[str], removed: list[str], skip: frozenset[int]) -> None:
    from orchestrator.harvest.curation.seeding import seeds_of

    definitions = (
        HarvestDefinition.objects.filter(kind=HarvestDefinition.CONTINUOUS, configurations__seedlists=seed_list)
        .exclude(pk__in=list(skip))
        .distinct()
    )
    for definition in definitions:
        still = set(seeds_of(definition.configurations.all()))
        try:
            change_seeds(
                definition, added, [s for s in removed if s not in still], requested_by=f"seed list {seed_list}"
            )
        except dispatch.BrokerUnavailable as exc:
            log.warning("definition %s: %s", definition.pk, exc)
        except (dispatch.DispatchError, ContractError) as exc:
            log.error("definition %s: the seed list edit did not reach its running job: %s", definition.pk, exc)


def due_definitions() -> Iterable[HarvestDefinition]:
    """Active continuous definitions without a live job whose last job did not fail: the scheduler starts
    them (a job stopped from its job page, or ended by a harvester's restart, comes back)."""
    for definition in HarvestDefinition.objects.filter(kind=HarvestDefinition.CONTINUOUS, active=True):
        last = Job.objects.filter(harvest=definition).order_by("-pk").values("status", "rejected_at").first()
        if last is not None and (
            last["status"] in LIVE or (last["status"] == JobStatus.FAILED and last["rejected_at"] is None)
        ):
            continue
        yield definition
