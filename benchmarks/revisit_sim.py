"""A simulated web, a frontier and a scorer for revisit policies (issue 12): drives ANY
``harvester.revisit.policy.RevisitPolicy`` through its public interface only.

**The web** (:func:`make_web`): hosts with a latency, a bandwidth and a validator behaviour, each
serving pages with a content type, a size and a change process over the simulated period:

* ``static``: never changes (or once in a blue moon);
* ``poisson``: changes at a constant rate, log-uniform between one every 2 hours and one every 20 days
  (Cho & Garcia-Molina's model, seed 000 §5);
* ``periodic``: one change every P (3 h, 6 h, 12 h, 1 day, 2 days or 1 week) at a fixed phase with a
  small jitter (the edition page, the bulletin);
* ``bursty``: a Markov-modulated Poisson process, long quiet spells (one change in 15 days) broken by
  active days (one change in 1.5 hours): the politician's site before an election (000 §2).

The mixes (:data:`MIXES`) set the shares of processes and validators: *mixed*, *news* (more fast, periodic
and bursty pages), *archive* (mostly static), and *cho*, Poisson and static pages only, at the rates Cho &
Garcia-Molina measured on 720,000 real pages (2000): the literature's web, the one a simulator written
from the papers would build.

Some pages print a clock (``<span class="clock">…</span>``) that changes on every request: noise that the
operator's strip regex removes before hashing (000 §2, 002 §5.1). Servers send validators or not:
``good`` ones change ETag and Last-Modified with every change, ``lastmod`` only Last-Modified,
``none`` nothing (dynamic pages), ``liar`` ones keep both across a real change with probability 0.3
(Clausen's figures in 002 §5.1: reliability 99.66-99.91 %, so a liar is rare but real). Some pages
appear during the run (new articles): they exist from their birth. Last-Modified is an HTTP date as real servers send it
(``Sun, 06 Nov 1994 08:49:37 GMT``, whole seconds; the simulated clock is Unix time from 0): the time
the version was made, and for a page that exists when the run starts the time of its last change
before it, drawn from its own process (its age is what a crawler sees on a first visit).

**The frontier** (:class:`Simulation`): per-host queues ordered by time of next processing, a host
issues one URI at a time (valence 1) and then waits ``last fetch duration × delay factor`` clamped to
[min, max] (002 §6.2, netharvest's defaults 5, 3 s, 30 s); hosts are served in order of the time
they became ready (the ARQueueList: "the one that has been ready to issue a URI for the longest
period of time"); fetch starts are paced by the global budget (at most ``budget_per_s`` per second,
never a burst). A fetch asks the policy after the headers (``unchanged_by_headers``), downloads the
body otherwise (duration = latency + size / bandwidth), hashes it with
:func:`harvester.revisit.change.stripped_digest` and the settings' strip regexes, and reports the
:class:`~harvester.revisit.policy.Visit` at its end. ``replan`` is called at ``next_replan_at``. This
is a discrete-event simulation: completions and fetch starts are processed in time order.

**The scorer** (:class:`Score`), from the web's truth and the fetch log alone: the share of versions
that lived at least 1 hour that were captured (a full download during the version's life),
time-averaged freshness of the archive (the share of page-time during which the latest capture was the
page's current version), wasted fetches (visits that found the version already captured before),
bytes downloaded and stored (a capture equal to the previous one is a revisit record, ~300 bytes),
politeness violations and budget violations (both recomputed from the log; must be 0), versions lost
to header checks (the headers said "unchanged", the body was not downloaded, and that version was
never captured); ``Score.by_class`` splits the same counts by class of page (:func:`page_class`).

**The oracle** (:func:`oracle_policy`): a diagnostic that tells the adaptive policy each page's true
rate (or only the rates of the static and Poisson pages), to measure how much a better estimator could
gain; :mod:`benchmarks.revisit_ceiling` computes what a policy knowing every page's process could reach.
"""

from __future__ import annotations

import bisect
import heapq
import math
import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any

from harvester.revisit.change import stripped_digest
from harvester.revisit.policy import RevisitPolicy, RevisitSettings, Visit

