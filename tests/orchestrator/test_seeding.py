"""Pasted seeds into a selective harvest: domains, seed lists and configurations made as needed; bad
lines reported by number with nothing saved."""

from __future__ import annotations

import pytest

from orchestrator.harvest.curation import seeding
from orchestrator.harvest.models import CrawlTemplate, Domain, DomainConfiguration, HarvestChannel, SeedList
from tests.orchestrator import factories

pytestmark = pytest.mark.django_db


def test_seeds_create_domains_seedlists_and_configurations():
    factories.domain("example.fr")
    hd = factories.selective_definition("elections 2026")
    result = seeding.add_seeds(
        hd,
        "https://www.example.fr/politique/\n\n# a comment\nnews.Bücher.de/a?b=1\n"
        "http://example.fr/\nhttps://www.example.fr/politique/\n",
    )
    assert result.ok, result.errors
    assert result.created_domains == ["xn--bcher-kva.de"]
    assert result.seeds == {
        "example.fr": ["https://www.example.fr/politique/", "http://example.fr/"],
        "xn--bcher-kva.de": ["http://news.xn--bcher-kva.de/a?b=1"],
    }
    config = DomainConfiguration.objects.get(domain__name="example.fr", name="elections 2026")
    assert [s.name for s in config.seedlists.all()] == ["elections 2026"]
    assert config.seedlists.get().active_seeds == ["https://www.example.fr/politique/", "http://example.fr/"]
    assert set(hd.configurations.values_list("domain__name", flat=True)) == {"example.fr", "xn--bcher-kva.de"}
    # The new domain also got its defaults, like every domain.
    assert Domain.objects.get(name="xn--bcher-kva.de").default_configuration is not None


def test_adding_again_merges_seeds_without_duplicates():
    hd = factories.selective_definition("culture")
    seeding.add_seeds(hd, "http://example.fr/a")
    result = seeding.add_seeds(hd, "http://example.fr/b\nhttp://example.fr/a")
    assert result.ok
    assert SeedList.objects.get(domain__name="example.fr", name="culture").active_seeds == [
        "http://example.fr/a",
        "http://example.fr/b",
    ]
    assert hd.configurations.count() == 1


def test_any_bad_line_saves_nothing_and_every_bad_line_is_reported():
    hd = factories.selective_definition("culture")
    result = seeding.add_seeds(
        hd, "http://good.fr/\nftp://files.fr/\nhttp://localhost/\nhttp://a b.fr/\nhttp://x.fr:99999/"
    )
    assert [(e.line, e.text) for e in result.errors] == [
        (2, "ftp://files.fr/"),
        (3, "http://localhost/"),
        (4, "http://a b.fr/"),
        (5, "http://x.fr:99999/"),
    ]
    assert "only http:// and https://" in result.errors[0].message
    assert "public suffix" in result.errors[1].message
    assert str(result.errors[0]).startswith("line 2: 'ftp://files.fr/'")
    assert not Domain.objects.exists() and not hd.configurations.exists()


def test_urls_of_other_schemes_are_refused_for_their_scheme():
    """``javascript:alert(1)`` was read as host "javascript" with port "alert(1)": "the port is not a number"."""
    lines = [
        "javascript:alert(1)",
        "mailto:curator@example.fr",
        "data:text/html,<b>x</b>",
        "ftp://files.fr/",
        "file:///etc/passwd",
        "JavaScript:void(0)",
    ]
    result = seeding.add_seeds(factories.selective_definition(), "\n".join(lines))
    assert [(e.line, e.text, e.message) for e in result.errors] == [
        (n, line, "only http:// and https:// URLs can be seeds") for n, line in enumerate(lines, start=1)
    ]
    # A bare host, with or without a port, still gets http://.
    result = seeding.add_seeds(factories.selective_definition("other"), "example.fr:8080/x\nexample.fr:81")
    assert result.ok and result.seeds == {"example.fr": ["http://example.fr:8080/x", "http://example.fr:81/"]}


def test_empty_paste_is_an_error():
    result = seeding.add_seeds(factories.selective_definition(), "\n# only a comment\n")
    assert not result.ok and "no seed URL" in result.errors[0].message


def test_ip_seeds_are_their_own_domain():
    result = seeding.add_seeds(factories.selective_definition(), "http://127.0.0.1:8080/site/")
    assert result.ok and list(result.seeds) == ["127.0.0.1"]


def test_only_selective_harvests_take_seeds():
    with pytest.raises(ValueError, match="selective"):
        seeding.add_seeds(factories.snapshot_definition(), "http://example.fr/")


def test_attaching_twice_changes_nothing_the_second_time_in_every_mode():
    """The one service behind seeding, the selection transfer, the demo and the preload (attach.py)."""
    from orchestrator.harvest.curation import attach

    domain = factories.domain("example.fr")
    first, other = factories.selective_definition("first"), factories.selective_definition("other")
    template = domain.default_configuration.template
    kept = attach.attach(
        domain.pk, "mine", ["http://example.fr/a"], definition_id=first.pk, template_id=template.pk, max_objects=10
    )
    assert kept.created and kept.changed == []
    again = attach.attach(
        domain.pk, "mine", ["http://example.fr/b"], definition_id=other.pk, template_id=template.pk, max_objects=99
    )  # merge, keep, add
    assert not again.created and again.changed == ["seeds"] and again.configuration.max_objects == 10
    assert set(again.configuration.harvest_definitions.all()) == {first, other}

    def replace_with_c() -> attach.Attached:
        return attach.attach(
            domain.pk,
            "mine",
            ["http://example.fr/c"],
            definition_id=other.pk,
            template_id=template.pk,
            max_objects=99,
            seeds_mode=attach.REPLACE,
            config_mode=attach.UPDATE,
            definitions=attach.ONLY,
        )

    replaced = replace_with_c()
    assert replaced.changed == ["seeds", "max_objects", "harvest definition"]
    assert SeedList.objects.get(domain=domain, name="mine").seeds == "http://example.fr/c"
    assert list(replaced.configuration.harvest_definitions.all()) == [other]
    same = replace_with_c()  # the same request again changes nothing
    assert same.changed == [] and DomainConfiguration.objects.filter(domain=domain, name="mine").count() == 1


