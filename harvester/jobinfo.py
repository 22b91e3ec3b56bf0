"""The job as the archive side describes it: identity, warcinfo fields, configured seeds and domains.

Read from the ``NH_JOB`` setting (a dict: job_id, harvest_id, harvest_name, harvest_run, template,
operator, robots, user_agent, kind, channel… and optionally ``jobspec``, the full JobSpec dict, and
``seeds``; :mod:`harvester.crawlsettings` writes it). Every WARC's warcinfo record, the file prefix, the
reports' domain list and the metadata WARC come from here, so they describe the same job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harvester.defaults import CRAWL_DEFAULTS


@dataclass(frozen=True)
class JobInfo:
    job: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, settings: Any) -> JobInfo:
        return cls(dict(settings.getdict("NH_JOB") or {}))

    @property
    def job_id(self) -> str:
        return str(self.job.get("job_id", 0))

    @property
    def harvest_id(self) -> str:
        return str(self.job.get("harvest_id", 0))

    @property
    def prefix(self) -> str:
        """WARC file names start with it."""
        return f"{self.job_id}-{self.harvest_id}"

    @property
    def crawl_name(self) -> str:
        return str(self.job.get("harvest_name") or f"job {self.job_id}")

    @property
    def extracts_javascript(self) -> bool:
        """The job extracts links from scripts (then they are link-bearing: never fetched conditionally)."""
        spec = self.job.get("jobspec")
        template = spec.get("settings", {}) if isinstance(spec, dict) else {}
        return bool(template.get("extract_javascript", CRAWL_DEFAULTS["extract_javascript"]))

    def configured_seeds(self) -> list[str]:
        seeds = list(self.job.get("seeds") or [])
        spec = self.job.get("jobspec") or {}
        for domain in spec.get("domains", []) if isinstance(spec, dict) else []:
            seeds.extend(domain.get("seeds", []))
        return list(dict.fromkeys(seeds))

    def configured_domains(self) -> list[str]:
        spec = self.job.get("jobspec") or {}
        return [d.get("name") for d in spec.get("domains", [])] if isinstance(spec, dict) else []

    def warcinfo_fields(self) -> list[tuple[str, str]]:
        j = self.job
        return [
            ("operator", str(j.get("operator", ""))),
            ("http-header-user-agent", str(j.get("user_agent", ""))),
            ("robots", str(j.get("robots", ""))),
            ("isPartOf", str(j.get("harvest_name", ""))),
            ("description", f"netharvest job {self.job_id} of harvest definition {self.harvest_id}"),
            ("jobId", self.job_id),
            ("harvestId", self.harvest_id),
            ("harvestName", str(j.get("harvest_name", ""))),
            ("harvestRun", str(j.get("harvest_run", ""))),
            ("harvestKind", str(j.get("kind", ""))),
            ("channel", str(j.get("channel", ""))),
            ("template", str(j.get("template", ""))),
        ]
