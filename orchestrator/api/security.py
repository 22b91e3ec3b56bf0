"""Who is calling, and may they: API tokens (or the browser's web UI session) and webui.access's roles.

Every operation declares the capability it requires, ``auth=role(READ)`` (or CURATE, ENGINEER: the web UI's
table): no token or session → 401, a user without the role → 403 naming it, exactly as the page doing the
same would refuse, and before the request's input is even read. tests/api/test_auth.py walks every route.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from ninja.security import HttpBearer, SessionAuth

from orchestrator.api import tokens
from webui.access import ROLE_OF, refusal


def _check(user: Any, permission: str) -> None:
    refused = refusal(user, permission)
    if refused:
        raise PermissionDenied(refused)  # django-ninja answers with the handler of orchestrator.api.errors: 403


class TokenAuth(HttpBearer):
    """``Authorization: Bearer nh_…``: a token made by ``netharvest tokens create USER`` or the admin."""

    def __init__(self, permission: str) -> None:
        self.permission = permission
        super().__init__()

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        user = tokens.user_of(token)
        if user is None:
            return None  # the next way is tried, then 401
        request.user = user
        _check(user, self.permission)
        return user


class SessionRole(SessionAuth):
    """The web UI's login session, so the interactive docs work for a logged-in user; unsafe methods then
    need the CSRF token, as every form of the web UI does (django-ninja checks it)."""

    def __init__(self, permission: str) -> None:
        self.permission = permission
        super().__init__(csrf=True)

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        user = super().authenticate(request, key)
        if user is None or not user.is_active:
            return None
        _check(user, self.permission)
        return user


def role(permission: str) -> list[Any]:
    """An operation's ``auth``: a token or the session of a user holding ``permission`` (webui.access.READ,
    CURATE or ENGINEER). Checked before the request's body or parameters are read."""
    if permission not in ROLE_OF:
        raise ValueError(f"unknown permission {permission!r}")
    return [TokenAuth(permission), SessionRole(permission)]


def who(request: HttpRequest) -> str:
    """How a change made through the API is recorded (JobControl.requested_by, logs): ``api:<user>``."""
    return f"api:{request.auth.get_username()}"  # type: ignore[attr-defined]