HOUR, DAY = 3600.0, 86400.0
CLOCK = r'<span class="clock">[^<]*</span>'
HEADER_BYTES = 500
REVISIT_RECORD_BYTES = 300
LIE_PROBABILITY = 0.3
PERIOD_CHOICES = (3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, DAY, 2 * DAY, 7 * DAY)
#: ``make_web(periods="any")``: periods drawn log-uniform over this range, on no publisher's clock (5 h 17 min,
#: 2.6 days), where the editorial ones above are those the policy's recogniser lists as well.
PERIOD_RANGE = (2 * HOUR, 7 * DAY)
PERIODS = ("editorial", "any")


def _period(rng: random.Random, periods: str) -> float:
    if periods == "any":
        return math.exp(rng.uniform(math.log(PERIOD_RANGE[0]), math.log(PERIOD_RANGE[1])))
    return rng.choice(PERIOD_CHOICES)


#: Sites (``make_web(sites=True)``): the share of a site's text pages that follow its own process, the
#: share of periodic sites that publish every page at one phase, the spread (log-normal sigma) of its
#: Poisson pages' times between changes around the site's typical one.
SITE_SHARE = 0.8
SITE_SHARED_PHASE = 0.5
SITE_SPREAD = 0.5

#: Scenario mixes: share of text pages by change process, and of validator behaviour by host.
MIXES = {
    "mixed": {
        "processes": {"static": 0.25, "poisson": 0.45, "periodic": 0.15, "bursty": 0.15},
        "validators": {"good": 0.45, "lastmod": 0.15, "none": 0.25, "liar": 0.15},
    },
    "news": {
        "processes": {"static": 0.10, "poisson": 0.45, "periodic": 0.25, "bursty": 0.20},
        "validators": {"good": 0.30, "lastmod": 0.10, "none": 0.45, "liar": 0.15},
    },
    "archive": {
        "processes": {"static": 0.55, "poisson": 0.35, "periodic": 0.05, "bursty": 0.05},
        "validators": {"good": 0.60, "lastmod": 0.15, "none": 0.10, "liar": 0.15},
    },
    # Poisson pages only, at the rates Cho & Garcia-Molina measured on 720,000 pages ("The evolution of the
    # web and implications for an incremental crawler", 2000, fig. 2): 23 % changed at every daily visit,
    # 15 % within a week, 16 % within a month, 16 % within four months, 30 % not in four months (static).
    "cho": {
        "processes": {"static": 0.30, "poisson": 0.70},
        "validators": {"good": 0.45, "lastmod": 0.15, "none": 0.25, "liar": 0.15},
        "waits": ((0.23, 2 * HOUR, DAY), (0.15, DAY, 7 * DAY), (0.16, 7 * DAY, 30 * DAY), (0.16, 30 * DAY, 120 * DAY)),
    },
}


@dataclass
class Host:
    name: str
    latency_s: float
    bandwidth: float  # bytes/s
    validators: str  # good | lastmod | none | liar
    #: a site's own change profile (``make_web(sites=True)``): the process most of its text pages follow,
    #: its publishing period and phase, its pages' typical time between changes; empty for independent pages
    profile: dict = field(default_factory=dict)


@dataclass
class Page:
    uri: str
    host: Host
    content_type: str
    size: int
    born: float
    changes: list[float]  # times of real changes (versions start at born and at each change)
    noise: bool
    etag_epoch: list[int] = field(default_factory=list)  # validator epoch of each version
    #: the modification time of each validator epoch (Last-Modified): the page's last change before the
    #: run for epoch 0 of a page that exists at the start, its birth for one born during the run
    epoch_times: list[float] = field(default_factory=list)
    kind: str = ""  # the change process (static, poisson, periodic, bursty), for per-kind reports
    #: the process's mean change rate (static and Poisson pages; a bursty page's quiet rate), changes per second
    rate: float = 0.0

    def version_at(self, t: float) -> int:
        return bisect.bisect_right(self.changes, t)

    def body(self, version: int, t: float) -> bytes:
        clock = f'<span class="clock">{t:.3f}</span>' if self.noise else ""
        return f"<html><h1>{self.uri}</h1>{clock}<p>version {version}</p></html>".encode()

    def validators(self, version: int) -> tuple[str | None, str | None]:
        kind = self.host.validators
        if kind == "none":
            return None, None
        epoch = self.etag_epoch[version]
        lastmod = formatdate(math.floor(self.epoch_times[epoch]), usegmt=True)
        if kind == "lastmod":
            return None, lastmod
        return f'"{zlib.crc32(self.uri.encode()):08x}-{epoch}"', lastmod


