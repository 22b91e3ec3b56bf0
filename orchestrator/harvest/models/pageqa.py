"""Automated page QA (issue 13): each pass over a job's pages in replay, what it found per page, the archived
resources those pages asked for and did not get, and the curator's verdict on a page.

The BnF's curators browse every selective harvest before it is accepted (shared/seeds/001…, 3.4.4 and 4.2:
"visual quality control of the archives", remarks fed back "with the aim of improving future crawls, either by
including additional URLs…"). A :class:`QARun` does the browsing for them; a :class:`QAMark` keeps their
judgement with the job, and shows in the domain's history.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils import timezone


class QARunStatus(models.TextChoices):
    QUEUED = "QUEUED"
    RUNNING = "RUNNING"
    DONE = "DONE"
    FAILED = "FAILED"


class QARun(models.Model):
    """One QA pass over one job's pages. Automatic passes (after indexing, after a patch job) are at most one
    per job and cause, by a partial unique constraint, so two indexer workers finishing a job's last files at
    once start one pass."""

    AUTO, REQUESTED, AFTER_PATCH = "auto", "requested", "after-patch"
    TRIGGERS = [(AUTO, "after indexing"), (REQUESTED, "on request"), (AFTER_PATCH, "after a patch crawl")]

    job = models.ForeignKey("harvest.Job", on_delete=models.PROTECT, related_name="qa_runs")
    trigger = models.CharField(max_length=12, choices=TRIGGERS)
    #: The patch job whose indexing started this pass (AFTER_PATCH only).
    patch_job = models.ForeignKey("harvest.Job", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(max_length=8, choices=QARunStatus.choices, default=QARunStatus.QUEUED)
    requested_by = models.CharField(max_length=150, blank=True)
    created = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    pages_planned = models.PositiveIntegerField(default=0)
    pages_done = models.PositiveIntegerField(default=0)
    #: Distinct archived URLs the pages needed and replay did not have.
    missing_urls = models.PositiveIntegerField(default=0)
    live_compared = models.BooleanField(default=False, help_text="Pages were also loaded from the live web.")
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(fields=["job"], condition=Q(trigger="auto"), name="qarun_one_auto_per_job"),
            models.UniqueConstraint(
                fields=["job", "patch_job"], condition=Q(trigger="after-patch"), name="qarun_one_per_patch"
            ),
        ]

    def __str__(self) -> str:
        return f"QA run {self.pk} of job {self.job_id} ({self.status})"


class QAPage(models.Model):
    """One page loaded through replay (and live, when the live site answered)."""

    run = models.ForeignKey(QARun, on_delete=models.CASCADE, related_name="pages")
    url = models.TextField()
    timestamp = models.CharField(max_length=14, help_text="The capture replayed (14 digits, UTC).")
    is_seed = models.BooleanField(default=False)
    title = models.CharField(max_length=500, blank=True)
    replay_status = models.IntegerField(null=True, blank=True)
    replay_error = models.TextField(blank=True, help_text="Navigation errors, timeouts, script errors.")
    timed_out = models.BooleanField(default=False)
    load_ms = models.PositiveIntegerField(default=0)
    requests = models.PositiveIntegerField(default=0, help_text="Archived resources the page asked for.")
    missing_count = models.PositiveIntegerField(default=0)
    text = models.TextField(blank=True, help_text="The replayed page's visible text (cut at 100,000 characters).")
    replay_thumb = models.CharField(max_length=300, blank=True, help_text="Under NETHARVEST_QA_DIR.")
    live_status = models.IntegerField(null=True, blank=True)
    live_error = models.TextField(blank=True)
    live_thumb = models.CharField(max_length=300, blank=True)
    screenshot_similarity = models.FloatField(null=True, blank=True, help_text="SSIM, replay vs live, 0..1.")
    text_similarity = models.FloatField(null=True, blank=True, help_text="Word-shingle overlap, 0..1.")

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.url} ({self.missing_count} missing)"


class MissingResource(models.Model):
    """A resource a replayed page requested that is not in the archive (pywb answered "not found")."""

    page = models.ForeignKey(QAPage, on_delete=models.CASCADE, related_name="missing")
    run = models.ForeignKey(QARun, on_delete=models.CASCADE, related_name="missing")
    url = models.TextField()
    host = models.CharField(max_length=300)
    resource_type = models.CharField(max_length=30, help_text="The browser's: image, stylesheet, script, font…")

    class Meta:
        ordering = ["host", "url"]
        indexes = [models.Index(fields=["run", "host"])]

    def __str__(self) -> str:
        return f"{self.resource_type} {self.url}"


class QAMark(models.Model):
    """A curator's verdict on one page of a job, with a note; one per job and URL (marking again replaces it)."""

    GOOD, BAD = "good", "bad"
    VERDICTS = [(GOOD, "good"), (BAD, "bad")]

    job = models.ForeignKey("harvest.Job", on_delete=models.PROTECT, related_name="qa_marks")
    domain = models.ForeignKey(
        "harvest.Domain",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="qa_marks",
        help_text="The job's domain the page belongs to.",
    )
    url = models.TextField()
    verdict = models.CharField(max_length=4, choices=VERDICTS)
    note = models.TextField(blank=True)
    marked_by = models.CharField(max_length=150)
    marked_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-marked_at"]
        constraints = [models.UniqueConstraint(fields=["job", "url"], name="qamark_one_per_page")]

    def __str__(self) -> str:
        return f"{self.verdict}: {self.url} (job {self.job_id})"
