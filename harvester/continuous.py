"""A continuous crawl: the crawl engine of every job, with the adaptive-revisit frontier and policy.

Seeds 000 and 002 (Sigurðsson, incremental crawling with Heritrix) describe the mode: every URI is
visited again and again, each at its own pace. :class:`ContinuousCrawlJob` is :class:`CrawlJob` (scope,
robots, DNS, politeness, retries, link extraction, checkpoints: all reused) with three differences:

* its frontier is the :class:`harvester.arfrontier.ARFrontier`: per-host queues ordered by time of next
  processing, a URI never done, a global fetch budget; the time of next processing comes from the pure
  :class:`harvester.revisit.policy.RevisitPolicy` (``RevisitSettings`` from the JobSpec's
  ``continuous`` section; its ``pinned`` URIs merged with the section's own);
* each fetch is judged (:meth:`judge`, called by the archive side before it writes the records):
  the **mid-fetch filter** (002 §6.4) stops a download after the headers when
  ``policy.unchanged_by_headers`` says the ETag / Last-Modified show no change — written as a
  ``server-not-modified`` revisit record (head only), crawl.log ``unchanged,midFetchAbort``; a
  downloaded document whose digest after the strip regexes (:func:`harvester.revisit.change.stripped_digest`)
  equals the previous visit's is **unchanged** (002 §6.3.1, ChangeEvaluator): an
  ``identical-payload-digest`` revisit referring to the URI's last stored capture, crawl.log
  ``unchanged``, and its links are not extracted ("the ChangeEvaluator will preempt the processing
  chain if the document is discovered to be unchanged ... bypassing the link extractors"); a changed one
  is a full ``response`` whose links join the frontier. Every visit's line carries the ARFrontier's
  ``wt:<wait>,<n>vis,<n>ver,ov:<overdue>`` annotation (002 §6.2);
* it never ends by itself (the frontier always has work, ``spider_idle`` is refused): it runs until a
  Control ``stop``; its WARCs close on size **or** age (``warc_rotate_s``) and each closed one is listed in
  ``<job>/files-closed.jsonl``, which the job's task relays to the orchestrator
  (``orchestrator.record_files``) while the crawl goes on, so the indexer chain has it within minutes.

Seeds added or removed while it runs (Control ``seeds``) join or leave the frontier and the scope at
once (a removed seed's pages that no other seed's scope holds leave too), and are journalled, so a
restart keeps them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import json
import logging
import math
import os
import sys
import time
import zlib
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from harvester.arfrontier import ARFrontier, iso
from harvester.contracts import JobSpec, Progress
from harvester.crawljob import CrawlJob
from harvester.crawllogsegments import metadata_number
from harvester.dns import S_DOMAIN_PREREQUISITE_FAILURE, is_dns, lookup_host
from harvester.fileresults import file_result, is_metadata_warc
from harvester.frontier import Entry, Frontier, Politeness
from harvester.hosts import host_key, registrable_domain
from harvester.metadatawarc import write_metadata_warc
from harvester.revisit import PROFILE_IDENTICAL, PROFILE_NOT_MODIFIED, Referent
from harvester.revisit.adaptive import SLICE, Steps
from harvester.revisit.change import stripped_digest
from harvester.revisit.policy import RevisitPolicy, RevisitSettings, Visit
from harvester.scope import S_QUOTA, S_ROBOTS, DomainScope, trailing_transclusions
from harvester.takeover import FRESH_SEEDS
from harvester.urimeta import UriMeta

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from harvester.fetch import RawCapture

logger = logging.getLogger(__name__)
_T = TypeVar("_T")

#: One JSON FileResult per line: the WARCs this job closed while running, for ``orchestrator.record_files``.
FILES_CLOSED = "files-closed.jsonl"
#: The fetch rate in Progress.continuous is measured over this many seconds.
RATE_WINDOW_S = 60.0
UNCHANGED = "unchanged"
MID_FETCH_ABORT = "midFetchAbort"
#: Refused links of a host at its ``max_uris_per_host`` logged in crawl.log (the rest are counted only).
REFUSED_LOGGED = 100
#: The freshness estimate (an O(URIs) sum) is computed again after this many times the seconds it took.
FRESHNESS_COST_FACTOR = 100
#: A checkpoint (every second, in the reactor) taking this long is logged: fetching waits for it.
SLOW_CHECKPOINT_S = 0.25
#: A replan that failed (a defect) is tried again after this many seconds; the URIs keep their times meanwhile.
REPLAN_RETRY_S = 600
COUNTERS = ("visits", "changed", "unchanged", "not_modified", "header_skipped", "errors", "warcs_closed")


def timed(steps: Steps[_T]) -> Steps[tuple[_T, float, float]]:
    """Run a sliced computation (``harvester.revisit.adaptive.Steps``) a slice per ``next()``: its value, with
    the seconds its slices took in all and the longest of them (how long it held the reactor at most)."""
    total = longest = 0.0
    while True:
        started = time.perf_counter()
        try:
            next(steps)
        except StopIteration as done:
            return done.value, total, longest
        finally:
            spent = time.perf_counter() - started
            total, longest = total + spent, max(longest, spent)
        yield


@contextlib.contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Python's cyclic collector off while a replan runs (on again after, if it was on).

    A replan holds a tuple per URI until it ends; a million of them brought a full pass of the collector over
    every object of the crawl in the middle of it: 0.2 s at 200,000 URIs, 1.3 s at a million, in one slice
    (docs/BENCHMARKS.md, "the replan between fetches"). Its objects, and a page's, are freed by reference
    counting (a page makes no reference cycle: tests/harvester/test_crawl_garbage.py), so nothing waits for the
    collector meanwhile but the rare cycle, collected after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def crawl_job_for(spec: JobSpec, out_dir: str | Path, crawler: Crawler | None = None) -> CrawlJob:
    """The crawl engine a JobSpec needs: continuous jobs revisit, the others crawl once."""
    if spec.continuous is not None:
        return ContinuousCrawlJob(spec, out_dir, crawler)
    return CrawlJob(spec, out_dir, crawler)


def _decoded(body: bytes, encoding: str | None, limit: int) -> bytes:
    """The body as the server meant it (gzip/deflate undone, at most ``limit`` bytes) for the digest:
    a compressed body's bytes say nothing a strip regex could match."""
    enc = (encoding or "").strip().lower()
    if enc not in ("gzip", "x-gzip", "deflate"):
        return body
    try:
        d = zlib.decompressobj(zlib.MAX_WBITS | 32 if enc != "deflate" else zlib.MAX_WBITS)
        return d.decompress(body, max(limit, 0) or 0)
    except zlib.error:
        return body


