"""The archive side of a crawl, as one Scrapy downloader middleware: each fetch becomes WARC records,
its crawl.log line and its statistics; each URI given up on, its crawl.log line.

:class:`ArchiveMiddleware` is placed nearest the downloader (above ``HttpCompressionMiddleware``'s 590 in
``DOWNLOADER_MIDDLEWARES``, e.g. 950), so it sees each response exactly as
:class:`harvester.fetch.RawHTTPDownloadHandler` received it. It puts together modules that each do one job:

==============================  ==========================================================================
:mod:`harvester.revisit`        dedup: conditional requests, whether a capture is a revisit and of what
:mod:`harvester.capturerecords` the WARC records of a capture (response or revisit, request; dns)
:mod:`harvester.warcwriter`     writing them, rotating files
:mod:`harvester.crawllog`       the crawl.log line
:mod:`harvester.failures`       a download exception's Heritrix code
:mod:`harvester.reports`        statistics (``CrawlStats``) and the end-of-job reports
:mod:`harvester.metadatawarc`   the metadata WARC; :mod:`harvester.fileresults` the files handed back
:mod:`harvester.jobinfo`        the job as the archive describes it (``NH_JOBSPEC``: warcinfo, seeds, domains)
==============================  ==========================================================================

Per request (``process_request``)
    With ``NH_DEDUP`` on and a dedup index, a GET without validators gets ``If-None-Match`` /
    ``If-Modified-Since`` from the index's latest capture of the URL, when that capture is of a
    type the link extractor never reads (harvester/revisit/__init__.py: a 304 has no links to follow).
Per response (``process_response``)
    Writes ``response`` + ``request`` records (linked by ``WARC-Concurrent-To``), or a ``revisit``
    (+ request) when the payload is a duplicate (``identical-payload-digest``: this job or the
    index) or the conditional request got a 304 (``server-not-modified``); then the crawl.log line
    and the statistics (for every archived attempt: an attempt that will be retried, a 503 or 429,
    gets the ``willRetry`` annotation), and, for the attempt that disposes of the URI only, sends
    :data:`harvester.crawlsignals.uri_archived` (what charges the budget: once per URI).
Per failure (``process_exception``)
    Writes the negative-code crawl.log line (-1 DNS, -2 connect, -3 broken, -4 timeout, -5 other)
    when the URI is finally given up on — i.e. when ``RetryMiddleware`` will not retry it (predicted
    from ``RETRY_ENABLED``/``RETRY_TIMES``/``RETRY_EXCEPTIONS`` and ``meta["retry_times"]``) — with
    Heritrix's ``Nt`` attempts annotation; returns ``None`` so retries proceed as usual.
    ``IgnoreRequest`` is not logged here (the engine reports those via ``uri_rejected``).
Rejections (:data:`harvester.crawlsignals.uri_rejected`)
    crawl.log line with the given negative code; counted in the reports.

Statistics for the engine (budgets, Progress, JobResult):
    ``ArchiveMiddleware.of(crawler)`` → the instance; ``.stats_for(domain)`` / ``.stats_for_host(host)``
    → a dict (``objects``, ``bytes`` (content size: head + body), ``payload_bytes``, ``successes``,
    ``revisits``, ``bytes_saved``, ``status_codes``, ``mime_types``, ``failed``, ``disregarded``,
    ``robots``…, see :meth:`harvester.reports.Tally.snapshot`); ``.totals()`` for the whole job.
End of crawl (``spider_closed``, or the engine calling it first)
    ``finish(frontier_summary=…, stop_reasons=…, crawl_status=…, remaining=…) -> list[FileResult]``
    closes the WARCs, writes the reports and the metadata WARC, and returns every produced file;
    idempotent (later calls return the same list). What is not given is asked of the crawl engine with
    the :data:`harvester.crawlsignals.reports_due` signal.

Settings: ``NH_JOBSPEC`` (the job's typed :class:`~harvester.contracts.JobSpec`, read through
:mod:`harvester.jobinfo`), ``NH_OUT_DIR`` (job spool dir: ``warcs/``,
``logs/crawl.log``, ``reports/``), ``NH_WARC_MAX_BYTES``, ``NH_DEDUP``, ``NH_DEDUP_INDEX``,
``NH_WARC_COMPRESSLEVEL`` (default 6).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from scrapy import signals as scrapy_signals
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.httpobj import urlparse_cached

from harvester import crawllog
from harvester.capturerecords import dns_record, http_records
from harvester.contracts import FileResult
from harvester.crawllogsegments import CrawlLogSegments
from harvester.crawlsignals import engine_summary, uri_archived, uri_rejected
from harvester.defaults import nh_setting
from harvester.dns import DNS_HOST, DNS_MIME, DnsCapture, is_dns
from harvester.failures import S_RUNTIME_ERROR, exception_code
from harvester.fetch import RawCapture
from harvester.fileresults import produced_files
from harvester.hosts import registrable_domain
from harvester.jobinfo import JobInfo
from harvester.metadatawarc import write_metadata_warc
from harvester.percrawl import PerCrawl
from harvester.reports import DUPLICATE, NOT_MODIFIED, NOVEL, CrawlStats, Tally, write_reports
from harvester.retries import RetryPolicy
from harvester.revisit import LINKS_UNSEEN, PROFILE_NOT_MODIFIED, Deduplicator, Referent, hides_links
from harvester.urimeta import UriMeta
from harvester.warcwriter import RotatingWarcWriter, WarcRecord, sha1_b32, warc_date

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

#: crawl.log annotation of an archived attempt the frontier will retry (a 503, a 429): its line is
#: written like any other, so crawl.log and the WARCs agree; the final attempt carries ``Nt``.
RETRY_ANNOTATION = "willRetry"

#: Each crawl's archive middleware, for the crawl job and the crawl process (:meth:`ArchiveMiddleware.of`).
_ARCHIVES: PerCrawl[ArchiveMiddleware] = PerCrawl()


class ArchiveMiddleware:
    """See the module docstring; one instance per crawl."""

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.info = JobInfo.from_settings(settings)
        self.spec = self.info.spec
        self.out_dir = Path(settings.get("NH_OUT_DIR") or ".").resolve()
        self.warc_max_bytes = nh_setting(settings, "NH_WARC_MAX_BYTES")
        self.compresslevel = nh_setting(settings, "NH_WARC_COMPRESSLEVEL")
        self.job_id = self.info.job_id
        self.harvest_id = self.info.harvest_id
        self.warc_dir = self.out_dir / "warcs"
        self.report_dir = self.out_dir / "reports"
        self.log_dir = self.out_dir / "logs"
        self.dedup = Deduplicator(settings.getbool("NH_DEDUP", False), settings.get("NH_DEDUP_INDEX"))
        #: The job extracts links from scripts (then they are link-bearing: never fetched conditionally).
        self.javascript = self.info.extracts_javascript
        self.stats = CrawlStats()
        for seed in self.info.configured_seeds():
            self.stats.add_seed(seed)
        self.crawllog = crawllog.CrawlLog(self.log_dir / "crawl.log")
        self.writer = RotatingWarcWriter(
            self.warc_dir,
            self.info.prefix,
            max_bytes=self.warc_max_bytes,
            warcinfo=self.info.warcinfo_fields(),
            compresslevel=self.compresslevel,
            max_age_s=nh_setting(settings, "NH_WARC_ROTATE_S"),
        )
        #: A continuous job's judge (harvester.continuous.ContinuousCrawlJob): decides per fetch whether
        #: the document changed (full response) or not (a revisit referring to its last capture), and
        #: adds the adaptive-revisit annotations. None for other jobs.
        self.continuous: Any = None
        #: A continuous job's crawl.log archived in segments while it runs (harvester.crawllogsegments): known
        #: from the start, so a job that ends before its crawl begins does not archive those lines again.
        self.crawllog_segments = (
            CrawlLogSegments(self.crawllog.path, self.warc_dir, self.job_id) if self.spec.continuous else None
        )
        self.retry = RetryPolicy.from_settings(settings)  # the one retry policy (harvester.retries)
        self._files: list[FileResult] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ArchiveMiddleware:
        mw = cls(crawler)
        crawler.signals.connect(mw.spider_closed, signal=scrapy_signals.spider_closed)
        crawler.signals.connect(mw.on_uri_rejected, signal=uri_rejected)
        _ARCHIVES.set(crawler, mw)
        return mw

    @staticmethod
    def of(crawler: Crawler) -> ArchiveMiddleware | None:
        """The crawl's ArchiveMiddleware (after the downloader has been built); None in a crawl without it."""
        return _ARCHIVES.get(crawler)

    def _will_retry(self, request: Request, *, status: int | None = None, exc: BaseException | None = None) -> bool:
        return self.retry.will_retry(request.meta, status=status, exc=exc)

    # -- keys ----------------------------------------------------------------------------------
    def _domain_of(self, request: Request, host: str) -> str:
        nh: UriMeta | None = request.meta.get("nh")
        if nh is not None and nh.domain:
            return nh.domain
        return registrable_domain(host)

    @staticmethod
    def _path_via(request: Request) -> tuple[str, str | None, bool]:
        nh: UriMeta | None = request.meta.get("nh")
        if nh is not None:
            return nh.path, nh.via, nh.seed
        if urlparse_cached(request).path == "/robots.txt":
            return "P", None, False
        return "", None, False

    @staticmethod
    def _attempts(request: Request) -> list[str]:
        attempts = request.meta.get("retry_times", 0) + 1
        return [f"{attempts}t"] if attempts > 1 else []

    # -- Scrapy hooks --------------------------------------------------------------------------
    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if not self.dedup.consulted or request.method != "GET":
            return None
        if b"If-None-Match" in request.headers or b"If-Modified-Since" in request.headers:
            return None
        path, _, _ = self._path_via(request)
        headers, capture = self.dedup.conditional_headers(request.url, path, self.javascript)
        if capture is not None:
            for name, value in headers.items():
                request.headers[name] = value
            request.meta["nh_conditional"] = capture
        return None

    def process_response(self, request: Request, response: Response, spider: Spider | None = None) -> Response:
        capture: RawCapture | DnsCapture | None = request.meta.get("nh_capture")
        if capture is None or capture.url != request.url or capture.status == 0:
            return response  # not fetched by RawHTTPDownloadHandler: nothing raw to archive
        try:
            if isinstance(capture, DnsCapture):
                self._archive_dns(request, capture)
            else:
                self._archive(request, response, capture)
        except Exception:
            # A disk or encoding failure must show, but one URI never kills the job.
            logger.exception("could not archive %s", request.url)
        finally:
            capture.close()
        return response

    def process_exception(self, request: Request, exception: BaseException, spider: Spider | None = None) -> None:
        if isinstance(exception, IgnoreRequest):
            return None
        if self._will_retry(request, exc=exception):
            return None
        status = request.meta.get("nh_failure") or exception_code(exception)
        notes = [f"err={type(exception).__name__}"] if status == S_RUNTIME_ERROR else []
        self._log_unfetched(request, int(status), notes + self._attempts(request))
        return None

    def on_uri_rejected(self, request: Request, status: int, annotation: str = "", **_: Any) -> None:
        notes = [a for a in (annotation or "").split(",") if a]
        self._log_unfetched(request, int(status), notes)

    def spider_closed(self, spider: Spider | None = None, reason: str = "finished") -> None:
        status = "Finished" if reason == "finished" else f"Ended ({reason})"
        self.finish(crawl_status=status)

    # -- the work ------------------------------------------------------------------------------
    def _archive(self, request: Request, response: Response, capture: RawCapture) -> None:
        """One fetched attempt: its records, its crawl.log line and statistics, and, when it disposes of
        the URI, the ``uri_archived`` signal."""
        url = request.url
        date = warc_date(capture.started)
        digest = sha1_b32(capture.payload_sha1)
        retry = self._will_retry(request, status=capture.status)
        referent, ar_notes = self._referent(request, response, capture, digest, retry)
        record = self._write_records(capture, url, date, digest, referent)
        self._remember(request, capture, url, date, digest, referent, record, retry)
        notes = self._fetch_notes(request, capture, referent, retry) + ar_notes
        content_type = capture.header("Content-Type")
        self._log_fetch(request, capture, capture.body_length, content_type or "", digest, notes)
        host, domain = self._count_fetch(request, capture, referent)
        if retry:
            return  # not disposed of: no budget charge, no links (Heritrix's FetchStats RETRIED stage)
        self.crawler.signals.send_catch_log(
            uri_archived,
            request=request,
            response=response,
            domain=domain,
            host=host,
            status=capture.status,
            size=capture.body_length,
            content_size=capture.content_size,
            revisit="" if referent is None else referent.short_profile,
        )

    def _referent(
        self, request: Request, response: Response, capture: RawCapture, digest: str, retry: bool
    ) -> tuple[Referent | None, list[str]]:
        """What this capture is a revisit of (None: a full response), and a continuous job's notes.

        A continuous job judges first (unchanged since its last capture); else a 304 to our conditional
        request refers to the capture the validators came from; else a complete 2xx payload already
        stored (this job or the dedup index) makes it a duplicate."""
        if self.continuous is not None and not retry:
            referent, ar_notes = self.continuous.judge(request, response, capture)
            if referent is not None:
                return referent, ar_notes
        else:
            ar_notes = []
        conditional = request.meta.get("nh_conditional")
        if capture.status == 304 and conditional is not None:
            return self.dedup.not_modified(conditional), ar_notes
        if capture.body_length > 0 and not capture.truncated and 200 <= capture.status < 300:
            return self.dedup.lookup(digest), ar_notes
        return None, ar_notes

    def _write_records(
        self, capture: RawCapture, url: str, date: str, digest: str, referent: Referent | None
    ) -> WarcRecord:
        """Write the capture's records; return the response (or revisit) record."""
        response_record, request_record = http_records(capture, url, date, digest, referent)
        self.writer.write([response_record, request_record])
        return response_record

    def _remember(
        self,
        request: Request,
        capture: RawCapture,
        url: str,
        date: str,
        digest: str,
        referent: Referent | None,
        record: WarcRecord,
        retry: bool,
    ) -> None:
        """What later captures refer to: a new complete payload for dedup; for a continuous job, this
        URI's last capture (this one, or what it duplicates)."""
        if referent is None and capture.body_length > 0 and not capture.truncated:
            self.dedup.remember(digest, url, date, record.record_id)
        if self.continuous is None or retry:
            return
        if referent is None:
            self.continuous.stored(request, url, date, record.record_id, digest)
        elif referent.annotation != "unchanged":
            self.continuous.stored(
                request, referent.target_uri, referent.date, referent.record_id, referent.payload_digest
            )

    def _fetch_notes(self, request: Request, capture: RawCapture, referent: Referent | None, retry: bool) -> list[str]:
        """crawl.log annotations of a fetched attempt: truncation, revisit or links unseen, size,
        attempts, and ``willRetry`` for an attempt that is not the URI's disposition."""
        notes = []
        if capture.truncated:
            notes.append(crawllog.TRUNCATION_ANNOTATIONS.get(capture.truncated, "unspecifiedTrunc"))
        if referent is not None:
            notes.append(referent.annotation)
        elif hides_links(capture.status, request.meta.get("nh_conditional")):
            notes.append(LINKS_UNSEEN)
        notes.append(f"content-size:{capture.content_size}")
        notes += self._attempts(request)
        if retry:
            notes.append(RETRY_ANNOTATION)
        return notes

    def _log_fetch(
        self, request: Request, capture: RawCapture | DnsCapture, size: int, mime: str, digest: str, notes: list[str]
    ) -> None:
        """crawl.log: once per archived attempt (a WARC record always has its line)."""
        path, via, _ = self._path_via(request)
        self.crawllog.log(
            status=capture.status,
            size=size,
            uri=request.url,
            path=path,
            via=via,
            mime=mime,
            thread=capture.thread,
            fetch_began=capture.started,
            duration_ms=capture.duration_ms,
            digest=digest,
            source_tag=crawllog.source_of(request.meta),
            annotations=notes,
        )

    def _count_fetch(self, request: Request, capture: RawCapture, referent: Referent | None) -> tuple[str, str]:
        """The reports' statistics of a fetched attempt; returns its (host, domain)."""
        url = request.url
        if referent is None:
            kind = NOVEL
        else:
            kind = NOT_MODIFIED if referent.profile == PROFILE_NOT_MODIFIED else DUPLICATE
        _, _, seed = self._path_via(request)
        host = urlparse_cached(request).hostname or ""
        domain = self._domain_of(request, host)
        content_type = capture.header("Content-Type")
        location = capture.header("Location")
        self.stats.record_fetch(
            host=host,
            domain=domain,
            status=capture.status,
            mime=crawllog.truncate_mime(content_type if content_type is not None else ""),
            content_size=capture.content_size,
            payload=capture.body_length,
            kind=kind,
            seed=url if (seed or url in self.stats.seeds) else None,
            redirect=urljoin(url, location) if location else None,
        )
        return host, domain

    def _archive_dns(self, request: Request, capture: DnsCapture) -> None:
        """A ``dns:`` lookup (:func:`harvester.capturerecords.dns_record`), then its crawl.log line
        (status 1). Counted in the reports under the pseudo host ``dns:`` (Heritrix's hosts-report) and
        in no domain: it is nobody's object budget."""
        digest = sha1_b32(capture.sha1)
        self.writer.write([dns_record(capture, request.url, warc_date(capture.started), digest)])
        notes = [f"content-size:{capture.content_size}", *self._attempts(request)]
        self._log_fetch(request, capture, capture.content_size, DNS_MIME, digest, notes)
        self.stats.record_fetch(
            host=DNS_HOST,
            domain=None,
            status=capture.status,
            mime=DNS_MIME,
            content_size=capture.content_size,
            payload=capture.content_size,
            kind=NOVEL,
        )

    def _log_unfetched(self, request: Request, status: int, notes: list[str]) -> None:
        # Nothing was fetched, so no fetch time and digest: Heritrix writes "-" for them too.
        path, via, seed = self._path_via(request)
        self.crawllog.log(
            status=status,
            size=None,
            uri=request.url,
            path=path,
            via=via,
            mime=None,
            thread=int(request.meta.get("nh_thread", 0)),
            source_tag=crawllog.source_of(request.meta),
            annotations=notes,
        )
        if is_dns(request.url):
            self.stats.record_unfetched(host=DNS_HOST, domain=None, status=status)
            return
        host = urlparse_cached(request).hostname or ""
        self.stats.record_unfetched(
            host=host,
            domain=self._domain_of(request, host),
            status=status,
            seed=request.url if (seed or request.url in self.stats.seeds) else None,
        )

    # -- statistics ----------------------------------------------------------------------------
    def restore_stats(self, state: Mapping[str, Any]) -> None:
        """A resumed job: carry on from the tallies journalled at the last checkpoint."""
        try:
            restored = CrawlStats.from_state(state)
        except (KeyError, TypeError, ValueError) as exc:
            logger.warning("could not restore the report tallies (%s): the reports cover this run only", exc)
            return
        for seed in self.stats.seeds:
            restored.add_seed(seed)
        self.stats = restored

    def stats_for(self, domain: str) -> dict[str, Any]:
        return (self.stats.domains.get(domain) or Tally()).snapshot()

    def stats_for_host(self, host: str) -> dict[str, Any]:
        return (self.stats.hosts.get(host) or Tally()).snapshot()

    def totals(self) -> dict[str, Any]:
        return self.stats.total.snapshot()

    # -- the end -------------------------------------------------------------------------------
    def finish(
        self,
        *,
        frontier_summary: str | Mapping[str, Any] | None = None,
        stop_reasons: Mapping[str, str] | None = None,
        crawl_status: str = "Finished",
        remaining: Mapping[str, int] | None = None,
    ) -> list[FileResult]:
        """Close WARCs, write reports, then the metadata WARC; return all files (idempotent)."""
        if self._files is not None:
            return self._files
        if frontier_summary is None or stop_reasons is None:
            summary = engine_summary(self.crawler.signals)
            if summary is not None:
                frontier_summary = summary.frontier_summary if frontier_summary is None else frontier_summary
                stop_reasons = summary.stop_reasons if stop_reasons is None else stop_reasons
        self.stats.ended = datetime.now(UTC)
        self.writer.close()
        self.crawllog.close()
        self.dedup.close()
        reports = write_reports(
            self.report_dir,
            self.stats,
            crawl_name=self.info.crawl_name,
            crawl_status=crawl_status,
            frontier_summary=frontier_summary,
            stop_reasons=stop_reasons,
            domains=self.info.configured_domains(),
            remaining=remaining,
            crawl_log=self.crawllog.path,
            notes=self.dedup.report_lines(),
        )
        segments = self.crawllog_segments  # a continuous job's crawl.log: the segments not archived yet
        metadata = write_metadata_warc(
            self.warc_dir,
            spec=self.spec,
            job_id=self.job_id,
            harvest_id=self.harvest_id,
            crawl_log=self.crawllog.path,
            reports=reports,
            seeds=list(self.stats.seeds),
            warcinfo=self.info.warcinfo_fields(),
            compresslevel=self.compresslevel,
            number=1 if segments is None else segments.number + 1,
            log_range=None if segments is None else (segments.offset, None),
        )
        self._files = produced_files(self.warc_dir, metadata)
        return self._files
