"""The web UI's permissions. No table: the model exists only so Django creates its permissions, which
the roles (groups made by migration 0001) are built from."""

from __future__ import annotations

from django.db import models


class Access(models.Model):
    """Holder of the three web UI capabilities; see webui.access for what each allows."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = [
            ("view_ui", "Can read every page of the web UI"),
            ("curate", "Can edit domains, harvest definitions, selections and schedules, and run harvests now"),
            ("engineer", "Can edit crawl templates, channels and crawler-trap lists, control jobs and storage"),
        ]

    def __str__(self) -> str:
        return "web UI access"