class ContinuousCrawlJob(CrawlJob):
    """See the module docstring."""

    def __init__(self, spec: JobSpec, out_dir: str | Path, crawler: Crawler | None = None) -> None:
        assert spec.continuous is not None
        section = spec.continuous
        settings = RevisitSettings.from_dict(section.revisit, "continuous.revisit")
        if section.pinned:
            pinned = {**dict(settings.pinned), **{u: int(round(s)) for u, s in section.pinned.items()}}
            settings = dataclasses.replace(settings, pinned=pinned)
        self.revisit = settings
        self.policy = RevisitPolicy(settings, section.budget_per_s)
        self.budget_per_s = section.budget_per_s
        self.counts = dict.fromkeys(COUNTERS, 0)
        self._issued: deque[float] = deque()
        self._files_listed: set[str] = set()
        self.seeds_added: list[list[str]] = []  # [url, domain]
        self.seeds_removed: list[str] = []
        self._refused_links: dict[str, int] = {}  # per host at max_uris_per_host: links refused
        self._freshness_at: tuple[float, float | None, float] = (-math.inf, None, 0.0)  # when, value, seconds
        self._replan: Any = None  # the replan running in slices (a Twisted CooperativeTask)
        self._replan_slices_running: Any = None  # its generator, closed if the crawl ends first
        self._closing = False
        self._replan_retry_at = -math.inf  # after a replan that failed
        super().__init__(spec, out_dir, crawler)

    def _make_frontier(self, path: Path, politeness: Politeness, queue_of: Any, group_of: Any) -> Frontier:
        return ARFrontier(path, politeness, queue_of, group_of, policy=self.policy, budget_per_s=self.budget_per_s)

    @property
    def ar(self) -> ARFrontier:
        assert isinstance(self.frontier, ARFrontier)
        return self.frontier

    # -- state ---------------------------------------------------------------------------------
    def _restore(self) -> None:
        kv = self.frontier.kv
        if self.frontier.resumed:
            self.counts.update(kv.get("continuous_counts") or {})
            self.frontier.done = int(kv.get("ar_done", self.frontier.done))
            self.seeds_added = [list(x) for x in kv.get("seeds_added") or []]
            self.seeds_removed = list(kv.get("seeds_removed") or [])
            self._rescope(sweep=False)
        super()._restore()
        if self.frontier.resumed:
            # The JobSpec's seeds (a later job of the definition may have more) that the carried-over
            # frontier does not hold: they join, unless a seeds control took them out.
            for d in self.spec.domains:
                for seed in d.seeds:
                    if self.ar.entry_of(seed) is None and seed not in self.seeds_removed:
                        nh = UriMeta.for_seed(d.name, seed if self.spec.settings.source_tag_seeds else None)
                        if self.frontier.add(seed, self.canonical_key(seed), nh) is None:
                            self.ar.readd(seed, nh)
            if kv.get(FRESH_SEEDS):
                self._forget_stale_seeds()

    def _forget_stale_seeds(self) -> None:
        """After a take-over from a DONE job: the seeds the carried-over frontier holds that this JobSpec
        (the definition now) does not leave, with the pages only they held in scope."""
        wanted = {seed for d in self.spec.domains for seed in d.seeds}
        stale = [e.url for e in list(self.ar.entries.values()) if e.nh.seed and e.url not in wanted]
        for url in stale:
            self._drop(url)
        if stale:
            self._rescope(sweep=True)
            logger.info(
                "%d seed(s) no longer in the definition left the frontier: %s", len(stale), " ".join(stale[:10])
            )
        self.frontier.set_state(FRESH_SEEDS, False)

    def checkpoint(self) -> None:
        f = self.frontier
        f.set_state("continuous_counts", dict(self.counts))
        f.set_state("ar_done", f.done)
        f.set_state("seeds_added", self.seeds_added)
        f.set_state("seeds_removed", self.seeds_removed)
        if self.archive is not None:
            self.archive.writer.rotate_if_old()  # the time rule, even when nothing is being written
        if isinstance(f, ARFrontier):
            running = self._reactor_running() and not self._closing
            due = max(self.policy.next_replan_at, self._replan_retry_at)
            if self._replan is None and running and time.time() >= due:
                self._start_replan()
            f.drain_all = not running  # the last checkpoint: nothing to fetch meanwhile
        t0 = time.monotonic()
        super().checkpoint()
        written = time.monotonic() - t0
        if written >= SLOW_CHECKPOINT_S:
            logger.info("slow checkpoint: %.3f s", written)

    def _reactor_running(self) -> bool:
        """Whether the crawl's reactor runs (not yet while the job is opened, no more at its last checkpoint);
        True without a crawler (tools and tests: a replan is made at once)."""
        if self.crawler is None:
            return True
        reactor = sys.modules.get("twisted.internet.reactor")  # importing it would install the default reactor
        return reactor is not None and bool(reactor.running)

    def _start_replan(self) -> None:
        """The policy's replan, in slices between fetches (:meth:`_replan_slices`); at once without a crawler."""
        self.ar.plan_pending = True
        if self.crawler is None:
            for _ in self._replan_slices(time.time()):
                pass
            return
        from twisted.internet import task

        self._replan_slices_running = self._replan_slices(time.time())
        self._replan = task.cooperate(self._replan_slices_running)
        self._replan.whenDone().addErrback(self._replan_failed)

    def closing(self) -> None:
        """The crawl ends or is interrupted: a replan under way is given up (its generator closed, so the cyclic
        collector is on again; its plan is not journalled, and the next run replans), none is started, and the
        last checkpoint journals every move."""
        self._closing = True
        if self._replan is not None:
            self._replan.stop()  # its Deferred fails with TaskStopped: _replan_failed lets it go, as closing
            self._replan_slices_running.close()
            self._replan = self._replan_slices_running = None

    def _replan_failed(self, failure: Any) -> None:
        """A defect: logged, tried again later. Its plan is never journalled (``plan_pending`` stays), so a
        restart replans; meanwhile the crawl goes on with the URIs' times as they are."""
        self._replan = None
        if self._closing:
            return  # stopped by closing(): its TaskStopped
        self._replan_retry_at = time.time() + REPLAN_RETRY_S
        logger.error(
            "the replan failed; tried again in %d s",
            REPLAN_RETRY_S,
            exc_info=(failure.type, failure.value, failure.getTracebackObject()),
        )

    def _replan_slices(self, now: float) -> Iterator[None]:
        """Replan and reschedule the URIs moved, a slice per ``next()``.

        A replan of every URI in one call held the reactor, and so every fetch, for 10 s at 100,000 URIs and
        90 s at 1,000,000, every ``replan_interval_s`` (docs/BENCHMARKS.md, "Continuous crawl at scale"). Run by
        Twisted's cooperator, slices of about 10 ms alternate with the crawl's own work. A URI visited between the
        policy's move and its rescheduling here keeps the time the frontier gave it then (a failed DNS lookup's
        retry, say); the frontier journals the moves a few thousand per checkpoint, then the plan."""
        started = time.monotonic()
        with cyclic_gc_paused():
            moved, cpu, longest = yield from timed(self.policy.replan_steps(now))
        planned = time.monotonic()
        f = self.ar
        for i, (uri, at) in enumerate(moved.items()):
            if i % SLICE == 0:
                yield
            state = self.policy.uris.get(uri)
            if state is not None and state.next_at == at:  # else visited since: the frontier has what the visit gave
                f.reschedule(uri, at)
        f.plan_pending = False
        if moved:
            self.wake_engine()  # it may sleep until a URI due later than those moved forward
        # The replan's cost at this job's size: the figures an operator needs to size a job.
        logger.info(
            "replan of %d URIs: %d moved; planning %.3f s in slices of at most %.1f ms over %.3f s, "
            "rescheduling %.3f s",
            len(self.policy.uris),
            len(moved),
            cpu,
            1000 * longest,
            planned - started,
            time.monotonic() - planned,
        )
        self._replan = self._replan_slices_running = None

    def has_pending(self) -> bool:
        return True  # never done: only a stop ends a continuous crawl

    # -- wiring --------------------------------------------------------------------------------
    def attach(self, crawler: Crawler, spider: Any) -> None:
        super().attach(crawler, spider)
        if self.archive is None:
            return
        archive = self.archive
        archive.continuous = self
        archive.writer.on_close = self._file_closed
        assert archive.crawllog_segments is not None  # the archive of a continuous job keeps them
        self.segments = archive.crawllog_segments
        listed = self.out_dir / FILES_CLOSED
        if listed.exists():
            for line in listed.read_text(encoding="utf-8").splitlines():
                try:
                    self._files_listed.add(json.loads(line)["name"])
                except (ValueError, KeyError, TypeError):
                    continue
        # Closed before a crash but not yet listed (or recovered from ``.open`` just now): hand them over.
        for path in sorted(archive.warc_dir.glob("*.warc.gz")):
            if not is_metadata_warc(path):
                self._file_closed(path)
            elif (metadata_number(path) or 0) <= self.segments.number or not path.name.startswith(f"{archive.job_id}-"):
                self._hand_over(path, "metadata")  # a crawl.log segment (this job's, or taken over)

    def _file_closed(self, path: Path) -> None:
        """A WARC is closed: list it, and the crawl.log lines written since the last one closed
        (:mod:`harvester.crawllogsegments`), for the task to hand to the orchestrator."""
        if self._hand_over(path, "warc"):
            self.counts["warcs_closed"] += 1
            logger.info("WARC %s closed and handed over", path.name)
        archive = self.archive
        assert archive is not None
        segment = self.segments.cut(
            lambda number, start, end: write_metadata_warc(
                archive.warc_dir,
                spec=self.spec,
                job_id=archive.job_id,
                harvest_id=archive.harvest_id,
                crawl_log=archive.crawllog.path,
                reports=[],
                seeds=[],
                warcinfo=archive.info.warcinfo_fields(),
                compresslevel=archive.compresslevel,
                number=number,
                log_range=(start, end),
                setup=False,
            )
        )
        if segment is not None:
            self._hand_over(segment, "metadata")

    def _hand_over(self, path: Path, kind: str) -> bool:
        """List a closed file (fsynced) in files-closed.jsonl, once; False if it was listed already."""
        if path.name in self._files_listed:
            return False
        line = json.dumps(dataclasses.asdict(file_result(path, kind))) + "\n"
        with open(self.out_dir / FILES_CLOSED, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())
        self._files_listed.add(path.name)
        return True

    # -- issuing -------------------------------------------------------------------------------
    def _request(self, entry: Entry) -> Request:
        request = super()._request(entry)
        now = time.time()
        self._issued.append(now)
        request.meta["nh_ar_due"] = self.ar.next_at.get(entry.id, now)
        # The filter only for a URI whose last capture this job knows: a download stopped after the
        # headers becomes a revisit record that must refer to something.
        if not self._prerequisite(entry) and self.revisit.mid_fetch_filter and entry.id in self.ar.capture:
            url, policy = entry.url, self.policy

            def unchanged_by_headers(capture: RawCapture) -> bool:
                return bool(
                    policy.unchanged_by_headers(
                        url, capture.header("ETag"), capture.header("Last-Modified"), time.time()
                    )
                )

            request.meta["nh_midfetch"] = unchanged_by_headers
        return request

    @staticmethod
    def _prerequisite(entry: Entry) -> bool:
        return is_dns(entry.url) or entry.nh.prerequisite

    # -- judging a fetch (called by the archive side, before it writes) ------------------------
    def judge(self, request: Request, response: Response, capture: RawCapture) -> tuple[Referent | None, list[str]]:
        """Record the visit with the policy; return the revisit to write (None: a full response) and
        the crawl.log annotations."""
        entry: Entry | None = request.meta.get("nh_entry")
        if entry is None or self._prerequisite(entry) or self.ar.removed(entry):
            return None, []  # a removed seed fetched at that moment: its visit is not the policy's any more
        now = time.time()
        downloaded = not capture.mid_fetch_abort
        digest = None
        if downloaded and capture.status != 304 and not capture.truncated:  # a 404 page has versions too
            body = _decoded(response.body, capture.header("Content-Encoding"), self.max_decoded_bytes)
            digest = stripped_digest(body, self.revisit.strip)
        not_modified = capture.status == 304 and bool(
            request.headers.get(b"If-None-Match") or request.headers.get(b"If-Modified-Since")
        )
        visit = Visit(
            status=capture.status,
            content_type=capture.header("Content-Type"),
            size=capture.body_length,
            duration_s=capture.duration_ms / 1000.0,
            etag=capture.header("ETag"),
            last_modified=capture.header("Last-Modified"),
            digest=digest,
            downloaded=downloaded and not not_modified,
        )
        at = self.policy.visited(entry.url, visit, now)
        self.ar.planned(entry, at)
        self.counts["visits"] += 1
        state = self.policy.uris.get(entry.url)
        changed = getattr(state, "changed", None)
        notes = [self.policy.annotation(entry.url)]
        request.meta["nh_ar_changed"] = changed
        previous = self.ar.capture.get(entry.id)
        referent = None
        if changed is False and previous is not None:
            target, date, record_id, payload = previous
            if not downloaded or not_modified:
                profile = PROFILE_NOT_MODIFIED
                self.counts["header_skipped" if not downloaded else "not_modified"] += 1
                if not downloaded:
                    notes.append(MID_FETCH_ABORT)
            else:
                profile = PROFILE_IDENTICAL
            referent = Referent(profile, target, date, payload, record_id, UNCHANGED)
            self.counts["unchanged"] += 1
        elif changed is False:
            # Unchanged, but no capture of this job to point at (a 304 to the dedup index's conditional
            # request): the archive side's own dedup decides the record.
            self.counts["unchanged"] += 1
            if not_modified:
                self.counts["not_modified"] += 1
        else:
            self.counts["changed"] += 1
        return referent, notes

    def stored(self, request: Request, url: str, date: str, record_id: str | None, payload_digest: str) -> None:
        """A full response was written for a judged visit: the capture later revisits refer to."""
        entry: Entry | None = request.meta.get("nh_entry")
        if entry is not None and entry.id in self.ar.entries and not self._prerequisite(entry):
            self.ar.capture[entry.id] = [url, date, record_id, payload_digest]

    # -- outcomes ------------------------------------------------------------------------------
    def _extract(self, entry: Entry, response: Response) -> None:
        if response.request is not None and response.request.meta.get("nh_ar_changed") is False:
            return  # unchanged: the link extractors are bypassed (002 §6.3.1)
        super()._extract(entry, response)

    def on_response(self, response: Response) -> None:
        request = response.request
        entry: Entry | None = request.meta.get("nh_entry") if request is not None else None
        if (
            entry is not None
            and not self._prerequisite(entry)
            and entry.id not in self.ar._planned
            and response.status not in (429, 503)
        ):
            self._unjudged(entry, response.status)
        super().on_response(response)

    def on_failure(self, failure: Any) -> None:
        request = getattr(failure, "request", None)
        entry: Entry | None = request.meta.get("nh_entry") if request is not None else None
        if entry is not None and not self._prerequisite(entry) and entry.id not in self.ar._planned:
            code = int(request.meta.get("nh_failure") or -5)
            retrying = entry.retries < self.max_retries and isinstance(
                getattr(failure, "value", None), self._retry_exceptions
            )
            if not retrying:
                self._unjudged(entry, code)
        super().on_failure(failure)

    def _unjudged(self, entry: Entry, status: int, error: bool = True) -> float | None:
        """A visit the archive side did not judge (a fetch failure): the policy keeps its wait (a failed
        visit says nothing about change); counted as an error. Not for a URI removed meanwhile."""
        if self.ar.removed(entry):
            return None
        at = self.policy.visited(
            entry.url,
            Visit(
                status=min(status, 0) if status <= 0 else -5,
                content_type=None,
                size=0,
                duration_s=0.0,
                etag=None,
                last_modified=None,
                digest=None,
                downloaded=False,
            ),
            time.time(),
        )
        self.ar.planned(entry, at)
        self.counts["errors"] += error
        return at

    def _refused(self, url: str, key: str, nh: UriMeta) -> bool:
        """A link of a host that already has ``max_uris_per_host`` URIs in the crawl: not followed, with one
        alert per host. Every URI the job holds is revisited for ever and kept in memory, so a host that makes
        up new links on every visit would grow the job until it runs out of memory
        (harvester.defaults.CONTINUOUS_MAX_URIS_PER_HOST). The first :data:`REFUSED_LOGGED` refused links of a
        host are logged -5003 (``Q:maxUrisPerHost``), once each (their keys join the seen-set); the rest are
        only counted, so neither the seen-set nor crawl.log grows with the trap either."""
        queue = self.ar.arq.get(self.ar.queue_of(url))
        if queue is None or queue.size < self.spec.continuous.max_uris_per_host:  # type: ignore[union-attr]
            return False
        refused = self._refused_links[queue.key] = self._refused_links.get(queue.key, 0) + 1
        if refused <= REFUSED_LOGGED:
            self.frontier.mark_seen(key)
            self.reject(url, nh, S_QUOTA, "Q:maxUrisPerHost")
        if refused == 1:
            self.alerts.append(
                f"{queue.key} has {queue.size:,} URIs in the crawl, the most a host may have "
                "(continuous max_uris_per_host): its new links are not followed (crawl.log: Q:maxUrisPerHost)"
            )
        return True

    def _unreachable(self, entry: Entry, status: int, now: float) -> None:
        """Logged (-6, -61) and, unlike in a snapshot, not let go: a failed visit to the policy (it keeps its
        wait) and back in the frontier. Heritrix's ARFrontier stamps such a URI "as far into the future as
        possible" (002 §6.2); then one DNS outage or one robots.txt that timed out for its retries would take
        a host out of a crawl of months for good. Its host's queue sleeps until the failed prerequisite is
        asked for again (the cached lookup failure expires, ``NH_DNS_TTL_S``; robots.txt's validity ends,
        ``robots_validity_s``), so the host's other URIs are not all logged unreachable meanwhile, and the URI
        comes back then if its wait would be later: an hour's outage does not cost the host a month's wait."""
        if self._prerequisite(entry) or self.ar.removed(entry):
            super()._unreachable(entry, status, now)
            return
        # When the failed prerequisite is next asked for: the cached lookup failure's or robots.txt's expiry.
        if status == S_DOMAIN_PREREQUISITE_FAILURE:
            again = self.dns.expires(lookup_host(entry.url) or "")
        else:
            again = self.robots.expires(host_key(entry.url))
        sleeps = again > now and entry.queue == host_key(entry.url)  # not a queue shared with the domain's hosts
        self._put_back(entry, status, again, not_before=again if sleeps else None)
        if sleeps:
            self.ar.snooze(entry.queue, again)

    def _excluded(self, entry: Entry, now: float) -> None:
        """A seed, or a page the crawl has archived before, that robots.txt now excludes is kept as a failed
        visit (-9998 logged, its wait kept): robots.txt is read again every ``robots_validity_s``, and a site
        that excludes everything for a day of maintenance must not leave the crawl for good. A link never
        fetched that robots.txt excludes (into an excluded section) is disregarded, as in Heritrix."""
        state = self.policy.uris.get(entry.url)
        known = entry.nh.seed or (state is not None and state.visits > 0)
        if self._prerequisite(entry) or self.ar.removed(entry) or not known:
            super()._excluded(entry, now)
            return
        self._put_back(entry, S_ROBOTS, math.inf)

    def _put_back(self, entry: Entry, status: int, not_after: float, not_before: float | None = None) -> None:
        """Log ``entry`` with ``status`` as a failed visit and return it to its queue at the policy's time, or
        at ``not_after`` if that is sooner; ``not_before``: its queue sleeps until then (the ``wt:`` logged
        is the wait until the URI is really tried again)."""
        at = self._unjudged(entry, status, error=status != S_ROBOTS)  # an exclusion is the site's wish, no error
        retry = at
        if at is not None and not_after < at:
            self.ar.planned(entry, not_after)
            retry = not_after
        if retry is not None and not_before is not None:
            retry = max(retry, not_before)
        self.reject(entry.url, entry.nh, status, self.policy.annotation(entry.url, retry))
        self.ar.unfetched(entry)

    # -- control -------------------------------------------------------------------------------
    def change_seeds(self, add: tuple[str, ...] | list[str], remove: tuple[str, ...] | list[str]) -> None:
        """Control ``seeds``: new seeds join the frontier (due now) and the scope; removed ones leave
        the frontier and the scope, with the pages only they held in scope, and are never revisited."""
        for url in remove:
            self._drop(url)
            self.seeds_removed.append(url)
            self.seeds_added = [s for s in self.seeds_added if s[0] != url]
        if remove:
            self._rescope(sweep=True)
        for url in add:
            domain = self._domain_for(url)
            self._scope_seed(url, domain)
            self.seeds_added.append([url, domain])
            if url in self.seeds_removed:
                self.seeds_removed.remove(url)
            nh = UriMeta.for_seed(domain, url if self.spec.settings.source_tag_seeds else None)
            self._ensure_robots(url, "", None, domain, nh.source)
            if self.frontier.add(url, self.canonical_key(url), nh) is None:
                self.ar.readd(url, nh)
            if self.archive is not None:
                self.archive.stats.add_seed(url)
        self.checkpoint()

    def _drop(self, url: str) -> None:
        self.ar.remove(url)
        self.policy.remove(url)

    def _rescope(self, sweep: bool) -> None:
        """Rebuild each domain's scope from its seeds now (the JobSpec's, plus those added, minus those
        removed); with ``sweep``, the pages no seed's scope holds any more leave the frontier (their
        embeds stay while a page still in scope may use them)."""
        added: dict[str, list[str]] = {}
        for url, domain in self.seeds_added:
            added.setdefault(domain, []).append(url)
        removed = set(self.seeds_removed)
        rule = self.spec.settings.scope
        self.scope.domains = [
            DomainScope(d.name, [s for s in d.seeds if s not in removed] + added.get(d.name, []), rule)
            for d in self.spec.domains
        ]
        if not sweep:
            return
        for entry in list(self.ar.entries.values()):
            path = entry.nh.path
            if self._prerequisite(entry) or trailing_transclusions(path):
                continue
            if self.scope.domain_of(entry.url) is None:
                self._drop(entry.url)

    def _domain_for(self, url: str) -> str:
        """The JobSpec domain a new seed belongs to: the one whose scope holds it, or whose registrable
        domain it shares, else the job's first (its objects are counted there)."""
        found = self.scope.domain_of(url)
        if found:
            return found
        reg = registrable_domain(url)
        for d in self.spec.domains:
            if d.name == reg or any(registrable_domain(s) == reg for s in d.seeds):
                return d.name
        return self.spec.domains[0].name

    def _scope_seed(self, url: str, domain: str) -> None:
        for d in self.scope.domains:
            if d.name == domain:
                d.add_seed(url)
                return

    # -- reporting -----------------------------------------------------------------------------
    def fetch_rate(self, now: float) -> float:
        while self._issued and self._issued[0] < now - RATE_WINDOW_S:
            self._issued.popleft()
        span = min(RATE_WINDOW_S, max(now - self._started_at, 1e-6))
        return round(len(self._issued) / span, 3)

    def continuous_progress(self) -> dict[str, Any]:
        now = time.time()
        f = self.ar
        due = []
        for entry, at in f.due_next():
            state = self.policy.uris.get(entry.url)
            due.append(
                {
                    "uri": entry.url,
                    "at": iso(at),
                    "wait_s": round((getattr(state, "wait_ms", 0) or 0) / 1000, 3),
                    "visits": getattr(state, "visits", 0),
                    "versions": getattr(state, "versions", 0),
                }
            )
        return {
            "budget_per_s": self.budget_per_s,
            "fetch_rate": self.fetch_rate(now),
            **self.counts,
            "validator_misses": int(self.policy.counters.get("validator_misses", 0)),
            "queues": f.ar_queue_states(now),
            "hosts": f.hosts(now),
            "due_next": due,
            "freshness": self._freshness(now),
        }

    def _freshness(self, now: float) -> float | None:
        """The policy's freshness estimate, computed again once it is older than :data:`FRESHNESS_COST_FACTOR` times
        what it cost: it is a sum over every URI, in the reactor, and the heartbeat asks every 5 s (0.19 s at
        100,000 URIs, about 1.1 s at 1,000,000: fetching stopped a fifth of the time for it). A figure plotted
        over hours may be a couple of minutes old at that size; it costs the crawl at most 1 % of its time."""
        at, value, cost = self._freshness_at
        if 0 <= now - at < cost * FRESHNESS_COST_FACTOR:  # (a clock set back: computed again)
            return value
        t0 = time.monotonic()
        value = self.policy.freshness(now)
        self._freshness_at = (now, value, time.monotonic() - t0)
        return value

    def progress(self) -> Progress:
        return dataclasses.replace(super().progress(), continuous=self.continuous_progress())

    def continuous_tallies(self) -> dict[str, int]:
        """The job's revisit figures (visits and what they found), cumulative: written into its crawl-report
        so they stay in the archive with the job's metadata, not only in its last progress message."""
        return {
            **{k: int(v) for k, v in self.counts.items()},
            "validator_misses": int(self.policy.counters.get("validator_misses", 0)),
        }

    def frontier_summary(self) -> dict[str, Any]:
        return {**super().frontier_summary(), "continuous": self.continuous_tallies()}
