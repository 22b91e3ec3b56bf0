"""Who may do what in the web UI: one decorator per view, so no page or action is reachable without
login and the right role.

Roles are Django groups (made by webui/migrations/0001_roles.py) holding these capabilities:

=============== ============================================================================
``READ``        every role: read every page (viewer)
``CURATE``      curator: domains, seed lists, configurations, harvest definitions, selection,
                schedules, activate/deactivate, run now
``ENGINEER``    crawl engineer: crawl templates, channels, global crawler-trap lists, job
                control, storage
=============== ============================================================================

Admins hold all three plus Django's user and group permissions; superusers pass every check.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

READ = "webui.view_ui"
CURATE = "webui.curate"
ENGINEER = "webui.engineer"

#: The group names, as an administrator sees them in the Django admin.
ROLES = ("viewer", "curator", "crawl engineer", "admin")
#: What each capability is called in a refusal, so the user knows whom to ask.
ROLE_OF = {READ: "viewer", CURATE: "curator", ENGINEER: "crawl engineer"}

View = Callable[..., HttpResponse]


def refusal(user: object, permission: str) -> str | None:
    """Why ``user`` may not use ``permission`` (one of READ, CURATE, ENGINEER), or None if it may.

    The one rule for the web UI (:func:`require`) and the REST API (orchestrator/api/security.py): a
    token carries its user's roles, so an API call is allowed exactly when the same page would be.
    """
    if permission not in ROLE_OF:
        raise ValueError(f"unknown web UI permission {permission!r}")
    if user.has_perm(permission):  # type: ignore[attr-defined]
        return None
    return (f"this needs the {ROLE_OF[permission]} role "
            f"(you are {user.get_username()}: ask an administrator)")  # type: ignore[attr-defined]


def require(permission: str) -> Callable[[View], View]:
    """Login, then ``permission`` (one of READ, CURATE, ENGINEER), else 403 naming the missing role.

    Every view of the web UI is wrapped in this; tests/webui/test_access.py checks each URL name
    against each role.
    """
    if permission not in ROLE_OF:
        raise ValueError(f"unknown web UI permission {permission!r}")

    def decorate(view: View) -> View:
        @wraps(view)
        def guarded(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
            refused = refusal(request.user, permission)
            if refused:
                raise PermissionDenied(refused)
            return view(request, *args, **kwargs)

        guarded.required_permission = permission  # type: ignore[attr-defined]
        return login_required(guarded)

    return decorate


def can(request: HttpRequest, permission: str) -> bool:
    """For templates: show a button only to those who may press it."""
    return request.user.is_authenticated and request.user.has_perm(permission)
