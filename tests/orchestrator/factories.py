"""Small builders for tests: real rows through the real services, no mocks."""

from __future__ import annotations

from orchestrator.harvest.domains import create_domains
from orchestrator.harvest.models import Domain, HarvestChannel, HarvestDefinition, Job


def domain(name: str = "example.fr") -> Domain:
    create_domains([name])
    return Domain.objects.get(name=name)


def selective_definition(name: str = "news", **fields: object) -> HarvestDefinition:
    channel = HarvestChannel.objects.get(name="focused")
    return HarvestDefinition.objects.create(name=name, kind="selective", channel=channel, **fields)


def job(definition: HarvestDefinition | None = None, **fields: object) -> Job:
    definition = definition or selective_definition()
    return Job.objects.create(harvest=definition, harvest_run=1, channel=definition.channel,
                              spec={}, **fields)
