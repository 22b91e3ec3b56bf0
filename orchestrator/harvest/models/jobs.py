"""Jobs, their domains, control messages and harvest history (HarvestInfo).

Job status only moves forward, and every move is one conditional ``UPDATE … WHERE status = <old>``
(:meth:`Job.transition`): of two processes racing to move a job, exactly one wins and the other
learns it lost, so no job is ever dispatched, failed or resubmitted twice.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from harvester.contracts import CONTROL_ACTIONS, STOP_REASONS, Progress
from orchestrator.harvest.models.fields import SpecField


class JobStatus(models.TextChoices):
    NEW = "NEW"
    SUBMITTED = "SUBMITTED"
    STARTED = "STARTED"
    DONE = "DONE"
    FAILED = "FAILED"
    RESUBMITTED = "RESUBMITTED"


#: The only moves a job can make. A result may overtake the STARTED message, hence SUBMITTED → DONE.
TRANSITIONS: dict[str, frozenset[str]] = {
    JobStatus.NEW: frozenset({JobStatus.SUBMITTED, JobStatus.FAILED}),
    JobStatus.SUBMITTED: frozenset({JobStatus.STARTED, JobStatus.DONE, JobStatus.FAILED}),
    JobStatus.STARTED: frozenset({JobStatus.DONE, JobStatus.FAILED}),
    JobStatus.FAILED: frozenset({JobStatus.RESUBMITTED}),
    JobStatus.DONE: frozenset(),
    JobStatus.RESUBMITTED: frozenset(),
}

StopReason = models.TextChoices("StopReason", [(r, r) for r in STOP_REASONS])


class IllegalTransition(ValueError):
    """A status move the lifecycle does not allow (e.g. DONE → STARTED)."""


class Job(models.Model):
    harvest = models.ForeignKey("harvest.HarvestDefinition", on_delete=models.PROTECT, related_name="jobs")
    harvest_run = models.PositiveIntegerField(help_text="Which run of its definition this job belongs to.")
    channel = models.ForeignKey("harvest.HarvestChannel", on_delete=models.PROTECT, related_name="jobs")
    status = models.CharField(max_length=12, choices=JobStatus.choices, default=JobStatus.NEW, db_index=True)
    spec = SpecField(help_text="The frozen JobSpec sent to the harvester (Zstandard-compressed JSON).")
    domain_count = models.PositiveIntegerField(default=0)
    expected_objects = models.BigIntegerField(default=0)
    expected_bytes = models.BigIntegerField(default=0)
    continues = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="continued_by",
        help_text="The failed job this one resubmits.",
    )
    patches = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="patched_by",
        help_text="A patch crawl: the job whose missing resources (found by page QA) this job fetches.",
    )
    created = models.DateTimeField(default=timezone.now, db_index=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    last_heartbeat = models.DateTimeField(null=True, blank=True)
    harvester = models.CharField(max_length=200, blank=True, help_text="Host and worker that ran it.")
    progress = models.JSONField(default=dict, blank=True, help_text="The latest Progress heartbeat.")
    figures = models.JSONField(
        null=True,
        blank=True,
        help_text="The QA figures its JobResult sent as data (MIME types, status codes); empty for a job whose "
        "harvester did not send them (before issue 16): its statistics are read from its text reports.",
    )
    error_category = models.CharField(max_length=50, blank=True)
    error_detail = models.TextField(blank=True)
    rejected_at = models.DateTimeField(
        null=True, blank=True, help_text="Set when a FAILED job was judged not worth resubmitting."
    )
    rejected_by = models.CharField(max_length=150, blank=True)

    class Meta:
        ordering = ["-id"]
        # (status, ended_at): the dashboard's "finished / failed in the last 7 days", newest first, read
        # from the index instead of a scan of every job ever run (4 ms at 10,000 jobs, linear beyond).
        indexes = [
            models.Index(fields=["harvest", "harvest_run"]),
            models.Index(fields=["status", "channel"]),
            models.Index(fields=["status", "ended_at"], name="harvest_job_status_ended"),
        ]

    def __str__(self) -> str:
        return f"job {self.pk} ({self.harvest_id} run {self.harvest_run}, {self.status})"

    def latest_progress(self) -> Progress | None:
        """The latest heartbeat, typed (intake stores ``Progress.to_dict()``); None before the first one.

        Every reader (job pages, the jobs command, the continuous section) takes its figures from here, so a
        field the heartbeat lacks has the contract's default, declared once in :class:`Progress`."""
        if not self.progress:
            return None
        return Progress.from_dict({"job_id": self.pk, "at": "", **self.progress})

    def follow_on(self, **fields: object) -> Job:
        """A new job in this job's definition, run and channel (a resubmission, a patch job), with an empty
        spec: the caller stores its spec once the new job's id is known."""
        return Job.objects.create(
            harvest_id=self.harvest_id, harvest_run=self.harvest_run, channel_id=self.channel_id, spec={}, **fields
        )

    @classmethod
    def transition(cls, job_id: int, old: str, new: str, **fields: object) -> bool:
        """Move job ``job_id`` from ``old`` to ``new`` (setting ``fields`` too) if it is still ``old``.

        Returns False if another process moved it first; raises IllegalTransition for a move the
        lifecycle forbids, whoever asks.
        """
        if new not in TRANSITIONS[old]:
            raise IllegalTransition(f"a job cannot go from {old} to {new}")
        return cls.objects.filter(pk=job_id, status=old).update(status=new, **fields) == 1


