"""Crawl statistics and Heritrix 3's end-of-crawl reports (docs/FORMATS.md, "Reports").

:class:`CrawlStats` is tallied by :class:`harvester.archive.ArchiveMiddleware` as URIs are
disposed of; :func:`write_reports` turns it into Heritrix's files with Heritrix's names and header
lines (``StatisticsTracker``'s reports, so tools and people used to them read ours unchanged):
crawl-report.txt, seeds-report.txt, hosts-report.txt, mimetype-report.txt, responsecode-report.txt,
frontier-summary-report.txt, the per-queue frontier-report.txt and source-report.txt, plus
netharvest's domain-report.json (per domain objects, bytes and
stop reason, the figures a JobResult carries).

Bytes are Heritrix's "content size": status line + headers + body as transferred, so hosts-report
byte counts add up to the ``content-size:`` annotations of crawl.log.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harvester.crawllog import date17
from harvester.dns import DNS_HOST

#: Heritrix's "disregarded" dispositions (``CrawlURI.isDisregarded``): not failures, choices.
DISREGARD_CODES = frozenset({-9998, -5000, -5001, -5002, -5003, -5004, -6000, -4001, -4002})
ROBOTS_PRECLUDED = -9998

NOVEL, DUPLICATE, NOT_MODIFIED = "novel", "duplicate", "not-modified"


@dataclass(slots=True)
class Tally:
    """Counts for one host, one domain, or the whole crawl."""

    urls: int = 0  # fetched (status > 0), revisits included
    bytes: int = 0  # content size of those fetches
    payload_bytes: int = 0  # bodies only
    successes: int = 0  # 2xx and 3xx
    novel_urls: int = 0
    novel_bytes: int = 0
    dup_urls: int = 0  # duplicate by payload digest
    dup_bytes: int = 0
    not_modified_urls: int = 0
    not_modified_bytes: int = 0
    robots: int = 0  # -9998
    failed: int = 0  # negative codes that are failures
    disregarded: int = 0  # negative codes that are choices (scope, quota, robots…)
    statuses: Counter = field(default_factory=Counter)
    mimes: dict[str, list[int]] = field(default_factory=dict)  # mime -> [urls, bytes]

    def add_fetch(self, status: int, mime: str, content_size: int, payload: int, kind: str) -> None:
        self.urls += 1
        self.bytes += content_size
        self.payload_bytes += payload
        if 200 <= status < 400:
            self.successes += 1
        self.statuses[status] += 1
        slot = self.mimes.get(mime)
        if slot is None:
            self.mimes[mime] = [1, content_size]
        else:
            slot[0] += 1
            slot[1] += content_size
        if kind == DUPLICATE:
            self.dup_urls += 1
            self.dup_bytes += content_size
        elif kind == NOT_MODIFIED:
            self.not_modified_urls += 1
            self.not_modified_bytes += content_size
        else:
            self.novel_urls += 1
            self.novel_bytes += content_size

    def add_unfetched(self, status: int) -> None:
        self.statuses[status] += 1
        if status == ROBOTS_PRECLUDED:
            self.robots += 1
        if status in DISREGARD_CODES:
            self.disregarded += 1
        else:
            self.failed += 1

    @property
    def revisits(self) -> int:
        return self.dup_urls + self.not_modified_urls

    def snapshot(self) -> dict[str, Any]:
        """A JSON-able copy (what :meth:`ArchiveMiddleware.stats_for` returns)."""
        return {
            "objects": self.urls,
            "bytes": self.bytes,
            "payload_bytes": self.payload_bytes,
            "successes": self.successes,
            "novel_urls": self.novel_urls,
            "novel_bytes": self.novel_bytes,
            "dup_urls": self.dup_urls,
            "dup_bytes": self.dup_bytes,
            "not_modified_urls": self.not_modified_urls,
            "not_modified_bytes": self.not_modified_bytes,
            "revisits": self.revisits,
            "bytes_saved": self.dup_bytes + self.not_modified_bytes,
            "robots": self.robots,
            "failed": self.failed,
            "disregarded": self.disregarded,
            "status_codes": {str(k): v for k, v in sorted(self.statuses.items())},
            "mime_types": {k: {"urls": v[0], "bytes": v[1]} for k, v in sorted(self.mimes.items())},
        }


@dataclass
class SeedRecord:
    status: int = 0
    redirect: str | None = None


@dataclass
class CrawlStats:
    """Everything the reports need, tallied once per disposed URI."""

    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    ended: datetime | None = None
    total: Tally = field(default_factory=Tally)
    hosts: dict[str, Tally] = field(default_factory=dict)
    domains: dict[str, Tally] = field(default_factory=dict)
    seeds: dict[str, SeedRecord] = field(default_factory=dict)

    def _pair(self, host: str, domain: str | None) -> tuple[Tally, ...]:
        """The host's and the domain's tallies (no domain: a ``dns:`` prerequisite, host only)."""
        h = self.hosts.get(host)
        if h is None:
            h = self.hosts[host] = Tally()
        if domain is None:
            return (h,)
        d = self.domains.get(domain)
        if d is None:
            d = self.domains[domain] = Tally()
        return h, d

    def add_seed(self, url: str) -> None:
        self.seeds.setdefault(url, SeedRecord())

    def record_fetch(
        self,
        *,
        host: str,
        domain: str | None,
        status: int,
        mime: str,
        content_size: int,
        payload: int,
        kind: str = NOVEL,
        seed: str | None = None,
        redirect: str | None = None,
    ) -> None:
        for tally in (self.total, *self._pair(host, domain)):
            tally.add_fetch(status, mime, content_size, payload, kind)
        if seed is not None:
            self.seeds[seed] = SeedRecord(status, redirect if 300 <= status < 400 else None)

    def record_unfetched(self, *, host: str, domain: str | None, status: int, seed: str | None = None) -> None:
        for tally in (self.total, *self._pair(host, domain)):
            tally.add_unfetched(status)
        if seed is not None:
            self.seeds[seed] = SeedRecord(status)

    @property
    def processed(self) -> int:
        return self.total.urls + self.total.failed + self.total.disregarded

    # -- persistence: journalled with the frontier, so a resumed job's reports cover all of it ---
    def to_state(self) -> dict[str, Any]:
        return {
            "started": self.started.isoformat(),
            "total": _tally_state(self.total),
            "hosts": {k: _tally_state(v) for k, v in self.hosts.items()},
            "domains": {k: _tally_state(v) for k, v in self.domains.items()},
            "seeds": {k: [v.status, v.redirect] for k, v in self.seeds.items()},
        }

    @classmethod
    def from_state(cls, data: Mapping[str, Any]) -> CrawlStats:
        stats = cls(started=datetime.fromisoformat(data["started"]), total=_tally_from(data["total"]))
        stats.hosts = {k: _tally_from(v) for k, v in data.get("hosts", {}).items()}
        stats.domains = {k: _tally_from(v) for k, v in data.get("domains", {}).items()}
        stats.seeds = {k: SeedRecord(int(v[0]), v[1]) for k, v in data.get("seeds", {}).items()}
        return stats


def _tally_state(t: Tally) -> dict[str, Any]:
    state = {f: getattr(t, f) for f in Tally.__dataclass_fields__ if f not in ("statuses", "mimes")}
    state["statuses"] = {str(k): v for k, v in t.statuses.items()}
    state["mimes"] = {k: list(v) for k, v in t.mimes.items()}
    return state


def _tally_from(data: Mapping[str, Any]) -> Tally:
    t = Tally(**{k: int(v) for k, v in data.items() if k not in ("statuses", "mimes")})
    t.statuses = Counter({int(k): int(v) for k, v in data.get("statuses", {}).items()})
    t.mimes = {k: [int(v[0]), int(v[1])] for k, v in data.get("mimes", {}).items()}
    return t


# -- Heritrix's number formats -----------------------------------------------------------------
def format_bytes(amount: int) -> str:
    """Heritrix 3 ``ArchiveUtils.formatBytesForDisplay``: ``7.2 KiB``, ``150 KiB``, ``0 B``."""
    if amount <= 0:
        return "0 B"
    value = float(amount)
    power = 0
    while value >= 1024 and power < 4:
        value /= 1024
        power += 1
    unit = (" B", " KiB", " MiB", " GiB", " TiB")[power]
    digits = 1 if value < 10 else 0
    return f"{value:,.{digits}f}{unit}"


def format_duration(ms: int) -> str:
    """Heritrix ``ArchiveUtils.formatMillisecondsToConventional``: ``1h33m38s651ms``, ``41s968ms``."""
    ms = max(0, int(ms))
    parts = []
    for size, unit in ((86_400_000, "d"), (3_600_000, "h"), (60_000, "m"), (1000, "s")):
        if ms >= size or parts:
            parts.append(f"{ms // size}{unit}")
            ms %= size
    parts.append(f"{ms}ms")
    return "".join(parts)


_DURATION_PART = re.compile(r"(\d+)(ms|d|h|m|s)")
_DURATION_MS = {"d": 86_400_000, "h": 3_600_000, "m": 60_000, "s": 1000, "ms": 1}


def parse_duration(text: str) -> int | None:
    """The milliseconds of a :func:`format_duration` text (``45s0ms``, ``1d2h0m0s5ms``: the ``wt:`` and
    ``ov:`` crawl.log annotations of continuous jobs), None if ``text`` is not one."""
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(int(n) * _DURATION_MS[u] for n, u in parts)


# -- the reports -------------------------------------------------------------------------------
#: crawl-report.txt's lines for a continuous job's revisit figures (issue 12): key → label.
CONTINUOUS_LINES = (
    ("visits", "revisit visits"),
    ("changed", "visits finding a change"),
    ("unchanged", "visits finding no change"),
    ("not_modified", "not-modified (304) visits"),
    ("header_skipped", "downloads skipped by the validators (mid-fetch filter)"),
    ("validator_misses", "validator misses"),
    ("errors", "failed visits"),
)


def crawl_report(
    stats: CrawlStats, *, crawl_name: str, crawl_status: str, continuous: Mapping[str, int] | None = None
) -> str:
    """crawl-report.txt (Heritrix ``CrawlSummaryReport``); a continuous job's revisit figures (``continuous``,
    keys as :data:`CONTINUOUS_LINES`) follow as a block of their own."""
    t = stats.total
    ended = stats.ended or datetime.now(UTC)
    elapsed_ms = int((ended - stats.started).total_seconds() * 1000)
    seeds_crawled = sum(1 for s in stats.seeds.values() if s.status > 0)
    hosts = sum(1 for h in stats.hosts.values() if h.urls)
    secs = max(elapsed_ms / 1000, 0.001)
    total_bytes = t.bytes
    lines = [
        f"crawl name: {crawl_name}",
        f"crawl status: {crawl_status}",
        f"duration: {format_duration(elapsed_ms)}",
        "",
        f"seeds crawled: {seeds_crawled}",
        f"seeds uncrawled: {len(stats.seeds) - seeds_crawled}",
        "",
        f"hosts visited: {hosts}",
        "",
        f"URIs processed: {stats.processed}",
        f"URI successes: {t.urls}",
        f"URI failures: {t.failed}",
        f"URI disregards: {t.disregarded}",
        "",
        f"novel URIs: {t.novel_urls}",
    ]
    # The revisit kinds, each reported (its URIs, then its bytes) only where the crawl had any, as Heritrix does.
    revisits = [
        (label, urls, size)
        for label, urls, size in (
            ("duplicate-by-hash", t.dup_urls, t.dup_bytes),
            ("not-modified", t.not_modified_urls, t.not_modified_bytes),
        )
        if urls
    ]
    lines += [f"{label} URIs: {urls}" for label, urls, _ in revisits]
    lines += [
        "",
        f"total crawled bytes: {total_bytes} ({format_bytes(total_bytes)}) ",
        f"novel crawled bytes: {t.novel_bytes} ({format_bytes(t.novel_bytes)})",
    ]
    lines += [f"{label} crawled bytes: {size} ({format_bytes(size)}) " for label, _, size in revisits]
    lines += [
        "",
        f"URIs/sec: {t.urls / secs:,.2f}".rstrip("0").rstrip(".") if t.urls else "URIs/sec: 0",
        f"KB/sec: {int(total_bytes / 1024 / secs)}",
    ]
    if continuous is not None:
        lines.append("")
        lines += [f"{label}: {int(continuous.get(key, 0))}" for key, label in CONTINUOUS_LINES]
    return "\n".join(lines) + "\n"


def seeds_report(stats: CrawlStats) -> str:
    """seeds-report.txt (Heritrix ``SeedsReport``): code, CRAWLED/NOTCRAWLED, seed, redirect."""
    out = ["[code] [status] [seed] [redirect]\n"]
    for uri, rec in sorted(stats.seeds.items(), key=lambda kv: (kv[1].status, kv[0])):
        line = f"{rec.status} {'CRAWLED' if rec.status > 0 else 'NOTCRAWLED'} {uri}"
        if rec.redirect:
            line += f" {rec.redirect}"
        out.append(line + "\n")
    return "".join(out)


def hosts_report(stats: CrawlStats, remaining: Mapping[str, int] | None = None) -> str:
    """hosts-report.txt (Heritrix ``HostsReport``); each line ends with a blank, as Heritrix's does."""
    out = [
        "[#urls] [#bytes] [host] [#robots] [#remaining] [#novel-urls] [#novel-bytes] "
        "[#dup-by-hash-urls] [#dup-by-hash-bytes] [#not-modified-urls] [#not-modified-bytes]\n"
    ]
    remaining = remaining or {}
    for host, t in sorted(stats.hosts.items(), key=lambda kv: (-kv[1].urls, kv[0])):
        fields = (
            t.urls,
            t.bytes,
            host,
            t.robots,
            remaining.get(host, 0),
            t.novel_urls,
            t.novel_bytes,
            t.dup_urls,
            t.dup_bytes,
            t.not_modified_urls,
            t.not_modified_bytes,
        )
        out.append("".join(f"{f} " for f in fields) + "\n")
    return "".join(out)


