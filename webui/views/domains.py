"""Domains: search among millions, a domain's page with its history, and the edit forms."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.db import models, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from orchestrator.harvest.curation import domainsearch
from orchestrator.harvest.curation.domains import create_domains
from orchestrator.harvest.jobs import specs
from orchestrator.harvest.models import (
    Domain,
    DomainConfiguration,
    ExtendedField,
    HarvestDefinition,
    HarvestInfo,
    SeedList,
)
from webui import svg
from webui.access import CURATE, READ, require
from webui.forms.domains import ConfigurationForm, DomainForm, DomainNamesForm, SeedListForm
from webui.jinja import filesize, plural

PAGE_SIZE = 50
SEARCH_FIELDS = [("name", "name"), ("crawler_traps", "crawler traps"), ("comments", "comments")]


@require(READ)
def domain_list(request: HttpRequest) -> HttpResponse:
    """Keyset-paginated search; the total is the planner's estimate, never a COUNT(*) over millions."""
    query = request.GET.get("q", "").strip()
    field = request.GET.get("in", "name")
    if field not in domainsearch.FIELDS:
        field = "name"
    after = request.GET.get("after", "")
    try:
        page, error = domainsearch.search(query, field, after, PAGE_SIZE), ""
    except domainsearch.SearchTooBroad as exc:
        page, error = domainsearch.DomainPage([], None), str(exc)
    alias_ids = {d.alias_of_id for d in page.domains if d.alias_of_id}
    aliases = dict(Domain.objects.filter(pk__in=alias_ids).values_list("pk", "name")) if alias_ids else {}
    return render(
        request,
        "webui/domains/list.html",
        {
            "aliases": aliases,
            "page": page,
            "query": query,
            "field": field,
            "after": after,
            "fields": SEARCH_FIELDS,
            "error": error,
            "estimate": domainsearch.estimated_count(),
        },
    )


@require(CURATE)
def domain_create(request: HttpRequest) -> HttpResponse:
    form = DomainNamesForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        result = create_domains(form.cleaned_data["names"])
        messages.success(
            request, f"{plural(len(result.created), 'domain')} created, {result.existing} already existed."
        )
        if len(form.cleaned_data["names"]) == 1:
            return redirect("webui:domain", name=form.cleaned_data["names"][0])
        return redirect("webui:domains")
    return render(request, "webui/form.html", {"form": form, "title": "New domains", "submit": "Create"})


def history(domain: Domain, limit: int = 200) -> list[HarvestInfo]:
    """The domain's runs, newest first, each with ``run_seeds``: the seeds the job's frozen JobSpec gave the
    domain, so the history's replay links open what the run captured instead of a guessed ``http://<domain>/``.
    They are kept on the row when the result is recorded (:attr:`HarvestInfo.seeds`); the specs are not loaded
    (``defer``: a snapshot job's lists thousands of domains). Rows recorded before that read their job's spec
    (:func:`specs.domain_seeds`), one at a time."""
    runs = list(
        HarvestInfo.objects.filter(domain=domain)
        .select_related("harvest", "configuration", "job")
        .defer("job__spec", "job__progress")
        .order_by("-date")[:limit]
    )
    older = specs.domain_seeds({run.job_id for run in runs if run.seeds is None}, domain.name)
    for run in runs:
        run.run_seeds = run.seeds if run.seeds is not None else older.get(run.job_id, [])
    return runs


@require(READ)
def domain_detail(request: HttpRequest, name: str) -> HttpResponse:
    domain = get_object_or_404(Domain.objects.select_related("alias_of"), name=name)
    runs = history(domain)
    chrono = list(reversed(runs[:40]))
    chart = svg.columns(
        [r.bytes_count for r in chrono],
        [f"{r.date:%Y-%m-%d}" for r in chrono],
        [
            f"{r.date:%Y-%m-%d} {r.harvest.name} run {r.job.harvest_run}: {plural(r.objects_count, 'object')}, "
            f"{filesize(r.bytes_count)}, {r.stop_reason}"
            for r in chrono
        ],
        fmt=filesize,
        title="bytes per harvest",
    )
    extended = [(ext, domain.extended.get(ext.name)) for ext in ExtendedField.objects.filter(owner="domain")]
    return render(
        request,
        "webui/domains/detail.html",
        {
            "domain": domain,
            "configurations": domain.configurations.select_related("template").prefetch_related("seedlists"),
            "seedlists": domain.seedlists.all(),
            "aliases": list(domain.aliases.all()[:100]),
            "extended": extended,
            "runs": runs,
            "chart": chart,
            "qa_marks": list(domain.qa_marks.select_related("job__harvest")[:100]),
            "definitions": HarvestDefinition.objects.filter(configurations__domain=domain).distinct(),
        },
    )


@require(CURATE)
def domain_edit(request: HttpRequest, name: str) -> HttpResponse:
    domain = get_object_or_404(Domain, name=name)
    form = DomainForm(request.POST or None, instance=domain)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, f"{domain.name} saved.")
        return redirect("webui:domain", name=domain.name)
    return render(
        request,
        "webui/form.html",
        {"form": form, "title": f"Edit {domain.name}", "submit": "Save", "back": ("webui:domain", domain.name)},
    )


@require(CURATE)
def seedlist_edit(request: HttpRequest, name: str, pk: int | None = None) -> HttpResponse:
    return _edit_part_of_domain(request, name, pk, SeedList, SeedListForm, "seed list")


@require(CURATE)
def configuration_edit(request: HttpRequest, name: str, pk: int | None = None) -> HttpResponse:
    return _edit_part_of_domain(request, name, pk, DomainConfiguration, ConfigurationForm, "configuration")


def _edit_part_of_domain(
    request: HttpRequest,
    name: str,
    pk: int | None,
    model: type[models.Model],
    form_class: type[forms.ModelForm],
    noun: str,
) -> HttpResponse:
    """Create or edit one of a domain's seed lists or configurations (saved in one transaction: a
    configuration may move the domain's default)."""
    domain = get_object_or_404(Domain, name=name)
    instance = get_object_or_404(model, pk=pk, domain=domain) if pk else None
    form = form_class(request.POST or None, instance=instance, domain=domain)
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            form.save()
        messages.success(request, f"{noun.capitalize()} {form.instance.name} of {domain.name} saved.")
        return redirect("webui:domain", name=domain.name)
    title = f"{noun.capitalize()} {instance.name} of {domain.name}" if instance else f"New {noun} for {domain.name}"
    return render(
        request,
        "webui/form.html",
        {"form": form, "title": title, "submit": "Save", "back": ("webui:domain", domain.name)},
    )
