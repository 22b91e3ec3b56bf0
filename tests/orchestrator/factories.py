"""Small builders for tests: real rows through the real services, no mocks."""

from __future__ import annotations

from harvester.contracts import JOBSPEC_VERSION, JobSpec
from orchestrator.harvest.curation.domains import create_domains
from orchestrator.harvest.models import (
    ArchiveFile,
    CrawlTemplate,
    Domain,
    DomainConfiguration,
    HarvestChannel,
    HarvestDefinition,
    Job,
    JobDomain,
)


def domain(name: str = "example.fr") -> Domain:
    create_domains([name])
    return Domain.objects.get(name=name)


def selective_definition(name: str = "news", **fields: object) -> HarvestDefinition:
    channel = HarvestChannel.objects.get(name="focused")
    definition, _ = HarvestDefinition.objects.get_or_create(
        name=name, kind="selective", channel=channel, defaults=fields
    )
    return definition


def snapshot_definition(name: str = "broad", **fields: object) -> HarvestDefinition:
    channel = HarvestChannel.objects.get(name="snapshot")
    return HarvestDefinition.objects.create(name=name, kind="snapshot", channel=channel, **fields)


def job(
    definition: HarvestDefinition | None = None,
    domains: list[str] | None = None,
    limits: dict[str, tuple[int, int]] | None = None,
    **fields: object,
) -> Job:
    """A job of ``definition`` over the default configurations of ``domains``, with a valid JobSpec."""
    definition = definition or selective_definition()
    limits = limits or {}
    configs = [domain(name).default_configuration for name in (domains or [])]
    job = Job.objects.create(
        harvest=definition,
        harvest_run=max(definition.runs, 1),
        channel=definition.channel,
        spec={},
        domain_count=len(configs),
        **fields,
    )
    JobDomain.objects.bulk_create(
        JobDomain(
            job=job,
            configuration=c,
            max_objects=limits.get(c.domain.name, (-1, -1))[0],
            max_bytes=limits.get(c.domain.name, (-1, -1))[1],
        )
        for c in configs
    )
    job.spec = spec_for(job, configs, limits)
    job.save(update_fields=["spec"])
    return job


def spec_for(job: Job, configs: list[DomainConfiguration], limits: dict[str, tuple[int, int]]) -> dict:
    template = CrawlTemplate.objects.get(name="default")
    spec = {
        "version": JOBSPEC_VERSION,
        "job_id": job.pk,
        "harvest_id": job.harvest_id,
        "harvest_name": job.harvest.name,
        "harvest_run": job.harvest_run,
        "kind": job.harvest.kind,
        "channel": job.channel.name,
        "template": template.name,
        "settings": template.crawl_settings().__dict__,
        "domains": [
            {
                "name": c.domain.name,
                "configuration": c.name,
                "seeds": c.seedlists.first().active_seeds if c.seedlists.exists() else [],
                "max_objects": limits.get(c.domain.name, (-1, -1))[0],
                "max_bytes": limits.get(c.domain.name, (-1, -1))[1],
                "traps": [],
            }
            for c in configs
        ],
    }
    if job.harvest.kind == HarvestDefinition.CONTINUOUS:
        from orchestrator.harvest.jobs.jobgen import continuous_section

        spec["continuous"] = continuous_section(job.harvest)
    if configs:
        JobSpec.from_dict(spec)  # what we hand out must satisfy the contract
    return spec


def archive_file(job: Job, name: str, index_state: str = "CLEANED") -> ArchiveFile:
    """A one-byte WARC row of ``job`` at ``index_state`` whose spool copy is nowhere: for the code that reads
    the chain's states, not the file."""
    return ArchiveFile.objects.create(
        job=job, harvest_id=job.harvest_id, name=name, size=1, index_state=index_state, spool_path="/nowhere"
    )