def mime_figures(stats: CrawlStats) -> dict[str, list[int]]:
    """MIME type → ``[URIs, bytes]`` of the job's fetches: mimetype-report.txt as data (JobResult.figures)."""
    return {mime: [n, size] for mime, (n, size) in stats.total.mimes.items()}


def status_figures(stats: CrawlStats) -> dict[str, int]:
    """Fetched URIs by status, positive codes only: responsecode-report.txt as data (JobResult.figures)."""
    return {str(code): n for code, n in stats.total.statuses.items() if code > 0}


def mimetype_report(stats: CrawlStats) -> str:
    """mimetype-report.txt (Heritrix ``MimetypesReport``)."""
    out = ["[#urls] [#bytes] [mime-types]\n"]
    for mime, (n, size) in sorted(mime_figures(stats).items(), key=lambda kv: (-kv[1][0], kv[0])):
        out.append(f"{n} {size} {mime}\n")
    return "".join(out)


def responsecode_report(stats: CrawlStats) -> str:
    """responsecode-report.txt (Heritrix ``ResponseCodeReport``): fetched URIs by status."""
    out = ["[#urls] [rescode]\n"]
    codes = [(n, int(code)) for code, n in status_figures(stats).items()]
    for n, code in sorted(codes, key=lambda x: (-x[0], x[1])):
        out.append(f"{n} {code}\n")
    return "".join(out)


