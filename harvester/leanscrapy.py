"""Scrapy's per-page machinery in the crawl child, with the same behaviour for less CPU (issue 14).

Each piece here does exactly what the Scrapy component it stands in for does, and skips only work
whose result is known in advance; the request bytes, the WARC records and crawl.log are unchanged
(docs/DESIGN.md, "Harvester CPU per page, margin", says why each is safe).

:class:`CrawlSignalManager`
    ``crawler.signals`` of the crawl child: a signal nobody listens to returns ``[]`` at once.
    Scrapy's engine and downloader send ``request_reached_downloader``, ``response_downloaded`` and
    ``request_left_downloader`` for every page, and no component of a crawl of ours receives them;
    each send walked pydispatch's four receiver tables through generators and ran an ABC
    ``isinstance`` check, for an empty answer.
:class:`CrawlCookiesMiddleware`
    Scrapy's ``CookiesMiddleware`` (same jars, same policy), without wrapping the request and
    response in urllib-style objects when there can be nothing to do: no cookie in the jar on the
    way out, no ``Set-Cookie``/``Set-Cookie2`` header on the way back.
:class:`CrawlLogFormatter` and :func:`drop_records_below`
    Records below the log level are neither prepared nor made (every handler dropped them).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pydispatch import dispatcher
from scrapy.downloadermiddlewares.cookies import CookiesMiddleware
from scrapy.logformatter import LogFormatter, LogFormatterResult
from scrapy.signalmanager import SignalManager

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.http import Response


class CrawlSignalManager(SignalManager):
    """A :class:`scrapy.signalmanager.SignalManager` whose ``send_catch_log`` returns ``[]`` without
    iterating when pydispatch holds no receiver for the (sender, signal) pair.

    Exactly Scrapy's answer: its ``send_catch_log`` asks ``getAllReceivers(sender, signal)``, which
    reads ``dispatcher.connections[id(sender)][signal]``, ``[id(sender)][Any]``, ``[id(Any)][signal]``
    and ``[id(Any)][Any]``; with none of these four lists present it yields nothing, and no receiver
    means no call, no log line and an empty list. pydispatch removes a list when its last receiver is
    disconnected (or its weak reference dies), so a present list takes Scrapy's own path. Connecting
    and the asynchronous sends are Scrapy's, untouched.
    """

    def send_catch_log(self, signal: Any, **kwargs: Any) -> list[tuple[Any, Any]]:
        connections = dispatcher.connections
        by_sender = connections.get(id(kwargs.get("sender", self.sender)))
        by_any = connections.get(id(dispatcher.Any))
        if (by_sender is None or (signal not in by_sender and dispatcher.Any not in by_sender)) and (
            by_any is None or (signal not in by_any and dispatcher.Any not in by_any)
        ):
            return []
        return super().send_catch_log(signal, **kwargs)


class CrawlCookiesMiddleware(CookiesMiddleware):
    """Scrapy's ``CookiesMiddleware``, short-circuiting the two cases with nothing to do.

    On the way out, a request without ``Request.cookies`` whose jar holds no cookie at all gets no
    ``Cookie`` header from Scrapy either (``CookieJar.add_cookie_header`` only looks up the jar): its
    own ``Cookie`` header is removed, as Scrapy does, and nothing else happens. On the way back, a
    response without ``Set-Cookie`` or ``Set-Cookie2`` makes ``http.cookiejar``'s ``make_cookies``
    return ``[]`` before it parses anything. Every other case (cookies in the jar or on the request,
    ``dont_merge_cookies``, ``COOKIES_DEBUG``) is Scrapy's own code. Skipped besides: the jar's clock
    (``_now``, set again by every method that reads it) and the count that times the purge of expired
    cookies (an expired cookie is never sent: ``DefaultCookiePolicy.return_ok`` refuses it).
    """

    def process_request(self, request: Request, spider: Spider | None = None) -> Request | Response | None:
        if not self.debug and not request.cookies:
            meta = request.meta
            if not meta.get("dont_merge_cookies", False) and not self.jars[meta.get("cookiejar")].jar._cookies:
                request.headers.pop("Cookie", None)
                return None
        return super().process_request(request)

    def process_response(self, request: Request, response: Response, spider: Spider | None = None) -> Response:
        headers = response.headers
        if not self.debug and b"Set-Cookie" not in headers and b"Set-Cookie2" not in headers:
            return response
        return super().process_response(request, response)  # type: ignore[return-value]


#: The logger Scrapy's engine writes the formatter's "Crawled" message to.
_ENGINE_LOGGER = logging.getLogger("scrapy.core.engine")


class CrawlLogFormatter(LogFormatter):
    """Scrapy's ``LogFormatter``; ``crawled`` answers None (the engine then logs nothing) when the
    engine's logger would drop its DEBUG record anyway, instead of building the message's arguments
    (the request's referer, flags) for every page. With ``LOG_LEVEL`` DEBUG it is Scrapy's."""

    def crawled(self, request: Request, response: Response, spider: Spider) -> LogFormatterResult | None:  # type: ignore[override]
        if not _ENGINE_LOGGER.isEnabledFor(logging.DEBUG):
            return None
        return super().crawled(request, response, spider)


def drop_records_below(level: str | int, logger_names: tuple[str, ...] = ("scrapy",)) -> None:
    """Raise the level of loggers Scrapy sets to DEBUG (``DEFAULT_LOGGING``) to the crawl's log level.

    Why: Scrapy's engine logs every page at DEBUG ("Crawled (200) …"); with ``LOG_LEVEL`` INFO the
    record was built, formatted into a LogRecord and offered to each handler, all of which (the log
    file's, ``LogCount``'s) have the crawl's level and drop it. Only for the crawl child, whose
    handlers are all Scrapy's at ``LOG_LEVEL``: what reaches the log file is the same."""
    wanted = level if isinstance(level, int) else logging.getLevelNamesMapping().get(str(level).upper())
    if wanted is None:
        return  # a level Python does not know: Scrapy's handler will complain, not this
    for name in logger_names:
        logger = logging.getLogger(name)
        if logger.level < wanted:
            logger.setLevel(wanted)
