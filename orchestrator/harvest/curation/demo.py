"""The newcomer's demo: a selective harvest of the bundled test site that runs as soon as the stack is up
(and an inactive continuous one of the same site, to activate).

``netharvest up --demo`` (the default on the embedded stack) serves ``harvester.testsite`` on
127.0.0.1 and makes sure a harvest definition of it exists, due now. Beat's scheduler then turns it
into a job like any other definition, the high-priority worker crawls it, and the newcomer watches
the job, its WARC files and its reports in the web UI: the whole path, with nothing faked.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from orchestrator.harvest.curation import attach
from orchestrator.harvest.curation.domains import create_domains
from orchestrator.harvest.models import (
    ConfigurationSeedList,
    CrawlTemplate,
    Domain,
    DomainConfiguration,
    HarvestChannel,
    HarvestDefinition,
    Schedule,
)

DEMO_DOMAIN = "127.0.0.1"
DEMO_NAME = "demo-testsite"
DEMO_DEFINITION = "Demo: the bundled test site"
DEMO_CONTINUOUS = "Demo: the bundled test site, continuously"
DEMO_MAX_OBJECTS = 150  # bounds the site's endless calendar trap, so the demo finishes in a minute or two
#: The continuous demo's own configuration and seed list: the site, and its live pages (harvester.testsite), which
#: change while the job watches them (the rest of the site is static: a newcomer saw only "unchanged").
DEMO_LIVE = "demo-testsite-live"
#: The live pages' clock, which the continuous demo's strip regex removes before comparing visits.
DEMO_CLOCK = '<span class="clock">[^<]*</span>'


def live_seeds(port: int) -> list[str]:
    return [f"http://127.0.0.1:{port}/live/"]


def demo_seeds(port: int, peer_port: int | None) -> list[str]:
    seeds = [f"http://127.0.0.1:{port}/"]
    if peer_port:
        seeds.append(f"http://127.0.0.1:{peer_port}/")
    return seeds


def _selective_channel() -> HarvestChannel:
    channel = (
        HarvestChannel.objects.filter(default_for=HarvestDefinition.SELECTIVE).first()
        or HarvestChannel.objects.filter(priority="high").first()
    )
    if channel is None:
        raise HarvestChannel.DoesNotExist(
            "no high-priority harvest channel: run `netharvest migrate`, or "
            "`netharvest channels create NAME --priority high`"
        )
    return channel


def ensure_demo_definition(port: int, peer_port: int | None = None) -> tuple[HarvestDefinition, bool]:
    """The demo's definition, created the first time and left alone afterwards (returns it and
    whether it was created): a re-started stack does not harvest the demo again unless asked to
    (``netharvest harvests run-now``)."""
    existing = HarvestDefinition.objects.filter(name=DEMO_DEFINITION).first()
    if existing is not None:
        # Started again on other ports: the next run must crawl where the site now is.
        attach.set_seeds(DEMO_DOMAIN, DEMO_NAME, demo_seeds(port, peer_port))
        attach.set_seeds(DEMO_DOMAIN, DEMO_LIVE, live_seeds(port))
        ensure_demo_continuous(port)
        return existing, False
    create_domains([DEMO_DOMAIN])
    with transaction.atomic():
        domain = Domain.objects.get(name=DEMO_DOMAIN)
        template, _ = CrawlTemplate.objects.get_or_create(
            name=DEMO_NAME,
            defaults={
                "description": "The default profile with quick politeness (100 ms to 1 s between fetches), "
                "for the bundled test site on this machine only.",
                "delay_factor": 1.0,
                "min_delay_ms": 100,
                "max_delay_ms": 1000,
            },
        )
        schedule, _ = Schedule.objects.get_or_create(
            name="Once",
            defaults={
                "every": 1,
                "unit": "day",
                "end": "runs",
                "max_runs": 1,
                "comments": "A single run, as soon as possible.",
            },
        )
        definition = HarvestDefinition.objects.create(
            name=DEMO_DEFINITION,
            kind=HarvestDefinition.SELECTIVE,
            active=True,
            schedule=schedule,
            next_date=timezone.now(),
            channel=_selective_channel(),
            comments="Made by `netharvest up --demo`: a harvest of the bundled test site on 127.0.0.1.",
        )
        attach.attach(
            domain.pk,
            DEMO_NAME,
            demo_seeds(port, peer_port),
            definition_id=definition.pk,
            template_id=template.pk,
            max_objects=DEMO_MAX_OBJECTS,
            max_bytes=-1,
            comments=(f"The demo's configuration: the test site, at most {DEMO_MAX_OBJECTS} objects."),
            seedlist_comments="The bundled test site served by `netharvest up --demo`.",
            seeds_mode=attach.REPLACE,
            config_mode=attach.UPDATE,
        )
    ensure_demo_continuous(port)
    return definition, True


def ensure_demo_continuous(port: int) -> HarvestDefinition | None:
    """An inactive continuous definition of the same site and its live pages, in accelerated time (waits of
    minutes, a WARC closed every two minutes, 2 fetches/s), for a newcomer to activate and watch revisits happen:
    unchanged pages, changed ones, 304s and a clock stripped before comparing. Its traps keep the site's endless
    calendar and hostile corner out: a continuous job has no object budget."""
    config = DomainConfiguration.objects.filter(domain__name=DEMO_DOMAIN, name=DEMO_NAME).first()
    channel = HarvestChannel.objects.filter(default_for=HarvestDefinition.CONTINUOUS).first()
    if config is None or channel is None:
        return None
    with transaction.atomic():  # made whole or not at all: never a demo without its configuration
        return _demo_continuous(config, channel, port)


def _demo_continuous(config: DomainConfiguration, channel: HarvestChannel, port: int) -> HarvestDefinition:
    definition, created = HarvestDefinition.objects.get_or_create(
        name=DEMO_CONTINUOUS,
        defaults={
            "kind": HarvestDefinition.CONTINUOUS,
            "channel": channel,
            "active": False,
            "revisit_settings": {
                "initial_wait_s": {"text": 60, "image": 300, "audio_video": 600, "other": 300},
                "min_wait_s": 30,
                "max_wait_s": 3600,
                "replan_interval_s": 60,
                "strip": [DEMO_CLOCK],
            },
            "fetch_budget_per_s": 2.0,
            "warc_rotate_s": 120,
            "robots_validity_s": 600,  # accelerated time: robots.txt and DNS age with the waits
            "dns_ttl_s": 300,
            "crawler_traps": ".*/calendar\\?.*\n.*/hostile/.*",
            "comments": "Made by `netharvest up --demo`: activate it to watch the bundled test site revisited "
            "continuously (accelerated time).",
        },
    )
    untouched = list(definition.configurations.all()) in ([], [config])  # a demo made before the live pages
    if created or (untouched and not definition.active):
        _live_configuration(definition, config, port)
        definition.configurations.remove(config)
        strip = list(definition.revisit_settings.get("strip", []))
        if DEMO_CLOCK not in strip:
            definition.revisit_settings = {**definition.revisit_settings, "strip": [*strip, DEMO_CLOCK]}
            definition.save(update_fields=["revisit_settings"])
    return definition


def _live_configuration(definition: HarvestDefinition, config: DomainConfiguration, port: int) -> None:
    """The continuous demo harvests the site's seeds and its live pages through a configuration of its own."""
    live = attach.attach(
        config.domain_id,
        DEMO_LIVE,
        live_seeds(port),
        definition_id=definition.pk,
        template_id=config.template_id,
        comments="The continuous demo's configuration: the test site and its live pages.",
        seedlist_comments="The live pages of the bundled test site.",
    ).configuration
    for seedlist in config.seedlists.all():  # the site's own seeds too
        ConfigurationSeedList.objects.get_or_create(configuration=live, seedlist=seedlist)
