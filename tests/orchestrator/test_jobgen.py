"""Job generation: grouping, splitting, ordering by size, snapshot eligibility and limits, continuation
rules, the size estimator, and frozen specs — on the real database."""

from datetime import timedelta

import pytest
from django.utils import timezone

from harvester.contracts import ContractError, JobSpec
from orchestrator.harvest.curation.domains import create_domains
from orchestrator.harvest.jobs import jobgen, specs
from orchestrator.harvest.models import (
    CrawlTemplate,
    Domain,
    DomainConfiguration,
    GlobalCrawlerTrapList,
    HarvestInfo,
    Job,
    JobDomain,
    SeedList,
)
from tests.orchestrator import factories

pytestmark = pytest.mark.django_db


def configs(*names: str) -> list[DomainConfiguration]:
    create_domains(names)
    return [DomainConfiguration.objects.get(domain__name=n, is_default=True) for n in names]


def set_budget(
    config: DomainConfiguration, max_objects: int = -1, max_bytes: int = -1, template: CrawlTemplate | None = None
) -> None:
    config.max_objects, config.max_bytes = max_objects, max_bytes
    if template:
        config.template = template
    config.save()


def history(
    config: DomainConfiguration, objects: int, size: int, reason: str, days_ago: int, definition=None
) -> HarvestInfo:
    """A past result of ``config`` (each in its own job, as runs are)."""
    definition = definition or factories.selective_definition("history")
    job = factories.job(definition, status="DONE")
    JobDomain.objects.create(job=job, configuration=config, max_objects=-1, max_bytes=-1)
    return HarvestInfo.objects.create(
        job=job,
        harvest=definition,
        domain_id=config.domain_id,
        configuration=config,
        objects_count=objects,
        bytes_count=size,
        stop_reason=reason,
        date=timezone.now() - timedelta(days=days_ago),
    )


def jobs_of(ids: list[int]) -> list[Job]:
    order = {pk: i for i, pk in enumerate(ids)}
    return sorted(Job.objects.filter(pk__in=ids), key=lambda j: order[j.pk])


def domain_names(job: Job) -> list[str]:
    return [d["name"] for d in job.spec["domains"]]


def test_selective_groups_by_template_and_budget_and_splits_into_chunks():
    other = CrawlTemplate.objects.create(name="deep", max_hops=50)
    plain = configs("a1.fr", "a2.fr", "a3.fr", "a4.fr", "a5.fr")
    deep = configs("b1.fr", "b2.fr")
    budget = configs("c1.fr", "c2.fr", "c3.fr")
    for c in deep:
        set_budget(c, template=other)
    for c in budget:
        set_budget(c, max_objects=100)
    definition = factories.selective_definition()
    definition.configurations.set(plain + deep + budget)
    ids = jobgen.generate_jobs(definition, run=1, max_configs=2)
    jobs = jobs_of(ids)
    assert sorted(j.domain_count for j in jobs) == [1, 1, 2, 2, 2, 2]  # 5 → 2+2+1, 2 → 2, 3 → 2+1
    assert JobDomain.objects.filter(job__in=ids).count() == 10
    for job in jobs:
        spec = JobSpec.from_dict(job.spec)
        rows = list(job.domains.values_list("configuration__template_id", "max_objects", "max_bytes"))
        assert len(set(rows)) == 1  # one template and one budget per job
        assert spec.template == CrawlTemplate.objects.get(pk=rows[0][0]).name
        assert all(d.max_objects == rows[0][1] for d in spec.domains)
        assert (job.harvest_run, job.status, job.channel.name) == (1, "NEW", "focused")
    assert {d for j in jobs for d in domain_names(j)} == {c.domain.name for c in plain + deep + budget}


def test_similar_sizes_share_a_job_biggest_first():
    small1, big1, small2, big2 = cs = configs("s1.dk", "b1.dk", "s2.dk", "b2.dk")
    for config, objects in zip(cs, (10, 1000, 20, 900), strict=True):
        history(config, objects, objects * 10_000, "DOWNLOAD_COMPLETE", days_ago=30)
    definition = factories.selective_definition()
    definition.configurations.set(cs)
    jobs = jobs_of(jobgen.generate_jobs(definition, run=1, max_configs=2))
    assert [sorted(domain_names(j)) for j in jobs] == [["b1.dk", "b2.dk"], ["s1.dk", "s2.dk"]]
    assert [j.expected_objects for j in jobs] == [1900, 30]
    assert small1 and small2 and big1 and big2


