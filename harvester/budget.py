"""Per-domain budgets (max objects, max bytes) and the stop reason each domain ends with.

NetarchiveSuite gives every domain configuration of a job a budget, enforced by Heritrix's quota
enforcer as ``groupMaxFetchSuccesses`` / ``groupMaxAllKb``: once a domain has used it up, its
remaining URIs are let go with ``-5003`` (``Q:…`` annotation) and the domain's stop reason says why.
Charges come from what was really archived (``harvester.crawlsignals.uri_archived``), so objects and
bytes in the JobResult match the WARCs. Objects are reserved when a URI is *issued*, so parallel
fetches cannot overshoot the object limit (a URI that would fit only if one in flight fails waits
for them). Prerequisites (robots.txt, ``P``) are charged but never refused: a host must be allowed
to tell its rules.

Stop reasons (ARCHITECTURE.md, "Formats"): ``OBJECT_LIMIT`` / ``SIZE_LIMIT`` when that budget was
reached; else ``TIME_LIMIT`` when the job's time limit stopped the crawl with the domain's URIs
still queued; else ``DOWNLOAD_UNFINISHED`` when the job stopped otherwise (operator, shutdown,
crash) with URIs queued, or when the crawl could not read some of the domain's documents (a 304
nobody asked for, :func:`harvester.revisit.hides_links`: their links were never followed, so the
domain's crawl is not known to be complete); else ``DOWNLOAD_COMPLETE``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from harvester.contracts import DomainResult, DomainSpec

QUOTA_OBJECTS_ANNOTATION = "Q:groupMaxFetchSuccesses"
QUOTA_BYTES_ANNOTATION = "Q:groupMaxAllKb"
#: try_issue's answer when only URIs still in flight fill the object budget.
WAIT = "WAIT"


@dataclass
class DomainBudget:
    name: str
    configuration: str
    max_objects: int = -1
    max_bytes: int = -1
    objects: int = 0
    bytes: int = 0
    reserved: int = 0
    limit: str = ""  # "OBJECT_LIMIT" | "SIZE_LIMIT" once reached
    unseen: int = 0  # documents archived without a body to read links from (a 304 not asked for)

    def exhausted(self) -> str:
        """The limit reached by what was archived, or ""."""
        if self.limit:
            return self.limit
        if self.max_objects >= 0 and self.objects >= self.max_objects:
            return "OBJECT_LIMIT"
        if self.max_bytes >= 0 and self.bytes >= self.max_bytes:
            return "SIZE_LIMIT"
        return ""


class Budgets:
    """The job's budgets, one per JobSpec domain (plus an unlimited catch-all for strays)."""

    def __init__(self, domains: tuple[DomainSpec, ...] | list[DomainSpec]) -> None:
        self.domains: dict[str, DomainBudget] = {}
        for d in domains:  # a domain listed twice keeps its first configuration (CrawlJob.domain_results)
            self.domains.setdefault(d.name, DomainBudget(d.name, d.configuration, d.max_objects, d.max_bytes))

    def get(self, domain: str) -> DomainBudget:
        b = self.domains.get(domain)
        if b is None:
            b = self.domains[domain] = DomainBudget(domain, "", -1, -1)
        return b

    def try_issue(self, domain: str, prerequisite: bool = False) -> str:
        """Reserve one object for a URI about to be fetched. Returns "" (go), :data:`WAIT` (URIs in
        flight may fill the budget: ask again when they are done), or the limit reached."""
        b = self.get(domain)
        if not prerequisite:
            reached = b.exhausted()
            if reached:
                b.limit = reached
                return reached
            if b.max_objects >= 0 and b.objects + b.reserved >= b.max_objects:
                return WAIT
        b.reserved += 1
        return ""

    def release(self, domain: str) -> None:
        """An issued URI ended without being archived (failure, retry): give its object back."""
        b = self.get(domain)
        b.reserved = max(b.reserved - 1, 0)

    def charge(self, domain: str, size: int) -> None:
        """An issued URI was archived: count it and its bytes."""
        b = self.get(domain)
        b.reserved = max(b.reserved - 1, 0)
        b.objects += 1
        b.bytes += max(size, 0)
        if b.max_bytes >= 0 and b.bytes >= b.max_bytes and not b.limit:
            b.limit = "SIZE_LIMIT"
        elif b.max_objects >= 0 and b.objects >= b.max_objects and not b.limit:
            b.limit = "OBJECT_LIMIT"

    def links_unseen(self, domain: str) -> None:
        """A document of ``domain`` came without a body to read: its links were not followed."""
        self.get(domain).unseen += 1

    def annotation(self, reason: str) -> str:
        return QUOTA_BYTES_ANNOTATION if reason == "SIZE_LIMIT" else QUOTA_OBJECTS_ANNOTATION

    def stop_reason(self, domain: str, remaining: int, ended_by: str) -> str:
        """``ended_by``: "finished", "time_limit", or anything else for an early stop."""
        b = self.get(domain)
        if b.limit:
            return b.limit
        if remaining > 0:
            return "TIME_LIMIT" if ended_by == "time_limit" else "DOWNLOAD_UNFINISHED"
        return "DOWNLOAD_UNFINISHED" if b.unseen else "DOWNLOAD_COMPLETE"

    def results(self, remaining: dict[str, int], ended_by: str, only: list[str] | None = None) -> list[DomainResult]:
        names = only if only is not None else list(self.domains)
        return [
            DomainResult(
                name=n,
                configuration=self.get(n).configuration,
                objects=self.get(n).objects,
                bytes=self.get(n).bytes,
                stop_reason=self.stop_reason(n, remaining.get(n, 0), ended_by),
            )
            for n in names
        ]

    # -- persistence (through the frontier's key/value state) --------------------------------
    def snapshot(self) -> dict[str, Any]:
        return {
            n: {k: v for k, v in asdict(b).items() if k in ("objects", "bytes", "limit", "unseen")}
            for n, b in self.domains.items()
        }

    def restore(self, data: dict[str, Any]) -> None:
        for name, values in (data or {}).items():
            b = self.get(name)
            b.objects = int(values.get("objects", 0))
            b.bytes = int(values.get("bytes", 0))
            b.limit = str(values.get("limit", ""))
            b.unseen = int(values.get("unseen", 0))
