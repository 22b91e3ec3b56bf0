"""Domains, their seed lists and configurations.

The domain list is a keyset page over millions of names (``after`` = the last name of the previous page,
as the web UI's search: orchestrator.harvest.curation.domainsearch), never an OFFSET or a COUNT(*).
"""

from datetime import datetime

from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema, Status
from ninja.pagination import paginate

from orchestrator.api import forms
from orchestrator.api.errors import Invalid
from orchestrator.api.security import role
from orchestrator.harvest.curation import domainsearch
from orchestrator.harvest.curation.domains import create_domains
from orchestrator.harvest.models import CrawlTemplate, Domain, DomainConfiguration, HarvestInfo, SeedList
from webui.access import CURATE, READ
from webui.forms.domains import ConfigurationForm, DomainForm, DomainNamesForm, SeedListForm

router = Router(tags=["domains"])


class DomainOut(Schema):
    id: int
    name: str
    alias_of: str | None = Field(None, description="The domain this one is an alias of.")
    alias_expires: datetime | None
    comments: str
    crawler_traps: str = Field(description="One RE2 regex per line.")
    extended: dict
    created: datetime

    @staticmethod
    def resolve_alias_of(obj: Domain) -> str | None:
        return obj.alias_of.name if obj.alias_of_id else None


class DomainPage(Schema):
    items: list[DomainOut]
    next_after: str | None = Field(description="Pass as ``after`` for the next page; null on the last page.")


class DomainsIn(Schema):
    names: list[str] = Field(description="Registrable domains (example.fr, not www.example.fr).")


class DomainsCreated(Schema):
    created: list[str]
    existing: int


class DomainChange(Schema):
    alias_of: str | None = Field(None, description="A domain name; empty = not an alias.")
    alias_expires: datetime | None = None
    comments: str | None = None
    crawler_traps: str | None = None
    extended: dict | None = None


class SeedListOut(Schema):
    id: int
    domain: str = Field(alias="domain.name")
    name: str
    seeds: str = Field(description="One URL per line; a line starting with # is inactive.")
    comments: str


class SeedListIn(Schema):
    name: str | None = None
    seeds: str | None = None
    comments: str | None = None


class ConfigurationOut(Schema):
    id: int
    domain: str = Field(alias="domain.name")
    name: str
    template: str = Field(alias="template.name")
    seedlists: list[int]
    max_objects: int = Field(description="-1 = unlimited, 0 = excluded from harvests.")
    max_bytes: int
    is_default: bool
    comments: str

    @staticmethod
    def resolve_seedlists(obj: DomainConfiguration) -> list[int]:
        return [s.pk for s in obj.seedlists.all()]


class ConfigurationIn(Schema):
    name: str | None = None
    template: int | str | None = Field(None, description="Crawl template id or name (an active one).")
    seedlists: list[int] | None = Field(None, description="Ids of the domain's seed lists.")
    max_objects: int | None = None
    max_bytes: int | None = None
    is_default: bool | None = None
    comments: str | None = None


class HistoryOut(Schema):
    job: int = Field(alias="job_id")
    harvest: str = Field(alias="harvest.name")
    configuration: str = Field(alias="configuration.name")
    objects: int = Field(alias="objects_count")
    bytes: int = Field(alias="bytes_count")
    stop_reason: str
    date: datetime


def _domain(name: str) -> Domain:
    return get_object_or_404(Domain.objects.select_related("alias_of"), name=name.lower())


@router.get("/domains", auth=role(READ), response=DomainPage, summary="Search domains (keyset pages by name)")
def list_domains(request, q: str = "", field: str = "name", after: str = "", limit: int = 100):
    """``q``: a name prefix, or a pattern with ``*`` and ``?``; with ``field`` = ``crawler_traps`` or
    ``comments``, text found anywhere in it."""
    if field not in domainsearch.FIELDS:
        raise Invalid([(["query", "field"], f"choose one of {', '.join(domainsearch.FIELDS)}")])
    if not 1 <= limit <= 1000:
        raise Invalid([(["query", "limit"], "a number from 1 to 1000")])
    try:
        page = domainsearch.search(q, field, after, limit)
    except domainsearch.SearchTooBroad as exc:
        raise Invalid([(["query", "q"], str(exc))]) from None
    return {"items": page.domains, "next_after": page.next_after}


