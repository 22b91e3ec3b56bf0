"""One running crawl: scope + frontier + robots + budgets, glued to Scrapy's engine.

The Scrapy side is thin: :class:`harvester.frontierscheduler.FrontierScheduler` asks :meth:`CrawlJob.issue`
for the next request, :class:`harvester.spider.HarvestSpider` hands every response and failure to
:meth:`CrawlJob.on_response` / :meth:`CrawlJob.on_failure`. Discovered links go straight into the
frontier (not through Scrapy's scheduler queue), because the frontier is what decides order,
politeness, and what survives a crash.

Every request carries ``meta["nh"]``, a :class:`harvester.urimeta.UriMeta` (path, via, hops, domain,
seed, source: the interface with the archive side), plus ``meta["retry_times"]`` so
:class:`harvester.archive.ArchiveMiddleware` predicts our retries exactly: retries are ours (Heritrix
style, the URI goes back to its queue for ``retry_delay_s``), Scrapy's RetryMiddleware is switched off,
and ``RETRY_TIMES`` / ``RETRY_HTTP_CODES`` / ``RETRY_EXCEPTIONS`` in the settings describe what we do.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.exceptions import IgnoreRequest

from harvester import links as linkx
from harvester.archive import ArchiveMiddleware
from harvester.budget import WAIT, Budgets
from harvester.contracts import JobSpec, Progress
from harvester.crawlsignals import EngineSummary, reports_due, uri_rejected
from harvester.defaults import DNS_TTL_S, decoded_limit, nh_setting
from harvester.dns import (
    FAILED,
    PENDING,
    RESOLVED,
    S_DOMAIN_PREREQUISITE_FAILURE,
    UNKNOWN,
    DnsCache,
    DnsRequest,
    dns_host,
    dns_uri,
    is_dns,
    lookup_host,
)
from harvester.fetch import S_EMPTY_RESPONSE
from harvester.frontier import Entry, Frontier, Politeness
from harvester.hosts import host_key, registrable_domain
from harvester.patterns import PatternError
from harvester.politeness import retry_after_seconds
from harvester.retries import RETRY_STATUSES, RetryExceptions
from harvester.revisit import hides_links
from harvester.robots import RobotsCache, robots_url
from harvester.scope import (
    CANON_LEGACY,
    CANONICALIZERS,
    S_BLOCKED_BY_TRAP,
    S_QUOTA,
    S_ROBOTS,
    S_ROBOTS_PREREQUISITE_FAILURE,
    S_UNFETCHABLE_URI,
    Scope,
    canon_scheme,
    unfetchable,
)
from harvester.urimeta import UriMeta

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.python.failure import Failure

logger = logging.getLogger(__name__)

#: Statuses retried like network failures (the URI goes back to its queue), Retry-After honoured.


def _now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class CrawlJob:
    """See the module docstring. One per crawl process."""

    def __init__(self, spec: JobSpec, out_dir: str | Path, crawler: Crawler | None = None) -> None:
        self.spec = spec
        self.out_dir = Path(out_dir)
        self.crawler = crawler
        s = spec.settings
        self.scope = Scope(spec)
        self.budgets = Budgets(spec.domains)
        self.robots = RobotsCache(s.robots == "obey", s.effective_user_agent)  # validity: attach() reads it
        self.dns = DnsCache()
        self.dns_ttl_s = float(DNS_TTL_S)
        host_queue = registrable_domain if s.politeness_scope == "domain" else host_key

        def queue_of(url: str) -> str:
            # A dns: URI has a queue of its own: one lookup per TTL, never delayed by politeness.
            return url.lower() if is_dns(url) else host_queue(url)

        self.frontier = self._make_frontier(
            self.out_dir / "state" / "frontier.sqlite",
            Politeness(s.delay_factor, s.min_delay_ms, s.max_delay_ms, s.host_valence, s.respect_crawl_delay_up_to_s),
            queue_of,
            lambda nh: nh.domain,
        )
        self.max_retries = s.max_retries
        self.retry_delay_s = float(s.retry_delay_s)
        self.javascript = s.extract_javascript
        #: A gzipped sitemap is decompressed to at most this (``DOWNLOAD_MAXSIZE``'s bound).
        self.max_decoded_bytes = decoded_limit(s.max_document_bytes)
        self.paused = False
        self.ended_by = "finished"
        self.failed = 0
        self.spider: Any = None
        self.archive: Any = None
        self._retry_exceptions = RetryExceptions(())
        self._started_at = time.time()
        self._prior_crawl_s = 0.0
        self.started_iso = _now_iso()
        self.alerts: list[str] = []
        self._live_traps_saved = 0  # how many of scope.live_traps the frontier's journal holds
        self.robots_unavailable: set[str] = set()  # hosts whose robots.txt never answered (-61)
        # The seen-set's keys are the frontier's: a resumed frontier keeps the scheme it was made
        # with (one from before the scheme was recorded used the legacy keys), so nothing it holds
        # as seen is fetched again after an upgrade or a template change.
        scheme = self.frontier.kv.get("canonicalization")
        if scheme not in CANONICALIZERS:
            scheme = CANON_LEGACY if self.frontier.resumed else canon_scheme(s.canonicalize_query_order)
        self.frontier.set_state("canonicalization", scheme)
        self.canonical_key = CANONICALIZERS[scheme]
        self._restore()
        self._mark_rates({})

    def _mark_rates(self, totals: dict[str, Any]) -> None:
        """The first heartbeat's rates count from what this process starts with: the URIs a resumed or continuing
        job had done made a spike of 110 URI/s in its rate chart. Marked again by :meth:`attach`, when the
        archive's byte count is known."""
        self._rate_mark = (time.time(), self.frontier.done, self._bytes(totals))

    def _make_frontier(self, path: Path, politeness: Politeness, queue_of: Any, group_of: Any) -> Frontier:
        """The breadth-first frontier; a continuous job's is the adaptive-revisit one (harvester.continuous)."""
        return Frontier(path, politeness, queue_of, group_of=group_of)

    # -- state ---------------------------------------------------------------------------------
    def _restore(self) -> None:
        kv = self.frontier.kv
        if self.frontier.resumed:
            self.budgets.restore(kv.get("budgets", {}))
            self.robots.restore(kv.get("robots", {}))
            self.dns.restore(kv.get("dns", {}))
            self.robots_unavailable = set(kv.get("robots_unavailable", []))
            for trap in kv.get("live_traps", []):
                self.add_trap(trap)
            self._live_traps_saved = len(self.scope.live_traps)
            self.paused = bool(kv.get("paused", False))
            self._prior_crawl_s = float(kv.get("crawl_s", 0.0))
            self.started_iso = str(kv.get("started", self.started_iso))
            self.frontier.set_state("started", self.started_iso)  # none after a DONE job's takeover: now
            self.failed = int(kv.get("failed", 0))
            logger.info(
                "resumed job %s: %d queued, %d done", self.spec.job_id, self.frontier.queued, self.frontier.done
            )
        else:
            self.frontier.set_state("started", self.started_iso)
            for d in self.spec.domains:
                for seed in d.seeds:
                    nh = UriMeta.for_seed(d.name, seed if self.spec.settings.source_tag_seeds else None)
                    self._ensure_robots(seed, "", None, d.name, nh.source)
                    self.frontier.add(seed, self.canonical_key(seed), nh)
        self.checkpoint()

    @property
    def resumed(self) -> bool:
        return self.frontier.resumed

    def closing(self) -> None:
        """The crawl ends or is interrupted: the next checkpoint is its last (a continuous job stops its replan)."""

    def wake_engine(self) -> None:
        """Make the crawl engine ask for requests now: URIs became due earlier than the wake-up it sleeps until
        (resumed, seeds added, a replan that moved URIs forward)."""
        slot = getattr(getattr(self.crawler, "engine", None), "_slot", None)
        if slot is not None and getattr(slot, "nextcall", None) is not None:
            slot.nextcall.schedule()

    def crawl_seconds(self) -> float:
        return self._prior_crawl_s + (time.time() - self._started_at)

    def checkpoint(self) -> None:
        """Journal counters and the frontier (called every second and at the end)."""
        f = self.frontier
        f.set_state("budgets", self.budgets.snapshot())
        f.set_state("robots", self.robots.snapshot())
        f.set_state("dns", self.dns.snapshot())
        f.set_state("robots_unavailable", sorted(self.robots_unavailable))
        if len(self.scope.live_traps) != self._live_traps_saved:
            # Only when a trap came: with 100,000 JobSpec traps, recomputing "traps not in the spec"
            # every second was O(n²) and slowed a crawl to one URI every two minutes.
            f.set_state("live_traps", self.scope.live_traps)
            self._live_traps_saved = len(self.scope.live_traps)
        f.set_state("paused", self.paused)
        f.set_state("crawl_s", self.crawl_seconds())
        f.set_state("failed", self.failed)
        if self.archive is not None:
            # The reports' tallies, in the same transaction as the frontier they agree with.
            f.set_state("archive_stats", self.archive.stats.to_state())
        f.checkpoint()

    # -- wiring --------------------------------------------------------------------------------
    def attach(self, crawler: Crawler, spider: Any) -> None:
        self.crawler = crawler
        self.spider = spider
        self.archive = ArchiveMiddleware.of(crawler)
        if self.archive is not None:
            saved = self.frontier.kv.get("archive_stats")
            if self.frontier.resumed and saved:
                self.archive.restore_stats(saved)
            dedup = self.archive.dedup
            dedup.journal = lambda digest, capture: self.frontier.journal_add("digest", digest, capture)
            dedup.journal_get = lambda digest: self.frontier.journal_get("digest", digest)
        self._mark_rates(self.archive.totals() if self.archive is not None else {})
        crawler.signals.connect(self.on_reports_due, signal=reports_due)
        self.dns_ttl_s = float(nh_setting(crawler.settings, "NH_DNS_TTL_S"))
        self.robots.validity_s = float(nh_setting(crawler.settings, "NH_ROBOTS_VALIDITY_S"))
        self._retry_exceptions = RetryExceptions(crawler.settings.getlist("RETRY_EXCEPTIONS"))

    def reject(self, url: str, nh: UriMeta, status: int, annotation: str = "") -> None:
        """Tell the archive side to log a URI let go without a fetch."""
        if self.crawler is None:
            return
        request = Request(url, meta={"nh": nh}, dont_filter=True)
        self.crawler.signals.send_catch_log(uri_rejected, request=request, status=status, annotation=annotation)

    # -- discovery -----------------------------------------------------------------------------
    def _ensure_dns(self, url: str, path: str, domain: str, now: float, source: str | None = None) -> None:
        """Queue ``dns:HOST`` (path + ``P``, via ``url``) unless the host's lookup is pending or
        still valid; an IP-literal host needs none."""
        host = lookup_host(url)
        if host is None or self.dns.state(host, now) != UNKNOWN:
            return
        n = self.dns.mark_pending(host)
        uri = dns_uri(host)
        nh = UriMeta.found(path + "P", url, domain, source)
        # A lookup repeated after its TTL needs a seen-set key of its own.
        if self.frontier.add(uri, uri if n == 0 else f"{uri}#{n}", nh, front=True) is None:
            self.dns.forget(host)  # that key was already used: the host's next URI asks under the next one

    def _ensure_robots(self, url: str, path: str, via: str | None, domain: str, source: str | None = None) -> None:
        host = host_key(url)
        if self.robots.requested(host):
            return  # a known host's expired lookup is renewed by issue(), not on every link
        self._ensure_dns(url, path, domain, time.time(), source)
        self._ask_robots(url, UriMeta.found(path + "P", via or url, domain, source))

    def _ask_robots(self, url: str, nh: UriMeta) -> None:
        """Queue the robots.txt of ``url``'s host, under a seen-set key of its own each time it is asked for: its
        URL's the first time, ``<key> <host>#n`` when asked again (its validity ended, or its host's lookup had
        failed): the canonical key drops ``www``, and ``www2.example.com`` must not find its robots.txt taken."""
        host = host_key(url)
        r_url = robots_url(url)
        key = self.canonical_key(r_url)
        # The first time under its URL's key; again (or when that key is taken: another name of the site, which
        # the key's canonical form shares, or a spool from before renewals) under one naming the host itself.
        for _ in range(2):
            n = self.robots.ask(host)
            if self.frontier.add(r_url, key if n == 0 else f"{key} {host}#{n}", nh, front=True) is not None:
                return
        self.robots.load(host, self.robots.bodies.get(host))  # queued before a restart under that key: no wait

    def discover(self, url: str, letter: str, parent: UriMeta, via: str) -> bool:
        """Judge one outlink and queue it if it is in scope and new (then True)."""
        path = parent.path + letter
        key = self.canonical_key(url)
        if self.frontier.was_seen(key):
            return False
        decision = self.scope.decide(url, path, parent.domain)
        nh = UriMeta.found(path, via, decision.domain, parent.source)
        if not decision.accepted:
            if decision.status:
                # Logged once: the key joins the seen-set so the next sighting is silent.
                self.frontier.mark_seen(key)
                self.reject(url, nh, decision.status)
            return False
        if unfetchable(url):
            self.frontier.mark_seen(key)
            self.reject(url, nh, S_UNFETCHABLE_URI)
            return False
        if self._refused(url, key, nh):
            return False
        self._ensure_robots(url, path, via, decision.domain, nh.source)
        return self.frontier.add(url, key, nh) is not None

    def _refused(self, url: str, key: str, nh: UriMeta) -> bool:
        """Whether a new in-scope link is refused for a limit of the job's own (then logged): none here, a
        continuous job caps the URIs of a host."""
        return False

    # -- issuing -------------------------------------------------------------------------------
    def issue(self, now: float) -> Request | None:
        """The next request to download, or None (nothing ready now, or paused)."""
        if self.paused:
            return None
        f = self.frontier
        while True:
            entry = f.next_ready(now)
            if entry is None:
                return None
            host = host_key(entry.url)
            nh = entry.nh
            prerequisite = nh.prerequisite
            name = lookup_host(entry.url)
            if name is not None:  # DNS first, for robots.txt too (Heritrix's PreconditionEnforcer)
                state = self.dns.state(name, now)
                if state == PENDING:
                    f.schedule(entry, now + 0.2)  # wait for the host's lookup
                    continue
                if state == FAILED:
                    if prerequisite and entry.url.endswith("/robots.txt"):
                        # Heritrix would never have scheduled it: dropped without a line, and asked
                        # for again if the host resolves later.
                        self.robots.forget(host)
                        f.skip(entry, now)
                    else:
                        self._unreachable(entry, S_DOMAIN_PREREQUISITE_FAILURE, now)
                    continue
                if state != RESOLVED:  # never looked up, or the TTL expired
                    self._ensure_dns(entry.url, nh.path, nh.domain, now, nh.source)
                    f.schedule(entry, now)
                    continue
            if not prerequisite:
                if self.robots.pending(host):
                    f.schedule(entry, now + 0.2)  # wait for the host's robots.txt
                    continue
                # Back in its queue first, then robots.txt in front of it: a snapshot frontier puts both
                # at the head of the host's queue, and a URI ahead of its prerequisite would wait forever.
                if not self.robots.requested(host):
                    f.schedule(entry, now)
                    self._ensure_robots(entry.url, nh.path, nh.via, nh.domain, nh.source)
                    continue
                if self.robots.expired(host, now):
                    f.schedule(entry, now)
                    self._renew_robots(entry)
                    continue
                if host in self.robots_unavailable:
                    self._unreachable(entry, S_ROBOTS_PREREQUISITE_FAILURE, now)
                    continue
                if not self.robots.allowed(host, entry.url):
                    self._excluded(entry, now)
                    continue
                if self.scope.blocked_by_trap(entry.url, nh.domain):
                    self.reject(entry.url, nh, S_BLOCKED_BY_TRAP)  # a trap added while it waited
                    f.skip(entry, now)
                    continue
            reached = self.budgets.try_issue(nh.domain, prerequisite)
            if reached == WAIT:
                f.schedule(entry, now + 0.1)  # fetches in flight may fill the budget: wait for them
                continue
            if reached:
                self.reject(entry.url, nh, S_QUOTA, self.budgets.annotation(reached))
                f.skip(entry, now)
                continue
            f.fetching(now)
            return self._request(entry)

    def _unreachable(self, entry: Entry, status: int, now: float) -> None:
        """A URI whose host cannot be reached now (its DNS lookup failed: -6; its robots.txt never answered:
        -61): logged and let go, as Heritrix does. A continuous job tries it again later instead."""
        self.reject(entry.url, entry.nh, status)
        self.frontier.skip(entry, now)

    def _excluded(self, entry: Entry, now: float) -> None:
        """A URI robots.txt excludes (-9998): logged and let go, as Heritrix does (a continuous job keeps a page
        it has archived before, see ContinuousCrawlJob)."""
        self.reject(entry.url, entry.nh, S_ROBOTS)
        self.frontier.skip(entry, now)

    def _renew_robots(self, entry: Entry) -> None:
        """Fetch a host's expired robots.txt again (harvester.robots: validity) before the host's next URI; a
        host whose robots.txt did not answer (-61) is asked again."""
        self.robots_unavailable.discard(host_key(entry.url))
        nh = entry.nh
        self._ask_robots(entry.url, UriMeta.found(nh.path + "P", entry.url, nh.domain, nh.source))

    def _request(self, entry: Entry) -> Request:
        meta = {
            "nh": entry.nh,
            "nh_entry": entry,
            "retry_times": entry.retries,
            "handle_httpstatus_all": True,
            "dont_redirect": True,
            "dont_retry": False,
            "download_slot": entry.queue,
            "nh_issued": time.time(),
        }
        try:
            kind = DnsRequest if is_dns(entry.url) else Request
            return kind(entry.url, callback=self._callback, errback=self._errback, meta=meta, dont_filter=True)
        except ValueError:  # a URL Scrapy refuses: give the entry a Request it can carry anyway
            return Request(
                "http://invalid.invalid/", callback=self._callback, errback=self._errback, meta=meta, dont_filter=True
            )

    @property
    def _callback(self) -> Any:
        return getattr(self.spider, "parse", None)

    @property
    def _errback(self) -> Any:
        return getattr(self.spider, "errback", None)

    # -- outcomes ------------------------------------------------------------------------------
    def on_archived(self, request: Request, domain: str = "", content_size: int = 0, **_: Any) -> None:
        """``uri_archived`` from the archive side: charge the budget once, with what was stored."""
        nh: UriMeta | None = request.meta.get("nh")
        self.budgets.charge(nh.domain if nh is not None else domain, int(content_size))
        request.meta["nh_charged"] = True

    def _duration(self, request: Request) -> float:
        capture = request.meta.get("nh_capture")
        ms = getattr(capture, "duration_ms", None)
        if ms is not None:
            return ms / 1000.0
        return max(time.time() - float(request.meta.get("nh_issued", time.time())), 0.0)

    def on_response(self, response: Response) -> None:
        request = response.request
        assert request is not None
        entry: Entry | None = request.meta.get("nh_entry")
        if entry is None:
            return
        now = time.time()
        nh = entry.nh
        domain = nh.domain
        status = response.status
        if is_dns(entry.url):
            # A prerequisite: never charged to the domain's budget, nothing to extract.
            capture = request.meta.get("nh_capture")
            self.dns.resolved(dns_host(entry.url), float(getattr(capture, "ttl_s", self.dns_ttl_s)), now)
            self.budgets.release(domain)
            self.frontier.finished(entry, now, 0.0)
            return
        if not request.meta.get("nh_charged"):
            if self.archive is None:  # no archive side (plain Scrapy run): charge what we got
                self.budgets.charge(domain, len(response.body))
                request.meta["nh_charged"] = True
        retry_after = retry_after_seconds(response.headers.get(b"Retry-After")) if status in RETRY_STATUSES else None
        if status in RETRY_STATUSES and entry.retries < self.max_retries:
            if not request.meta.get("nh_charged"):
                self.budgets.release(domain)
            self.frontier.note_error(entry)
            entry.retries += 1
            delay = retry_after if retry_after is not None else self.retry_delay_s
            self.frontier.schedule(entry, now + delay)
            return
        if not request.meta.get("nh_charged"):
            self.budgets.release(domain)
        try:
            self._extract(entry, response)
        except Exception:  # a hostile document never kills the job
            logger.exception("processing %s failed", entry.url)
        snooze = now + retry_after if retry_after is not None else None
        # After _extract: a host's robots.txt, just read, already spaces the host's next fetch.
        self.frontier.finished(
            entry, now, self._duration(request), snooze, self.robots.crawl_delay(host_key(entry.url))
        )

    def _extract(self, entry: Entry, response: Response) -> None:
        url = entry.url
        host = host_key(url)
        nh = entry.nh
        is_robots = nh.prerequisite and url.endswith("/robots.txt")
        status = response.status
        if is_robots:
            text = response.body.decode("utf-8", "replace") if 200 <= status < 300 else None
            self.robots.load(host, text)
        if hides_links(status, response.request.meta.get("nh_conditional") if response.request else None):
            # Never silent: the domain cannot end DOWNLOAD_COMPLETE, and the operator is told (once
            # per domain; crawl.log's linksUnseen:304 annotation lists every such URI).
            self.budgets.links_unseen(nh.domain)
            if self.budgets.get(nh.domain).unseen == 1:
                self.alerts.append(
                    f"{url} answered 304 Not Modified to an unconditional request: its links "
                    "could not be followed (crawl.log: linksUnseen:304)"
                )
        ctype = response.headers.get(b"Content-Type", b"").decode("latin-1", "replace")
        location = response.headers.get(b"Location")
        text = None
        encoding = getattr(response, "encoding", None)
        found = linkx.extract(
            url,
            nh.path,
            ctype,
            response.body,
            text,
            encoding,
            status,
            location.decode("latin-1", "replace") if location else None,
            self.javascript,
            self.max_decoded_bytes,
        )
        queued = [link for link, letter in found if self.discover(link, letter, nh, url)]
        if queued and self.archive is not None:
            self.archive.dedup.prefetch(queued)  # one dedup-service batch for the page's new outlinks
        # Inferred (I): Heritrix's ExtractorHTTP tries /favicon.ico for every HTTP URI it fetched;
        # the seen-set makes that one fetch per host.
        self.discover(linkx.join_rooted(url, "/favicon.ico"), "I", nh, url)

    def on_failure(self, failure: Failure) -> None:
        request = getattr(failure, "request", None)
        if request is None:
            return
        entry: Entry | None = request.meta.get("nh_entry")
        if entry is None:
            return
        now = time.time()
        domain = entry.nh.domain
        exc = failure.value
        if request.meta.get("nh_charged"):
            # Archived, then dropped on the way to the spider (a gzip bomb past DOWNLOAD_MAXSIZE):
            # the fetch happened and was charged; only its links (or robots rules) are lost.
            self._robots_failed(entry)
            self.frontier.finished(entry, now, self._duration(request))
            return
        self.budgets.release(domain)
        if isinstance(exc, IgnoreRequest):
            if is_dns(entry.url):  # a lookup dropped unfetched must not keep its host waiting
                self._robots_failed(entry)
            self.frontier.skip(entry, now)
            return
        self.frontier.note_error(entry)
        if self._retry_exceptions.matches(exc) and entry.retries < self.max_retries:
            entry.retries += 1
            self.frontier.schedule(entry, now + self.retry_delay_s)
            return
        self.failed += 1
        # An empty answer (-404) is an answer: the host has no robots.txt, as Heritrix reads it.
        self._robots_failed(entry, unavailable=request.meta.get("nh_failure") != S_EMPTY_RESPONSE)
        self.frontier.finished(entry, now, self._duration(request))

    def _robots_failed(self, entry: Entry, unavailable: bool = False) -> None:
        """A robots.txt given up on: with ``unavailable`` (no answer at all after its retries) and
        robots obeyed, the host's URIs are logged -61 and not fetched, as Heritrix's
        PreconditionEnforcer does while a host has no valid robots; otherwise (an answer that was
        received but lost on the way, a gzip bomb) the host is crawled as if it had none. A DNS
        lookup given up on: the host's URIs fail with -6 until the lookup is due again."""
        if is_dns(entry.url):
            self.dns.failed(dns_host(entry.url), self.dns_ttl_s, time.time())
            return
        if entry.nh.prerequisite and entry.url.endswith("/robots.txt"):
            host = host_key(entry.url)
            self.robots.load(host, None)
            if unavailable and self.robots.obey:
                self.robots_unavailable.add(host)

    # -- control -------------------------------------------------------------------------------
    def pause(self) -> None:
        self.paused = True

    def resume(self) -> None:
        self.paused = False

    def add_trap(self, pattern: str) -> None:
        """A live trap (see :meth:`Scope.add_trap`); one RE2 refuses (a trap journalled by an older
        harvester) is an alert, never a crash."""
        try:
            self.scope.add_trap(pattern)
        except PatternError as exc:
            logger.warning("crawler trap not added: %s", exc)
            self.alerts.append(f"crawler trap not added: {exc}")

    def has_pending(self) -> bool:
        return self.frontier.queued > 0 or self.paused

    # -- reporting -----------------------------------------------------------------------------
    def remaining_by_domain(self) -> dict[str, int]:
        return self.frontier.remaining_by_group()

    def stop_reasons(self) -> dict[str, str]:
        remaining = self.remaining_by_domain()
        return {
            d.name: self.budgets.stop_reason(d.name, remaining.get(d.name, 0), self.ended_by) for d in self.spec.domains
        }

    def on_reports_due(self, **_: Any) -> EngineSummary:
        """The archive side writes the reports: what only the engine knows (:data:`reports_due`)."""
        return EngineSummary(frontier_summary=self.frontier_summary(), stop_reasons=self.stop_reasons())

    def frontier_summary(self) -> dict[str, Any]:
        f = self.frontier
        return {
            "queued": f.queued,
            "in_flight": f.in_flight,
            "done": f.done,
            "queues": f.queue_states(time.time()),
            "seen": len(f.seen),
            "ended_by": self.ended_by,
            "queue_report": f.queue_report(time.time()),
        }

    def domain_results(self) -> list[Any]:
        """One result per domain of the spec. A domain the spec lists twice (a definition that harvested it
        through two configurations, which a paste made before 2026-11-29) was crawled as one domain, under its
        first configuration's budget: listed twice, the result could not be recorded and the job hung."""
        names = list(dict.fromkeys(d.name for d in self.spec.domains))
        return self.budgets.results(self.remaining_by_domain(), self.ended_by, only=names)

    def _bytes(self, totals: dict[str, Any]) -> int:
        return int(totals.get("bytes", sum(b.bytes for b in self.budgets.domains.values())))

    def progress(self) -> Progress:
        now = time.time()
        f = self.frontier
        totals = self.archive.totals() if self.archive is not None else {}
        done = f.done
        nbytes = self._bytes(totals)
        t0, d0, b0 = self._rate_mark
        span = max(now - t0, 1e-6)
        self._rate_mark = (now, done, nbytes)
        elapsed = max(self.crawl_seconds(), 1e-6)
        states = f.queue_states(now)
        remaining = self.remaining_by_domain()
        domains = {
            name: {"objects": b.objects, "bytes": b.bytes, "queued": remaining.get(name, 0)}
            for name, b in self.budgets.domains.items()
        }
        return Progress(
            job_id=self.spec.job_id,
            at=_now_iso(),
            uris_done=done,
            uris_queued=f.queued,
            uris_failed=self.failed,
            bytes=nbytes,
            uri_rate=round((done - d0) / span, 2),
            avg_uri_rate=round(done / elapsed, 2),
            kb_rate=round((nbytes - b0) / 1024 / span, 2),
            avg_kb_rate=round(nbytes / 1024 / elapsed, 2),
            queues_active=states["active"],
            queues_snoozed=states["snoozed"],
            queues_exhausted=states["exhausted"],
            paused=self.paused,
            domains=domains,
            alerts=tuple(self._alerts()[-10:]),
        )

    def _alerts(self) -> list[str]:
        """The job's alerts, and the dedup service's outage line while there is one."""
        dedup_alert = self.archive.dedup.alert if self.archive is not None else None
        return [*self.alerts, dedup_alert] if dedup_alert else self.alerts
