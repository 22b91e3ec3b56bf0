"""Harvest definitions: list, selective, snapshot and continuous forms, pasted seeds, activate/deactivate,
run now.

The rules (what activation does to the next date, how a run is generated, that a continuous definition
has one long-lived job which activation and run-now start and deactivation stops) are the scheduler's
and orchestrator.harvest.jobs.continuous's; these views call them and say what happened. Seeds added to or
removed from a continuous definition are also sent to its running job (``continuous.change_seeds``).
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.contrib import messages
from django.db import transaction
from django.db.models import Count, Max, OuterRef, Q, Subquery, Sum
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from harvester.contracts import ContractError
from harvester.revisit.policy import CLASSES, RevisitSettings
from orchestrator.harvest.curation import seeding
from orchestrator.harvest.jobs import continuous, dispatch
from orchestrator.harvest.models import HarvestDefinition, HarvestInfo, Job, JobControl
from orchestrator.harvest.scheduling import scheduler, schedules
from orchestrator.harvest.scheduling.scheduler import SchedulerError
from webui.access import CURATE, READ, require
from webui.forms.definitions import DefinitionForm, RemoveForm, SeedsForm
from webui.jinja import filesize, plural

SHOWN_CONFIGURATIONS = 500


@require(READ)
def definition_list(request: HttpRequest) -> HttpResponse:
    kind = request.GET.get("kind", "")
    # Subqueries, not joins: joining configurations and jobs together would multiply their rows.
    through = HarvestDefinition.configurations.through
    definitions = HarvestDefinition.objects.select_related("channel", "schedule").annotate(
        n_configurations=Subquery(
            through.objects.filter(harvestdefinition=OuterRef("pk"))
            .order_by()
            .values("harvestdefinition")
            .annotate(n=Count("id"))
            .values("n")
        ),
        last_job=Subquery(Job.objects.filter(harvest=OuterRef("pk")).order_by("-id").values("id")[:1]),
    )
    if kind in dict(HarvestDefinition.KINDS):
        definitions = definitions.filter(kind=kind)
    return render(
        request,
        "webui/definitions/list.html",
        {"definitions": definitions, "kind": kind, "kinds": HarvestDefinition.KINDS},
    )


def upcoming(definition: HarvestDefinition, n: int = 10) -> list[datetime]:
    """The next runs of an active scheduled definition (an inactive one has none)."""
    if not definition.active or definition.schedule is None:
        return []
    return schedules.upcoming_runs(definition.schedule, n, definition.next_date, definition.runs, now=datetime.now(UTC))


@require(READ)
def definition_detail(request: HttpRequest, pk: int) -> HttpResponse:
    definition = get_object_or_404(HarvestDefinition.objects.select_related("channel", "schedule", "previous"), pk=pk)
    configurations = definition.configurations.select_related("domain", "template").order_by("domain__name")
    total = configurations.count()  # one definition's selection: thousands at most, never millions
    runs = (
        Job.objects.filter(harvest=definition)
        .values("harvest_run")
        .annotate(
            jobs=Count("id"),
            done=Count("id", filter=Q(status="DONE")),
            failed=Count("id", filter=Q(status="FAILED")),
            running=Count("id", filter=Q(status__in=["SUBMITTED", "STARTED"])),
            first=Max("created"),
        )
        .order_by("-harvest_run")[:20]
    )
    figures = {
        row["job__harvest_run"]: row
        for row in HarvestInfo.objects.filter(harvest=definition)
        .values("job__harvest_run")
        .annotate(objects=Sum("objects_count"), bytes=Sum("bytes_count"), domains=Count("id"))
    }
    return render(
        request,
        "webui/definitions/detail.html",
        {
            "definition": definition,
            "configurations": configurations[:SHOWN_CONFIGURATIONS],
            "total": total,
            "shown": SHOWN_CONFIGURATIONS,
            "runs": runs,
            "figures": figures,
            "jobs": Job.objects.filter(harvest=definition).select_related("channel")[:20],
            "upcoming": upcoming(definition),
            "seeds_form": SeedsForm(),
            "remove_form": RemoveForm(definition=definition),
            **(_continuous_context(definition) if definition.kind == definition.CONTINUOUS else {}),
        },
    )


def _continuous_context(definition: HarvestDefinition) -> dict[str, object]:
    """A continuous definition's live job and its revisit settings as the crawl gets them (defaults filled in)."""
    try:
        revisit, revisit_error = RevisitSettings.from_dict(definition.revisit_settings or {}).to_dict(), ""
    except ContractError as exc:  # stored before a change of the policy's settings: say so, do not fail the page
        revisit, revisit_error = None, str(exc)
    return {
        "live_job": continuous.live_job(definition),
        "revisit": revisit,
        "revisit_error": revisit_error,
        "classes": CLASSES,
    }


