"""Domains, their seed lists and configurations, extended fields and global crawler-trap lists."""

from __future__ import annotations

from datetime import date, datetime

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils import timezone

from orchestrator.harvest.curation import validators
from orchestrator.harvest.models.fields import free_text

BUDGET_HELP = "-1 = unlimited, 0 = excluded from harvests."


class ExtendedField(models.Model):
    """An admin-defined typed field on domains or harvest definitions (NetarchiveSuite's
    "extended fields"). Values live in the owner's ``extended`` JSON, keyed by ``name``."""

    KINDS = [("text", "text"), ("number", "number"), ("boolean", "boolean"), ("date", "date"), ("choice", "choice")]
    OWNERS = [("domain", "domain"), ("harvest", "harvest definition")]

    owner = models.CharField(max_length=10, choices=OWNERS)
    name = models.SlugField(max_length=50, help_text="Key used in exports and the API.")
    label = models.CharField(max_length=100)
    kind = models.CharField(max_length=10, choices=KINDS, default="text")
    choices = models.TextField(blank=True, help_text="For kind 'choice': one allowed value per line.")
    required = models.BooleanField(default=False)
    default = models.CharField(max_length=200, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["owner", "position", "name"]
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="extendedfield_unique_name")]

    def __str__(self) -> str:
        return f"{self.get_owner_display()}: {self.label}"

    def clean(self) -> None:
        if self.kind == "choice" and not self.choices.strip():
            raise ValidationError({"choices": "a choice field needs at least one value"})
        if self.default:
            self.parse(self.default)

    def parse(self, raw: object) -> object:
        """The typed value of ``raw``, or ValidationError saying why it does not fit this field."""
        if raw in (None, ""):
            if self.required:
                raise ValidationError(f"{self.label} is required")
            return None
        text = str(raw).strip()
        try:
            if self.kind == "number":
                return float(text) if "." in text else int(text)
            if self.kind == "boolean":
                if isinstance(raw, bool):
                    return raw
                if text.lower() in ("true", "yes", "1", "on"):
                    return True
                if text.lower() in ("false", "no", "0", "off"):
                    return False
                raise ValueError("expected yes or no")
            if self.kind == "date":
                return date.fromisoformat(text).isoformat()
        except ValueError as exc:
            raise ValidationError(f"{self.label}: {text!r} is not a valid {self.kind} ({exc})") from None
        if self.kind == "choice" and text not in validators.regex_lines(self.choices):
            raise ValidationError(f"{self.label}: {text!r} is not one of the allowed values")
        return text

    @classmethod
    def validate_values(cls, owner: str, values: dict[str, object]) -> dict[str, object]:
        fields = {f.name: f for f in cls.objects.filter(owner=owner)}
        unknown = set(values) - set(fields)
        if unknown:
            raise ValidationError(f"unknown extended field(s): {', '.join(sorted(unknown))}")
        errors, clean = [], {}
        for name, field in fields.items():
            try:
                value = field.parse(values.get(name, field.default))
            except ValidationError as exc:
                errors.extend(exc.messages)
                continue
            if value is not None:
                clean[name] = value
        if errors:
            raise ValidationError(errors)
        return clean


class Domain(models.Model):
    """A registrable domain (public suffix + 1) or an IP address: the unit of harvesting.

    Domains are never deleted (NetarchiveSuite's rule: their harvest history must stay), hence PROTECT
    on every reference and no delete in the admin. Create them through
    ``orchestrator.harvest.curation.domains.create_domains`` so each gets its default seeds and configuration.
    """

    name = models.CharField(max_length=253, unique=True)
    alias_of = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="aliases",
        db_index=False,  # a partial index below: almost no domain is an alias
        help_text="This domain is an alias of another: it is not harvested on its own until the alias expires.",
    )
    alias_expires = models.DateTimeField(null=True, blank=True, help_text="UTC. Empty = the alias never expires.")
    comments = free_text()
    crawler_traps = models.TextField(
        blank=True, help_text="One regular expression per line; matching URLs are never fetched."
    )
    extended = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["name"]
        indexes = [models.Index(fields=["alias_of"], condition=Q(alias_of__isnull=False), name="domain_alias_of")]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        errors: dict[str, object] = {}
        try:
            self.name = validators.normalize_domain_name(self.name)
        except ValidationError as exc:
            errors["name"] = exc.messages
        try:
            self.crawler_traps = validators.validate_regex_lines(self.crawler_traps)
        except ValidationError as exc:
            errors["crawler_traps"] = exc.messages
        if self.alias_of_id:
            target = self.alias_of
            if target.pk == self.pk:
                errors["alias_of"] = "a domain cannot be an alias of itself"
            elif target.alias_of_id and target.alias_is_active():
                errors["alias_of"] = (
                    f"{target.name} is itself an alias of {target.alias_of.name}: "
                    f"point to {target.alias_of.name} instead (no alias chains)"
                )
            elif self.pk and self.aliases.exists():
                errors["alias_of"] = (
                    f"{self.name} has aliases of its own ("
                    f"{', '.join(self.aliases.values_list('name', flat=True)[:5])}): "
                    "an alias cannot have aliases"
                )
        elif self.alias_expires:
            errors["alias_expires"] = "an expiry date only makes sense for an alias"
        try:
            self.extended = ExtendedField.validate_values("domain", self.extended or {})
        except ValidationError as exc:
            errors["extended"] = exc.messages
        if errors:
            raise ValidationError(errors)

    def alias_is_active(self, at: datetime | None = None) -> bool:
        if not self.alias_of_id:
            return False
        return self.alias_expires is None or self.alias_expires > (at or timezone.now())

    @property
    def default_configuration(self) -> DomainConfiguration | None:
        return self.configurations.filter(is_default=True).first()

    def delete(self, *args: object, **kwargs: object) -> None:
        raise ValidationError("domains are never deleted: their harvest history must stay")


