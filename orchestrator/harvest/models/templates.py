"""Crawl templates: typed, validated crawl profiles (NetarchiveSuite keeps opaque order.xml blobs)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models

from harvester.contracts import ContractError, CrawlSettings
from harvester.defaults import CRAWL_DEFAULTS, POLITENESS_SCOPES, ROBOTS_POLICIES, SCOPE_RULES
from orchestrator.harvest.models.fields import free_text

D = CRAWL_DEFAULTS


def _choices(values: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(v, v) for v in values]


class CrawlTemplate(models.Model):
    """A crawl profile. Field defaults come from harvester.defaults, the one source of crawl defaults."""

    name = models.CharField(max_length=100, unique=True)
    description = free_text()
    active = models.BooleanField(default=True, help_text="Inactive templates cannot be chosen for new configurations.")

    scope = models.CharField(
        max_length=10,
        choices=_choices(SCOPE_RULES),
        default=D["scope"],
        help_text="surt: SURT prefixes implied by the seeds (Heritrix); host: the seeds' hosts; "
        "domain: the seeds' registrable domains and subdomains; path: host and directory of each seed.",
    )
    max_hops = models.PositiveIntegerField(default=D["max_hops"], help_text="Maximum link hops from a seed.")
    max_embed_hops = models.PositiveIntegerField(
        default=D["max_embed_hops"],
        help_text="Embedded resources (images, CSS, JS, frames) followed this many transitive hops beyond the scope. "
        "Both this and the maximum link hops at 0: the seeds alone, with their redirects and robots.txt "
        "(a patch crawl).",
    )
    robots = models.CharField(max_length=10, choices=_choices(ROBOTS_POLICIES), default=D["robots"])
    politeness_scope = models.CharField(
        max_length=10, choices=_choices(POLITENESS_SCOPES), default=D["politeness_scope"]
    )
    delay_factor = models.FloatField(
        default=D["delay_factor"],
        validators=[MinValueValidator(0)],
        help_text="Delay between fetches = last fetch duration × this factor, clamped to [min delay, max delay].",
    )
    min_delay_ms = models.PositiveIntegerField(default=D["min_delay_ms"])
    max_delay_ms = models.PositiveIntegerField(default=D["max_delay_ms"])
    host_valence = models.PositiveIntegerField(
        default=D["host_valence"], validators=[MinValueValidator(1)], help_text="Parallel connections per host."
    )
    respect_crawl_delay_up_to_s = models.PositiveIntegerField(
        default=D["respect_crawl_delay_up_to_s"],
        help_text="A robots.txt Crawl-delay for our user agent is honoured up to this many seconds "
        "(the delay after a fetch is at least that); 0 = ignore Crawl-delay.",
    )
    max_retries = models.PositiveIntegerField(default=D["max_retries"])
    retry_delay_s = models.PositiveIntegerField(default=D["retry_delay_s"])
    connect_timeout_s = models.PositiveIntegerField(default=D["connect_timeout_s"], validators=[MinValueValidator(1)])
    read_timeout_s = models.PositiveIntegerField(default=D["read_timeout_s"], validators=[MinValueValidator(1)])
    max_document_bytes = models.BigIntegerField(
        default=D["max_document_bytes"], help_text="Bytes per document before truncation; -1 = no limit."
    )
    warc_max_bytes = models.BigIntegerField(
        default=D["warc_max_bytes"],
        validators=[MinValueValidator(1)],
        help_text="WARC files rotate at this size (1 GB = 1024³ bytes).",
    )
    dedup = models.BooleanField(default=D["dedup"], help_text="Store duplicates as revisit records.")
    extract_javascript = models.BooleanField(
        default=D["extract_javascript"], help_text="Speculatively extract URLs from JavaScript strings."
    )
    canonicalize_query_order = models.BooleanField(
        default=D["canonicalize_query_order"],
        help_text="Count URLs whose query parameters differ only in order as one URL (Heritrix never does).",
    )
    source_tag_seeds = models.BooleanField(
        default=D["source_tag_seeds"],
        help_text="Name in crawl.log, and count in source-report.txt, the seed each URL descends from.",
    )
    user_agent = models.CharField(
        max_length=300, default=D["user_agent"], help_text="{operator_contact} is replaced by the operator contact."
    )
    operator_contact = models.CharField(
        max_length=300, default=D["operator_contact"], help_text="A URL or e-mail address webmasters can reach you at."
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def crawl_settings(self) -> CrawlSettings:
        """The template as the harvester reads it (validated by the contract's own rules)."""
        return CrawlSettings.from_dict({key: getattr(self, key) for key in CRAWL_DEFAULTS})

    def clean(self) -> None:
        try:
            self.crawl_settings()
        except ContractError as exc:
            field, _, message = str(exc).partition(": ")
            field = field.removeprefix("settings.")
            raise ValidationError({field: message} if hasattr(self, field) else str(exc)) from None
        if "{operator_contact}" not in self.user_agent and self.operator_contact not in self.user_agent:
            raise ValidationError(
                {
                    "user_agent": "the user agent must include the operator contact "
                    "(write {operator_contact} where it goes)"
                }
            )
