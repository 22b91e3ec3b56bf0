"""API tokens: a user's key for scripts, stored as a hash only.

A token is 32 random bytes (``nh_`` + URL-safe base64); the database keeps its SHA-256 and a short prefix
to recognise it by in lists. A slow password hash (PBKDF2) protects low-entropy secrets people choose; a
random 256-bit token gains nothing from it, and a hash lookup by index keeps each API call one indexed
query (GitHub and django-rest-knox store tokens the same way). A token acts as its user, with the user's
roles at the time of each call: taking a role away from a user takes it from their tokens too.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class ApiToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True, help_text="What the token is for (a script, a host).")
    prefix = models.CharField(max_length=12, help_text="The token's first characters, to recognise it by.")
    key_hash = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the token (hex).")
    created = models.DateTimeField(default=timezone.now)
    last_used = models.DateTimeField(null=True, blank=True, help_text="UTC, to the minute.")
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        verbose_name = "API token"

    def __str__(self) -> str:
        state = " (revoked)" if self.revoked_at else ""
        return f"{self.prefix}… of {self.user.get_username()}{f' ({self.name})' if self.name else ''}{state}"
