"""Making, checking and revoking API tokens (models.ApiToken says how they are stored, and why)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from orchestrator.api.models import ApiToken

PREFIX = "nh_"
#: ``last_used`` is written at most this often per token: not one UPDATE per API call.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create(user: AbstractBaseUser, name: str = "") -> tuple[ApiToken, str]:
    """A new token for ``user``: its row, and the token itself, which is shown once and never stored."""
    token = PREFIX + secrets.token_urlsafe(32)
    row = ApiToken.objects.create(user=user, name=name[:100], prefix=token[:10], key_hash=digest(token))
    return row, token


def user_of(token: str) -> AbstractBaseUser | None:
    """The active user a live token belongs to, or None (unknown, revoked, or the user is deactivated)."""
    if not token.startswith(PREFIX) or len(token) > 200:
        return None
    row = (
        ApiToken.objects.select_related("user")
        .filter(key_hash=digest(token), revoked_at__isnull=True)
        .only("id", "last_used", "user")
        .first()
    )
    if row is None or not row.user.is_active:
        return None
    now = timezone.now()
    if row.last_used is None or now - row.last_used >= LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=row.pk).update(last_used=now)
    return row.user


def revoke(row: ApiToken) -> bool:
    """Revoke a token; False if it was revoked already (a conditional UPDATE: a double revoke is harmless)."""
    return ApiToken.objects.filter(pk=row.pk, revoked_at__isnull=True).update(revoked_at=timezone.now()) == 1
