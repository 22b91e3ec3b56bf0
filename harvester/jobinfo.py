"""The job as the archive side describes it: identity, warcinfo fields, configured seeds and domains.

Read from the typed :class:`~harvester.contracts.JobSpec` that the ``NH_JOBSPEC`` setting carries
(:mod:`harvester.crawlsettings` puts it there, validated once where the job arrived). Every WARC's warcinfo
record, the file prefix, the reports' domain list and the metadata WARC come from here, so they describe the
same job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harvester.contracts import JobSpec


@dataclass(frozen=True)
class JobInfo:
    spec: JobSpec

    @classmethod
    def from_settings(cls, settings: Any) -> JobInfo:
        return cls(settings["NH_JOBSPEC"])

    @property
    def job_id(self) -> str:
        return str(self.spec.job_id)

    @property
    def harvest_id(self) -> str:
        return str(self.spec.harvest_id)

    @property
    def prefix(self) -> str:
        """WARC file names start with it."""
        return f"{self.job_id}-{self.harvest_id}"

    @property
    def crawl_name(self) -> str:
        return self.spec.harvest_name or f"job {self.job_id}"

    @property
    def extracts_javascript(self) -> bool:
        """The job extracts links from scripts (then they are link-bearing: never fetched conditionally)."""
        return self.spec.settings.extract_javascript

    def configured_seeds(self) -> list[str]:
        return list(dict.fromkeys(self.spec.seeds))

    def configured_domains(self) -> list[str]:
        return [d.name for d in self.spec.domains]

    def warcinfo_fields(self) -> list[tuple[str, str]]:
        spec = self.spec
        return [
            ("operator", spec.settings.operator_contact),
            ("http-header-user-agent", spec.settings.effective_user_agent),
            ("robots", spec.settings.robots),
            ("isPartOf", spec.harvest_name),
            ("description", f"netharvest job {self.job_id} of harvest definition {self.harvest_id}"),
            ("jobId", self.job_id),
            ("harvestId", self.harvest_id),
            ("harvestName", spec.harvest_name),
            ("harvestRun", str(spec.harvest_run)),
            ("harvestKind", spec.kind),
            ("channel", spec.channel),
            ("template", spec.template),
        ]