def test_excluded_and_seedless_configurations_are_left_out():
    keep, zero_objects, zero_bytes = cs = configs("keep.se", "zero1.se", "zero2.se")
    set_budget(zero_objects, max_objects=0)
    set_budget(zero_bytes, max_bytes=0)
    seedless = configs("noseed.se")[0]
    seedlist = seedless.seedlists.get()
    seedlist.seeds = "# http://noseed.se/ (temporarily off)"
    seedlist.save()
    definition = factories.selective_definition()
    definition.configurations.set([*cs, seedless])
    jobs = jobs_of(jobgen.generate_jobs(definition, run=1))
    assert [domain_names(j) for j in jobs] == [["keep.se"]]
    assert list(JobDomain.objects.values_list("configuration__domain__name", flat=True).filter(job__in=jobs)) == [
        "keep.se"
    ]


def test_snapshot_takes_default_configurations_of_eligible_domains_with_the_smaller_limit():
    names = ["plain.no", "alias.no", "expired.no", "target.no", "excluded.no", "small.no", "big.no"]
    cs = {c.domain.name: c for c in configs(*names)}
    now = timezone.now()
    Domain.objects.filter(name="alias.no").update(alias_of=Domain.objects.get(name="target.no"))
    Domain.objects.filter(name="expired.no").update(
        alias_of=Domain.objects.get(name="target.no"), alias_expires=now - timedelta(days=1)
    )
    set_budget(cs["excluded.no"], max_objects=0)
    set_budget(cs["small.no"], max_objects=50, max_bytes=10_000_000)
    set_budget(cs["big.no"], max_objects=5000)
    DomainConfiguration.objects.create(domain=cs["plain.no"].domain, name="extra", template=cs["plain.no"].template)
    definition = factories.snapshot_definition(max_objects=1000, max_bytes=-1)
    ids = jobgen.generate_jobs(definition, run=1)
    rows = {
        r.configuration.domain.name: (r.max_objects, r.max_bytes)
        for r in JobDomain.objects.filter(job__in=ids).select_related("configuration__domain")
    }
    assert rows == {
        "plain.no": (1000, -1),
        "expired.no": (1000, -1),
        "target.no": (1000, -1),
        "small.no": (50, 10_000_000),
        "big.no": (1000, -1),
    }
    assert all(j.spec["kind"] == "snapshot" and j.channel.name == "snapshot" for j in Job.objects.filter(pk__in=ids))


def test_continuation_follows_netarchivesuite_rules():
    names = [
        "complete.is",
        "unfinished.is",
        "objlimit.is",
        "sizelimit.is",
        "timelimit.is",
        "cfgobj-same.is",
        "cfgobj-raised.is",
        "cfgobj-unlimited.is",
        "cfgsize-same.is",
        "cfgsize-raised.is",
        "resubmitted.is",
        "absent.is",
    ]
    cs = {c.domain.name: c for c in configs(*names)}
    previous = factories.snapshot_definition("broad-2025", max_objects=10_000)
    limits = {n: (10_000, -1) for n in names}
    limits.update(
        {
            "cfgobj-same.is": (100, -1),
            "cfgobj-raised.is": (100, -1),
            "cfgobj-unlimited.is": (100, -1),
            "cfgsize-same.is": (10_000, 5000),
            "cfgsize-raised.is": (10_000, 5000),
        }
    )
    job = factories.job(previous, domains=[n for n in names if n != "absent.is"], limits=limits, status="DONE")
    reasons = {
        "complete.is": "DOWNLOAD_COMPLETE",
        "unfinished.is": "DOWNLOAD_UNFINISHED",
        "objlimit.is": "OBJECT_LIMIT",
        "sizelimit.is": "SIZE_LIMIT",
        "timelimit.is": "TIME_LIMIT",
        "cfgobj-same.is": "CONFIG_OBJECT_LIMIT",
        "cfgobj-raised.is": "CONFIG_OBJECT_LIMIT",
        "cfgobj-unlimited.is": "CONFIG_OBJECT_LIMIT",
        "cfgsize-same.is": "CONFIG_SIZE_LIMIT",
        "cfgsize-raised.is": "CONFIG_SIZE_LIMIT",
        "resubmitted.is": "OBJECT_LIMIT",
    }
    for name, reason in reasons.items():
        HarvestInfo.objects.create(
            job=job,
            harvest=previous,
            domain_id=cs[name].domain_id,
            configuration=cs[name],
            objects_count=100,
            bytes_count=5000,
            stop_reason=reason,
            date=timezone.now() - timedelta(days=10),
        )
    # resubmitted.is was reported again by a later (resubmitted) job: its latest word is "complete"
    later = factories.job(previous, domains=["resubmitted.is"], status="DONE")
    HarvestInfo.objects.create(
        job=later,
        harvest=previous,
        domain_id=cs["resubmitted.is"].domain_id,
        configuration=cs["resubmitted.is"],
        objects_count=300,
        bytes_count=9000,
        stop_reason="DOWNLOAD_COMPLETE",
        date=timezone.now() - timedelta(days=9),
    )
    set_budget(cs["cfgobj-same.is"], max_objects=100)
    set_budget(cs["cfgobj-raised.is"], max_objects=200)
    set_budget(cs["cfgsize-same.is"], max_bytes=5000)
    set_budget(cs["cfgsize-raised.is"], max_bytes=6000)
    continuation = factories.snapshot_definition("broad-2025-part-2", max_objects=10_000, previous=previous)
    ids = jobgen.generate_jobs(continuation, run=1)
    chosen = set(JobDomain.objects.filter(job__in=ids).values_list("configuration__domain__name", flat=True))
    assert chosen == {
        "objlimit.is",
        "sizelimit.is",
        "timelimit.is",
        "cfgobj-raised.is",
        "cfgobj-unlimited.is",
        "cfgsize-raised.is",
    }


