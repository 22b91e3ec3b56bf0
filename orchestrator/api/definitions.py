"""Harvest definitions: list, show, create (with seeds), change, add seeds, activate, deactivate, run now.

What activation does to the next date, what a run makes and when run-now refuses are the scheduler's rules
(orchestrator.harvest.scheduling.scheduler); a refusal comes back as 409 with its message.
"""

from datetime import datetime

from django.db.models import Count
from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema, Status
from ninja.pagination import paginate

from orchestrator.api import forms, newharvest
from orchestrator.api.errors import Invalid
from orchestrator.api.security import role, who
from orchestrator.harvest.curation import seeding
from orchestrator.harvest.jobs import continuous, dispatch
from orchestrator.harvest.models import CrawlTemplate, HarvestDefinition, Job
from orchestrator.harvest.scheduling import scheduler
from webui.access import CURATE, READ
from webui.forms.definitions import DefinitionForm, RemoveForm
from webui.views.definitions import upcoming

router = Router(tags=["definitions"])


class DefinitionOut(Schema):
    id: int
    name: str
    kind: str
    active: bool
    channel: str = Field(alias="channel.name")
    schedule: str | None = Field(None, description="The schedule's name (selective).")
    next_date: datetime | None = Field(description="UTC. The next run (selective).")
    runs: int = Field(description="Runs generated so far.")
    skipped_events: int
    comments: str
    audience: str
    crawler_traps: str
    max_objects: int = Field(description="Per domain (snapshot). -1 = unlimited.")
    max_bytes: int
    max_job_running_time_s: int
    previous: str | None = Field(None, description="The snapshot this one continues.")
    extended: dict
    revisit_settings: dict = Field(description="Continuous: the revisit policy's settings (RevisitSettings).")
    fetch_budget_per_s: float | None = Field(None, description="Continuous: fetches per second at most.")
    warc_rotate_s: int = Field(description="Continuous: a WARC is closed and handed over at least this often.")
    max_uris_per_host: int = Field(description="Continuous: the most URIs of one host the job follows.")
    robots_validity_s: int = Field(description="Continuous: a host's robots.txt is obeyed this long (s).")
    dns_ttl_s: int = Field(description="Continuous: a host's DNS answer or failure holds this long (s).")
    created: datetime
    edited: datetime

    @staticmethod
    def resolve_schedule(obj: HarvestDefinition) -> str | None:
        return obj.schedule.name if obj.schedule_id else None

    @staticmethod
    def resolve_previous(obj: HarvestDefinition) -> str | None:
        return obj.previous.name if obj.previous_id else None


class RunOut(Schema):
    run: int = Field(alias="harvest_run")
    jobs: int
    statuses: dict[str, int]


class DefinitionDetail(DefinitionOut):
    configurations: int = Field(alias="configurations_count")
    upcoming: list[datetime] = Field(description="The next runs (UTC) of an active scheduled definition.")
    recent_runs: list[RunOut]


class DefinitionIn(Schema):
    """``channel``, ``schedule`` and ``previous`` by name or id. A change (PATCH) sets only what it names."""

    name: str | None = None
    channel: int | str | None = None
    schedule: int | str | None = None
    next_date: datetime | None = Field(None, description="UTC; moves the next run (selective).")
    comments: str | None = None
    audience: str | None = None
    crawler_traps: str | None = Field(None, description="One RE2 regex per line.")
    max_objects: int | None = None
    max_bytes: int | None = None
    max_job_running_time_s: int | None = None
    previous: int | str | None = None
    extended: dict | None = None
    revisit_settings: dict | None = Field(
        None,
        description="Continuous: the whole RevisitSettings (what it leaves out takes the policy's defaults; "
        "null: the defaults).",
    )
    fetch_budget_per_s: float | None = Field(None, description="Continuous: fetches per second at most.")
    warc_rotate_s: int | None = Field(None, description="Continuous: close and hand over a WARC this often (s).")
    max_uris_per_host: int | None = Field(None, description="Continuous: the most URIs of one host the job follows.")
    robots_validity_s: int | None = Field(None, description="Continuous: obey a host's robots.txt this long (s).")
    dns_ttl_s: int | None = Field(None, description="Continuous: a host's DNS answer or failure holds this long (s).")


