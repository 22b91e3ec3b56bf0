"""Per-job QA figures (the BnF's NAS_qual, shared/seeds/001…, 3.4), aggregated once at result intake.

Why stored and not parsed on demand: the QA pages sum figures per harvest run and per year, i.e. over
hundreds or thousands of jobs. Parsing each job's reports out of its metadata WARC for every page view
would read gigabytes of archive storage; summing a few thousand small JSON rows takes milliseconds.
The per-domain truth stays in HarvestInfo; a JobStats row holds what has no other home in the database
(MIME types and status codes from the harvester's reports) and per-job roll-ups of HarvestInfo (TLDs,
domain-size buckets, stop reasons, the job's largest domains) so a run's or a year's page never groups
millions of HarvestInfo rows: measured on 400,000 HarvestInfo rows, grouping them for a year's top domains
took 2 s per year shown (docs/BENCHMARKS.md); a national broad crawl has ten times as many.
``orchestrator.harvest.qa.stats`` computes and reads these rows.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class JobStats(models.Model):
    job = models.OneToOneField("harvest.Job", primary_key=True, on_delete=models.CASCADE, related_name="stats")
    # denormalised from the job and its definition, so run and year pages aggregate without joins
    harvest = models.ForeignKey("harvest.HarvestDefinition", on_delete=models.PROTECT, related_name="+")
    harvest_run = models.PositiveIntegerField()
    kind = models.CharField(max_length=10, help_text="The definition's kind: selective, snapshot, continuous.")
    year = models.PositiveSmallIntegerField(help_text="UTC year the job ended (or was created).")
    domains = models.PositiveIntegerField(default=0)
    seeds = models.PositiveIntegerField(
        default=0,
        help_text="Seeds in the job's frozen JobSpec: the seed-source share of seeds 001, 3.4.3 (selective vs broad).",
    )
    objects_count = models.BigIntegerField(default=0, db_column="objects")
    bytes_count = models.BigIntegerField(default=0, db_column="bytes")
    mime_types = models.JSONField(default=dict, help_text="mime → [urls, bytes], from mimetype-report.txt.")
    status_codes = models.JSONField(default=dict, help_text="code → urls, from responsecode-report.txt.")
    tlds = models.JSONField(default=dict, help_text="tld → [domains, objects, bytes], from HarvestInfo.")
    size_buckets = models.JSONField(default=dict, help_text="bucket → domains (by objects), from HarvestInfo.")
    stop_reasons = models.JSONField(default=dict, help_text="stop reason → domains, from HarvestInfo.")
    top_domains = models.JSONField(
        default=list,
        help_text="The job's largest domains by bytes and by objects "
        "(at most 100 each): [[domain, objects, bytes], …].",
    )
    reports_source = models.CharField(
        max_length=1000, blank=True, help_text="Where the MIME and status figures were read from."
    )
    reports_error = models.TextField(blank=True, help_text="Why the reports could not be read, if so.")
    computed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "job statistics"
        verbose_name_plural = "job statistics"
        indexes = [models.Index(fields=["harvest", "harvest_run"]), models.Index(fields=["year", "kind"])]

    def __str__(self) -> str:
        return f"statistics of job {self.job_id}"
