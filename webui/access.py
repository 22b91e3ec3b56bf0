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

The selection tool (BCWeb, /selection/) follows the same table: every role reads it (``READ``); a
collection's editors change its records; curators create collections (and edit those they create);
admins and superusers edit every collection and run the transfer to harvesting
(:func:`edits_every_collection`). No view decides this on its own: they all ask here.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse

READ = "webui.view_ui"
CURATE = "webui.curate"
ENGINEER = "webui.engineer"

#: What makes an admin an admin: the admin role holds Django's user and group permissions (migration 0001).
ADMIN = "auth.change_group"
#: The selection's own permission for running the transfer, granted one by one in the Django admin.
RUN_TRANSFER = "selection.run_transfer"

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
    return f"this needs the {ROLE_OF[permission]} role (you are {user.get_username()}: ask an administrator)"  # type: ignore[attr-defined]


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


def edits_every_collection(user: object) -> bool:
    """Admins and superusers are editors of every selection collection (they were refused the
    selection tool, "ask an administrator", while being the administrator)."""
    return bool(getattr(user, "is_authenticated", False) and user.has_perm(ADMIN))  # type: ignore[attr-defined]


def may_create_collection(user: object) -> bool:
    """Curators and admins create collections from the selection page (the first-run path)."""
    return bool(getattr(user, "is_authenticated", False) and user.has_perm(CURATE))  # type: ignore[attr-defined]


def may_transfer(user: object) -> bool:
    """Running the transfer to harvesting: admins, superusers, and whoever was granted ``RUN_TRANSFER``."""
    return bool(getattr(user, "is_authenticated", False) and (user.has_perm(ADMIN) or user.has_perm(RUN_TRANSFER)))  # type: ignore[attr-defined]


def holders(permission: str) -> QuerySet:
    """The active users holding ``permission`` through a role, or superusers: e.g. who may be made
    responsible for a selection record (the curators)."""
    app, codename = permission.split(".")
    perm = Q(groups__permissions__codename=codename, groups__permissions__content_type__app_label=app)
    return get_user_model().objects.filter(Q(is_superuser=True) | perm, is_active=True).distinct()