def _process(
    kind: str, rng: random.Random, start: float, end: float, content_type: str, params: dict | None = None
) -> list[float]:
    """The change times of one page in (start, end); ``params`` receives the process's rate or period."""
    times: list[float] = []
    params = {} if params is None else params
    if kind == "static":
        rate = params["rate"] = 1 / (120 * DAY)
        t = start + rng.expovariate(rate)
        while t < end:
            times.append(t)
            t += rng.expovariate(rate)
    elif kind == "poisson":
        if "mean_wait" in params:  # a site's page: near its site's typical time between changes
            longest = max(high for _, _, high in params["waits"]) if "waits" in params else 20 * DAY
            wait = min(max(params["mean_wait"] * math.exp(rng.gauss(0, SITE_SPREAD)), 2 * HOUR), longest)
        elif "waits" in params:  # the mix's measured histogram
            wait = _histogram_wait(rng, params["waits"])
        else:
            wait = math.exp(rng.uniform(math.log(2 * HOUR), math.log(20 * DAY)))
        rate = 1 / wait
        if content_type != "text":
            rate /= 10
        params["rate"] = rate
        t = start + rng.expovariate(rate)
        while t < end:
            times.append(t)
            t += rng.expovariate(rate)
    elif kind == "periodic":
        period = params.get("period") or _period(rng, params.get("periods", "editorial"))
        params["period"] = period
        if params.get("phase") is not None:  # a site publishing all its pages on one schedule
            t = start + (params["phase"] - start) % period
        else:
            t = start + rng.uniform(0, period)
        while t < end:
            times.append(t + rng.gauss(0, 0.01 * period))
            t += period
        times.sort()
    elif kind == "bursty":
        quiet, active = 1 / (15 * DAY), 1 / (1.5 * HOUR)
        params["rate"] = quiet
        t, state = start, rng.random() < 0.15
        switch = t + rng.expovariate(1 / (DAY if state else 6 * DAY))
        while t < end:
            rate = active if state else quiet
            nxt = t + rng.expovariate(rate)
            if nxt >= switch:
                t, state = switch, not state
                switch = t + rng.expovariate(1 / (DAY if state else 6 * DAY))
                continue
            t = nxt
            if t < end:
                times.append(t)
    return [t for t in times if start < t < end]


def _histogram_wait(rng: random.Random, bins: tuple[tuple[float, float, float], ...]) -> float:
    """A time between changes from a histogram of (share, shortest, longest) bins: a bin by its share,
    log-uniform inside it."""
    r = rng.random() * sum(share for share, _, _ in bins)
    for chosen in bins:
        r -= chosen[0]
        if r < 0:
            break
    _, low, high = chosen
    return math.exp(rng.uniform(math.log(low), math.log(high)))


def _pick(rng: random.Random, shares: dict[str, float]) -> str:
    r, acc = rng.random(), 0.0
    for name, share in shares.items():
        acc += share
        if r < acc:
            return name
    return name


