"""API tokens in the admin: an administrator makes one for a user (shown once) or revokes it."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from orchestrator.api import tokens
from orchestrator.api.models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["prefix", "user", "name", "created", "last_used", "revoked_at"]
    list_filter = ["revoked_at"]
    search_fields = ["user__username", "name", "prefix"]
    raw_id_fields = ["user"]
    actions = ["revoke"]

    def get_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> list[str]:
        return ["user", "name"] if obj is None else ["user", "name", "prefix", "created", "last_used", "revoked_at"]

    def get_readonly_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> list[str]:
        return [] if obj is None else ["user", "prefix", "created", "last_used", "revoked_at"]

    def save_model(self, request: HttpRequest, obj: ApiToken, form: object, change: bool) -> None:
        if change:
            obj.save(update_fields=["name"])
            return
        row, token = tokens.create(obj.user, obj.name)
        obj.pk, obj.prefix, obj.key_hash, obj.created = row.pk, row.prefix, row.key_hash, row.created
        obj._state.adding = False
        messages.warning(
            request,
            f"The API token for {obj.user.get_username()} is {token} — copy it now: it is "
            "stored only as a hash and is never shown again.",
        )

    def has_delete_permission(self, request: HttpRequest, obj: ApiToken | None = None) -> bool:
        return False  # revoke instead: the row says who had access, and until when

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        done = sum(tokens.revoke(row) for row in queryset)
        messages.success(request, f"{done} token(s) revoked.")
