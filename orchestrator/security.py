"""Production safety of the web server: a secret key of its own, and HTTPS switches from the environment.

Why: docker-compose.yml once loaded deploy/netharvest.env.example, so the documented production stack ran
with the example's secret key (``CHANGE-ME-…``): anyone who read the example could forge session
cookies and password-reset links. Now:

* a placeholder key in ``NETHARVEST_SECRET_KEY`` stops every process when settings load
  (:func:`refuse_placeholder_key`): a key everyone can read is never right, anywhere;
* the web server refuses to start (``orchestrator/wsgi.py`` runs :func:`refuse_unsafe_web_start`, so
  gunicorn's workers fail to boot) and ``netharvest check --deploy`` reports an error when the key is
  missing from the environment, short or weak. The embedded default still needs nothing: settings make
  a key once in the data directory, and ``netharvest up`` hands that key to the processes it starts.
  With ``NETHARVEST_DEBUG`` on (development) a missing key is allowed.

The HTTPS switches (Secure cookies, HSTS, redirect to HTTPS, the proxy's scheme header) are read in
orchestrator/settings.py; README's variable table lists them.
"""

from __future__ import annotations

import os
import re
from typing import Any

from django.core import checks
from django.core.exceptions import ImproperlyConfigured

#: The tag of netharvest's own deployment checks (``netharvest check --deploy --tag netharvest``).
TAG = "netharvest"
#: What example files and tutorials put where a key belongs.
_PLACEHOLDER = re.compile(
    r"change[-_ ]?me|placeholder|your[-_ ]?secret|^(secret|netharvest|django-insecure-.*)$", re.IGNORECASE
)
#: Django's own bar for a key (security.W009): at least 50 characters, at least 5 different ones.
MIN_LENGTH, MIN_UNIQUE = 50, 5
HOW_TO_MAKE = "make one with: python3 -c 'import secrets; print(secrets.token_urlsafe(50))'"


def is_placeholder(key: str) -> bool:
    return bool(_PLACEHOLDER.search(key.strip()))


def refuse_placeholder_key(key: str | None) -> None:
    """Settings time, every process: a placeholder in ``NETHARVEST_SECRET_KEY`` is an error."""
    if key is not None and is_placeholder(key):
        raise ImproperlyConfigured(
            f"NETHARVEST_SECRET_KEY is a placeholder ({key[:12]!r}…), not a secret: {HOW_TO_MAKE}"
        )


def secret_key_problem(environ: dict[str, str] | os._Environ[str], debug: bool) -> str | None:
    """Why the web server must not start with this environment's key, or None."""
    key = environ.get("NETHARVEST_SECRET_KEY", "").strip()
    if not key:
        if debug:
            return None
        return (
            "NETHARVEST_SECRET_KEY is not set: a production web server needs its own secret key in the "
            f"environment (the embedded default's key in the data directory is for `netharvest up`); {HOW_TO_MAKE}"
        )
    if is_placeholder(key):
        return f"NETHARVEST_SECRET_KEY is a placeholder, not a secret: {HOW_TO_MAKE}"
    if len(key) < MIN_LENGTH or len(set(key)) < MIN_UNIQUE:
        return (
            f"NETHARVEST_SECRET_KEY is too weak (it needs at least {MIN_LENGTH} characters, {MIN_UNIQUE} of "
            f"them different): {HOW_TO_MAKE}"
        )
    return None


@checks.register(TAG, checks.Tags.security, deploy=True)
def check_secret_key(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    from django.conf import settings

    problem = secret_key_problem(os.environ, settings.DEBUG)
    return [checks.Error(problem, id="netharvest.E001")] if problem else []


def refuse_unsafe_web_start() -> None:
    """At web server start: netharvest's deployment errors stop it, with every reason in one message."""
    errors = [m for m in checks.run_checks(tags=[TAG], include_deployment_checks=True) if m.is_serious()]
    if errors:
        raise ImproperlyConfigured("the web server refuses to start: " + "; ".join(e.msg for e in errors))