def frontier_summary_report(
    summary: str | Mapping[str, Any] | None,
    *,
    job_name: str,
    stats: CrawlStats | None = None,
    when: datetime | None = None,
) -> str:
    """frontier-summary-report.txt. The crawl engine owns the frontier, so it supplies either the
    finished text or the numbers (keys as below); missing numbers come from our own tallies."""
    if isinstance(summary, str):
        return summary if summary.endswith("\n") else summary + "\n"
    s = dict(summary or {})
    t = stats.total if stats else Tally()
    finished = s.get("finished", (t.urls + t.failed + t.disregarded))
    n = {
        "discovered": s.get("discovered", finished + s.get("queued", 0)),
        "queued": s.get("queued", 0),
        "finished": finished,
        "succeeded": s.get("succeeded", t.urls),
        "failed": s.get("failed", t.failed),
        "disregarded": s.get("disregarded", t.disregarded),
    }
    queues = {
        k: s.get(k, 0)
        for k in ("all_queues", "active", "in_process", "ready", "snoozed", "inactive", "retired", "exhausted")
    }
    stamp = (when or datetime.now(UTC)).strftime("%Y%m%d%H%M")
    return (
        f"Frontier report - {stamp}\n"
        f" Job being crawled: {job_name}\n"
        "\n -----===== STATS =====-----\n"
        f" Discovered:    {n['discovered']}\n"
        f" Queued:        {n['queued']}\n"
        f" Finished:      {n['finished']}\n"
        f"  Successfully: {n['succeeded']}\n"
        f"  Failed:       {n['failed']}\n"
        f"  Disregarded:  {n['disregarded']}\n"
        "\n -----===== QUEUES =====-----\n"
        f" Already included size:     {s.get('already_included', n['discovered'])}\n"
        f"               pending:     {s.get('pending', 0)}\n"
        f"\n All class queues map size: {queues['all_queues']}\n"
        f"             Active queues: {queues['active']}\n"
        f"                    In-process: {queues['in_process']}\n"
        f"                         Ready: {queues['ready']}\n"
        f"                       Snoozed: {queues['snoozed']}\n"
        f"           Inactive queues: {queues['inactive']}\n"
        f"            Retired queues: {queues['retired']}\n"
        f"          Exhausted queues: {queues['exhausted']}\n"
        f"\n             Last state: {s.get('last_state', 'FINISH')}\n"
    )


