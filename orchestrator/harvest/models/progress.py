"""A thinned time series of each job's Progress heartbeats, so a live job's page can draw its rate and
queue over time (a chart that grows), not only the latest numbers.

Why stored: ``Job.progress`` keeps only the latest heartbeat, and a harvester sends one every few
seconds. Deriving the past from crawl.log would mean re-reading a log that, for a continuous job
(issue 12), grows for weeks; a small row every :data:`orchestrator.harvest.jobs.progresslog.SAMPLE_EVERY_S`
seconds per running job, pruned after :data:`~orchestrator.harvest.jobs.progresslog.KEEP_S`, costs little.
Written by intake (``record_progress``) through :mod:`orchestrator.harvest.jobs.progresslog`, which also
reads it.
"""

from __future__ import annotations

from django.db import models


class ProgressSample(models.Model):
    job = models.ForeignKey("harvest.Job", on_delete=models.CASCADE, related_name="progress_samples")
    at = models.DateTimeField(help_text="When intake received the heartbeat (UTC).")
    figures = models.JSONField(help_text="The charted figures of that heartbeat (progresslog.FIGURES).")

    class Meta:
        ordering = ["job", "at"]
        indexes = [models.Index(fields=["job", "at"])]

    def __str__(self) -> str:
        return f"job {self.job_id} at {self.at:%Y-%m-%d %H:%M:%S}"
