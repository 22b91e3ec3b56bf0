"""Suite-wide fixtures. Which database and broker the suite uses is decided in tests/settings.py."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator

import pytest


def pytest_report_header(config: pytest.Config) -> list[str]:
    from django.conf import settings

    from tests.settings import BACKENDS

    return [f"netharvest backends: database = {BACKENDS['database']}, broker = {BACKENDS['broker']}",
            f"netharvest data dir: {settings.DATA_DIR}"]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    from tests.settings import BACKENDS

    terminalreporter.write_line(
        f"netharvest backends used: database = {BACKENDS['database']}, broker = {BACKENDS['broker']}")


def uses_postgres() -> bool:
    return os.environ.get("NETHARVEST_DATABASE_URL", "").startswith("postgres")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate: Callable[[], object], timeout: float, what: str) -> None:
    """Poll ``predicate`` until it is true; fail naming ``what`` when ``timeout`` seconds pass first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def closed_broker_url() -> str:
    """A Redis URL on a loopback port nothing listens on: every connection is refused at once."""
    return f"redis://127.0.0.1:{free_port()}/0"


@pytest.fixture
def broker_down() -> Iterator[Callable[[], None]]:
    """This process's Celery app pointed at a broker that refuses connections; the fixture's value brings the
    real broker back (at the latest when the test ends).

    Only the app's connection pools are reset (as Celery does after a fork), so the next publish connects to
    the URL in force."""
    from orchestrator.celery import app

    def point_at(url: str) -> None:
        app.conf.broker_url = url
        app._pool = None
        app.amqp._producer_pool = None

    real = app.conf.broker_url
    point_at(closed_broker_url())
    yield lambda: point_at(real)
    point_at(real)