class JobDomain(models.Model):
    """A domain configuration frozen into a job, with the budget the job gave it."""

    #: A broad crawl's generation writes a million rows into every B-tree of this table, so it has two: the
    #: primary key (ids in order: cheap) and ``jobdomain_unique`` on (configuration, job), which also serves
    #: the lookups by configuration (PROTECT: a configuration a job used cannot be deleted). Lookups by job
    #: use a BRIN index on PostgreSQL (a job's rows are written together; migration 0019), a B-tree elsewhere.
    job = models.ForeignKey(Job, on_delete=models.PROTECT, related_name="domains", db_index=False)
    configuration = models.ForeignKey(
        "harvest.DomainConfiguration", on_delete=models.PROTECT, related_name="+", db_index=False
    )
    max_objects = models.BigIntegerField()
    max_bytes = models.BigIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["configuration", "job"], name="jobdomain_unique")]

    def __str__(self) -> str:
        return f"job {self.job_id}: configuration {self.configuration_id}"


_CONTROL_LABELS = {"add_trap": "add crawler trap", "seeds": "change seeds"}


class JobControl(models.Model):
    """A control instruction to a running job, kept with who and when so it shows in the job's
    history and survives a restart until the harvester acknowledges it."""

    #: The contract's actions (harvester.contracts.CONTROL_ACTIONS, declared there once) but ``cancel``,
    #: the orchestrator's own fence (dispatch.send_cancel); seeds: a continuous job's {"add", "remove"}.
    ACTIONS = [(a, _CONTROL_LABELS.get(a, a)) for a in CONTROL_ACTIONS if a != "cancel"]

    job = models.ForeignKey(Job, on_delete=models.PROTECT, related_name="controls")
    action = models.CharField(max_length=10, choices=ACTIONS)
    argument = models.TextField(blank=True)
    requested_by = models.CharField(max_length=150)
    requested_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(null=True, blank=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["requested_at"]

    def __str__(self) -> str:
        return f"{self.action} {self.argument} on job {self.job_id} by {self.requested_by}".replace("  ", " ")


class ReaperSight(models.Model):
    """One row: when the reaper last swept, and since when it has swept without a gap.

    A job's silence only counts while the orchestrator could hear it: after a gap (broker, beat or events
    worker away) silence is measured from ``seeing_since`` (orchestrator/harvest/jobs/reaper.py)."""

    last_sweep_at = models.DateTimeField()
    seeing_since = models.DateTimeField()

    def __str__(self) -> str:
        return f"reaper: last sweep {self.last_sweep_at:%Y-%m-%d %H:%M:%S}, seeing since {self.seeing_since:%H:%M:%S}"


class HarvestInfo(models.Model):
    """What one job harvested of one domain configuration: NetarchiveSuite's harvest history, which
    feeds size estimates and snapshot continuation."""

    job = models.ForeignKey(Job, on_delete=models.PROTECT, related_name="harvest_infos")
    harvest = models.ForeignKey("harvest.HarvestDefinition", on_delete=models.PROTECT, related_name="harvest_infos")
    domain = models.ForeignKey("harvest.Domain", on_delete=models.PROTECT, related_name="harvest_infos")
    configuration = models.ForeignKey(
        "harvest.DomainConfiguration", on_delete=models.PROTECT, related_name="harvest_infos"
    )
    objects_count = models.BigIntegerField(db_column="objects")
    bytes_count = models.BigIntegerField(db_column="bytes")
    stop_reason = models.CharField(max_length=20, choices=StopReason.choices)
    date = models.DateTimeField(default=timezone.now)
    #: The seeds the job's frozen spec gave this configuration, kept when the result is recorded: the domain
    #: page's replay links open them without decompressing and parsing a broad-crawl job's whole spec per run.
    #: None for rows recorded before migration 0020 (the page reads those from the spec).
    seeds = models.JSONField(null=True, blank=True, default=None)

    class Meta:
        ordering = ["-date"]
        verbose_name = "harvest info"
        constraints = [models.UniqueConstraint(fields=["job", "configuration"], name="harvestinfo_unique")]
        indexes = [models.Index(fields=["harvest", "domain"]), models.Index(fields=["configuration", "date"])]

    def __str__(self) -> str:
        return f"job {self.job_id}: {self.domain_id} {self.objects_count} objects, {self.stop_reason}"