class DefinitionCreate(DefinitionIn):
    name: str
    kind: str = Field(description="selective, snapshot or continuous")
    seeds: str | None = Field(None, description="Selective: seed URLs, one per line (a bare host means http://).")
    template: int | str | None = Field(
        None, description="Selective: the crawl template for the seeds' configurations (default: the default template)."
    )
    activate: bool = False


class SeedsIn(Schema):
    seeds: str = Field(description="Seed URLs, one per line; if any line is wrong, nothing is added.")
    template: int | str | None = None


class SeedsAdded(Schema):
    seeds: int
    domains: int
    created_domains: list[str]


class CreatedOut(SeedsAdded):
    definition: DefinitionOut


class SelectedOut(Schema):
    id: int
    domain: str = Field(alias="domain.name")
    name: str
    template: str = Field(alias="template.name")
    max_objects: int
    max_bytes: int


class RemoveIn(Schema):
    configurations: list[int] = Field(
        description="Ids of configurations to take out of the definition (the domains and their history stay)."
    )


class JobBrief(Schema):
    id: int
    status: str
    domain_count: int
    expected_objects: int
    expected_bytes: int


class RunNowOut(Schema):
    run: int
    made: bool = Field(description="False: an earlier run was still waiting to be dispatched; no new run.")
    jobs: list[JobBrief]
    waiting: int = Field(description="Jobs not yet on the broker (sent by beat once it answers).")
    message: str


def _definitions():
    return HarvestDefinition.objects.select_related("channel", "schedule", "previous")


def _definition(definition_id: int) -> HarvestDefinition:
    return get_object_or_404(_definitions(), pk=definition_id)


def _selection(definition: HarvestDefinition):
    """A definition's selected configurations as every endpoint lists them: by domain, then name."""
    return definition.configurations.select_related("domain", "template").order_by("domain__name", "name")


@router.get("/definitions", auth=role(READ), response=list[DefinitionOut], summary="Harvest definitions")
@paginate
def list_definitions(request, kind: str | None = None, active: bool | None = None):
    rows = _definitions().order_by("name")
    if kind:
        rows = rows.filter(kind=kind)
    if active is not None:
        rows = rows.filter(active=active)
    return rows


@router.get(
    "/definitions/{definition_id}",
    auth=role(READ),
    response=DefinitionDetail,
    summary="One definition, its next and recent runs",
)
def get_definition(request, definition_id: int):
    definition = _definition(definition_id)
    runs: dict[int, dict] = {}
    for run, status, n in (
        Job.objects.filter(harvest=definition)
        .values_list("harvest_run", "status")
        .annotate(n=Count("id"))
        .order_by("-harvest_run")
    ):
        entry = runs.setdefault(run, {"harvest_run": run, "jobs": 0, "statuses": {}})
        entry["jobs"] += n
        entry["statuses"][status] = n
    definition.configurations_count = definition.configurations.count()
    definition.upcoming = upcoming(definition)
    definition.recent_runs = sorted(runs.values(), key=lambda r: -r["harvest_run"])[:20]
    return definition


@router.post(
    "/definitions",
    auth=role(CURATE),
    response={201: CreatedOut},
    summary="Create a definition (with its seeds; activate)",
)
def add_definition(request, payload: DefinitionCreate):
    data = payload.dict(exclude_unset=True)
    options = {k: data.pop(k) for k in ("kind", "seeds", "template", "activate") if k in data}
    kind = options.pop("kind")
    budget = {}
    if kind == HarvestDefinition.SELECTIVE:  # a selective definition's budget is its configurations'
        budget = {k: data.pop(k) for k in ("max_objects", "max_bytes") if k in data}
    created = newharvest.create(kind, data, **options, **budget)
    return Status(
        201,
        {
            "definition": _definition(created.definition.pk),
            "seeds": created.seeds,
            "domains": created.domains,
            "created_domains": created.created_domains,
        },
    )


