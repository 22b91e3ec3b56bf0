"""Creating a harvest definition in one step: the definition, its seeds, their budget, and activation.

The web UI does this in three pages (the definition form, "add seeds", "activate"); the API's ``POST
/definitions`` and ``netharvest harvests create`` do it in one call through the same three paths
(:class:`webui.forms.definitions.DefinitionForm`, :func:`orchestrator.harvest.curation.seeding.add_seeds`,
:func:`orchestrator.harvest.scheduling.scheduler.activate`), in one transaction: any refusal (a bad seed line, an
unknown schedule, a definition that cannot be activated) leaves nothing behind, so the same call can be
sent again once fixed.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from harvester.contracts import ContractError
from harvester.revisit.policy import RevisitSettings
from orchestrator.api import forms as api_forms
from orchestrator.api.errors import Invalid
from orchestrator.harvest.curation import seeding
from orchestrator.harvest.models import (
    CrawlTemplate,
    HarvestChannel,
    HarvestDefinition,
    Schedule,
)
from orchestrator.harvest.scheduling import scheduler
from webui.forms.continuous import revisit_form_data
from webui.forms.definitions import DefinitionForm

#: The kinds a definition can be created as here: those of the web UI's definition form.
KINDS = tuple(DefinitionForm.KIND_FIELDS)


class SeedLinesInvalid(Invalid):
    """Some seed lines are wrong: ``lines`` keeps each one's number, text and reason (the CLI prints
    them as FILE:LINE)."""

    def __init__(self, lines: list[seeding.LineError]) -> None:
        self.lines = lines
        super().__init__((["body", "seeds", e.line], str(e)) for e in lines)


@dataclass
class Created:
    definition: HarvestDefinition
    seeds: int = 0
    domains: int = 0
    created_domains: list[str] = field(default_factory=list)


def with_references(fields: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """DefinitionForm's data from the API's for a ``kind`` definition: ``channel``, ``schedule`` and
    ``previous`` named or numbered → ids; ``revisit_settings`` (continuous only: null is ignored for the other
    kinds, a value refused in one line, not as a refusal of each of the form's revisit fields)."""
    data = dict(fields)
    if kind != HarvestDefinition.CONTINUOUS and "revisit_settings" in data:
        if data.pop("revisit_settings") is not None:
            raise Invalid([(["body", "revisit_settings"], f"a {kind} harvest has no revisit settings")])
    for name, model, filters in (
        ("channel", HarvestChannel, {}),
        ("schedule", Schedule, {}),
        ("previous", HarvestDefinition, {"kind": HarvestDefinition.SNAPSHOT}),
    ):
        if name in data:
            data[name] = api_forms.reference(model, data[name], name, **filters)
    if "revisit_settings" in data:  # continuous: the form's revisit fields (a whole RevisitSettings dict)
        try:
            data.update(revisit_form_data(data.pop("revisit_settings")))
        except ContractError as exc:
            where, _, message = str(exc).partition(": ")
            raise Invalid([(["body", *_revisit_location(where)], message or str(exc))]) from None
    return data


def _revisit_location(where: str) -> list[str]:
    """A RevisitSettings error's path as a location: ``revisit.strip[2]`` → revisit, strip, 2; the key after a
    field (``revisit.pinned.<URI>``, ``revisit.initial_wait_s.<class>``) is kept whole, dots and all (split
    at every dot, ``http://news.example.org/a.html`` was named ``http://news example org/a html``)."""
    parts = where.split(".", 2)
    if len(parts) == 2 and parts[1].endswith("]") and "[" in parts[1]:
        field, _, index = parts[1][:-1].partition("[")
        parts[1:] = [field, index]
    return parts


def given_revisit(fields: Mapping[str, Any], kind: str) -> dict[str, Any] | None:
    """The whole RevisitSettings a caller gave for a ``kind`` definition (the policy's defaults filled in), or
    None (not given, or not a continuous definition: :func:`with_references` refused a value). The definition form
    shows only some of them; the others must come from here, not from what was stored or the defaults (a
    ``replan_interval_s`` given to ``harvests create --revisit`` was dropped); ``null`` is the defaults (it was
    the defaults for the settings the form shows and the stored values for the others). Call after
    :func:`with_references`, which names a bad value."""
    if kind != HarvestDefinition.CONTINUOUS or "revisit_settings" not in fields:
        return None
    return RevisitSettings.from_dict(fields["revisit_settings"] or {}).to_dict()  # null: the defaults, all of them


def create(
    kind: str,
    fields: Mapping[str, Any],
    seeds: str | None = None,
    template: str | None = None,
    max_objects: int | None = None,
    max_bytes: int | None = None,
    activate: bool = False,
) -> Created:
    """Create a ``kind`` definition from ``fields`` (DefinitionForm's fields; ``channel``, ``schedule`` and
    ``previous`` by name or id), then add ``seeds`` (selective; one URL per line) crawled with crawl
    template ``template`` (default: NETHARVEST_DEFAULT_TEMPLATE); ``max_objects``/``max_bytes`` are the
    per-domain budget (selective: of the configurations made for the seeds; snapshot: the definition's)."""
    if kind not in KINDS:
        raise Invalid([(["body", "kind"], f"choose one of {', '.join(KINDS)}")])
    data = with_references(fields, kind)
    budget = {k: v for k, v in (("max_objects", max_objects), ("max_bytes", max_bytes)) if v is not None}
    for name, value in budget.items():
        if value < -1:
            raise Invalid([(["body", name], "must be -1 (unlimited), 0 (excluded) or a positive number")])
    if kind == HarvestDefinition.SNAPSHOT:
        if seeds is not None or template is not None:
            raise Invalid(
                [
                    (
                        ["body", "seeds" if seeds is not None else "template"],
                        "a snapshot harvest takes every domain's default configuration: no seeds or template",
                    )
                ]
            )
        data.update(budget)
    chosen = None
    if template is not None:
        chosen = CrawlTemplate.objects.filter(pk=api_forms.reference(CrawlTemplate, template, "template")).first()
        if not chosen.active:
            raise Invalid([(["body", "template"], f"the crawl template {chosen.name!r} is inactive")])
    settings = given_revisit(fields, kind)
    instance = None if settings is None else HarvestDefinition(kind=kind, revisit_settings=settings)
    form = api_forms.bound(DefinitionForm, data, instance, kind=kind)
    with transaction.atomic():
        definition = form.save()
        if form.cleaned_data.get("next_date"):
            scheduler.set_next(definition, form.cleaned_data["next_date"])
        out = Created(definition)
        if seeds is not None:
            # The budget goes to the configurations made for the seeds.
            result = seeding.add_seeds(definition, seeds, chosen, **budget)
            if not result.ok:
                raise SeedLinesInvalid(result.errors)
            out.seeds = sum(len(s) for s in result.seeds.values())
            out.domains, out.created_domains = len(result.seeds), result.created_domains
        if activate and kind != HarvestDefinition.CONTINUOUS:
            scheduler.activate(definition)  # refused: nothing was made
    if activate and kind == HarvestDefinition.CONTINUOUS:
        # After the commit: activating a continuous definition publishes its job, whose message must not reach
        # a harvester before the rows it names are committed.
        try:
            scheduler.activate(definition)
        except scheduler.SchedulerError as exc:
            raise scheduler.SchedulerError(f"{definition.name} was created, but not activated: {exc}") from None
    definition.refresh_from_db()
    return out
