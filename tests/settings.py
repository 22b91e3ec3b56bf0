"""Settings for the test suite: the real backends when they are reachable.

pytest-django imports this before any test module, so the choice is made here, before
orchestrator.settings reads the environment: PostgreSQL and Redis on 127.0.0.1 when they answer (as on
the development and CI machines), otherwise the embedded SQLite database and filesystem broker.
``NETHARVEST_REQUIRE_SERVICES=1`` (set by .ci/run) turns an unreachable service into a loud failure.
"""

from __future__ import annotations

import os
import socket
import tempfile


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def worker_index() -> int:
    """This pytest-xdist worker's number (``gw1`` → 1), 0 without xdist."""
    return int(os.environ.get("PYTEST_XDIST_WORKER", "gw0")[2:] or 0)


def _own_broker_db_per_worker() -> None:
    """Each xdist worker on a Redis database of its own (the session's number minus the worker's), as each
    gets a test database of its own from pytest-django: a stack test's harvester worker must never take a job
    that a test in the other pytest worker queued. Without xdist nothing changes."""
    url = os.environ.get("NETHARVEST_BROKER_URL", "")
    index = worker_index()
    if not url.startswith("redis") or not index:
        return
    base, _, db = url.rpartition("/")
    os.environ["NETHARVEST_BROKER_URL"] = f"{base}/{(int(db or 0) - index) % 16}"


def _choose_backends() -> dict[str, str]:
    chosen: dict[str, str] = {}
    embedded_only = os.environ.get("NETHARVEST_TEST_BACKENDS") == "embedded"
    required = os.environ.get("NETHARVEST_REQUIRE_SERVICES") == "1"
    if not os.environ.get("NETHARVEST_DATABASE_URL") and not embedded_only:
        if _reachable("127.0.0.1", 5432):
            os.environ["NETHARVEST_DATABASE_URL"] = "postgres://postgres@127.0.0.1:5432/netharvest"
        elif required:
            raise RuntimeError("NETHARVEST_REQUIRE_SERVICES=1 but PostgreSQL does not answer on 127.0.0.1:5432")
    if not os.environ.get("NETHARVEST_BROKER_URL") and not embedded_only:
        if _reachable("127.0.0.1", 6379):
            os.environ["NETHARVEST_BROKER_URL"] = "redis://127.0.0.1:6379/15"
        elif required:
            raise RuntimeError("NETHARVEST_REQUIRE_SERVICES=1 but Redis does not answer on 127.0.0.1:6379")
    _own_broker_db_per_worker()
    chosen["database"] = os.environ.get("NETHARVEST_DATABASE_URL") or "embedded SQLite"
    chosen["broker"] = os.environ.get("NETHARVEST_BROKER_URL") or "embedded filesystem transport"
    return chosen


os.environ.setdefault("NETHARVEST_DATA_DIR", tempfile.mkdtemp(prefix="netharvest-test-"))
BACKENDS = _choose_backends()

from orchestrator.settings import *  # noqa: E402, F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast logins in tests
