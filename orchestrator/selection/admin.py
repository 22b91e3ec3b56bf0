"""The administrators' section of the selection tool: collections and their editors, and the mapping
of collections, frequencies, budgets and depths to harvesting."""

from django.contrib import admin

from orchestrator.selection.models import Collection, HarvestMapping, Record, SavedSearch, SettingsMapping


class HarvestMappingInline(admin.TabularInline):
    model = HarvestMapping
    extra = 1


@admin.register(Collection)
class CollectionAdmin(admin.ModelAdmin):
    list_display = ["name", "description"]
    search_fields = ["name"]
    filter_horizontal = ["editors"]
    inlines = [HarvestMappingInline]


@admin.register(SettingsMapping)
class SettingsMappingAdmin(admin.ModelAdmin):
    list_display = ["budget", "depth", "template", "max_objects", "max_bytes"]


@admin.register(Record)
class RecordAdmin(admin.ModelAdmin):
    list_display = ["url", "collection", "budget", "frequency", "depth", "theme", "active", "responsible"]
    list_filter = ["collection", "active", "budget", "frequency"]
    search_fields = ["url", "host", "theme", "keywords"]
    readonly_fields = ["created_by", "created_at", "modified_by", "modified_at"]


admin.site.register(SavedSearch)
