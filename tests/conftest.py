"""Suite-wide fixtures. Which database and broker the suite uses is decided in tests/settings.py."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable

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


@pytest.fixture(scope="session", autouse=True)
def _no_stale_control_queues() -> None:
    """Job ids restart with each test database, but control queues live on in Redis between sessions: a
    ``cancel`` fence left by an earlier session would make a harvester drop this session's job of that id."""
    broker = os.environ.get("NETHARVEST_BROKER_URL", "")
    if not broker.startswith("redis"):
        return  # the embedded broker lives in this session's own data directory
    from orchestrator.celery import app

    with app.connection_for_write() as conn:
        client = conn.default_channel.client
        for key in client.scan_iter("control.job-*"):
            client.delete(key)
