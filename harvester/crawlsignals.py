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
"""

from __future__ import annotations

uri_rejected = object()
uri_archived = object()