@pytest.mark.parametrize("kind", ["selective", "continuous"])
def test_a_domain_the_harvest_has_through_another_configuration_stays_one_configuration(kind: str):
    """The demo's definitions harvest their site through a configuration of their own name ("demo-testsite"), as
    a selection's or a domain's default configuration may: a seed pasted for that site keeps its template,
    budget and seeds, and the harvest still has the domain once (two configurations of one domain made a
    continuous job whose result could not be recorded, and a selective run two jobs of one site)."""
    from orchestrator.harvest.curation import attach
    from orchestrator.harvest.curation.domains import default_template

    domain = factories.domain("example.fr")
    slow = CrawlTemplate.objects.create(name="slow", min_delay_ms=3000, max_delay_ms=30000, delay_factor=5)
    hd = factories.selective_definition("site watch")
    other = factories.selective_definition("another harvest")
    if kind == "continuous":
        hd.kind, hd.channel = hd.CONTINUOUS, HarvestChannel.objects.get(name="continuous")
        hd.save()
    for definition in (hd, other):
        attach.attach(
            domain.pk,
            "shared",
            ["http://example.fr/"],
            definition_id=definition.pk,
            template_id=slow.pk,
            max_objects=150,
        )
    result = seeding.add_seeds(hd, "http://example.fr/new.html", template=default_template(), max_objects=5)
    assert result.ok, result.errors
    (config,) = hd.configurations.filter(domain=domain)
    assert (config.template_id, config.max_objects) == (slow.pk, 150)
    assert result.kept == [config]
    assert seeding.seeds_of([config]) == ["http://example.fr/", "http://example.fr/new.html"]
    # the other harvest keeps the shared configuration, without the pasted seed
    (shared,) = other.configurations.filter(domain=domain)
    assert shared.name == "shared" and seeding.seeds_of([shared]) == ["http://example.fr/"]
    # pasting again goes to the same configuration
    seeding.add_seeds(hd, "http://example.fr/again.html")
    assert list(hd.configurations.filter(domain=domain)) == [config]
    assert seeding.seeds_of([config])[-1] == "http://example.fr/again.html"


def test_removing_a_seed_other_harvests_share_is_refused_and_changes_nothing():
    """`harvests seeds --remove`: a seed in a list another harvest (or a domain's default configuration, which
    broad crawls use) shares would be taken from them too; refused, all or nothing. Its own list's seed goes."""
    from orchestrator.harvest.curation import attach
    from orchestrator.harvest.curation.domains import default_template

    domain = factories.domain("example.fr")
    hd = factories.selective_definition("site watch")
    other = factories.selective_definition("another harvest")
    for definition in (hd, other):
        attach.attach(
            domain.pk, "shared", ["http://example.fr/"], definition_id=definition.pk, template_id=default_template().pk
        )
    assert seeding.add_seeds(hd, "http://example.fr/own.html").ok  # hd's own list, through its own configuration
    refused = seeding.remove_seeds(hd, ["http://example.fr/own.html", "http://example.fr/"])
    assert not refused.ok and "'shared' of example.fr, which harvest 'another harvest' uses too" in refused.errors[0]
    assert seeding.seeds_of(hd.configurations.all()) == ["http://example.fr/", "http://example.fr/own.html"]
    assert seeding.seeds_of(other.configurations.all()) == ["http://example.fr/"]
    assert seeding.remove_seeds(hd, ["example.fr/nothing"]).errors == ["example.fr/nothing: not a seed of site watch"]
    done = seeding.remove_seeds(hd, ["example.fr/own.html"])  # as typed in a paste: the same seed
    assert done.ok and [s.name for s in done.lists] == ["site watch"]
    assert seeding.seeds_of(hd.configurations.all()) == ["http://example.fr/"]
    # a domain's default list (a broad crawl's seeds) is not taken from either
    default = factories.selective_definition("defaults")
    default.configurations.set([domain.default_configuration])
    (seed,) = seeding.seeds_of([domain.default_configuration])[:1]
    assert "default configuration" in seeding.remove_seeds(default, [seed]).errors[0]


def test_a_harvest_holding_a_domain_twice_holds_it_once_after_a_paste():
    """Two configurations of one domain in a harvest (made by hand in the admin, or by a paste before
    2026-11-29): a paste for that domain leaves one, crawling every seed of both."""
    from orchestrator.harvest.curation import attach
    from orchestrator.harvest.curation.domains import default_template

    domain = factories.domain("example.fr")
    hd = factories.selective_definition("twice")
    for name, seed in (("first", "http://example.fr/a"), ("second", "http://example.fr/b")):
        attach.attach(domain.pk, name, [seed], definition_id=hd.pk, template_id=default_template().pk)
    assert seeding.add_seeds(hd, "http://example.fr/c").ok
    (config,) = hd.configurations.filter(domain=domain)
    assert sorted(seeding.seeds_of([config])) == ["http://example.fr/a", "http://example.fr/b", "http://example.fr/c"]
