"""Domain pages: search, the domain page with its history chart, and the edit forms' validation."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from orchestrator.harvest.archive import replay
from orchestrator.harvest.models import Domain, DomainConfiguration, ExtendedField, HarvestInfo, Job, SeedList
from tests.orchestrator import factories

pytestmark = pytest.mark.django_db


def text(response) -> str:
    return response.content.decode()


def old_history_row(job, domain, **figures) -> HarvestInfo:
    """A history row as recorded before HarvestInfo kept its seeds (the page reads them from the job's spec)."""
    figures = {"objects_count": 1, "bytes_count": 1, "stop_reason": "DOWNLOAD_COMPLETE"} | figures
    return HarvestInfo.objects.create(
        job=job, harvest=job.harvest, domain=domain, configuration=domain.default_configuration, **figures
    )


def test_search_pages_by_keyset(viewer):
    factories.domain("alpha.fr")
    for name in ("beta.fr", "gamma.fr"):
        factories.domain(name)
    from webui.views import domains as view

    view.PAGE_SIZE, old = 2, view.PAGE_SIZE
    try:
        first = viewer.get(reverse("webui:domains"))
        assert "alpha.fr" in text(first) and "beta.fr" in text(first) and "gamma.fr" not in text(first)
        assert "after=beta.fr" in text(first)
        second = viewer.get(reverse("webui:domains"), {"after": "beta.fr"})
        assert "gamma.fr" in text(second) and "alpha.fr" not in text(second) and "after=" not in text(second)
    finally:
        view.PAGE_SIZE = old
    found = viewer.get(reverse("webui:domains"), {"q": "*mm*"})
    assert "gamma.fr" in text(found) and "beta.fr" not in text(found)
    assert "No domain matches" in text(viewer.get(reverse("webui:domains"), {"q": "zzz"}))


def test_domain_page_shows_configurations_aliases_traps_extended_and_history(viewer):
    ExtendedField.objects.create(owner="domain", name="publisher", label="Publisher")
    domain = factories.domain("example.fr")
    alias = factories.domain("example-alias.fr")
    Domain.objects.filter(pk=alias.pk).update(alias_of=domain)
    Domain.objects.filter(pk=domain.pk).update(crawler_traps=r".*/agenda/.*", extended={"publisher": "Le Monde"})
    job = factories.job(domains=["example.fr"], status="DONE")
    old_history_row(job, domain, objects_count=1234, bytes_count=5 * 1024 * 1024, stop_reason="max_bytes")
    listing = text(viewer.get(reverse("webui:domains"), {"q": "example-"}))
    assert 'href="/domains/example.fr/">example.fr</a>' in listing  # the alias's target, linked
    page = text(viewer.get(reverse("webui:domain", args=["example.fr"])))
    for expected in (
        "defaultconfig",
        "defaultseeds",
        "https://www.example.fr/",
        "example-alias.fr",
        ".*/agenda/.*",
        "Le Monde",
        "1\u202f234",
        "5.0 MB",
        "max_bytes",
        "<svg",
        "news",
    ):
        assert expected in page, expected
    # The run's replay link opens the seed its frozen JobSpec gave the domain, at the run's time (not a guess
    # such as http://example.fr/); the seed list edited since changes nothing.
    seeds = job.spec["domains"][0]["seeds"]
    assert seeds
    SeedList.objects.filter(domain=domain).update(seeds="http://elsewhere.example.fr/")
    page = text(viewer.get(reverse("webui:domain", args=["example.fr"])))
    history = page.split("<h2>Harvest history</h2>")[1]
    when = HarvestInfo.objects.get(job=job).date.strftime("%Y%m%d%H%M%S")
    assert re.findall(r'<a href="([^"]+)" class="replay-link">', history) == [replay.replay_url(s, when) for s in seeds]
    assert "Edit domain" not in page  # a viewer sees no edit links
    assert viewer.get(reverse("webui:domain", args=["missing.fr"])).status_code == 404


def test_history_replays_the_seeds_kept_with_each_run_without_reading_specs():
    """A run recorded with its seeds (intake keeps them) links to those; a run recorded before they were kept
    reads its job's spec. Only the older run's spec is read: a broad-crawl job's is megabytes."""
    from orchestrator.harvest.jobs import intake

    domain = factories.domain("example.fr")
    older = factories.job(domains=["example.fr"], status="DONE")
    old_history_row(older, domain)
    kept = factories.job(factories.selective_definition("kept"), domains=["example.fr"], status="STARTED")
    domain_result = {"name": "example.fr", "configuration": "defaultconfig", "objects": 2, "bytes": 2}
    intake.record_result(
        {
            "version": 1,
            "job_id": kept.pk,
            "status": "DONE",
            "started": "2026-11-22T10:00:00Z",
            "ended": "2026-11-22T11:00:00Z",
            "domains": [domain_result | {"stop_reason": "DOWNLOAD_COMPLETE"}],
            "files": [],
        }
    )
    seeds = kept.spec["domains"][0]["seeds"]
    Job.objects.filter(pk=kept.pk).update(spec={"domains": [{"name": "example.fr", "seeds": ["http://not.read/"]}]})
    Job.objects.filter(pk=older.pk).update(spec={"domains": [{"name": "example.fr", "seeds": ["http://older.fr/"]}]})
    from webui.views.domains import history

    runs = {run.job_id: run.run_seeds for run in history(domain)}
    assert runs == {kept.pk: seeds, older.pk: ["http://older.fr/"]}


def test_create_domains_by_lines_reports_each_bad_line(curator):
    response = curator.post(reverse("webui:domain-create"), {"names": "good.fr\nwww.bad.fr\nnot a domain\n"})
    page = text(response)
    assert response.status_code == 200
    assert "line 2" in page and "the domain is bad.fr" in page and "line 3" in page
    assert not Domain.objects.exists()
    response = curator.post(reverse("webui:domain-create"), {"names": "good.fr\nBücher.de"})
    assert response.status_code == 302
    assert set(Domain.objects.values_list("name", flat=True)) == {"good.fr", "xn--bcher-kva.de"}


def test_edit_domain_validates_traps_alias_and_extended_fields(curator):
    ExtendedField.objects.create(owner="domain", name="since", label="Deposited since", kind="date")
    domain = factories.domain("example.fr")
    url = reverse("webui:domain-edit", args=["example.fr"])
    assert "Deposited since" in text(curator.get(url))
    bad = curator.post(
        url, {"crawler_traps": "ok/.*\n(unclosed", "alias_of": "nowhere.fr", "ext_since": "yesterday", "comments": "x"}
    )
    page = text(bad)
    assert bad.status_code == 200 and "Nothing was saved" in page
    assert "line 2" in page and "not a valid regular expression" in page
    assert "there is no domain" in page and "not a valid date" in page
    domain.refresh_from_db()
    assert domain.comments == "" and domain.crawler_traps == ""
    ok = curator.post(
        url,
        {
            "crawler_traps": "  ok/.*  \n\n",
            "alias_of": "",
            "ext_since": "2020-01-31",
            "comments": "Deposit agreement signed.",
        },
    )
    assert ok.status_code == 302
    domain.refresh_from_db()
    assert domain.crawler_traps == "ok/.*" and domain.extended == {"since": "2020-01-31"}


def test_a_required_extended_field_is_explained_on_its_field(curator):
    ExtendedField.objects.create(owner="domain", name="publisher", label="Publisher", required=True)
    factories.domain("example.fr")
    bad = curator.post(reverse("webui:domain-edit", args=["example.fr"]), {"ext_publisher": "", "comments": "c"})
    assert bad.status_code == 200 and text(bad).count("Publisher is required") == 1
    assert Domain.objects.get(name="example.fr").comments == ""


def test_alias_chains_are_refused(curator):
    factories.domain("a.fr")
    b = factories.domain("b.fr")
    c = factories.domain("c.fr")
    Domain.objects.filter(pk=b.pk).update(alias_of=c)
    response = curator.post(reverse("webui:domain-edit", args=["a.fr"]), {"alias_of": "b.fr"})
    assert "no alias chains" in text(response)
    response = curator.post(
        reverse("webui:domain-edit", args=["a.fr"]), {"alias_of": "c.fr", "alias_expires": "2030-01-01 00:00"}
    )
    assert response.status_code == 302
    assert Domain.objects.get(name="a.fr").alias_of == c


def test_seedlist_form(curator):
    factories.domain("example.fr")
    url = reverse("webui:seedlist-create", args=["example.fr"])
    bad = curator.post(url, {"name": "defaultseeds", "seeds": "http://example.fr/\nmailto:x@example.fr"})
    page = text(bad)
    assert "already has a seed list" in page and "line 2" in page
    assert curator.post(url, {"name": "news", "seeds": "# paused\n"}).status_code == 200
    ok = curator.post(url, {"name": "news", "seeds": "HTTP://Example.FR/news\n# http://example.fr/old"})
    assert ok.status_code == 302
    assert SeedList.objects.get(name="news").seeds == "http://example.fr/news\n# http://example.fr/old"


def test_configuration_form_and_default_switch(curator):
    domain = factories.domain("example.fr")
    seedlist = domain.seedlists.get()
    url = reverse("webui:configuration-create", args=["example.fr"])
    bad = curator.post(
        url,
        {"name": "deep", "template": domain.default_configuration.template_id, "max_objects": "-5", "max_bytes": "-1"},
    )
    page = text(bad)
    assert "at least one seed list" in page and "must be -1 (unlimited), 0 (excluded)" in page
    ok = curator.post(
        url,
        {
            "name": "deep",
            "template": domain.default_configuration.template_id,
            "seedlists": [seedlist.pk],
            "max_objects": "1000",
            "max_bytes": "-1",
            "is_default": "on",
        },
    )
    assert ok.status_code == 302
    assert DomainConfiguration.objects.get(domain=domain, is_default=True).name == "deep"
    assert list(DomainConfiguration.objects.get(name="deep").seedlists.all()) == [seedlist]


def test_a_search_too_broad_is_explained(viewer, monkeypatch):
    from orchestrator.harvest.curation import domainsearch

    def too_broad(*args, **kwargs):
        raise domainsearch.SearchTooBroad("this search reads too much of the domain table")

    monkeypatch.setattr(domainsearch, "search", too_broad)
    page = text(viewer.get(reverse("webui:domains"), {"q": "?b*"}))
    assert "reads too much of the domain table" in page and "Nothing searched" in page
