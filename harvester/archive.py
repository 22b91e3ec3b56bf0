"""The archive side of a crawl: WARC records, dedup/revisits, crawl.log, statistics, reports.

:class:`ArchiveMiddleware` is a Scrapy **downloader middleware** placed nearest the downloader
(above ``HttpCompressionMiddleware``'s 590 in ``DOWNLOADER_MIDDLEWARES``, e.g. 950), so it sees
each response exactly as :class:`harvester.fetch.RawHTTPDownloadHandler` received it.

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
    idempotent (later calls return the same list). Or set ``frontier_summary_provider`` /
    ``stop_reasons_provider`` (zero-argument callables) before the spider closes.

Settings: ``NH_JOBSPEC`` (the job's typed :class:`~harvester.contracts.JobSpec`: ids and names for
warcinfo, seeds, domains, the template's settings), ``NH_OUT_DIR`` (job spool dir: ``warcs/``,
``logs/crawl.log``, ``reports/``), ``NH_WARC_MAX_BYTES``, ``NH_DEDUP``, ``NH_DEDUP_INDEX``,
``NH_WARC_COMPRESSLEVEL`` (default 6).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from scrapy import signals as scrapy_signals
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet import error as txerror

import harvester
from harvester import crawllog
from harvester.contracts import FileResult, JobSpec
from harvester.crawlsignals import uri_archived, uri_rejected
from harvester.defaults import nh_setting
from harvester.dns import DNS_HOST, DNS_MIME, DnsCapture, is_dns
from harvester.fetch import S_CONNECT_FAILED, S_CONNECT_LOST, S_DNS_FAILED, S_TIMEOUT, RawCapture
from harvester.hosts import registrable_domain
from harvester.reports import DUPLICATE, NOT_MODIFIED, NOVEL, CrawlStats, write_reports
from harvester.retries import RetryPolicy
from harvester.revisit import LINKS_UNSEEN, PROFILE_NOT_MODIFIED, Deduplicator, Referent, hides_links
from harvester.warcwriter import (
    RotatingWarcWriter,
    WarcRecord,
    file_sha1,
    sha1_b32,
    warc_date,
    write_warc_file,
)

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

S_RUNTIME_ERROR = -5
#: crawl.log annotation of an archived attempt the frontier will retry (a 503, a 429): its line is
#: written like any other, so crawl.log and the WARCs agree; the final attempt carries ``Nt``.
RETRY_ANNOTATION = "willRetry"
METADATA_HOST = "netharvest"


def _exception_code(exc: BaseException) -> int:
    """Heritrix code for a download exception (when the handler did not say)."""
    name = type(exc).__name__
    if isinstance(exc, txerror.DNSLookupError) or name == "CannotResolveHostError":
        return S_DNS_FAILED
    if isinstance(exc, txerror.ConnectError) or name in ("DownloadConnectionRefusedError",):
        return S_CONNECT_FAILED
    if isinstance(exc, txerror.TimeoutError) or name == "DownloadTimeoutError":
        return S_TIMEOUT
    if isinstance(exc, txerror.ConnectionLost | txerror.ConnectionDone) or name in (
        "DownloadFailedError",
        "ResponseDataLossError",
        "ResponseFailed",
    ):
        return S_CONNECT_LOST
    return S_RUNTIME_ERROR


class ArchiveMiddleware:
    """See the module docstring; one instance per crawl."""

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.spec: JobSpec = settings["NH_JOBSPEC"]
        self.out_dir = Path(settings.get("NH_OUT_DIR") or ".").resolve()
        self.warc_max_bytes = nh_setting(settings, "NH_WARC_MAX_BYTES")
        self.compresslevel = nh_setting(settings, "NH_WARC_COMPRESSLEVEL")
        self.job_id = str(self.spec.job_id)
        self.harvest_id = str(self.spec.harvest_id)
        self.prefix = f"{self.job_id}-{self.harvest_id}"
        self.warc_dir = self.out_dir / "warcs"
        self.report_dir = self.out_dir / "reports"
        self.log_dir = self.out_dir / "logs"
        self.dedup = Deduplicator(settings.getbool("NH_DEDUP", False), settings.get("NH_DEDUP_INDEX"))
        #: The job extracts links from scripts (then they are link-bearing: never fetched conditionally).
        self.javascript = self.spec.settings.extract_javascript
        self.stats = CrawlStats()
        for seed in self._configured_seeds():
            self.stats.add_seed(seed)
        self.crawllog = crawllog.CrawlLog(self.log_dir / "crawl.log")
        self.writer = RotatingWarcWriter(
            self.warc_dir,
            self.prefix,
            max_bytes=self.warc_max_bytes,
            warcinfo=self._warcinfo_fields(),
            compresslevel=self.compresslevel,
            max_age_s=nh_setting(settings, "NH_WARC_ROTATE_S"),
        )
        #: A continuous job's judge (harvester.continuous.ContinuousCrawlJob): decides per fetch whether
        #: the document changed (full response) or not (a revisit referring to its last capture), and
        #: adds the adaptive-revisit annotations. None for other jobs.
        self.continuous: Any = None
        self.retry = RetryPolicy.from_settings(settings)  # the one retry policy (harvester.retries)
        self._files: list[FileResult] | None = None
        self.frontier_summary_provider: Callable[[], Any] | None = None
        self.stop_reasons_provider: Callable[[], Mapping[str, str]] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ArchiveMiddleware:
        mw = cls(crawler)
        crawler.signals.connect(mw.spider_closed, signal=scrapy_signals.spider_closed)
        crawler.signals.connect(mw.on_uri_rejected, signal=uri_rejected)
        crawler.nh_archive = mw  # type: ignore[attr-defined]
        return mw

    @staticmethod
    def of(crawler: Crawler) -> ArchiveMiddleware:
        """The crawl's ArchiveMiddleware (after the downloader has been built)."""
        return crawler.nh_archive  # type: ignore[attr-defined,no-any-return]

    # -- configuration -------------------------------------------------------------------------
    def _configured_seeds(self) -> list[str]:
        return list(dict.fromkeys(self.spec.seeds))

    def _configured_domains(self) -> list[str]:
        return [d.name for d in self.spec.domains]

    def _warcinfo_fields(self) -> list[tuple[str, str]]:
        spec = self.spec
        return [
            ("operator", spec.settings.operator_contact),
            ("http-header-user-agent", spec.settings.effective_user_agent),
            ("robots", spec.settings.robots),
            ("isPartOf", spec.harvest_name),
            ("description", f"netharvest job {self.job_id} of harvest definition {self.harvest_id}"),
            ("jobId", self.job_id),
            ("harvestId", self.harvest_id),
            ("harvestName", spec.harvest_name),
            ("harvestRun", str(spec.harvest_run)),
            ("harvestKind", spec.kind),
            ("channel", spec.channel),
            ("template", spec.template),
        ]

    def _will_retry(self, request: Request, *, status: int | None = None, exc: BaseException | None = None) -> bool:
        return self.retry.will_retry(request.meta, status=status, exc=exc)

    # -- keys ----------------------------------------------------------------------------------
    def _domain_of(self, request: Request, host: str) -> str:
        nh = request.meta.get("nh")
        if nh and nh.get("domain"):
            return str(nh["domain"])
        return registrable_domain(host)

    @staticmethod
    def _path_via(request: Request) -> tuple[str, str | None, bool]:
        nh = request.meta.get("nh")
        if nh:
            return str(nh.get("path") or ""), nh.get("via"), bool(nh.get("seed"))
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
        status = request.meta.get("nh_failure") or _exception_code(exception)
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
        url = request.url
        date = warc_date(capture.started)
        digest = sha1_b32(capture.payload_sha1)
        referent: Referent | None = None
        conditional = request.meta.get("nh_conditional")
        retry = self._will_retry(request, status=capture.status)
        ar_notes: list[str] = []
        if self.continuous is not None and not retry:
            referent, ar_notes = self.continuous.judge(request, response, capture)
        if referent is not None:
            pass
        elif capture.status == 304 and conditional is not None:
            referent = self.dedup.not_modified(conditional)
        elif capture.body_length > 0 and not capture.truncated and 200 <= capture.status < 300:
            referent = self.dedup.lookup(digest)

        common = [("WARC-Date", date), ("WARC-Target-URI", url)]
        if capture.peer_ip:
            common.append(("WARC-IP-Address", capture.peer_ip))
        if referent is None:
            response_record = WarcRecord(
                type="response",
                headers=[
                    *common,
                    ("WARC-Payload-Digest", digest),
                    ("WARC-Block-Digest", sha1_b32(capture.block_sha1)),
                    *([("WARC-Truncated", capture.truncated)] if capture.truncated else []),
                ],
                parts=[capture.response_head, capture.body],
                length=capture.content_size,
                content_type="application/http; msgtype=response",
            )
        else:
            head_digest = sha1_b32(hashlib.sha1(capture.response_head).digest())
            refers = [("WARC-Refers-To", referent.record_id)] if referent.record_id else []
            response_record = WarcRecord(
                type="revisit",
                headers=[
                    *common,
                    ("WARC-Profile", referent.profile),
                    ("WARC-Refers-To-Target-URI", referent.target_uri),
                    ("WARC-Refers-To-Date", referent.date),
                    *refers,
                    ("WARC-Payload-Digest", referent.payload_digest),
                    ("WARC-Block-Digest", head_digest),
                ],
                parts=[capture.response_head],
                length=len(capture.response_head),
                content_type="application/http; msgtype=response",
            )
        request_record = WarcRecord(
            type="request",
            headers=[
                *common,
                ("WARC-Concurrent-To", response_record.record_id),
                ("WARC-Block-Digest", sha1_b32(hashlib.sha1(capture.request_bytes).digest())),
            ],
            parts=[capture.request_bytes],
            length=len(capture.request_bytes),
            content_type="application/http; msgtype=request",
        )
        self.writer.write([response_record, request_record])
        if referent is None and capture.body_length > 0 and not capture.truncated:
            self.dedup.remember(digest, url, date, response_record.record_id)
        if self.continuous is not None and not retry:
            # What this URI's later unchanged visits refer to: this capture, or what it duplicates.
            if referent is None:
                self.continuous.stored(request, url, date, response_record.record_id, digest)
            elif referent.annotation != "unchanged":
                self.continuous.stored(
                    request, referent.target_uri, referent.date, referent.record_id, referent.payload_digest
                )

        # crawl.log and statistics: once per archived attempt (a WARC record always has its line);
        # an attempt the frontier will retry is annotated so, and is not the URI's disposition.
        kind = NOVEL if referent is None else (NOT_MODIFIED if referent.profile == PROFILE_NOT_MODIFIED else DUPLICATE)
        notes = []
        if capture.truncated:
            notes.append(crawllog.TRUNCATION_ANNOTATIONS.get(capture.truncated, "unspecifiedTrunc"))
        if referent is not None:
            notes.append(referent.annotation)
        elif hides_links(capture.status, conditional):
            notes.append(LINKS_UNSEEN)
        notes.append(f"content-size:{capture.content_size}")
        notes += self._attempts(request)
        if retry:
            notes.append(RETRY_ANNOTATION)
        notes += ar_notes
        path, via, seed = self._path_via(request)
        content_type = capture.header("Content-Type")
        self.crawllog.log(
            status=capture.status,
            size=capture.body_length,
            uri=url,
            path=path,
            via=via,
            mime=content_type if content_type is not None else "",
            thread=capture.thread,
            fetch_began=capture.started,
            duration_ms=capture.duration_ms,
            digest=digest,
            source_tag=crawllog.source_of(request.meta),
            annotations=notes,
        )
        host = urlparse_cached(request).hostname or ""
        domain = self._domain_of(request, host)
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

    def _archive_dns(self, request: Request, capture: DnsCapture) -> None:
        """A ``dns:`` lookup, as Heritrix's WARC writer stores it: a ``response`` record, Content-Type
        ``text/dns``, the zone block (no HTTP head, so the payload is the block), WARC-IP-Address
        the resolver; then its crawl.log line (status 1). Counted in the reports under the pseudo
        host ``dns:`` (Heritrix's hosts-report) and in no domain: it is nobody's object budget."""
        digest = sha1_b32(capture.sha1)
        headers = [("WARC-Date", warc_date(capture.started)), ("WARC-Target-URI", request.url)]
        if capture.resolver_ip:
            headers.append(("WARC-IP-Address", capture.resolver_ip))
        headers += [("WARC-Payload-Digest", digest), ("WARC-Block-Digest", digest)]
        record = WarcRecord(
            type="response", headers=headers, parts=[capture.block], length=capture.content_size, content_type=DNS_MIME
        )
        self.writer.write([record])
        path, via, _ = self._path_via(request)
        self.crawllog.log(
            status=capture.status,
            size=capture.content_size,
            uri=request.url,
            path=path,
            via=via,
            mime=DNS_MIME,
            thread=capture.thread,
            fetch_began=capture.started,
            duration_ms=capture.duration_ms,
            digest=digest,
            source_tag=crawllog.source_of(request.meta),
            annotations=[f"content-size:{capture.content_size}", *self._attempts(request)],
        )
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
        tally = self.stats.domains.get(domain)
        from harvester.reports import Tally

        return (tally or Tally()).snapshot()

    def stats_for_host(self, host: str) -> dict[str, Any]:
        from harvester.reports import Tally

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
        if frontier_summary is None and self.frontier_summary_provider is not None:
            frontier_summary = self.frontier_summary_provider()
        if stop_reasons is None and self.stop_reasons_provider is not None:
            stop_reasons = self.stop_reasons_provider()
        self.stats.ended = datetime.now(UTC)
        self.writer.close()
        self.crawllog.close()
        self.dedup.close()
        crawl_name = self.spec.harvest_name or f"job {self.job_id}"
        reports = write_reports(
            self.report_dir,
            self.stats,
            crawl_name=crawl_name,
            crawl_status=crawl_status,
            frontier_summary=frontier_summary,
            stop_reasons=stop_reasons,
            domains=self._configured_domains(),
            remaining=remaining,
            crawl_log=self.crawllog.path,
            notes=self.dedup.report_lines(),
        )
        metadata = write_metadata_warc(
            self.warc_dir,
            spec=self.spec,
            job_id=self.job_id,
            harvest_id=self.harvest_id,
            crawl_log=self.crawllog.path,
            reports=reports,
            seeds=list(self.stats.seeds),
            warcinfo=self._warcinfo_fields(),
            compresslevel=self.compresslevel,
        )
        # Every WARC in the directory: this job's, and those taken over from a job it continues.
        files = [
            file_result(p, "warc")
            for p in sorted(self.warc_dir.glob("*.warc.gz"))
            if p != metadata and not p.name.endswith("-metadata-1.warc.gz")
        ]
        files.append(file_result(metadata, "metadata"))
        self._files = files
        return files