@require(CURATE)
def definition_edit(request: HttpRequest, pk: int | None = None, kind: str | None = None) -> HttpResponse:
    instance = get_object_or_404(HarvestDefinition, pk=pk) if pk else None
    kind = instance.kind if instance else kind
    if kind not in DefinitionForm.KIND_FIELDS:
        raise Http404(f"no {kind} harvest definitions in the web UI")
    form = DefinitionForm(request.POST or None, instance=instance, kind=kind)
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            definition = form.save()
            if form.cleaned_data.get("next_date") and form.cleaned_data["next_date"] != form.initial.get("next_date"):
                scheduler.set_next(definition, form.cleaned_data["next_date"])
        line = f"Harvest definition {definition.name} saved" + (
            "." if definition.active else " (inactive: activate it to schedule runs)."
        )
        job = continuous.live_job(definition) if definition.kind == HarvestDefinition.CONTINUOUS else None
        if job is not None:
            # A running job's JobSpec is frozen: these settings reach the crawl with the next job.
            line += (
                f" Its running job {job.pk} keeps its settings (revisit, fetch budget, WARC rule, URIs per host, "
                "robots.txt and DNS periods): the changes "
                "apply from the next job (deactivate and activate the harvest to apply them now)."
            )
        messages.success(request, line)
        return redirect("webui:definition", pk=definition.pk)
    title = f"Edit {instance.name}" if instance else f"New {dict(HarvestDefinition.KINDS)[kind]} harvest"
    return render(
        request,
        "webui/form.html",
        {
            "form": form,
            "title": title,
            "submit": "Save",
            "back": ("webui:definition", pk) if pk else ("webui:definitions",),
        },
    )


def budget_words(max_objects: int, max_bytes: int) -> str:
    """'at most 150 objects and 10.0 MB per domain', or 'no budget limit'."""
    parts = ([f"{plural(max_objects, 'object')}"] if max_objects > 0 else []) + (
        [filesize(max_bytes)] if max_bytes > 0 else []
    )
    return f"at most {' and '.join(parts)} per domain" if parts else "no budget limit"


def _with_selection(pk: int) -> HarvestDefinition:
    definition = get_object_or_404(HarvestDefinition, pk=pk)
    if definition.kind not in (HarvestDefinition.SELECTIVE, HarvestDefinition.CONTINUOUS):
        raise Http404("only selective and continuous harvests have a selection of domains")
    return definition


def _tell_running_job(request: HttpRequest, definition: HarvestDefinition, add: list[str], remove: list[str]) -> str:
    """Send a continuous definition's seed change to its running job; the sentence saying what happened."""
    if definition.kind != HarvestDefinition.CONTINUOUS:
        return ""
    try:
        control = continuous.change_seeds(definition, add, remove, requested_by=request.user.get_username())
    except dispatch.BrokerUnavailable as exc:  # recorded: beat's sweep sends it when the broker is back
        return _told(request, definition, exc.control, str(exc))
    except Exception as exc:  # the broker, or a seed the crawl refuses; the definition itself is saved
        return _told(request, definition, None, " ".join(str(exc).split())[:300])
    return _told(request, definition, control, "")


def _told(request: HttpRequest, definition: HarvestDefinition, control: JobControl | None, error: str) -> str:
    """The end of a seed change's message: whether (and which) running job of a continuous definition got it."""
    if definition.kind != HarvestDefinition.CONTINUOUS:
        return ""
    if error and control is not None:  # recorded, not sent: the broker is down
        messages.warning(request, f"The running job {control.job_id} of {definition.name} is not told yet ({error}).")
        return ""
    if error:
        messages.warning(
            request,
            f"The running job of {definition.name} was not told ({error}): it gets the change when it is next started.",
        )
        return ""
    if control is None:
        return " No job is running: the next one starts from these seeds."
    return f" Sent to the running job {control.job_id}, which applies it at its next control poll."


@require(CURATE)
def add_seeds(request: HttpRequest, pk: int) -> HttpResponse:
    """Paste seeds; on any bad line nothing is added and every bad line is listed with its number."""
    definition = _with_selection(pk)
    form = SeedsForm(request.POST or None)
    result = None
    if request.method == "POST" and form.is_valid():
        max_objects, max_bytes = form.budget()
        template = form.chosen_template()
        result = seeding.add_seeds(
            definition,
            form.cleaned_data["seeds"],
            template,
            max_objects,
            max_bytes,
            requested_by=request.user.get_username(),
        )
        if result.ok:
            n_seeds = sum(len(s) for s in result.seeds.values())
            made = len(result.configurations) - len(result.kept)
            line = (
                f"{plural(n_seeds, 'seed')} on {plural(len(result.seeds), 'domain')} added to {definition.name} "
                f"({plural(len(result.created_domains), 'new domain')})."
            )
            if made:
                line += (
                    f" {plural(made, 'domain')} harvested with template {template.name}, "
                    f"{budget_words(max_objects, max_bytes)}."
                )
            if result.kept:
                line += (
                    f" {plural(len(result.kept), 'domain')} already in the harvest kept "
                    f"{'its' if len(result.kept) == 1 else 'their'} template and budget."
                )
            line += _told(request, definition, result.told, result.tell_error)
            messages.success(request, line)
            return redirect("webui:definition", pk=definition.pk)
        form.add_error("seeds", [str(e) for e in result.errors])
    return render(
        request,
        "webui/form.html",
        {
            "form": form,
            "title": f"Add seeds to {definition.name}",
            "submit": "Add seeds",
            "back": ("webui:definition", definition.pk),
        },
    )


