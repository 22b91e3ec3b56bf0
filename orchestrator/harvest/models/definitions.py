"""Harvest channels and harvest definitions (selective, snapshot, continuous)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models
from django.utils import timezone

from harvester import patterns
from harvester.contracts import ContractError, harvest_queue
from harvester.defaults import CONTINUOUS_MAX_URIS_PER_HOST, DNS_TTL_S, ROBOTS_VALIDITY_S, WARC_ROTATE_S
from orchestrator.harvest.curation import validators
from orchestrator.harvest.models.domains import BUDGET_HELP, ExtendedField
from orchestrator.harvest.models.fields import free_text


class HarvestChannel(models.Model):
    """A named pool of harvesters, fed by the Celery queue ``harvest.<name>``.

    Priority says which workers serve it: high-priority workers keep selective harvests from ever
    waiting behind a broad crawl (the BnF's high/low priority harvesters).
    """

    PRIORITIES = [("high", "high"), ("low", "low")]

    name = models.CharField(
        max_length=50,
        unique=True,
        validators=[
            RegexValidator(r"^[a-z0-9][a-z0-9_-]*$", "lower-case letters, digits, - and _ only (it names a queue)")
        ],
    )
    priority = models.CharField(max_length=4, choices=PRIORITIES)
    comments = free_text()
    default_for = models.CharField(
        max_length=10,
        blank=True,
        choices=[("", "-"), ("selective", "selective"), ("snapshot", "snapshot"), ("continuous", "continuous")],
        help_text="New definitions of this kind go to this channel unless told otherwise.",
    )

    class Meta:
        ordering = ["-priority", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["default_for"], condition=~models.Q(default_for=""), name="channel_one_default_per_kind"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.priority})"

    @property
    def queue(self) -> str:
        return harvest_queue(self.name)


class HarvestDefinition(models.Model):
    """What to harvest and when. One table for the three kinds; ``clean`` enforces each kind's fields."""

    SELECTIVE, SNAPSHOT, CONTINUOUS = "selective", "snapshot", "continuous"
    KINDS = [(SELECTIVE, "selective"), (SNAPSHOT, "snapshot (broad)"), (CONTINUOUS, "continuous")]

    name = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=10, choices=KINDS)
    comments = free_text()
    audience = models.CharField(max_length=100, blank=True)
    active = models.BooleanField(default=False)
    runs = models.PositiveIntegerField(default=0, editable=False, help_text="Runs generated so far.")
    channel = models.ForeignKey(HarvestChannel, on_delete=models.PROTECT, related_name="definitions")
    extended = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(default=timezone.now, editable=False)
    edited = models.DateTimeField(auto_now=True)

    # selective
    configurations = models.ManyToManyField(
        "harvest.DomainConfiguration", blank=True, related_name="harvest_definitions"
    )
    schedule = models.ForeignKey(
        "harvest.Schedule", null=True, blank=True, on_delete=models.PROTECT, related_name="definitions"
    )
    next_date = models.DateTimeField(
        null=True, blank=True, help_text="UTC. The next run; set from the schedule, may be overridden."
    )
    skipped_events = models.PositiveIntegerField(
        default=0, editable=False, help_text="Schedule events that passed while the system was down and were not run."
    )
    crawler_traps = models.TextField(blank=True, help_text="This definition's own traps, one regex per line.")
    page_qa = models.BooleanField(
        default=True,
        help_text="After each job is indexed, load its pages through "
        "replay in a browser and report what is missing (QA).",
    )

    # snapshot
    max_objects = models.BigIntegerField(default=-1, help_text=f"Per domain. {BUDGET_HELP}")
    max_bytes = models.BigIntegerField(default=-1, help_text=f"Per domain. {BUDGET_HELP}")
    max_job_running_time_s = models.PositiveIntegerField(default=0, help_text="0 = no limit.")
    previous = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="continued_by",
        help_text="Continue this earlier snapshot: only domains it did not finish.",
    )

    # continuous, as the crawl runs it (issue 12): the policy's settings (a RevisitSettings dict,
    # harvester/revisit/policy.py; {} = the policy's defaults), the job's global fetch budget and the
    # WARC time rule. Every time constant is a setting, so a crawl can run against a test web in
    # accelerated time.
    revisit_settings = models.JSONField(
        default=dict, blank=True, help_text="RevisitSettings (harvester/revisit/policy.py); empty = defaults."
    )
    fetch_budget_per_s = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.001)],
        help_text="Fetches per second the continuous job never exceeds (empty: politeness alone limits it).",
    )
    warc_rotate_s = models.PositiveIntegerField(
        default=WARC_ROTATE_S,
        validators=[MinValueValidator(1)],
        help_text="A continuous job closes its WARC (and hands it to "
        "the indexer chain) at least this often, in seconds.",
    )
    max_uris_per_host = models.PositiveIntegerField(
        default=CONTINUOUS_MAX_URIS_PER_HOST,
        validators=[MinValueValidator(1)],
        help_text="A continuous job follows at most this many URIs of one host; links beyond are not followed "
        "(a site making up links on every visit cannot grow the job without end).",
    )
    robots_validity_s = models.PositiveIntegerField(
        default=ROBOTS_VALIDITY_S,
        validators=[MinValueValidator(1)],
        help_text="A continuous job obeys a host's robots.txt this long, in seconds, then fetches it again.",
    )
    dns_ttl_s = models.PositiveIntegerField(
        default=DNS_TTL_S,
        validators=[MinValueValidator(1)],
        help_text="A continuous job keeps a host's DNS answer (or failure) this long, in seconds.",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @classmethod
    def locked(cls, pk: int) -> HarvestDefinition | None:
        """The definition's row, locked to the end of the caller's transaction (None if it is gone): whoever
        makes a run or a continuous job of it holds this lock, so two requests never both read the same
        ``runs`` (or the same live job) and both act on it. Only the definition's row is locked, not its
        channel's."""
        return cls.objects.select_for_update(of=("self",)).select_related("channel").filter(pk=pk).first()

    def take_run(self) -> int:
        """Count one more run and return its number; called under :meth:`locked`, so the number is this
        caller's alone (the UPDATE still names the ``runs`` it read, as the scheduler's claim does)."""
        run = self.runs + 1
        HarvestDefinition.objects.filter(pk=self.pk, runs=self.runs).update(runs=run)
        return run

    def clean(self) -> None:
        errors: dict[str, object] = {}
        for field, used_for in (("crawler_traps", patterns.TRAPS),):
            try:
                setattr(self, field, validators.validate_regex_lines(getattr(self, field), used_for))
            except ValidationError as exc:
                errors[field] = exc.messages
        if self.kind == self.SELECTIVE and self.active and not self.schedule_id:
            errors["schedule"] = "an active selective harvest needs a schedule"
        if self.kind != self.SELECTIVE and self.schedule_id:
            errors["schedule"] = "only selective harvests run on a schedule"
        if self.channel_id:
            # A continuous job never ends: on a channel shared with selective/snapshot harvests it would hold one
            # of their harvesters for good (issue 12), so the continuous channel and the others stay apart.
            on_continuous = self.channel.default_for == self.CONTINUOUS
            if self.kind == self.CONTINUOUS and not on_continuous:
                errors["channel"] = (
                    f"{self.channel.name} is not the continuous channel: a continuous harvest runs "
                    "on a channel of its own, whose workers never hold a selective or snapshot job"
                )
            elif self.kind != self.CONTINUOUS and on_continuous:
                errors["channel"] = f"{self.channel.name} is the continuous channel: only continuous harvests run there"
        if self.kind != self.SNAPSHOT and self.previous_id:
            errors["previous"] = "only a snapshot harvest can continue a previous snapshot"
        if self.previous_id and (self.previous_id == self.pk or self.previous.kind != self.SNAPSHOT):
            errors["previous"] = "choose an earlier snapshot harvest"
        for field in ("max_objects", "max_bytes"):
            if getattr(self, field) < -1:
                errors[field] = "must be -1 (unlimited) or a positive number"
        if self.kind == self.CONTINUOUS or self.revisit_settings:
            from harvester.revisit.policy import RevisitSettings  # the policy module validates its own settings

            try:
                self.revisit_settings = RevisitSettings.from_dict(self.revisit_settings or {}).to_dict()
            except ContractError as exc:
                errors["revisit_settings"] = str(exc)
        try:
            self.extended = ExtendedField.validate_values("harvest", self.extended or {})
        except ValidationError as exc:
            errors["extended"] = exc.messages
        if errors:
            raise ValidationError(errors)