@router.post(
    "/domains",
    auth=role(CURATE),
    response={201: DomainsCreated},
    summary="Create domains (default seeds and configuration)",
)
def add_domains(request, payload: DomainsIn):
    """Each new domain gets its default seed list and configuration; existing names are left alone."""
    form = forms.bound(DomainNamesForm, {"names": "\n".join(payload.names)})
    result = create_domains(form.cleaned_data["names"])
    return Status(201, {"created": result.created, "existing": result.existing})


@router.get("/domains/{name}", auth=role(READ), response=DomainOut, summary="One domain")
def get_domain(request, name: str):
    return _domain(name)


@router.patch(
    "/domains/{name}",
    auth=role(CURATE),
    response=DomainOut,
    summary="Change a domain (alias, traps, comments, extended)",
)
def change_domain(request, name: str, payload: DomainChange):
    domain = forms.save(DomainForm, payload.dict(exclude_unset=True), _domain(name))
    return _domain(domain.name)


@router.get(
    "/domains/{name}/history",
    auth=role(READ),
    response=list[HistoryOut],
    summary="What each job harvested of the domain",
)
@paginate
def domain_history(request, name: str):
    return (
        HarvestInfo.objects.filter(domain=_domain(name))
        .select_related("harvest", "configuration")
        .order_by("-date", "-id")
    )


# -- seed lists ----------------------------------------------------------------------------------------
@router.get("/domains/{name}/seedlists", auth=role(READ), response=list[SeedListOut], summary="A domain's seed lists")
def list_seedlists(request, name: str):
    return SeedList.objects.filter(domain=_domain(name)).select_related("domain")


@router.post(
    "/domains/{name}/seedlists", auth=role(CURATE), response={201: SeedListOut}, summary="Add a seed list to a domain"
)
def add_seedlist(request, name: str, payload: SeedListIn):
    return Status(201, forms.save(SeedListForm, payload.dict(exclude_unset=True), domain=_domain(name)))


@router.patch(
    "/domains/{name}/seedlists/{seedlist_id}", auth=role(CURATE), response=SeedListOut, summary="Change a seed list"
)
def change_seedlist(request, name: str, seedlist_id: int, payload: SeedListIn):
    domain = _domain(name)
    seedlist = get_object_or_404(SeedList, pk=seedlist_id, domain=domain)
    return forms.save(SeedListForm, payload.dict(exclude_unset=True), seedlist, domain=domain)


# -- configurations -------------------------------------------------------------------------------------
def _configurations(domain: Domain):
    return (
        DomainConfiguration.objects.filter(domain=domain)
        .select_related("domain", "template")
        .prefetch_related("seedlists")
    )


def _template_ref(data: dict) -> dict:
    if "template" in data:
        data["template"] = forms.reference(CrawlTemplate, data["template"], "template")
    return data


@router.get(
    "/domains/{name}/configurations",
    auth=role(READ),
    response=list[ConfigurationOut],
    summary="A domain's configurations",
)
def list_configurations(request, name: str):
    return _configurations(_domain(name))


@router.post(
    "/domains/{name}/configurations",
    auth=role(CURATE),
    response={201: ConfigurationOut},
    summary="Add a configuration to a domain",
)
def add_configuration(request, name: str, payload: ConfigurationIn):
    domain = _domain(name)
    saved = forms.save(ConfigurationForm, _template_ref(payload.dict(exclude_unset=True)), domain=domain)
    return Status(201, _configurations(domain).get(pk=saved.pk))


@router.patch(
    "/domains/{name}/configurations/{configuration_id}",
    auth=role(CURATE),
    response=ConfigurationOut,
    summary="Change a configuration (making it the default takes the flag from the old default)",
)
def change_configuration(request, name: str, configuration_id: int, payload: ConfigurationIn):
    domain = _domain(name)
    configuration = get_object_or_404(DomainConfiguration, pk=configuration_id, domain=domain)
    forms.save(ConfigurationForm, _template_ref(payload.dict(exclude_unset=True)), configuration, domain=domain)
    return _configurations(domain).get(pk=configuration_id)
