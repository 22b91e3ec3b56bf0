"""Politeness arithmetic, kept apart from the frontier so it is tested on its own.

Heritrix's DispositionProcessor: after a fetch from a queue, the queue waits
``last fetch duration × delay_factor``, clamped to ``[min_delay_ms, max_delay_ms]`` (seed 002,
"delay-factor", "min-delay-ms", "max-delay-ms"); a robots.txt ``Crawl-delay`` for our user agent
lengthens that to at least the crawl delay, itself capped at the template's
``respect_crawl_delay_up_to_s`` (Heritrix's ``respectCrawlDelayUpToSeconds``, default 300 s; 0
ignores Crawl-delay). A ``Retry-After`` on 429/503 asks for longer and is honoured, up to a ceiling
so a hostile server cannot park a queue for a year.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

#: A Retry-After is honoured up to this many seconds (a day); a longer one is clamped.
MAX_RETRY_AFTER_S = 24 * 3600


def politeness_delay(
    duration_s: float,
    delay_factor: float,
    min_delay_ms: int,
    max_delay_ms: int,
    crawl_delay_s: float | None = None,
    crawl_delay_up_to_s: float = 0,
) -> float:
    """Seconds a queue waits after a fetch that took ``duration_s`` seconds: the clamped delay, or
    the host's robots.txt ``crawl_delay_s`` (at most ``crawl_delay_up_to_s``) if that is longer."""
    delay = max(duration_s, 0.0) * delay_factor
    delay = min(max(delay, min_delay_ms / 1000.0), max_delay_ms / 1000.0)
    if crawl_delay_s is not None and crawl_delay_up_to_s > 0:
        delay = max(delay, min(crawl_delay_s, crawl_delay_up_to_s))
    return delay


def retry_after_seconds(value: str | bytes | None, now: datetime | None = None) -> float | None:
    """Seconds asked by a ``Retry-After`` header (delta-seconds or HTTP-date), or None if absent or
    unreadable; never negative, never above :data:`MAX_RETRY_AFTER_S`."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("latin-1", "replace")
    value = value.strip()
    if not value:
        return None
    if value.isdigit():
        return float(min(int(value), MAX_RETRY_AFTER_S))
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return float(min(max(seconds, 0.0), MAX_RETRY_AFTER_S))