@require(CURATE)
@require_POST
def remove_configurations(request: HttpRequest, pk: int) -> HttpResponse:
    definition = _with_selection(pk)
    form = RemoveForm(request.POST, definition=definition)
    if form.is_valid():
        removed = list(form.cleaned_data["configurations"])
        definition.configurations.remove(*removed)
        told = _tell_running_job(request, definition, [], seeding.seeds_of(removed))
        messages.success(
            request,
            f"{plural(len(removed), 'domain configuration')} removed from {definition.name} "
            f"(the domains and their history stay).{told}",
        )
    else:
        messages.error(request, "; ".join(e for errors in form.errors.values() for e in errors))
    return redirect("webui:definition", pk=definition.pk)


@require(CURATE)
@require_POST
def activate(request: HttpRequest, pk: int) -> HttpResponse:
    definition = get_object_or_404(HarvestDefinition, pk=pk)
    try:
        scheduler.activate(definition)
    except SchedulerError as exc:  # the scheduler's refusals say why (no schedule, nothing selected, …)
        messages.error(request, f"{definition.name} was not activated: {exc}")
    else:
        if definition.kind == definition.CONTINUOUS:
            job = continuous.live_job(definition)
            when = (
                f" Its continuous job {job.pk} is {job.status} on channel {definition.channel.name}: it revisits "
                "its pages until the harvest is deactivated."
                if job
                else ""
            )
        elif definition.kind == definition.SELECTIVE:
            when = f" Next run {definition.next_date:%Y-%m-%d %H:%M} UTC."
        else:
            when = " Its first run is made at the scheduler's next round."
        messages.success(request, f"{definition.name} is active.{when}")
    return redirect("webui:definition", pk=pk)


@require(CURATE)
@require_POST
def deactivate(request: HttpRequest, pk: int) -> HttpResponse:
    definition = get_object_or_404(HarvestDefinition, pk=pk)
    try:
        scheduler.deactivate(definition)
    except SchedulerError as exc:
        messages.error(request, str(exc))
    except dispatch.BrokerUnavailable as exc:  # deactivated; its job's stop is sent when the broker is back
        messages.warning(request, str(exc))
    else:
        messages.success(
            request,
            f"{definition.name} is inactive: "
            + (
                "its continuous job is told to stop (it closes its files and ends)."
                if definition.kind == definition.CONTINUOUS
                else "no further runs are scheduled (jobs already made still run)."
            ),
        )
    return redirect("webui:definition", pk=pk)


@require(CURATE)
@require_POST
def run_now(request: HttpRequest, pk: int) -> HttpResponse:
    definition = get_object_or_404(HarvestDefinition, pk=pk)
    try:
        outcome = scheduler.run_now(definition, requested_by=request.user.username)
    except SchedulerError as exc:
        messages.error(request, f"{definition.name} was not run: {exc}")
    else:
        if definition.kind == definition.CONTINUOUS:
            _continuous_started(request, definition, outcome)
            return redirect("webui:definition", pk=pk)
        jobs = outcome.jobs
        ids = f"{', '.join(str(j.pk) for j in jobs[:10])}{'…' if len(jobs) > 10 else ''}"
        line = f"{outcome.describe()[:1].upper()}{outcome.describe()[1:]} (jobs {ids})."
        if outcome.waiting:  # committed, but the broker does not answer: beat sends the jobs when it does
            messages.warning(request, line)
        elif not outcome.made:  # an earlier run was still waiting: sent now instead of a second run
            messages.info(request, line)
        else:
            messages.success(
                request,
                f"Run {outcome.run} of {definition.name}: {plural(len(jobs), 'job')} made and "
                f"submitted to channel {definition.channel.name} (jobs {ids}).",
            )
    return redirect("webui:definition", pk=pk)


def _continuous_started(request: HttpRequest, definition: HarvestDefinition, outcome: scheduler.RunNow) -> None:
    """Run-now of a continuous definition: its one job started, or the one already there named."""
    job = outcome.jobs[0]
    if outcome.waiting:
        messages.warning(
            request,
            f"Continuous job {job.pk} of {definition.name} is made but waits for the broker "
            f"({outcome.broker_error}); it is sent when the broker answers.",
        )
    elif outcome.made:
        messages.success(
            request, f"Continuous job {job.pk} of {definition.name} started on channel {definition.channel.name}."
        )
    else:
        messages.info(
            request,
            f"{definition.name} already has its continuous job {job.pk} ({job.status}): a "
            "continuous harvest runs as one job, so no second one was made.",
        )
