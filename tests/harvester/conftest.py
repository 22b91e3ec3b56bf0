"""Fixtures for the crawl-engine tests: the bundled test site on two loopback ports."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harvester.testsite import TestSiteServer, serve_in_thread


@pytest.fixture(scope="session")
def sites() -> Iterator[tuple[TestSiteServer, TestSiteServer]]:
    """Two sister sites on 127.0.0.1 (two ports = two hosts) that link and embed each other."""
    a = serve_in_thread(0)
    b = serve_in_thread(0, peer_port=a.port)
    a.peer_port = b.port
    yield a, b
    a.shutdown()
    b.shutdown()
