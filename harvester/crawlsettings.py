"""Scrapy settings for one job, built from its JobSpec (the only place they are decided).

What is switched off, and why: Scrapy's retries (the frontier retries, Heritrix style), redirects
(a ``Location`` becomes a new URI with path letter ``R`` so every hop is archived), meta-refresh
(extracted as ``R`` too), robots.txt (ours is a prerequisite that is archived), the
per-domain download delay and AutoThrottle (politeness is the frontier's), the offsite filter
(scope is ours), the dupefilter (the frontier's seen-set). ``RETRY_*`` still describe our
retry policy, because the archive middleware reads them to know when a failure is final.

Extensions: only :data:`EXTENSIONS_USED` run (``EXTENSIONS_BASE`` replaced, not amended), so a new
Scrapy's new default extension never starts unnoticed in a crawl child. Scrapy 2.19 added
RemoteControl: an HTTP endpoint on loopback that runs Python code sent to it, with token files in the
user's state directory that a killed crawl leaves behind; the telnet console is the older such door.
Both are also disabled by their own settings, in case a later Scrapy moves them out of the base dict.
Dropped besides: CloseSpider (the frontier enforces budgets), FeedExporter (no items), MemoryUsage and
MemoryDebugger (the worker watches its child), SpiderState (no JOBDIR), AutoThrottle (politeness is
the frontier's). A test checks that a running crawl child listens on no TCP port.

``DOWNLOAD_MAXSIZE`` is kept, as the gzip-bomb fuse: the raw handler truncates what it *receives*
at ``max_document_bytes`` (and marks the WARC record) but never decodes; Scrapy's
``HttpCompressionMiddleware`` decodes for link extraction and gives up (``IgnoreRequest``: the
capture is archived, its links are not extracted) past ``DOWNLOAD_MAXSIZE``, which is
``max_document_bytes`` capped at :data:`MAX_DECODED_BYTES`.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from harvester.contracts import JobSpec
from harvester.defaults import CRAWL_CONCURRENCY, MAX_DECODED_BYTES, decoded_limit  # noqa: F401
from harvester.retries import RETRY_STATUSES

RAW_HANDLER = "harvester.fetch.RawHTTPDownloadHandler"
#: ``dns:HOST`` prerequisites (harvester/dns.py), with or without the archive side.
DNS_HANDLER = "harvester.dns.DNSDownloadHandler"
ARCHIVE_MIDDLEWARE = "harvester.archive.ArchiveMiddleware"
#: Nearest the downloader: above HttpCompressionMiddleware (590), so it sees the raw response.
ARCHIVE_MIDDLEWARE_ORDER = 950


#: The Scrapy extensions a crawl runs: stats, and the periodic stats line in the engine log.
EXTENSIONS_USED = {
    "scrapy.extensions.corestats.CoreStats": 0,
    "scrapy.extensions.logstats.LogStats": 0,
    "scrapy.extensions.logcount.LogCount": 0,
}


#: Spider middlewares that do nothing for us, on every response: the spider's callbacks return no
#: output (links go straight into the frontier), so the output filters (URL length, depth, meta copy)
#: never see a request; ``HTTPERROR_ALLOW_ALL`` lets every status through, as having no
#: HttpErrorMiddleware does; the referer is ours (crawl.log's via). Dropping them saves their
#: per-response async wrappers (issue 14, docs/BENCHMARKS.md "Harvester CPU").
SPIDER_MIDDLEWARES_DROPPED = (
    "scrapy.spidermiddlewares.referer.RefererMiddleware",
    "scrapy.spidermiddlewares.httperror.HttpErrorMiddleware",
    "scrapy.spidermiddlewares.urllength.UrlLengthMiddleware",
    "scrapy.spidermiddlewares.depth.DepthMiddleware",
    "scrapy.spidermiddlewares.metacopy.MetaCopyDetectionMiddleware",
)
#: Downloader middlewares with no effect on a crawl of ours, removed for their per-request cost.
#: DownloaderStats fills Scrapy's ``downloader/*`` stats (request/response sizes re-serialised per
#: request: ~5 % of the crawl's CPU) that nothing reads (our figures are archive.CrawlStats);
#: HttpAuthMiddleware only acts on ``http_user`` meta/spider attributes or ``HTTPAUTH_*`` settings,
#: none of which a JobSpec sets. Request headers (and so the request bytes in the WARC) are
#: untouched: DefaultHeaders, UserAgent, HttpCompression and Cookies stay; so does DownloadTimeout
#: (Scrapy's own handler, in ``--no-archive`` runs, falls back to 180 s without it).
#: HttpProxyMiddleware is off for a reason of its own: the harvester connects to the sites directly (its raw
#: handler has no proxy support), but the middleware reads ``http_proxy``/``https_proxy`` from the crawl
#: child's environment and, when they carry credentials, added a ``Proxy-Authorization`` header that the raw
#: handler sent to every origin server and wrote into every WARC request record (tests/harvester/test_proxy_env.py).
INERT_DOWNLOADER_MIDDLEWARES = (
    "scrapy.downloadermiddlewares.stats.DownloaderStats",
    "scrapy.downloadermiddlewares.httpauth.HttpAuthMiddleware",
    "scrapy.downloadermiddlewares.httpproxy.HttpProxyMiddleware",
)

#: Scrapy's CookiesMiddleware is replaced by harvester/leanscrapy.py's subclass at the same order (700 in
#: Scrapy's DOWNLOADER_MIDDLEWARES_BASE: after Accept-Encoding, before the proxy), so the request's
#: headers are built in the same order: same cookies, same request bytes, less work per page (issue 14).
SCRAPY_COOKIES = "scrapy.downloadermiddlewares.cookies.CookiesMiddleware"
CRAWL_COOKIES = "harvester.leanscrapy.CrawlCookiesMiddleware"
COOKIES_ORDER = 700
#: Scrapy's LogFormatter, without building the per-page "Crawled (200)" DEBUG message nobody logs.
LOG_FORMATTER = "harvester.leanscrapy.CrawlLogFormatter"


def event_loop() -> str | None:
    """uvloop's event loop under Twisted's asyncio reactor when it is installed, else asyncio's own.

    Why: the loop turns about a dozen callbacks per page (Deferreds resumed as tasks, socket
    readiness); uvloop runs them in C. The bytes on the wire and in the WARC do not depend on the
    loop. Optional, so a harvester without the wheel still crawls (docs/BENCHMARKS.md, issue 14).
    """
    return "uvloop.Loop" if importlib.util.find_spec("uvloop") is not None else None


def build_settings(
    spec: JobSpec,
    out_dir: str | Path,
    *,
    archive: bool = True,
    concurrency: int = CRAWL_CONCURRENCY,
    log_file: str | None = None,
) -> dict[str, Any]:
    """The settings dict for ``CrawlerProcess``/``Crawler``. ``archive=False`` gives the same crawl
    with Scrapy's own download handler and no WARC (the benchmark's "plain Scrapy" baseline)."""
    s = spec.settings
    settings: dict[str, Any] = {
        # The typed JobSpec itself (frozen; Scrapy's copy of the settings keeps the same object): the spider
        # and the archive side read its fields, never a dict with defaults (docs/DESIGN.md, "Where things are").
        "NH_JOBSPEC": spec,
        "NH_OUT_DIR": str(Path(out_dir).resolve()),
        "NH_WARC_MAX_BYTES": s.warc_max_bytes,
        "NH_DEDUP": s.dedup,
        "NH_DEDUP_INDEX": spec.dedup_index,
        "NH_MAX_DOCUMENT_BYTES": s.max_document_bytes,
        "NH_CONNECT_TIMEOUT": s.connect_timeout_s,
        # A continuous job never ends: its WARCs are also closed on time, to reach the archive while it runs.
        "NH_WARC_ROTATE_S": spec.continuous.warc_rotate_s if spec.continuous is not None else 0,
        "SCHEDULER": "harvester.frontierscheduler.FrontierScheduler",
        "USER_AGENT": s.effective_user_agent,
        "DOWNLOAD_TIMEOUT": s.connect_timeout_s + s.read_timeout_s,
        "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
        "CONCURRENT_REQUESTS_PER_IP": 0,
        # The spider yields nothing (links go straight into the frontier): Scrapy would otherwise
        # start 100 asyncio tasks per response to process an empty output (a third of the CPU).
        "CONCURRENT_ITEMS": 1,
        "DOWNLOAD_DELAY": 0,
        "DOWNLOAD_DELAY_JITTER": 0,
        "AUTOTHROTTLE_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
        "COOKIES_ENABLED": True,
        "REDIRECT_ENABLED": False,
        "METAREFRESH_ENABLED": False,
        "RETRY_ENABLED": True,  # describes the frontier's retries; RetryMiddleware itself is removed
        "RETRY_TIMES": s.max_retries,
        "RETRY_HTTP_CODES": list(RETRY_STATUSES),
        "HTTPERROR_ALLOW_ALL": True,
        "DOWNLOAD_MAXSIZE": decoded_limit(s.max_document_bytes),
        "DOWNLOAD_WARNSIZE": 0,
        "DOWNLOAD_FAIL_ON_DATALOSS": False,
        "URLLENGTH_LIMIT": 2083,
        "DEPTH_LIMIT": 0,
        "DEPTH_STATS_VERBOSE": False,
        "EXTENSIONS_BASE": dict(EXTENSIONS_USED),
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
        "MEMUSAGE_ENABLED": False,
        "LOG_LEVEL": "INFO",
        "LOG_FORMATTER": LOG_FORMATTER,
        "LOGSTATS_INTERVAL": 60,
        "REACTOR_THREADPOOL_MAXSIZE": 10,
        "DNS_TIMEOUT": s.connect_timeout_s,
        "SPIDER_MIDDLEWARES": dict.fromkeys(SPIDER_MIDDLEWARES_DROPPED),
        "DOWNLOADER_MIDDLEWARES": {
            **dict.fromkeys(INERT_DOWNLOADER_MIDDLEWARES),
            SCRAPY_COOKIES: None,
            CRAWL_COOKIES: COOKIES_ORDER,
            "scrapy.downloadermiddlewares.offsite.OffsiteMiddleware": None,
            "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
            "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
            "scrapy.downloadermiddlewares.redirect.RedirectMiddleware": None,
            "scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware": None,
        },
        "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
        "DOWNLOAD_HANDLERS": {"dns": DNS_HANDLER},
    }
    if spec.continuous is not None:  # its validity periods (accelerated time); other jobs keep NH_SETTINGS'
        settings["NH_ROBOTS_VALIDITY_S"] = spec.continuous.robots_validity_s
        settings["NH_DNS_TTL_S"] = spec.continuous.dns_ttl_s
    loop = event_loop()
    if loop is not None:
        settings["ASYNCIO_EVENT_LOOP"] = loop
    if archive:
        settings["DOWNLOAD_HANDLERS"] = {"http": RAW_HANDLER, "https": RAW_HANDLER, "dns": DNS_HANDLER}
        settings["DOWNLOADER_MIDDLEWARES"][ARCHIVE_MIDDLEWARE] = ARCHIVE_MIDDLEWARE_ORDER
    if log_file:
        settings["LOG_FILE"] = log_file
    return settings
