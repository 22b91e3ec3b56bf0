"""Scrapy signals the two halves of the harvester use to talk without importing each other.

Scrapy signals are plain sentinel objects sent with ``crawler.signals.send_catch_log``; handlers
take keyword arguments. Each signal below documents its sender, its arguments and who listens.

``uri_rejected``
    Sent by the crawl engine (spider, scope, frontier, budgets) for a URI that is disposed of
    **without being fetched**, so the archive side writes its crawl.log line and counts it in the
    reports, as Heritrix logs every URI it lets go::

        crawler.signals.send_catch_log(uri_rejected, request=request, status=-9998, annotation="")

    ``request``: the :class:`scrapy.Request` (its ``meta["nh"]`` gives path, via, domain);
    ``status``: the negative Heritrix code (glossary, "Status codes"): -9998 robots.txt precluded,
    -4001 too many link hops, -4002 too many embed hops, -5000 out of scope, -5001 blocked by user
    (crawler trap), -5002 blocked by a custom processor, -5003 over quota, -5004 over the runtime
    limit, -6000 deleted by the operator, -1/-2/-3/-4 network failures the engine saw itself;
    ``annotation``: "" or extra crawl.log annotations, comma separated (e.g. ``"Q:groupMaxFetchSuccesses"``
    for a domain budget, as Heritrix's QuotaEnforcer writes ``Q:<quota name>``).
    Listener: :class:`harvester.archive.ArchiveMiddleware`.

``uri_archived``
    Sent by :class:`harvester.archive.ArchiveMiddleware` after a fetched URI has been written to the
    WARC and crawl.log (so budgets can be charged exactly once, on what was really stored)::

        handler(request, response, domain, host, status, size, content_size, revisit)

    ``size``: payload bytes as transferred; ``content_size``: status line + headers + payload;
    ``revisit``: "" for a full capture, else the WARC revisit profile's short name
    (``"identical-payload-digest"`` or ``"server-not-modified"``). Listener: the crawl engine (optional).

``reports_due``
    Sent by :class:`harvester.archive.ArchiveMiddleware` once, when the crawl ends and it is about to
    write the reports, to ask the crawl engine what only the engine knows::

        handler() -> EngineSummary

    A receiver returns an :class:`EngineSummary` (the frontier's state and each domain's stop reason);
    the reports are written without them when nobody answers (``--no-archive`` has no archive side,
    a bare middleware in a test has no engine). Listener: :class:`harvester.crawljob.CrawlJob`.
    A question asked by signal rather than a callback set on the middleware: neither side holds
    the other, and Scrapy's ``send_catch_log`` returns the receivers' answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

uri_rejected = object()
uri_archived = object()
reports_due = object()


@dataclass(frozen=True)
class EngineSummary:
    """The crawl engine's answer to :data:`reports_due`."""

    frontier_summary: Mapping[str, Any]
    stop_reasons: Mapping[str, str]


def engine_summary(signals: Any) -> EngineSummary | None:
    """Send :data:`reports_due` and return the first answer, if any."""
    for _receiver, answer in signals.send_catch_log(reports_due):
        if isinstance(answer, EngineSummary):
            return answer
    return None