@router.patch("/definitions/{definition_id}", auth=role(CURATE), response=DefinitionOut, summary="Change a definition")
def change_definition(request, definition_id: int, payload: DefinitionIn):
    definition = _definition(definition_id)
    given = payload.dict(exclude_unset=True)
    data = newharvest.with_references(given, definition.kind)
    if definition.kind not in DefinitionForm.KIND_FIELDS:
        raise Invalid([(["path", "definition_id"], f"{definition.kind} definitions are changed in their own pages")])
    settings = newharvest.given_revisit(given, definition.kind)
    if settings is not None:  # the whole RevisitSettings: those the form does not show too (saved with the form)
        definition.revisit_settings = settings
    form = forms.bound(DefinitionForm, data, definition, kind=definition.kind)
    saved = form.save()
    if "next_date" in data and data["next_date"] is not None:
        scheduler.set_next(saved, form.cleaned_data["next_date"])
    return _definition(definition_id)


@router.post(
    "/definitions/{definition_id}/seeds",
    auth=role(CURATE),
    response={201: SeedsAdded},
    summary="Add seeds to a selective definition (all or nothing)",
)
def add_seeds(request, definition_id: int, payload: SeedsIn):
    definition = _definition(definition_id)
    if definition.kind not in (HarvestDefinition.SELECTIVE, HarvestDefinition.CONTINUOUS):
        raise Invalid(
            [
                (
                    ["path", "definition_id"],
                    f"{definition.name} is a {definition.kind} harvest: seeds are "
                    "added to selective and continuous ones",
                )
            ]
        )
    template = None
    if payload.template is not None:
        template = CrawlTemplate.objects.get(pk=forms.reference(CrawlTemplate, payload.template, "template"))
    result = seeding.add_seeds(definition, payload.seeds, template, requested_by=who(request))
    if not result.ok:
        raise newharvest.SeedLinesInvalid(result.errors)
    return Status(
        201,
        {
            "seeds": sum(len(s) for s in result.seeds.values()),
            "domains": len(result.seeds),
            "created_domains": result.created_domains,
        },
    )


@router.get(
    "/definitions/{definition_id}/configurations",
    auth=role(READ),
    response=list[SelectedOut],
    summary="The domain configurations a selective definition harvests",
)
@paginate
def selected(request, definition_id: int):
    return _selection(_definition(definition_id))


@router.post(
    "/definitions/{definition_id}/remove",
    auth=role(CURATE),
    response=list[SelectedOut],
    summary="Take domain configurations out of a selective definition",
)
def remove(request, definition_id: int, payload: RemoveIn):
    definition = _definition(definition_id)
    if definition.kind not in (HarvestDefinition.SELECTIVE, HarvestDefinition.CONTINUOUS):
        raise Invalid(
            [(["path", "definition_id"], "only selective and continuous harvests have a selection of domains")]
        )
    form = forms.bound(RemoveForm, {"configurations": payload.configurations}, definition=definition)
    removed = form.cleaned_data["configurations"]
    definition.configurations.remove(*removed)
    if definition.kind == HarvestDefinition.CONTINUOUS:  # its running job drops their seeds
        try:
            continuous.change_seeds(definition, [], seeding.seeds_of(removed), requested_by=who(request))
        except dispatch.BrokerUnavailable:
            pass  # recorded: beat's submit_new_jobs sweep sends it when the broker is back
    return list(_selection(definition))


@router.post(
    "/definitions/{definition_id}/activate", auth=role(CURATE), response=DefinitionOut, summary="Activate a definition"
)
def activate(request, definition_id: int):
    scheduler.activate(_definition(definition_id))
    return _definition(definition_id)


@router.post(
    "/definitions/{definition_id}/deactivate",
    auth=role(CURATE),
    response=DefinitionOut,
    summary="Deactivate a definition",
)
def deactivate(request, definition_id: int):
    scheduler.deactivate(_definition(definition_id))
    return _definition(definition_id)


@router.post(
    "/definitions/{definition_id}/run",
    auth=role(CURATE),
    response={200: RunNowOut, 202: RunNowOut},
    summary="Run now: make a run and dispatch its jobs (202: made, waiting for the broker)",
)
def run_now(request, definition_id: int, force: bool = False):
    outcome = scheduler.run_now(_definition(definition_id), requested_by=who(request), force=force)
    body = {
        "run": outcome.run,
        "made": outcome.made,
        "jobs": outcome.jobs,
        "waiting": len(outcome.waiting),
        "message": outcome.describe(),
    }
    return Status(202 if outcome.waiting else 200, body)