def make_web(
    urls: int,
    days: float,
    seed: int,
    mix: str = "mixed",
    per_host: int = 50,
    sites: bool = False,
    periods: str = "editorial",
) -> list[Page]:
    """A seeded web of ``urls`` pages on ``urls / per_host`` hosts over ``days`` days.

    ``sites=False`` (the default) draws every page's change process independently of its host. With
    ``sites=True`` each host is a site with a profile of its own (:func:`_site_profile`): most of its text
    pages follow the site's process (a news site's articles change like each other, a government site's
    pages hardly at all: Fetterly et al. 2003 and Adar et al. 2009 found change behaviour strongly tied to
    the site), its periodic pages share the site's period and, on half the sites, its phase (one CMS
    publishing run), and its Poisson pages' times between changes spread around the site's typical one.
    The mix's shares of processes and validators are the same in both; the site profiles come from their
    own random stream. ``periods``: the periodic pages' periods, ``editorial`` (:data:`PERIOD_CHOICES`) or
    ``any`` (:data:`PERIOD_RANGE`)."""
    if periods not in PERIODS:
        raise ValueError(f"periods: one of {', '.join(PERIODS)}, not {periods!r}")
    rng = random.Random(seed)
    history_rng = random.Random(f"last-modified {seed}")  # its own stream: the webs stay those of earlier runs
    site_rng = random.Random(f"sites {seed}")
    end = days * DAY
    hosts = []
    for h in range(max(1, urls // per_host)):
        hosts.append(
            Host(
                f"host{h}.example",
                latency_s=rng.uniform(0.05, 1.0),
                bandwidth=rng.uniform(2e5, 5e6),
                validators=_pick(rng, MIXES[mix]["validators"]),
            )
        )
        if sites:
            hosts[-1].profile = _site_profile(site_rng, mix, periods)
    pages = []
    for i in range(urls):
        host = hosts[i % len(hosts)]
        r = rng.random()
        if r < 0.80:
            ctype, size = "text/html; charset=utf-8", int(rng.lognormvariate(math.log(30_000), 0.8))
            kind = _pick(rng, MIXES[mix]["processes"])
            if host.profile and site_rng.random() < SITE_SHARE:
                kind = host.profile["kind"]
        elif r < 0.95:
            ctype, size = "image/jpeg", int(rng.lognormvariate(math.log(150_000), 1.0))
            kind = "static" if rng.random() < 0.85 else "poisson"
        else:
            ctype, size = "application/pdf", int(rng.lognormvariate(math.log(800_000), 1.0))
            kind = "static" if rng.random() < 0.85 else "poisson"
        born = 0.0 if rng.random() < 0.9 else rng.uniform(0, end * 0.8)
        params: dict = {"waits": MIXES[mix]["waits"]} if "waits" in MIXES[mix] and kind == "poisson" else {}
        params["periods"] = periods
        if host.profile and ctype.startswith("text/"):
            params.update((k, v) for k, v in host.profile.items() if k in ("period", "phase", "mean_wait"))
        changes = _process(kind, rng, born, end, "text" if ctype.startswith("text/") else "other", params)
        page = Page(
            f"http://{host.name}/p{i}.html",
            host,
            ctype,
            size,
            born,
            changes,
            noise=ctype.startswith("text/") and host.validators == "none" and rng.random() < 0.7,
            kind=kind,
            rate=params.get("rate", 0.0),
        )
        epoch = [0]
        for _ in changes:
            keep = host.validators == "liar" and rng.random() < LIE_PROBABILITY
            epoch.append(epoch[-1] if keep else epoch[-1] + 1)
        page.etag_epoch = epoch
        page.epoch_times = _epoch_times(page, params, history_rng)
        pages.append(page)
    return pages


def _site_profile(rng: random.Random, mix: str, periods: str = "editorial") -> dict:
    """A site's change profile: its process (drawn with the mix's shares), its publishing period (and, on
    :data:`SITE_SHARED_PHASE` of the sites, one phase for all its periodic pages), and its Poisson pages'
    typical time between changes (drawn as the mix draws an independent page's: log-uniform, 2 hours to 20
    days, or from the mix's histogram)."""
    period = _period(rng, periods)
    return {
        "kind": _pick(rng, MIXES[mix]["processes"]),
        "period": period,
        "phase": rng.uniform(0, period) if rng.random() < SITE_SHARED_PHASE else None,
        "mean_wait": _histogram_wait(rng, MIXES[mix]["waits"])
        if "waits" in MIXES[mix]
        else math.exp(rng.uniform(math.log(2 * HOUR), math.log(20 * DAY))),
    }


def _epoch_times(page: Page, params: dict, rng: random.Random) -> list[float]:
    """When each validator epoch began, for Last-Modified: epoch 0 of a page that exists when the run
    starts was last changed before it (by its own process: an exponential age at its rate, for a
    periodic page one period before its first change in the run), a page born during the run was
    created then; every later epoch began at the change that started it (a liar's kept epoch keeps its
    old date, as a server that does not touch the file's mtime does)."""
    if page.born > 0:
        first = page.born
    elif page.kind == "periodic":  # a site's other pages carry its period too, but do not change on it
        first = (page.changes[0] if page.changes else rng.uniform(0, params["period"])) - params["period"]
        first = min(first, 0.0)  # the jitter of its first change in the run: still before the run
    else:
        first = -rng.expovariate(params["rate"])
    times = [first]
    epochs = page.etag_epoch
    for k, change in enumerate(page.changes):
        if epochs[k + 1] != epochs[k]:
            times.append(change)
    return times


@dataclass
class Fetch:
    uri: str
    host: str
    start: float
    end: float
    version: int
    downloaded: bool
    size: int
    digest: str | None


@dataclass
class Politeness:
    delay_factor: float = 5.0
    min_delay_s: float = 3.0
    max_delay_s: float = 30.0

    def delay(self, duration: float) -> float:
        return min(max(duration * self.delay_factor, self.min_delay_s), self.max_delay_s)


class Simulation:
    """The frontier: per-host priority queues, politeness, the global budget; a DES over fetches."""

    def __init__(
        self,
        pages: list[Page],
        settings: RevisitSettings,
        budget_per_s: float,
        days: float,
        politeness: Politeness | None = None,
        make_policy: Callable[[RevisitSettings, float], RevisitPolicy] = RevisitPolicy,
    ) -> None:
        self.pages = {p.uri: p for p in pages}
        self.settings = settings
        self.policy = make_policy(settings, budget_per_s)
        self.budget = budget_per_s
        self.end = days * DAY
        self.politeness = politeness or Politeness()
        self.log: list[Fetch] = []

    def run(self) -> list[Fetch]:
        policy, end = self.policy, self.end
        due: dict[str, float] = {}
        queues: dict[str, list[tuple[float, str]]] = {}
        host_ready: dict[str, float] = {}
        busy: set[str] = set()
        hosts_heap: list[tuple[float, str]] = []  # (max(ready, head due), host), lazily refreshed
        completions: list[tuple[float, int, str, Visit, int]] = []
        births = sorted((p.born, p.uri) for p in self.pages.values())
        b = 0
        seq = 0
        last_start = -math.inf
        spacing = 1.0 / self.budget

        def push_host(host: str) -> None:
            queue = queues.get(host)
            while queue and due.get(queue[0][1]) != queue[0][0]:
                heapq.heappop(queue)  # stale entry
            if queue and host not in busy:
                heapq.heappush(hosts_heap, (max(host_ready.get(host, 0.0), queue[0][0]), host))

        def schedule(uri: str, at: float) -> None:
            host = self.pages[uri].host.name
            due[uri] = at
            heapq.heappush(queues.setdefault(host, []), (at, uri))
            push_host(host)

        now = 0.0
        while True:
            # the next fetch start this frontier could make
            while hosts_heap:
                key, host = hosts_heap[0]
                queue = queues.get(host)
                if (
                    host in busy
                    or not queue
                    or due.get(queue[0][1]) != queue[0][0]
                    or key != max(host_ready.get(host, 0.0), queue[0][0])
                ):
                    heapq.heappop(hosts_heap)
                    if host not in busy:
                        push_host(host)
                    continue
                break
            start_at = max(hosts_heap[0][0], last_start + spacing, now) if hosts_heap else math.inf
            events = [
                start_at,
                completions[0][0] if completions else math.inf,
                births[b][0] if b < len(births) else math.inf,
                policy.next_replan_at,
            ]
            t = min(events)
            if t >= end:
                break
            now = max(now, t)
            if b < len(births) and births[b][0] <= t:
                uri = births[b][1]
                b += 1
                schedule(uri, policy.add(uri, now))
            elif policy.next_replan_at <= t:
                for uri, at in policy.replan(now).items():
                    schedule(uri, at)
            elif completions and completions[0][0] <= t:
                finished, _, uri, visit, _ = heapq.heappop(completions)
                host = self.pages[uri].host.name
                busy.discard(host)
                host_ready[host] = finished + self.politeness.delay(visit.duration_s)
                schedule(uri, policy.visited(uri, visit, finished))
            else:
                _, host = heapq.heappop(hosts_heap)
                _, uri = heapq.heappop(queues[host])
                due.pop(uri, None)
                last_start = now
                busy.add(host)
                visit = self._fetch(uri, now)
                seq += 1
                heapq.heappush(completions, (now + visit.duration_s, seq, uri, visit, 0))
        return self.log

    def _fetch(self, uri: str, start: float) -> Visit:
        page = self.pages[uri]
        version = page.version_at(start)
        etag, lastmod = page.validators(version)
        headers_at = start + page.host.latency_s
        if self.policy.unchanged_by_headers(uri, etag, lastmod, headers_at):
            self.log.append(Fetch(uri, page.host.name, start, headers_at, version, False, 0, None))
            return Visit(200, page.content_type, 0, page.host.latency_s, etag, lastmod, None, downloaded=False)
        duration = page.host.latency_s + page.size / page.host.bandwidth
        digest = stripped_digest(page.body(version, start), self.settings.strip)
        self.log.append(Fetch(uri, page.host.name, start, start + duration, version, True, page.size, digest))
        return Visit(200, page.content_type, page.size, duration, etag, lastmod, digest)


@dataclass
class Score:
    versions: int = 0  # versions that lived >= 1 h
    captured: int = 0
    freshness: float = 0.0
    visits: int = 0
    full: int = 0
    header_only: int = 0
    wasted: int = 0
    bytes_downloaded: int = 0
    bytes_stored: int = 0
    politeness_violations: int = 0
    budget_violations: int = 0
    header_misses: int = 0
    #: per class of page (:func:`page_class`): [pages, versions >= 1 h, captured, visits, fresh s, life s]
    by_class: dict[str, list[float]] = field(default_factory=dict)

    @property
    def capture_share(self) -> float:
        return self.captured / self.versions if self.versions else 0.0


def page_class(page: Page) -> str:
    """The class a page is reported under: its change process, ``image/pdf`` for non-text pages,
    ``+noise`` when it prints a clock the strip regex removes, ``+liar`` on a host whose validators lie."""
    name = page.kind if page.content_type.startswith("text/") else f"{page.kind} image/pdf"
    if page.noise:
        name += " +noise"
    if page.host.validators == "liar":
        name += " +liar"
    return name


def score(
    pages: list[Page], log: list[Fetch], days: float, budget_per_s: float, politeness: Politeness | None = None
) -> Score:
    """Score a fetch log against the web's truth (see the module docstring)."""
    politeness = politeness or Politeness()
    end = days * DAY
    out = Score()
    by_uri: dict[str, list[Fetch]] = {}
    by_host: dict[str, list[Fetch]] = {}
    for fetch in log:
        by_uri.setdefault(fetch.uri, []).append(fetch)
        by_host.setdefault(fetch.host, []).append(fetch)
    starts = sorted(f.start for f in log)
    spacing = 1.0 / budget_per_s
    out.budget_violations = sum(1 for a, b in zip(starts, starts[1:], strict=False) if b - a < spacing - 1e-6)
    for fetches in by_host.values():
        fetches.sort(key=lambda f: f.start)
        for a, b in zip(fetches, fetches[1:], strict=False):
            if b.start < a.end + politeness.delay(a.end - a.start) - 1e-6:
                out.politeness_violations += 1
    fresh_time = life_time = 0.0
    for page in pages:
        bounds = [page.born, *page.changes, end]
        life_time += end - page.born
        fresh_before, versions_before, captured_before, visits_before = (
            fresh_time,
            out.versions,
            out.captured,
            out.visits,
        )
        first_capture: dict[int, float] = {}
        header_checked: set[int] = set()
        seen_version: int | None = None
        stored_digest: str | None = None
        for fetch in sorted(by_uri.get(page.uri, []), key=lambda f: f.start):
            out.visits += 1
            if seen_version is not None and fetch.version == seen_version:
                out.wasted += 1
            seen_version = fetch.version if fetch.downloaded else seen_version
            if fetch.downloaded:
                out.full += 1
                out.bytes_downloaded += fetch.size + HEADER_BYTES
                first_capture.setdefault(fetch.version, fetch.start)
                if fetch.digest != stored_digest:
                    out.bytes_stored += fetch.size
                    stored_digest = fetch.digest
                else:
                    out.bytes_stored += REVISIT_RECORD_BYTES
            else:
                out.header_only += 1
                out.bytes_downloaded += HEADER_BYTES
                out.bytes_stored += REVISIT_RECORD_BYTES
                header_checked.add(fetch.version)
        for version in range(len(bounds) - 1):
            lived = bounds[version + 1] - bounds[version]
            if version in first_capture:
                fresh_time += bounds[version + 1] - first_capture[version]
            if lived >= HOUR:
                out.versions += 1
                if version in first_capture:
                    out.captured += 1
                elif version in header_checked:
                    out.header_misses += 1
        cls = out.by_class.setdefault(page_class(page), [0, 0, 0, 0, 0.0, 0.0])
        for i, value in enumerate(
            (
                1,
                out.versions - versions_before,
                out.captured - captured_before,
                out.visits - visits_before,
                fresh_time - fresh_before,
                end - page.born,
            )
        ):
            cls[i] += value
    out.freshness = fresh_time / life_time if life_time else 0.0
    return out


def simulate(
    pages: list[Page],
    settings: RevisitSettings,
    budget_per_s: float,
    days: float,
    make_policy: Callable[[RevisitSettings, float], RevisitPolicy] = RevisitPolicy,
) -> Score:
    """Run one policy over one web and score it."""
    sim = Simulation(pages, settings, budget_per_s, days, make_policy=make_policy)
    return score(pages, sim.run(), days, budget_per_s, sim.politeness)


def oracle_policy(
    pages: list[Page], days: float, kinds: frozenset[str] | None = None
) -> Callable[[RevisitSettings, float], RevisitPolicy]:
    """A diagnostic, not a policy a crawler could run: the adaptive policy told the true mean change rate
    (its changes over its life in this web; static pages 1 / 120 days) of each page whose change process
    is in ``kinds`` (all pages when None) instead of estimating it from its visits; the other pages keep
    the estimate. Everything else (allocation, periodic fits, validator trust) is the adaptive policy's
    own. With ``kinds`` = {static, poisson} the difference to the adaptive policy is the estimation error
    on pages that follow the policy's own model; a bursty page's *mean* rate is a worse guide than its
    estimate conditioned on its last visit, so the all-pages oracle mixes two effects. With ``"period"`` in
    ``kinds`` every periodic page is told its period (the nearest of the policy's candidate periods), not
    its phase, at its first visit: the most that learning the periods of pages without Last-Modified dates
    from changed / unchanged observations could gain."""
    from harvester.revisit.adaptive import AdaptiveStrategy
    from harvester.revisit.periodic import FULL, PERIODS

    end = days * DAY
    true = {
        p.uri: (1 / (120 * DAY) if p.kind == "static" else max(len(p.changes), 0.2) / (end - p.born))
        for p in pages
        if kinds is None or p.kind in kinds
    }
    periods = {}
    if kinds is not None and "period" in kinds:
        for p in pages:
            if p.kind == "periodic" and len(p.changes) > 1:
                mean = (p.changes[-1] - p.changes[0]) / (len(p.changes) - 1)
                periods[p.uri] = float(min(PERIODS, key=lambda candidate: abs(candidate - mean)))

    class Oracle(AdaptiveStrategy):
        def rate(self, state: object, uri: str | None = None) -> float:
            if id(state) not in self.uri_of:
                self.uri_of = {id(s): u for u, s in self.policy.uris.items()}
            uri = self.uri_of[id(state)]
            return true[uri] if uri in true else super().rate(state, uri)  # type: ignore[arg-type]

        def _periodic_wait(self, uri: str, state: Any, observations: list, now: float) -> float | None:
            if uri in periods and state.periodic is None:
                state.periodic = [periods[uri], FULL]  # the period, not the phase: visits narrow it as usual
            return super()._periodic_wait(uri, state, observations, now)

    def make(settings: RevisitSettings, budget_per_s: float) -> RevisitPolicy:
        policy = RevisitPolicy(settings, budget_per_s)
        strategy = Oracle(policy)
        strategy.uri_of = {}
        policy._strategy = strategy  # a diagnostic swaps the estimator, nothing else
        return policy

    return make