#: Heritrix 3's per-queue sections (its frontier report template), in its order; netharvest adds the
#: exhausted queues so a finished crawl still shows each queue's totals.
QUEUE_SECTIONS = (
    ("in-process", "IN-PROCESS"),
    ("ready", "READY"),
    ("snoozed", "SNOOZED"),
    ("inactive", "INACTIVE"),
    ("retired", "RETIRED"),
    ("exhausted", "EXHAUSTED"),
)
QUEUE_LEGEND = (
    "queue precedence currentSize totalEnqueues sessionBalance lastCost (averageCost) "
    "lastDequeueTime wakeTime totalSpend/totalBudget errorCount lastPeekUri lastQueueUri"
)
#: Every queue has Heritrix's default precedence (BaseQueuePrecedencePolicy) and no budget (-1).
QUEUE_PRECEDENCE, QUEUE_BUDGET = 3, -1


def frontier_report(queues: Iterable[Mapping[str, Any]] | None) -> str:
    """frontier-report.txt: one line per queue in Heritrix 3's layout, grouped by state. ``queues``
    come from the engine (``Frontier.queue_report``). Heritrix writes only ``frontier empty`` once
    nothing is queued; so do we, then the exhausted queues' section."""
    rows = list(queues or ())
    nonempty = any(r["state"] != "exhausted" for r in rows)
    out = [] if nonempty else ["frontier empty\n"]
    for state, title in QUEUE_SECTIONS:
        if nonempty or state == "exhausted":
            out.append(f"\n -----===== {title} QUEUES =====-----\n{QUEUE_LEGEND}\n")
            out.extend(
                _queue_line(r) for r in sorted((r for r in rows if r["state"] == state), key=lambda r: r["queue"])
            )
    return "".join(out)


