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

import sys
from collections.abc import Iterable, Iterator, Mapping
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


class RetryExceptions:
    """The classes of ``RETRY_EXCEPTIONS``, each imported only once its module is loaded.

    Why: Scrapy's list names ``scrapy.core.downloader.handlers.http11.TunnelError``, and importing
    that module pulls in Twisted's HTTP client and Scrapy's TLS context factories (which call
    ``inspect.stack()`` at import): about a tenth of a second of every crawl's start-up, for a class
    only Scrapy's own HTTP handler raises, which a crawl of ours runs only without the archive side.
    An instance of a class cannot exist before its module has run, so a name whose module is not in
    ``sys.modules`` yet cannot match; it is looked up when its module appears (the answer is the same as
    importing everything first).
    """

    def __init__(self, paths: Iterable[Any]) -> None:
        self._types: tuple[type, ...] = ()
        self._pending: list[str] = []
        for path in paths:
            if isinstance(path, str):
                self._pending.append(path)
            else:
                self._types += (path,)
        self._resolve()

    def _resolve(self) -> None:
        still: list[str] = []
        for path in self._pending:
            if path.rpartition(".")[0] in sys.modules:
                self._types += load_exceptions([path])
            else:
                still.append(path)
        self._pending = still

    def __iter__(self) -> Iterator[type]:
        """The classes that can match now (those whose modules are loaded)."""
        if self._pending:
            self._resolve()
        return iter(self._types)

    def matches(self, exc: BaseException) -> bool:
        """Whether ``exc`` is an instance of one of the classes."""
        if self._pending:
            self._resolve()
        return isinstance(exc, self._types)


@dataclass(frozen=True)
class RetryPolicy:
    enabled: bool
    times: int
    http_codes: frozenset[int]
    exceptions: RetryExceptions

    @classmethod
    def from_settings(cls, settings: Any) -> RetryPolicy:
        return cls(
            enabled=settings.getbool("RETRY_ENABLED"),
            times=settings.getint("RETRY_TIMES"),
            http_codes=frozenset(int(c) for c in settings.getlist("RETRY_HTTP_CODES")),
            exceptions=RetryExceptions(settings.getlist("RETRY_EXCEPTIONS")),
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
        if exc is not None and not self.exceptions.matches(exc):
            return False
        return meta.get("retry_times", 0) + 1 <= meta.get("max_retry_times", self.times)
