"""The retry policy, declared once: what a URI is retried for, how often, and how the archive side
predicts it (issue 16, "one concept, one place").

Retries are the frontier's (Heritrix style: the URI goes back to its queue for ``retry_delay_s``,
:mod:`harvester.crawljob`); Scrapy's RetryMiddleware is switched off and ``RETRY_TIMES`` /
``RETRY_HTTP_CODES`` / ``RETRY_EXCEPTIONS`` describe what the frontier does
(:mod:`harvester.crawlsettings` writes them from the JobSpec). The archive side reads the same
settings through :meth:`RetryPolicy.from_settings` to know, when it writes an attempt, whether the
frontier will retry it (crawl.log's ``willRetry``, Heritrix's ``Nt``), so the two never disagree.
Getters take no fallbacks: Scrapy's settings carry every ``RETRY_*`` (its default_settings.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from scrapy.utils.misc import load_object

#: The answers a URI is retried for (after Retry-After, else ``retry_delay_s``): too many requests,
#: service unavailable. Every other status is the URI's answer.
RETRY_STATUSES = (429, 503)


def load_exceptions(paths: Iterable[Any]) -> tuple[type, ...]:
    """The exception classes of ``RETRY_EXCEPTIONS`` (dotted paths or classes); one that does not
    import on this machine (an optional Twisted or SSL module) is left out, as Scrapy does."""
    exceptions: list[type] = []
    for path in paths:
        try:
            exceptions.append(load_object(path) if isinstance(path, str) else path)
        except Exception:
            continue
    return tuple(exceptions)


@dataclass(frozen=True)
class RetryPolicy:
    enabled: bool
    times: int
    http_codes: frozenset[int]
    exceptions: tuple[type, ...]

    @classmethod
    def from_settings(cls, settings: Any) -> RetryPolicy:
        return cls(
            enabled=settings.getbool("RETRY_ENABLED"),
            times=settings.getint("RETRY_TIMES"),
            http_codes=frozenset(int(c) for c in settings.getlist("RETRY_HTTP_CODES")),
            exceptions=load_exceptions(settings.getlist("RETRY_EXCEPTIONS")),
        )

    def will_retry(
        self, meta: Mapping[str, Any], *, status: int | None = None, exc: BaseException | None = None
    ) -> bool:
        """Whether the attempt of a request with this ``meta`` that got ``status`` or failed with
        ``exc`` will be tried again (``meta["retry_times"]``: the attempts before this one)."""
        if not self.enabled or meta.get("dont_retry"):
            return False
        if status is not None and status not in self.http_codes:
            return False
        if exc is not None and not isinstance(exc, self.exceptions):
            return False
        return meta.get("retry_times", 0) + 1 <= meta.get("max_retry_times", self.times)