def file_result(path: Path, kind: str) -> FileResult:
    """Name, path, size and SHA-256 of a produced file (streamed, never read whole)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return FileResult(name=path.name, path=str(path), size=path.stat().st_size, sha256=h.hexdigest(), kind=kind)


def write_metadata_warc(
    directory: Path,
    *,
    spec: JobSpec,
    job_id: str,
    harvest_id: str,
    crawl_log: Path,
    reports: list[Path],
    seeds: list[str],
    warcinfo: list[tuple[str, str]],
    compresslevel: int = 6,
) -> Path:
    """``{job}-metadata-1.warc.gz``: crawl.log, each report, the JobSpec and the seeds, as
    ``metadata`` records with NetarchiveSuite-style URIs (docs/FORMATS.md, "Metadata WARC"):
    ``metadata://netharvest/crawl/<logs|reports|setup>/<name>?netharvestVersion=…&harvestid=…
    &harvestnum=…&jobid=…``."""
    query = (
        f"?netharvestVersion={harvester.__version__}&harvestid={harvest_id}"
        f"&harvestnum={spec.harvest_run}&jobid={job_id}"
    )
    now = warc_date(datetime.now(UTC))
    items: list[tuple[str, str, Any]] = [("logs", "crawl.log", crawl_log)]
    items += [("reports", p.name, p) for p in reports]
    items.append(("setup", "jobspec.json", json.dumps(spec.to_dict(), indent=2, sort_keys=True).encode()))
    items.append(("setup", "seeds.txt", "".join(f"{s}\n" for s in seeds).encode()))

    def records() -> Any:
        for folder, name, content in items:
            ctype = "application/json" if name.endswith(".json") else "text/plain"
            if isinstance(content, Path):
                with open(content, "rb") as f:
                    digest, size = file_sha1(f)
                    yield _metadata_record(folder, name, query, now, ctype, [f], size, digest)
            else:
                yield _metadata_record(
                    folder, name, query, now, ctype, [content], len(content), hashlib.sha1(content).digest()
                )

    return write_warc_file(directory / f"{job_id}-metadata-1.warc.gz", records(), warcinfo, compresslevel)


def _metadata_record(
    folder: str, name: str, query: str, date: str, ctype: str, parts: list[Any], length: int, digest: bytes
) -> WarcRecord:
    return WarcRecord(
        type="metadata",
        headers=[
            ("WARC-Date", date),
            ("WARC-Target-URI", f"metadata://{METADATA_HOST}/crawl/{folder}/{name}{query}"),
            ("WARC-Block-Digest", sha1_b32(digest)),
        ],
        parts=parts,
        length=length,
        content_type=ctype,
    )
