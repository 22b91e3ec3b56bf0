"""Time one page or API request in-process, the way every Django benchmark reports it (median and slowest)."""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any


def timed_get(client: Any, url: str, repeat: int, **headers: str) -> tuple[float, float, int]:
    """(median ms, slowest ms, SQL queries) of ``repeat`` GETs of ``url`` with Django's test ``client``.

    A first GET warms caches and must answer 200 (a benchmark of an error page would time nothing real);
    the queries are counted on one more GET after the timed ones, so counting them never slows a timing."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    response = client.get(url, **headers)
    if response.status_code != 200:
        sys.exit(f"{url}: HTTP {response.status_code} {response.content[:300]!r}")
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        client.get(url, **headers)
        times.append((time.perf_counter() - started) * 1000)
    with CaptureQueriesContext(connection) as queries:
        client.get(url, **headers)
    return statistics.median(times), max(times), len(queries.captured_queries)