def _queue_line(r: Mapping[str, Any]) -> str:
    spent = int(r.get("spent", 0))
    cost = 1 if spent else 0  # Heritrix's default UnitCostAssignmentPolicy
    dequeued = r.get("last_dequeue")
    wake = r.get("wake_in_s")
    return (
        f"{r['queue']} {QUEUE_PRECEDENCE} {r.get('size', 0)} {r.get('enqueues', 0)} - {cost} ({cost}) "
        f"{date17(datetime.fromtimestamp(dequeued, UTC)) if dequeued else '-'} "
        f"{format_duration(int(wake * 1000)) if wake is not None else '-'} "
        f"{spent} {QUEUE_BUDGET} {r.get('errors', 0)} {r.get('last_peeked') or '-'} "
        f"{r.get('last_queued') or '-'}\n"
    )


def source_report(crawl_log: str | Path | None) -> str:
    """source-report.txt (Heritrix ``SourceTagsReport``): per source tag (the seed, when the template
    tags seeds), the hosts of its successfully processed URIs (status > 0) by count, most first.
    Read from crawl.log, whose source field is the record of it (resumed runs included)."""
    counts: dict[str, Counter[str]] = {}
    if crawl_log is not None and Path(crawl_log).exists():
        with open(crawl_log, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                f = line.split()
                if len(f) < 12 or f[10] == "-" or not f[1].lstrip("-").isdigit() or int(f[1]) <= 0:
                    continue
                host = DNS_HOST if f[3].startswith("dns:") else (urlsplit(f[3]).hostname or "")
                counts.setdefault(f[10], Counter())[host] += 1
    out = ["[source] [host] [#urls]\n"]
    for source in sorted(counts):
        for host, n in sorted(counts[source].items(), key=lambda x: (-x[1], x[0])):
            out.append(f"{source} {host} {n}\n")
    return "".join(out)


def domain_report(
    stats: CrawlStats, stop_reasons: Mapping[str, str] | None, domains: Iterable[str] = ()
) -> dict[str, Any]:
    """domain-report.json: per domain objects, bytes, stop reason (reasons come from the engine)."""
    stop_reasons = stop_reasons or {}
    names = sorted(set(domains) | set(stats.domains) | set(stop_reasons))
    out: dict[str, Any] = {}
    for name in names:
        t = stats.domains.get(name) or Tally()
        entry = t.snapshot()
        entry["stop_reason"] = stop_reasons.get(name, "DOWNLOAD_COMPLETE")
        out[name] = entry
    return {"domains": out}


REPORT_NAMES = (
    "crawl-report.txt",
    "seeds-report.txt",
    "hosts-report.txt",
    "mimetype-report.txt",
    "responsecode-report.txt",
    "frontier-summary-report.txt",
    "frontier-report.txt",
    "source-report.txt",
    "domain-report.json",
)


def write_reports(
    directory: str | Path,
    stats: CrawlStats,
    *,
    crawl_name: str,
    crawl_status: str = "Finished",
    frontier_summary: str | Mapping[str, Any] | None = None,
    stop_reasons: Mapping[str, str] | None = None,
    domains: Iterable[str] = (),
    remaining: Mapping[str, int] | None = None,
    crawl_log: str | Path | None = None,
    notes: Iterable[str] = (),
) -> list[Path]:
    """Write all reports into ``directory`` (each via a temporary name, then renamed); ``notes`` (e.g. a
    dedup service outage) end crawl-report.txt."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    contents = {
        "crawl-report.txt": crawl_report(
            stats,
            crawl_name=crawl_name,
            crawl_status=crawl_status,
            continuous=frontier_summary.get("continuous") if isinstance(frontier_summary, Mapping) else None,
        )
        + "".join(f"{line}\n" for line in notes),
        "seeds-report.txt": seeds_report(stats),
        "hosts-report.txt": hosts_report(stats, remaining),
        "mimetype-report.txt": mimetype_report(stats),
        "responsecode-report.txt": responsecode_report(stats),
        "frontier-summary-report.txt": frontier_summary_report(frontier_summary, job_name=crawl_name, stats=stats),
        "frontier-report.txt": frontier_report(
            frontier_summary.get("queue_report") if isinstance(frontier_summary, Mapping) else None
        ),
        "source-report.txt": source_report(crawl_log),
        "domain-report.json": json.dumps(domain_report(stats, stop_reasons, domains), indent=2, sort_keys=True) + "\n",
    }
    paths = []
    for name in REPORT_NAMES:
        path = directory / name
        tmp = path.with_name(name + ".tmp")
        tmp.write_text(contents[name], encoding="utf-8", newline="\n")
        tmp.replace(path)
        paths.append(path)
    return paths