class SeedList(models.Model):
    """A named list of seed URLs of one domain; lines starting with ``#`` are kept but inactive."""

    # No separate index on domain: the unique (domain, name) index leads with it.
    domain = models.ForeignKey(Domain, on_delete=models.PROTECT, related_name="seedlists", db_index=False)
    name = models.CharField(max_length=100)
    seeds = models.TextField(help_text="One http(s) URL per line; a line starting with # is inactive.")
    comments = free_text()

    class Meta:
        ordering = ["domain", "name"]
        constraints = [models.UniqueConstraint(fields=["domain", "name"], name="seedlist_unique_name")]

    def __str__(self) -> str:
        return f"{self.domain}: {self.name}"

    def clean(self) -> None:
        try:
            self.seeds = validators.normalize_seed_lines(self.seeds)
        except ValidationError as exc:
            raise ValidationError({"seeds": exc.messages}) from None
        if not validators.active_seeds(self.seeds):
            raise ValidationError({"seeds": "a seed list needs at least one active URL"})

    @property
    def active_seeds(self) -> list[str]:
        return validators.active_seeds(self.seeds)


class DomainConfiguration(models.Model):
    """How one domain is harvested: a template, seed lists and a budget."""

    DEFAULT_NAME = "defaultconfig"

    # No separate index on domain: the unique (domain, name) index leads with it. Few templates, many
    # configurations: an index on template would cost every insert and serve only template deletion.
    domain = models.ForeignKey(Domain, on_delete=models.PROTECT, related_name="configurations", db_index=False)
    name = models.CharField(max_length=100)
    template = models.ForeignKey(
        "harvest.CrawlTemplate", on_delete=models.PROTECT, related_name="configurations", db_index=False
    )
    seedlists = models.ManyToManyField(SeedList, related_name="configurations", through="ConfigurationSeedList")
    max_objects = models.BigIntegerField(default=-1, help_text=BUDGET_HELP)
    max_bytes = models.BigIntegerField(default=-1, help_text=BUDGET_HELP)
    is_default = models.BooleanField(default=False, help_text="The configuration snapshot harvests use.")
    comments = free_text()

    class Meta:
        ordering = ["domain", "name"]
        constraints = [
            models.UniqueConstraint(fields=["domain", "name"], name="configuration_unique_name"),
            models.UniqueConstraint(fields=["domain"], condition=Q(is_default=True), name="configuration_one_default"),
            models.CheckConstraint(
                condition=Q(max_objects__gte=-1) & Q(max_bytes__gte=-1), name="configuration_budget_range"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.domain}: {self.name}"

    def clean(self) -> None:
        errors = {}
        for field in ("max_objects", "max_bytes"):
            if getattr(self, field) is not None and getattr(self, field) < -1:
                errors[field] = "must be -1 (unlimited), 0 (excluded) or a positive number"
        if errors:
            raise ValidationError(errors)

    @property
    def excluded(self) -> bool:
        return self.max_objects == 0 or self.max_bytes == 0


class GlobalCrawlerTrapList(models.Model):
    """A named list of crawler-trap regexes applied to every job while active."""

    name = models.CharField(max_length=100, unique=True)
    description = free_text()
    active = models.BooleanField(default=True)
    traps = models.TextField(blank=True, help_text="One regular expression per line.")

    class Meta:
        ordering = ["name"]
        verbose_name = "global crawler-trap list"

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        try:
            self.traps = validators.validate_regex_lines(self.traps)
        except ValidationError as exc:
            raise ValidationError({"traps": exc.messages}) from None

    @classmethod
    def active_traps(cls) -> list[str]:
        traps: list[str] = []
        for text in cls.objects.filter(active=True).values_list("traps", flat=True):
            traps.extend(validators.regex_lines(text))
        return traps


class ConfigurationSeedList(models.Model):
    """The seed lists of a configuration. An explicit table so its indexes are only the two needed."""

    configuration = models.ForeignKey(DomainConfiguration, on_delete=models.CASCADE, db_index=False)
    seedlist = models.ForeignKey(SeedList, on_delete=models.PROTECT, related_name="+")

    class Meta:
        db_table = "harvest_domainconfiguration_seedlists"
        constraints = [
            models.UniqueConstraint(fields=["configuration", "seedlist"], name="configurationseedlist_unique")
        ]

    def __str__(self) -> str:
        return f"{self.configuration} ← {self.seedlist.name}"
