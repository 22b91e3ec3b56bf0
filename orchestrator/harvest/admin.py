"""The Django admin for crawl engineers: every table editable, validated, and usable at national scale
(raw-id pickers instead of million-row drop-downs, no full counts, no domain deletion)."""

from __future__ import annotations

import json

from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html

from orchestrator.harvest.curation import domains as domain_service
from orchestrator.harvest.models import (
    ArchiveFile,
    ArchiveFileCopy,
    ConfigurationSeedList,
    CrawlTemplate,
    Domain,
    DomainConfiguration,
    ExtendedField,
    GlobalCrawlerTrapList,
    HarvestChannel,
    HarvestDefinition,
    HarvestInfo,
    Job,
    JobControl,
    Schedule,
    SeedList,
)


class NoDeleteMixin:
    """Harvest history must stay: these rows are never deleted, by anyone."""

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class SeedListInline(admin.StackedInline):
    model = SeedList
    extra = 0


class ConfigurationInline(admin.TabularInline):
    model = DomainConfiguration
    extra = 0
    fields = ("name", "template", "max_objects", "max_bytes", "is_default")
    show_change_link = True  # seed lists are chosen on the configuration's own page


class ConfigurationSeedListInline(admin.TabularInline):
    model = ConfigurationSeedList
    extra = 1
    raw_id_fields = ("seedlist",)
    verbose_name = "seed list"


@admin.register(Domain)
class DomainAdmin(NoDeleteMixin, admin.ModelAdmin):
    list_display = ("name", "alias_of", "alias_expires", "created")
    search_fields = ("name",)  # prefix search on the unique index; wildcards in the web UI
    raw_id_fields = ("alias_of",)
    show_full_result_count = False
    inlines = [SeedListInline, ConfigurationInline]
    readonly_fields = ("created",)

    def save_model(self, request, obj, form, change):
        if change:
            return super().save_model(request, obj, form, change)
        # A new domain comes with its default seeds and configuration, as every other way in does.
        domain_service.create_domains([obj.name])
        created = Domain.objects.get(name=obj.name)
        obj.pk = created.pk
        obj.created = created.created
        super().save_model(request, obj, form, True)


@admin.register(SeedList)
class SeedListAdmin(NoDeleteMixin, admin.ModelAdmin):
    list_display = ("domain", "name")
    search_fields = ("domain__name", "name")
    raw_id_fields = ("domain",)
    list_select_related = ("domain",)
    show_full_result_count = False


@admin.register(DomainConfiguration)
class DomainConfigurationAdmin(NoDeleteMixin, admin.ModelAdmin):
    list_display = ("domain", "name", "template", "max_objects", "max_bytes", "is_default")
    list_filter = ("template", "is_default")
    search_fields = ("domain__name", "name")
    raw_id_fields = ("domain",)
    list_select_related = ("domain", "template")
    inlines = [ConfigurationSeedListInline]
    show_full_result_count = False


@admin.register(CrawlTemplate)
class CrawlTemplateAdmin(NoDeleteMixin, admin.ModelAdmin):
    list_display = ("name", "scope", "max_hops", "robots", "dedup", "active")
    list_filter = ("active", "scope", "robots")
    fieldsets = (
        (None, {"fields": ("name", "description", "active")}),
        ("Scope", {"fields": ("scope", "max_hops", "max_embed_hops", "robots", "canonicalize_query_order")}),
        (
            "Politeness",
            {
                "fields": (
                    "politeness_scope",
                    "delay_factor",
                    "min_delay_ms",
                    "max_delay_ms",
                    "host_valence",
                    "respect_crawl_delay_up_to_s",
                )
            },
        ),
        (
            "Fetching",
            {
                "fields": (
                    "max_retries",
                    "retry_delay_s",
                    "connect_timeout_s",
                    "read_timeout_s",
                    "max_document_bytes",
                    "extract_javascript",
                )
            },
        ),
        ("Archive", {"fields": ("warc_max_bytes", "dedup", "source_tag_seeds")}),
        ("Identity", {"fields": ("user_agent", "operator_contact")}),
    )


@admin.register(Schedule)
class ScheduleAdmin(NoDeleteMixin, admin.ModelAdmin):
    list_display = ("name", "describe")


@admin.register(HarvestChannel)
class HarvestChannelAdmin(NoDeleteMixin, admin.ModelAdmin):
    list_display = ("name", "priority", "default_for", "queue")


@admin.register(HarvestDefinition)
class HarvestDefinitionAdmin(NoDeleteMixin, admin.ModelAdmin):
    list_display = ("name", "kind", "active", "channel", "runs", "next_date")
    list_filter = ("kind", "active", "channel")
    search_fields = ("name", "comments")
    raw_id_fields = ("configurations", "previous")
    readonly_fields = ("runs", "skipped_events", "created", "edited")


@admin.register(GlobalCrawlerTrapList)
class GlobalCrawlerTrapListAdmin(admin.ModelAdmin):
    list_display = ("name", "active")
    list_filter = ("active",)


@admin.register(ExtendedField)
class ExtendedFieldAdmin(admin.ModelAdmin):
    list_display = ("owner", "name", "label", "kind", "required")
    list_filter = ("owner",)


class ReadOnlyAdmin(NoDeleteMixin, admin.ModelAdmin):
    """Rows the system writes (jobs, history, files): engineers read them here, act through commands."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Job)
class JobAdmin(ReadOnlyAdmin):
    list_display = ("id", "harvest", "harvest_run", "channel", "status", "domain_count", "created", "ended_at")
    list_filter = ("status", "channel")
    list_select_related = ("harvest", "channel")
    search_fields = ("harvest__name",)
    show_full_result_count = False
    exclude = ("spec",)
    readonly_fields = ("spec_document",)

    @admin.display(description="JobSpec")
    def spec_document(self, job: Job) -> str:
        """The frozen JobSpec as the harvester reads it (stored compressed: shown as indented JSON)."""
        return format_html("<pre>{}</pre>", json.dumps(job.spec, indent=1, ensure_ascii=False))


@admin.register(JobControl)
class JobControlAdmin(ReadOnlyAdmin):
    list_display = ("job", "action", "argument", "requested_by", "requested_at", "acknowledged_at")


@admin.register(HarvestInfo)
class HarvestInfoAdmin(ReadOnlyAdmin):
    list_display = ("job", "domain", "configuration", "objects_count", "bytes_count", "stop_reason", "date")
    list_filter = ("stop_reason",)
    list_select_related = ("job", "domain", "configuration")
    search_fields = ("domain__name",)
    show_full_result_count = False


class ArchiveFileCopyInline(admin.TabularInline):
    model = ArchiveFileCopy
    extra = 0
    can_delete = False


@admin.register(ArchiveFile)
class ArchiveFileAdmin(ReadOnlyAdmin):
    list_display = ("name", "kind", "job", "size", "index_state")
    list_filter = ("index_state", "kind")
    search_fields = ("name",)
    inlines = [ArchiveFileCopyInline]
    show_full_result_count = False
