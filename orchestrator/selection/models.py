"""Collections, records, saved searches, and the administrators' mapping to harvesting (BCWeb, 2.1)."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from harvester.hosts import registrable_part
from orchestrator.harvest.curation import validators
from orchestrator.harvest.models import CrawlTemplate, HarvestDefinition
from orchestrator.harvest.models.fields import free_text
from orchestrator.selection import rules


class Collection(models.Model):
    """A department's or a project's collection. Its editors may add and change records in it; every
    staff user may read every collection."""

    name = models.CharField(max_length=200, unique=True)
    description = free_text()
    editors = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="selection_collections",
        help_text="Users who may add, change and move records of this collection.",
    )
    created = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["name"]
        permissions = [("run_transfer", "Can transfer records to harvesting")]

    def __str__(self) -> str:
        return self.name

    def can_edit(self, user: object, every: bool = False) -> bool:
        """``every``: the caller found that ``user`` edits every collection (the web UI's admin role,
        webui.access.edits_every_collection); superusers always do."""
        if not getattr(user, "is_authenticated", False) or not getattr(user, "is_active", False):
            return False
        return bool(
            every
            or user.is_superuser  # type: ignore[attr-defined]
            or self.editors.filter(pk=user.pk).exists()
        )  # type: ignore[attr-defined]


def editable_collections(user: object, every: bool = False) -> models.QuerySet[Collection]:
    """The collections ``user`` edits: those naming them an editor, or all of them for superusers and
    when ``every`` (see :meth:`Collection.can_edit`)."""
    if every or getattr(user, "is_superuser", False):
        return Collection.objects.all()
    return Collection.objects.filter(editors=user)  # type: ignore[misc]


class Record(models.Model):
    """One site (or part of one) chosen for a collection: seeds, technical settings, description and
    management data. Inactive records stay for the record but are not transferred."""

    collection = models.ForeignKey(Collection, on_delete=models.PROTECT, related_name="records")
    seeds = models.TextField(help_text="One http(s) URL per line; the first is the record's URL.")
    url = models.CharField(max_length=2000, editable=False, db_index=True)
    host = models.CharField(max_length=253, editable=False, db_index=True)
    domain = models.CharField(max_length=253, editable=False, db_index=True)
    supplementary_urls = models.TextField(
        blank=True, help_text="Extra seeds that improve the crawl, e.g. the sitemap; one URL per line."
    )
    budget = models.CharField(max_length=10, choices=rules.BUDGETS, default="small")
    frequency = models.CharField(max_length=15, choices=rules.FREQUENCIES, default="monthly")
    depth = models.CharField(max_length=15, choices=rules.DEPTHS, default="host")
    theme = models.CharField(max_length=200)
    keywords = models.CharField(max_length=500, blank=True)
    content_notes = free_text()
    technical_notes = free_text()
    active = models.BooleanField(default=True, help_text="Inactive records are not transferred to harvesting.")
    responsible = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The curator who follows this record.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+", editable=False
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    modified_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+", editable=False
    )
    modified_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["collection", "url"]

    def __str__(self) -> str:
        return self.url

    def clean(self) -> None:
        errors: dict[str, object] = {}
        try:
            self.seeds = validators.normalize_seed_lines(self.seeds)
            seeds = validators.active_seeds(self.seeds)
            if not seeds:
                errors["seeds"] = "a record needs at least one seed URL"
            else:
                self.url = seeds[0]
                self.host, self.domain = host_and_domain(self.url)
                if (
                    self.collection_id
                    and Record.objects.filter(collection_id=self.collection_id, url=self.url)
                    .exclude(pk=self.pk)
                    .exists()
                ):
                    errors["seeds"] = (
                        f"{self.url} is already a record of this collection (the same URL may be "
                        "entered in other collections only)"
                    )
        except ValidationError as exc:
            errors["seeds"] = exc.messages
        try:
            self.supplementary_urls = validators.normalize_seed_lines(self.supplementary_urls)
        except ValidationError as exc:
            errors["supplementary_urls"] = exc.messages
        if not self.theme.strip():
            errors["theme"] = "the theme is mandatory: it classifies the records of a collection"
        if not rules.combines(self.budget, self.frequency):
            errors["frequency"] = (
                f"a {self.budget} budget cannot be harvested {self.frequency}: see the table of combinations"
            )
        if errors:
            raise ValidationError(errors)

    def all_seeds(self) -> list[str]:
        return validators.active_seeds(self.seeds) + validators.active_seeds(self.supplementary_urls)


def host_and_domain(url: str) -> tuple[str, str]:
    """The host and registrable domain of a normalised seed URL (an IP is its own domain)."""
    from urllib.parse import urlsplit

    host = (urlsplit(url).hostname or "").lower()
    return host, registrable_part(host) or host


class SavedSearch(models.Model):
    """A search a curator runs often, kept in their account."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="selection_searches")
    name = models.CharField(max_length=100)
    query = models.JSONField(default=dict, help_text="The search form's fields.")

    class Meta:
        ordering = ["user", "name"]
        constraints = [models.UniqueConstraint(fields=["user", "name"], name="savedsearch_unique_name")]

    def __str__(self) -> str:
        return self.name


class HarvestMapping(models.Model):
    """Administrators' mapping: the records of a collection with a frequency go to this definition."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="mappings")
    frequency = models.CharField(max_length=15, choices=rules.FREQUENCIES)
    definition = models.ForeignKey(
        HarvestDefinition,
        on_delete=models.PROTECT,
        related_name="selection_mappings",
        limit_choices_to={"kind": HarvestDefinition.SELECTIVE},
    )

    class Meta:
        ordering = ["collection", "frequency"]
        constraints = [models.UniqueConstraint(fields=["collection", "frequency"], name="harvestmapping_unique")]

    def __str__(self) -> str:
        return f"{self.collection} × {self.frequency} → {self.definition}"

    def clean(self) -> None:
        if self.definition_id and self.definition.kind != HarvestDefinition.SELECTIVE:
            raise ValidationError({"definition": "records go to selective harvest definitions only"})


class SettingsMapping(models.Model):
    """Administrators' mapping: a budget × depth becomes this crawl template and object budget."""

    budget = models.CharField(max_length=10, choices=rules.BUDGETS)
    depth = models.CharField(max_length=15, choices=rules.DEPTHS)
    template = models.ForeignKey(CrawlTemplate, on_delete=models.PROTECT, related_name="+")
    max_objects = models.BigIntegerField(default=-1, help_text="-1 = unlimited.")
    max_bytes = models.BigIntegerField(default=-1, help_text="-1 = unlimited.")

    class Meta:
        ordering = ["budget", "depth"]
        constraints = [models.UniqueConstraint(fields=["budget", "depth"], name="settingsmapping_unique")]

    def __str__(self) -> str:
        return f"{self.budget} × {self.depth} → {self.template}"
