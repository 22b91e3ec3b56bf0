"""Fixtures of the orchestrator tests."""

import pytest


@pytest.fixture
def purge_queues():
    """run-now dispatches to the real broker; nothing consumes these queues here, so empty them after."""
    yield
    from orchestrator.celery import app

    with app.connection_for_write() as conn:
        for queue in ("harvest.focused", "harvest.snapshot"):
            conn.default_channel.queue_purge(queue)