def test_estimator_anchor_defaults_history_and_limits():
    unknown, complete, shrunk, stopped, capped, capped_bytes = cs = configs(
        "unknown.fi", "complete.fi", "shrunk.fi", "stopped.fi", "capped.fi", "cappedbytes.fi"
    )
    history(complete, 400, 400 * 20_000, "DOWNLOAD_COMPLETE", days_ago=10)
    history(shrunk, 5000, 5000 * 10_000, "DOWNLOAD_COMPLETE", days_ago=400)  # NetarchiveSuite's "best"
    history(shrunk, 1000, 1000 * 10_000, "DOWNLOAD_COMPLETE", days_ago=20)  # … but the site is smaller now
    history(stopped, 300, 300 * 10_000, "TIME_LIMIT", days_ago=5)
    history(capped, 300, 300 * 10_000, "OBJECT_LIMIT", days_ago=5)
    set_budget(capped, max_objects=450)
    set_budget(capped_bytes, max_bytes=38_000 * 10)
    definition = factories.selective_definition()
    definition.configurations.set(cs)
    got = {}
    for job in Job.objects.filter(pk__in=jobgen.generate_jobs(definition, run=1, max_configs=1)):
        got[domain_names(job)[0]] = (job.expected_objects, job.expected_bytes)
    assert got == {
        "unknown.fi": (5000, 5000 * 38_000),  # NetarchiveSuite's defaults when nothing is known
        "complete.fi": (400, 400 * 20_000),  # the latest complete run, at its own bytes per object
        "shrunk.fi": (1000, 1000 * 10_000),  # the latest complete run, not the best ever
        "stopped.fi": (600, 600 * 10_000),  # stopped short: at least twice what it saw
        "capped.fi": (450, 450 * 10_000),  # … but never beyond its object limit
        "cappedbytes.fi": (10, 38_000 * 10),  # nor beyond what its byte limit allows
    }


def test_spec_is_frozen_with_traps_seeds_and_dedup_index(settings):
    config = configs("frozen.ee")[0]
    Domain.objects.filter(pk=config.domain_id).update(crawler_traps=r".*/calendar/.*")
    GlobalCrawlerTrapList.objects.create(name="common", traps=r".*\?sessionid=.*")
    GlobalCrawlerTrapList.objects.create(name="off", traps=r".*off.*", active=False)
    definition = factories.selective_definition(crawler_traps=r".*/print/.*")
    definition.configurations.set([config])
    [job_id] = jobgen.generate_jobs(definition, run=3)
    job = Job.objects.get(pk=job_id)
    spec = JobSpec.from_dict(job.spec)
    assert spec.job_id == job.pk and spec.harvest_run == 3 and spec.harvest_name == "news"
    assert spec.global_traps == (r".*\?sessionid=.*", r".*/print/.*")
    assert spec.domains[0].traps == (r".*/calendar/.*",)
    assert spec.domains[0].seeds == (
        "http://frozen.ee/",
        "http://www.frozen.ee/",
        "https://frozen.ee/",
        "https://www.frozen.ee/",
    )
    assert spec.dedup_index == str(settings.NETHARVEST_DEDUP_INDEX)  # the one the indexer chain feeds
    before = dict(job.spec)
    seedlist = config.seedlists.get()
    seedlist.seeds = "http://elsewhere.ee/"
    seedlist.save()
    Domain.objects.filter(pk=config.domain_id).update(crawler_traps="")
    set_budget(config, max_objects=1)
    job.refresh_from_db()
    assert job.spec == before
    assert list(job.domains.values_list("max_objects", flat=True)) == [-1]


