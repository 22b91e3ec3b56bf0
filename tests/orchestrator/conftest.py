"""Fixtures for the orchestrator tests: real WARCs and storage for the indexer chain, broker clean-up."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.orchestrator.chainhelp import crawl_warcs


@pytest.fixture(scope="session")
def warcs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The WARCs (and metadata WARC) of one real crawl of the bundled test site, made once per session."""
    files = crawl_warcs(tmp_path_factory.mktemp("crawl") / "job")
    assert len(files) >= 3 and any("-metadata-" in f.name for f in files)
    return files


@pytest.fixture
def storage_env(tmp_path: Path, settings: Any) -> Iterator[Path]:
    """Two storage nodes, a backup location, an index directory and a spool, all under ``tmp_path``."""
    for name in ("node1", "node2", "backup", "spool"):
        (tmp_path / name).mkdir()
    settings.NETHARVEST_ARCHIVE_DIR = tmp_path / "archive"
    settings.NETHARVEST_INDEX_DIR = tmp_path / "index"
    settings.NETHARVEST_DEDUP_INDEX = tmp_path / "index" / "dedup.sqlite3"
    settings.NETHARVEST_STORAGE_LOCATIONS = f"node1={tmp_path / 'node1'},node2={tmp_path / 'node2'}"
    settings.NETHARVEST_BACKUP_LOCATION = f"backup={tmp_path / 'backup'}"
    yield tmp_path


@pytest.fixture
def purge_queues():
    """run-now dispatches to the real broker; nothing consumes these queues here, so empty them after."""
    yield
    from orchestrator.celery import app

    with app.connection_for_write() as conn:
        for queue in ("harvest.focused", "harvest.snapshot"):
            conn.default_channel.queue_purge(queue)
