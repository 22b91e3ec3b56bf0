"""Model invariants: bad input gets a clear message and nothing is saved."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import ProtectedError
from django.utils import timezone

from harvester.contracts import CrawlSettings
from orchestrator.harvest.curation.domains import create_domains, default_seeds
from orchestrator.harvest.models import (
    CrawlTemplate,
    Domain,
    DomainConfiguration,
    ExtendedField,
    GlobalCrawlerTrapList,
    HarvestChannel,
    HarvestDefinition,
    Schedule,
    SeedList,
)

pytestmark = pytest.mark.django_db


def make_domain(name="example.fr") -> Domain:
    create_domains([name])
    return Domain.objects.get(name=name)


def test_new_domain_gets_default_seeds_and_a_default_configuration():
    domain = make_domain("bibliotek.dk")
    config = domain.default_configuration
    assert config is not None and config.name == "defaultconfig" and config.template.name == "default"
    assert (config.max_objects, config.max_bytes) == (-1, -1)
    (seedlist,) = config.seedlists.all()
    assert seedlist.domain == domain
    assert (
        seedlist.active_seeds
        == default_seeds("bibliotek.dk")
        == ["http://bibliotek.dk/", "http://www.bibliotek.dk/", "https://bibliotek.dk/", "https://www.bibliotek.dk/"]
    )


def test_an_ip_domain_gets_seeds_without_www():
    assert default_seeds("127.0.0.1") == ["http://127.0.0.1/", "https://127.0.0.1/"]
    assert default_seeds("2001:db8::1") == ["http://[2001:db8::1]/", "https://[2001:db8::1]/"]


def test_create_domains_skips_existing_and_duplicates():
    first = create_domains(["a.dk", "b.dk", "a.dk"])
    second = create_domains(["b.dk", "c.dk"])
    assert sorted(first.created) == ["a.dk", "b.dk"]
    assert second.created == ["c.dk"] and second.existing == 1
    assert Domain.objects.count() == 3
    assert DomainConfiguration.objects.filter(is_default=True).count() == 3


def test_bad_domain_name_is_refused_and_nothing_saved():
    domain = Domain(name="www.example.fr")
    with pytest.raises(ValidationError) as exc:
        domain.full_clean()
    assert "the domain is example.fr" in str(exc.value.message_dict["name"])
    assert not Domain.objects.exists()


def test_bad_trap_regex_on_a_domain_names_the_line():
    domain = make_domain()
    domain.crawler_traps = ".*/calendar/.*\n.*[unclosed"
    with pytest.raises(ValidationError) as exc:
        domain.full_clean()
    assert exc.value.message_dict["crawler_traps"][0].startswith("line 2:")
    domain.refresh_from_db()
    assert domain.crawler_traps == ""


def test_bad_seed_is_refused_with_line_number_and_not_saved():
    domain = make_domain()
    seeds = SeedList(domain=domain, name="news", seeds="http://example.fr/news\nmailto:x@example.fr")
    with pytest.raises(ValidationError) as exc:
        seeds.full_clean()
    assert exc.value.message_dict["seeds"][0].startswith("line 2: 'mailto:x@example.fr'")
    assert not SeedList.objects.filter(name="news").exists()


def test_seed_list_needs_an_active_seed():
    domain = make_domain()
    with pytest.raises(ValidationError, match="at least one active URL"):
        SeedList(domain=domain, name="x", seeds="# http://example.fr/old").full_clean()


def test_aliases_cannot_chain_or_point_to_themselves():
    a, b, c = make_domain("a.dk"), make_domain("b.dk"), make_domain("c.dk")
    b.alias_of = a
    b.full_clean()
    b.save()
    c.alias_of = b
    with pytest.raises(ValidationError, match="no alias chains"):
        c.full_clean()
    a.alias_of = a
    with pytest.raises(ValidationError, match="itself"):
        a.full_clean()
    a.alias_of = make_domain("d.dk")
    with pytest.raises(ValidationError, match="has aliases of its own"):
        a.full_clean()


def test_alias_expiry():
    a, b = make_domain("a.dk"), make_domain("b.dk")
    b.alias_of, b.alias_expires = a, timezone.now() - timedelta(days=1)
    assert not b.alias_is_active()
    b.alias_expires = timezone.now() + timedelta(days=1)
    assert b.alias_is_active()


def test_domains_are_never_deleted():
    domain = make_domain()
    with pytest.raises(ValidationError, match="never deleted"):
        domain.delete()
    with pytest.raises(ProtectedError):
        Domain.objects.filter(pk=domain.pk).delete()
    assert Domain.objects.filter(pk=domain.pk).exists()


def test_one_default_configuration_per_domain_and_budget_range_enforced_by_the_database():
    domain = make_domain()
    template = CrawlTemplate.objects.get(name="default")
    with pytest.raises(IntegrityError), transaction.atomic():
        DomainConfiguration.objects.create(domain=domain, name="second", template=template, is_default=True)
    with pytest.raises(IntegrityError), transaction.atomic():
        DomainConfiguration.objects.create(domain=domain, name="bad", template=template, max_objects=-2)
    with pytest.raises(ValidationError, match="-1 \\(unlimited\\)"):
        DomainConfiguration(domain=domain, name="bad", template=template, max_bytes=-5).full_clean()


def test_template_gives_the_harvester_its_settings_and_validates_them():
    template = CrawlTemplate.objects.get(name="default")
    assert template.crawl_settings() == CrawlSettings()
    template.min_delay_ms, template.max_delay_ms = 5000, 1000
    with pytest.raises(ValidationError) as exc:
        template.full_clean()
    assert "must not exceed max_delay_ms" in str(exc.value)
    template.min_delay_ms = 0
    template.user_agent = "MyBot/1.0"
    with pytest.raises(ValidationError, match="operator contact"):
        template.full_clean()


def test_schedule_validation_explains_missing_and_irrelevant_times():
    weekly = Schedule(name="weekly", every=1, unit="week", anytime=False, at_minute=0, at_hour=3)
    with pytest.raises(ValidationError) as exc:
        weekly.full_clean()
    assert "at_weekday" in exc.value.message_dict
    weekly.at_weekday = 1
    weekly.full_clean()
    assert weekly.describe() == "every week on Monday at 03:00 UTC"
    hourly = Schedule(name="h", unit="hour", anytime=False, at_minute=5, at_day_of_month=3)
    with pytest.raises(ValidationError) as exc:
        hourly.full_clean()
    assert "does not apply" in exc.value.message_dict["at_day_of_month"][0]
    runs = Schedule(name="r", unit="day", end="runs")
    with pytest.raises(ValidationError, match="number of runs"):
        runs.full_clean()


def test_harvest_definition_rules_per_kind():
    focused = HarvestChannel.objects.get(name="focused")
    daily = Schedule.objects.create(name="daily")
    hd = HarvestDefinition(name="news", kind="selective", channel=focused, active=True)
    with pytest.raises(ValidationError, match="needs a schedule"):
        hd.full_clean()
    hd.schedule = daily
    hd.crawler_traps = "(("
    with pytest.raises(ValidationError) as exc:
        hd.full_clean()
    assert exc.value.message_dict["crawler_traps"][0].startswith("line 1:")
    snapshot = HarvestDefinition(name="broad", kind="snapshot", channel=focused, schedule=daily)
    with pytest.raises(ValidationError, match="only selective harvests run on a schedule"):
        snapshot.full_clean()


def test_default_channels_exist_with_their_queues():
    assert {(c.name, c.priority, c.queue) for c in HarvestChannel.objects.all()} == {
        ("focused", "high", "harvest.focused"),
        ("snapshot", "low", "harvest.snapshot"),
        ("continuous", "high", "harvest.continuous"),
    }  # continuous harvests' own channel (migration 0011)


def test_extended_fields_are_typed_and_validated():
    ExtendedField.objects.create(owner="domain", name="publisher", label="Publisher", required=True)
    ExtendedField.objects.create(owner="domain", name="founded", label="Founded", kind="date")
    ExtendedField.objects.create(owner="domain", name="genre", label="Genre", kind="choice", choices="news\nblog")
    domain = make_domain()
    domain.extended = {"founded": "1999-02-30", "genre": "poetry"}
    with pytest.raises(ValidationError) as exc:
        domain.full_clean()
    messages = " ".join(exc.value.message_dict["extended"])
    assert "Publisher is required" in messages and "not a valid date" in messages
    assert "not one of the allowed values" in messages
    domain.extended = {"publisher": "Politiken", "founded": "1999-02-03", "genre": "news"}
    domain.full_clean()
    domain.extended = {"nope": 1, "publisher": "x"}
    with pytest.raises(ValidationError, match="unknown extended field"):
        domain.full_clean()


def test_global_trap_lists_only_active_ones_apply():
    GlobalCrawlerTrapList.objects.create(name="calendars", traps=".*/calendar/.*")
    GlobalCrawlerTrapList.objects.create(name="old", traps=".*old.*", active=False)
    assert GlobalCrawlerTrapList.active_traps() == [".*/calendar/.*"]
    with pytest.raises(ValidationError, match="line 1"):
        GlobalCrawlerTrapList(name="bad", traps="*oops").full_clean()