def test_the_stored_spec_is_the_typed_spec_whole(monkeypatch):
    """Generation builds a typed JobSpec (its domains kept as their JSON rows) and stores exactly what that spec
    says: the document parses whole through the contract into the same spec, domain by domain."""
    made: list[JobSpec] = []
    freeze = jobgen.SpecFreezer.freeze
    monkeypatch.setattr(jobgen.SpecFreezer, "freeze", lambda self, *a: made.append(freeze(self, *a)) or made[-1])
    definition = factories.selective_definition()
    definition.configurations.set(configs("typed1.lv", "typed2.lv"))
    [job_id] = jobgen.generate_jobs(definition, run=1)
    [spec] = made
    stored = Job.objects.get(pk=job_id).spec
    assert stored == spec.to_dict()
    parsed = JobSpec.from_dict(stored)
    assert list(parsed.domains) == list(spec.domains) and len(spec.domains) == 2
    assert parsed.domains[0].seeds == spec.domains[0].seeds and isinstance(spec.domains[0].seeds, tuple)
    assert (parsed.settings, parsed.global_traps, parsed.kind) == (spec.settings, spec.global_traps, spec.kind)


def test_what_pages_read_of_a_stored_spec_is_what_the_typed_spec_says():
    """specs.stored (pages, commands, controls: no re-validation per poll) agrees with the contract's reading."""
    definition = factories.selective_definition()
    definition.configurations.set(configs("peek1.lv", "peek2.lv"))
    [job_id] = jobgen.generate_jobs(definition, run=1)
    job = Job.objects.get(pk=job_id)
    typed, stored = specs.read(job), specs.stored(job)
    assert stored.kind == typed.kind == definition.kind
    assert stored.seeds == typed.seeds and len(stored.seeds) >= 2
    assert stored.budgets == {d.name: (d.max_objects, d.max_bytes) for d in typed.domains}


def test_a_failure_half_way_writes_nothing():
    cs = configs("x1.lt", "x2.lt")
    GlobalCrawlerTrapList.objects.create(name="broken", traps="(((")  # bypassed validation: a bad row
    definition = factories.selective_definition()
    definition.configurations.set(cs)
    with pytest.raises(ContractError, match="global_traps"):
        jobgen.generate_jobs(definition, run=1)
    assert not Job.objects.filter(harvest=definition).exists()
    assert not JobDomain.objects.exists()


def test_nothing_to_harvest_makes_no_jobs():
    definition = factories.selective_definition()
    assert jobgen.generate_jobs(definition, run=1) == []
    # A continuous definition is run as jobs too now (issue 12); without configurations, none.
    assert jobgen.generate_jobs(factories.selective_definition("cont", kind="continuous"), run=1) == []


def test_a_continuous_job_freezes_each_configuration_with_its_own_budget():
    """One job for every configuration of a continuous definition; its spec lifts the budgets (it revisits for
    ever) but the JobDomain rows keep each configuration's own, as a snapshot's continuation would judge them."""
    a, b, c = configs("c1.is", "c2.is", "c3.is")
    set_budget(a, max_objects=10, max_bytes=1000)
    set_budget(b, max_objects=20)
    definition = factories.selective_definition("cont", kind="continuous")
    definition.configurations.set([a, b, c])
    [job] = jobs_of(jobgen.generate_jobs(definition, run=1))
    assert sorted(domain_names(job)) == ["c1.is", "c2.is", "c3.is"] and job.domain_count == 3
    assert {(d["max_objects"], d["max_bytes"]) for d in job.spec["domains"]} == {(-1, -1)}
    rows = JobDomain.objects.filter(job=job).values_list("configuration__domain__name", "max_objects", "max_bytes")
    assert sorted(rows) == [("c1.is", 10, 1000), ("c2.is", 20, -1), ("c3.is", -1, -1)]


def test_seeds_of_several_lists_are_merged_in_order_once_each():
    """A configuration's active seeds: its seed lists in order, comment and blank lines dropped, each URL
    once where it first appears (rows stored raw, as an import or an old release may have left them)."""
    config = configs("merged.ee")[0]
    first = config.seedlists.get()
    SeedList.objects.filter(pk=first.pk).update(
        seeds="http://a.ee/\r\n# http://off.ee/\n\n  http://b.ee/  \nhttp://a.ee/"
    )
    second = SeedList.objects.create(domain_id=config.domain_id, name="more", seeds="http://b.ee/\nhttp://c.ee/")
    config.seedlists.add(second)
    Domain.objects.filter(pk=config.domain_id).update(crawler_traps=".*/a/.*\r\n\n.*/b/.*\n")
    definition = factories.selective_definition()
    definition.configurations.set([config])
    [job_id] = jobgen.generate_jobs(definition, run=1)
    [entry] = Job.objects.get(pk=job_id).spec["domains"]
    assert entry["seeds"] == ["http://a.ee/", "http://b.ee/", "http://c.ee/"]
    assert entry["traps"] == [".*/a/.*", ".*/b/.*"]
    assert entry["name"] == "merged.ee" and entry["configuration"] == config.name
