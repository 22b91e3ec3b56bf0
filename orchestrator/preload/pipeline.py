"""The preload's four steps over a work directory, resumable after any interruption.

Each step writes its result files, then its ``<step>.json`` summary, atomically (temporary name,
then rename): a step whose summary exists is finished and a re-run skips it. The two long steps
(DNS, redirects) also append every result to ``<step>.partial`` as it comes, and the load step
records each committed batch in ``load.partial``, so an interrupted step resumes where it stopped
instead of starting over.

    workdir/params.json          the sources, so a re-run with other sources is refused
    workdir/domains.tsv          domain <TAB> source bit mask (bit 0 = the database), sorted
    workdir/urls.tsv             domain <TAB> seed URL from the sources
    workdir/rejected.txt         FILE:LINE: reason, every invalid line
    workdir/ingest.json          per-source counts
    workdir/dns.tsv              domain <TAB> ok|failed|error <TAB> address <TAB> reason
    workdir/redirects.tsv        domain <TAB> probed URL <TAB> status <TAB> Location <TAB> new domain
    workdir/redirect_domains.tsv new domain <TAB> ok|failed|error <TAB> target URL <TAB> found on
    workdir/load.json            what the load changed
    workdir/stats.json, stats.txt  everything above, for the record
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, as_completed, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from django.db import connection

from harvester.hosts import is_ip
from orchestrator.harvest.curation.domains import default_template
from orchestrator.harvest.models import CrawlTemplate
from orchestrator.preload import load as loader
from orchestrator.preload.ingest import REDIRECT, InputError, SourceStats, ingest
from orchestrator.preload.redirects import ProbeConfig, probe_all
from orchestrator.preload.resolver import ERROR, FAILED, OK, WWW_ONLY, Answer, Resolver, ResolverConfig, check_all

STEPS = ("ingest", "dns", "redirects", "load")


@dataclass
class Options:
    workdir: Path
    sources: list[tuple[str, Path]]
    resolver: ResolverConfig = field(default_factory=ResolverConfig)
    probe: ProbeConfig = field(default_factory=ProbeConfig)
    skip_invalid: bool = False
    skip_redirects: bool = False
    stop_after: str | None = None
    batch_size: int = 20000
    parallel: int = 2
    progress_every: float = 2.0
    show_errors: int = 50


class ProgressLine:
    """A line to the operator at most every ``every`` seconds, with the rate and what is left."""

    def __init__(self, write: Callable[[str], None], every: float = 2.0) -> None:
        self.write, self.every = write, every
        self._last = 0.0

    def start(self, step: str, total: int) -> None:
        self.step, self.total, self.started, self._last = step, total, time.monotonic(), time.monotonic()

    def tick(self, done: int, extra: str = "", force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < self.every:
            return
        self._last = now
        elapsed = max(now - self.started, 1e-9)
        rate = done / elapsed
        left = f", {(self.total - done) / rate:,.0f} s left" if rate and self.total > done else ""
        pct = f" ({100 * done / self.total:.1f} %)" if self.total else ""
        self.write(f"{self.step}: {done:,}/{self.total:,}{pct}, {rate:,.0f}/s{left}{extra}")


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _tsv(path: Path) -> Iterator[list[str]]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.endswith("\n"):
                yield line[:-1].split("\t")


def _resume_partial(path: Path) -> list[list[str]]:
    """The complete lines of an interrupted step's log; a half-written last line is cut off."""
    if not path.exists():
        return []
    data = path.read_bytes()
    complete = data[: data.rfind(b"\n") + 1]
    if len(complete) != len(data):
        with path.open("r+b") as f:
            f.truncate(len(complete))
    return [line.split("\t") for line in complete.decode("utf-8").splitlines()]


class Preload:
    def __init__(self, options: Options, out: Callable[[str], None], err: Callable[[str], None]) -> None:
        self.o, self.out, self.err = options, out, err
        self.dir = options.workdir
        self.progress = ProgressLine(err, options.progress_every)

    # -- driver ------------------------------------------------------------------------------------
    def run(self) -> dict | None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self._check_params()
        for step in STEPS:
            summary = self.dir / f"{step}.json"
            if summary.exists():
                self.err(f"{step}: finished in an earlier run ({summary}), skipped")
            elif step == "redirects" and self.o.skip_redirects:
                _write_atomic(summary, json.dumps({"skipped": True}))
                self.err("redirects: skipped (--skip-redirects)")
            else:
                started = time.monotonic()
                getattr(self, f"step_{step}")()
                self.err(f"{step}: done in {time.monotonic() - started:,.1f} s")
            if step == self.o.stop_after:
                self.err(f"stopping after {step} as asked; run the same command again to go on")
                return None
        stats = self.statistics()
        _write_atomic(self.dir / "stats.json", json.dumps(stats, indent=2))
        text = render(stats)
        _write_atomic(self.dir / "stats.txt", text)
        self.out(text)
        return stats

    def _check_params(self) -> None:
        params = {"sources": [[name, str(path.resolve())] for name, path in self.o.sources]}
        path = self.dir / "params.json"
        if path.exists():
            before = _read_json(path)
            if before["sources"] != params["sources"]:
                was = ", ".join(f"{n}={p}" for n, p in before["sources"])
                raise ValueError(
                    f"{self.dir} holds a preload of other sources ({was}); give the same sources "
                    "to resume it, another --workdir/--name, or --restart to start over"
                )
        else:
            params["started"] = datetime.now(UTC).isoformat(timespec="seconds")
            _write_atomic(path, json.dumps(params, indent=2))

    # -- step 1 --------------------------------------------------------------------------------------
    def step_ingest(self) -> None:
        self.err("ingest: reading the database's domains and " + ", ".join(f"{n}={p}" for n, p in self.o.sources))
        result = ingest(self.o.sources, loader.existing_domain_names(), self.err)
        if result.errors:
            _write_atomic(self.dir / "rejected.txt", "\n".join(result.errors) + "\n")
            for line in result.errors[: self.o.show_errors]:
                self.err(line)
            more = len(result.errors) - self.o.show_errors
            if more > 0:
                self.err(f"… {more:,} more invalid lines, all in {self.dir / 'rejected.txt'}")
            if not self.o.skip_invalid:
                raise InputError(result.errors, len(result.errors))
        with (self.dir / "domains.tsv.tmp").open("w", encoding="utf-8") as f:
            for name in sorted(result.domains):
                f.write(f"{name}\t{result.domains[name]}\n")
        os.replace(self.dir / "domains.tsv.tmp", self.dir / "domains.tsv")
        with (self.dir / "urls.tsv.tmp").open("w", encoding="utf-8") as f:
            for name in sorted(result.urls):
                for url in sorted(result.urls[name]):
                    f.write(f"{name}\t{url}\n")
        os.replace(self.dir / "urls.tsv.tmp", self.dir / "urls.tsv")
        summary = {
            "sources": [s.as_dict() for s in result.sources],
            "unique_domains": len(result.domains),
            "unique_urls": sum(len(u) for u in result.urls.values()),
            "invalid_lines": len(result.errors),
        }
        _write_atomic(self.dir / "ingest.json", json.dumps(summary, indent=2))
        self.err(
            f"ingest: {len(result.domains):,} unique domains, {summary['unique_urls']:,} URLs, "
            f"{len(result.errors):,} invalid lines"
        )

    def domains(self) -> Iterator[tuple[str, int]]:
        for name, mask in _tsv(self.dir / "domains.tsv"):
            yield name, int(mask)

    # -- step 2 --------------------------------------------------------------------------------------
    def step_dns(self) -> None:
        partial = self.dir / "dns.partial"
        done = {row[0] for row in _resume_partial(partial)}
        total = _read_json(self.dir / "ingest.json")["unique_domains"]
        if done:
            self.err(f"dns: resuming, {len(done):,} domains were checked before the interruption")
        todo = (name for name, _ in self.domains() if name not in done)
        self.progress.start("dns", total)
        counts = {OK: 0, FAILED: 0, ERROR: 0}
        started = time.monotonic()
        queries = 0

        async def run() -> None:
            nonlocal queries
            with partial.open("a", encoding="utf-8") as log:
                async with Resolver(self.o.resolver) as resolver:
                    async for name, answer in check_all(resolver, _literal_ips_first(todo, log, counts)):
                        counts[answer.status] += 1
                        log.write(f"{name}\t{answer.status}\t{answer.address}\t{answer.reason}\n")
                        self.progress.tick(
                            len(done) + sum(counts.values()), f" — {counts[FAILED]:,} failed, {counts[ERROR]:,} errors"
                        )
                    queries = resolver.queries

        asyncio.run(run())
        elapsed = time.monotonic() - started
        checked = sum(counts.values())
        os.replace(partial, self.dir / "dns.tsv")
        summary = {
            "checked_this_run": checked,
            "resumed_from": len(done),
            "queries": queries,
            "seconds": round(elapsed, 1),
            "domains_per_s": round(checked / elapsed, 1) if elapsed else None,
            "queries_per_s": round(queries / elapsed, 1) if elapsed else None,
            "concurrency": self.o.resolver.concurrency,
            "timeout_s": self.o.resolver.timeout,
            "nameservers": [f"{h}:{p}" for h, p in self.o.resolver.nameservers],
        }
        _write_atomic(self.dir / "dns.json", json.dumps(summary, indent=2))

    def dns_results(self) -> Iterator[tuple[str, str, str]]:
        for row in _tsv(self.dir / "dns.tsv"):
            yield row[0], row[1], row[2]

    # -- step 3 --------------------------------------------------------------------------------------
    def step_redirects(self) -> None:
        partial = self.dir / "redirects.partial"
        rows = _resume_partial(partial)
        done = {row[0] for row in rows}
        known = {name for name, _ in self.domains()}
        # http://D/ is probed only where D itself has an address; http://www.D/ always.
        live = [(row[0], "" if row[3] == WWW_ONLY else row[2]) for row in _tsv(self.dir / "dns.tsv") if row[1] == OK]
        if done:
            self.err(f"redirects: resuming, {len(done):,} domains were probed before the interruption")
        found: dict[str, tuple[str, str]] = {}  # new domain → (target URL, found on)
        for row in rows:
            if row[4] and row[4] not in known and row[4] not in found:
                found[row[4]] = (_target(row[1], row[3]), row[0])
        self.progress.start("redirects", len(live))
        requests = redirects = 0
        started = time.monotonic()

        async def run() -> None:
            nonlocal requests, redirects
            with partial.open("a", encoding="utf-8") as log:
                async with Resolver(self.o.resolver) as resolver:
                    todo = ((n, a) for n, a in live if n not in done)
                    count = len(done)
                    async for name, probes in probe_all(todo, resolver, self.o.probe):
                        count += 1
                        for probe in probes:
                            requests += 1
                            target = probe.target_domain or ""
                            if target:
                                redirects += 1
                                if target not in known and target not in found:
                                    found[target] = (probe.target_url, name)
                            log.write(f"{name}\t{probe.url}\t{probe.status}\t{_clean(probe.location)}\t{target}\n")
                        if not probes:
                            log.write(f"{name}\t\t0\t\t\n")
                        self.progress.tick(count, f" — {len(found):,} new domains")
                    self.err(f"redirects: checking DNS of {len(found):,} new domains")
                    answers: dict[str, Answer] = {}
                    async for name, answer in check_all(resolver, sorted(found)):
                        answers[name] = answer
            with (self.dir / "redirect_domains.tsv.tmp").open("w", encoding="utf-8") as f:
                for name in sorted(found):
                    url, origin = found[name]
                    f.write(f"{name}\t{answers[name].status}\t{url}\t{origin}\n")
            os.replace(self.dir / "redirect_domains.tsv.tmp", self.dir / "redirect_domains.tsv")

        asyncio.run(run())
        os.replace(partial, self.dir / "redirects.tsv")
        new_live = sum(1 for row in _tsv(self.dir / "redirect_domains.tsv") if row[1] != FAILED)
        elapsed = time.monotonic() - started
        summary = {
            "domains_probed": len(live),
            "requests_this_run": requests,
            "redirects_this_run": redirects,
            "new_domains": len(found),
            "new_domains_not_dns_failed": new_live,
            "seconds": round(elapsed, 1),
            "port": self.o.probe.port,
            "timeout_s": self.o.probe.timeout,
        }
        _write_atomic(self.dir / "redirects.json", json.dumps(summary, indent=2))

    # -- step 4 --------------------------------------------------------------------------------------
    def step_load(self) -> None:
        template = default_template()
        note = f"preload {self.dir.name} {datetime.now(UTC):%Y-%m-%d}"
        partial = self.dir / "load.partial"
        finished = {int(row[0]): json.loads(row[1]) for row in _resume_partial(partial)}
        failed = {name for name, status, _ in self.dns_results() if status == FAILED}
        urls: dict[str, list[str]] = {}
        for name, url in _tsv(self.dir / "urls.tsv"):
            urls.setdefault(name, []).append(url)
        redirect_rows = (
            list(_tsv(self.dir / "redirect_domains.tsv")) if (self.dir / "redirect_domains.tsv").exists() else []
        )
        total = _read_json(self.dir / "ingest.json")["unique_domains"] + len(redirect_rows)
        totals = {
            "created": 0,
            "seedlists": 0,
            "excluded": 0,
            "restored": 0,
            "not_created_dns_failed": 0,
            "existing_dns_failed": 0,
        }
        for counts in finished.values():
            for key, value in counts.items():
                totals[key] += value
        if finished:
            self.err(f"load: resuming, {len(finished):,} batches were committed before the interruption")
        self.progress.start("load", total)

        def batches() -> Iterator[list[tuple[str, bool, bool, list[str]]]]:
            """(domain, exists, dns failed, seed URLs) in batches, sources first, then redirects."""
            batch: list[tuple[str, bool, bool, list[str]]] = []
            for name, mask in self.domains():
                batch.append((name, bool(mask & 1), name in failed, urls.get(name, [])))
                if len(batch) >= self.o.batch_size:
                    yield batch
                    batch = []
            if batch:
                yield batch
                batch = []
            for name, status, url, _origin in redirect_rows:
                batch.append((name, False, status == FAILED, [url]))
                if len(batch) >= self.o.batch_size:
                    yield batch
                    batch = []
            if batch:
                yield batch

        parallel = self.o.parallel if connection.vendor == "postgresql" else 1  # SQLite: one writer

        def record(index: int, counts: dict[str, int], log: TextIO) -> None:
            log.write(f"{index}\t{json.dumps(counts)}\n")
            log.flush()
            for key, value in counts.items():
                totals[key] += value

        with partial.open("a", encoding="utf-8") as log:
            todo = ((i, b) for i, b in enumerate(batches()) if i not in finished)
            if parallel == 1:
                for index, batch in todo:
                    record(index, self._load_batch(batch, note, template, False), log)
                    self.progress.tick(index * self.o.batch_size, f" — {totals['created']:,} created")
            else:
                pool = ThreadPoolExecutor(max_workers=parallel)
                pending: dict[Future[dict[str, int]], int] = {}
                try:
                    for index, batch in todo:
                        pending[pool.submit(self._load_batch, batch, note, template, True)] = index
                        while len(pending) >= 2 * parallel:
                            done, _ = wait(pending, return_when=FIRST_COMPLETED)
                            for future in done:
                                record(pending.pop(future), future.result(), log)
                        self.progress.tick(index * self.o.batch_size, f" — {totals['created']:,} created")
                    for future in as_completed(list(pending)):
                        record(pending.pop(future), future.result(), log)
                finally:
                    # On an error, batches not started are dropped; those running finish and are redone
                    # (idempotently) by the next run, since they are not recorded.
                    pool.shutdown(wait=True, cancel_futures=True)
        size = self.o.batch_size
        totals["batches"] = -(-(total - len(redirect_rows)) // size) + -(-len(redirect_rows) // size)
        _write_atomic(self.dir / "load.json", json.dumps(totals, indent=2))
        partial.unlink()

    @staticmethod
    def _load_batch(
        batch: list[tuple[str, bool, bool, list[str]]], note: str, template: CrawlTemplate, own_connection: bool
    ) -> dict[str, int]:
        """One batch in its own transaction (on this thread's own connection when writing in parallel)."""
        try:
            create = [n for n, exists, bad, _ in batch if not exists and not bad]
            seeds = {n: u for n, exists, bad, u in batch if u and not (bad and not exists)}
            excluded = [n for n, exists, bad, _ in batch if exists and bad]
            live_existing = [n for n, exists, bad, _ in batch if exists and not bad]
            counts = loader.write_batch(create, seeds, excluded, note, template, live_existing)
            counts["not_created_dns_failed"] = sum(1 for _, exists, bad, _ in batch if bad and not exists)
            counts["existing_dns_failed"] = len(excluded)
            return counts
        finally:
            if own_connection:
                connection.close()

    # -- statistics ----------------------------------------------------------------------------------
    def statistics(self) -> dict:
        ingest_summary = _read_json(self.dir / "ingest.json")
        sources = [SourceStats(**s) for s in ingest_summary["sources"]]
        dns = {OK: 0, FAILED: 0, ERROR: 0}
        failed_existing = failed_new = 0
        masks = dict(self.domains())
        for name, status, _ in self.dns_results():
            dns[status] += 1
            if status == FAILED:
                if masks[name] & 1:
                    failed_existing += 1
                else:
                    failed_new += 1
        redirect_rows = (
            list(_tsv(self.dir / "redirect_domains.tsv")) if (self.dir / "redirect_domains.tsv").exists() else []
        )
        if redirect_rows:
            n = len(redirect_rows)
            sources.append(SourceStats(REDIRECT, "", n, 0, n, n, n, n))
        return {
            "workdir": str(self.dir),
            "finished": datetime.now(UTC).isoformat(timespec="seconds"),
            "sources": [s.as_dict() for s in sources],
            "unique_domains": ingest_summary["unique_domains"] + len(redirect_rows),
            "unique_urls": ingest_summary["unique_urls"],
            "invalid_lines": ingest_summary["invalid_lines"],
            "dns": {
                **dns,
                "failed_new": failed_new,
                "failed_existing": failed_existing,
                **_read_json(self.dir / "dns.json"),
            },
            "redirects": _read_json(self.dir / "redirects.json"),
            "load": _read_json(self.dir / "load.json"),
        }


def _literal_ips_first(names: Iterator[str], log: object, counts: dict[str, int]) -> Iterator[str]:
    """IP-address "domains" need no lookup: recorded as live at once; names go on to the resolver."""
    for name in names:
        if is_ip(name):
            counts[OK] += 1
            log.write(f"{name}\tok\t{name}\tIP address\n")  # type: ignore[attr-defined]
        else:
            yield name


def _clean(text: str) -> str:
    return text.replace("\t", " ").replace("\n", " ").replace("\r", " ")


def _target(url: str, location: str) -> str:
    from urllib.parse import urljoin

    return urljoin(url, location)


def render(stats: dict) -> str:
    """The statistics as a crawl engineer reads them in a terminal or a report."""
    lines = [
        f"Preload statistics ({stats['workdir']}, {stats['finished']} UTC)",
        "",
        f"{'source':<16}{'lines':>12}{'invalid':>9}{'URLs':>10}{'domains':>12}{'only here':>11}{'new':>11}",
    ]
    for s in stats["sources"]:
        lines.append(
            f"{s['name']:<16}{s['lines']:>12,}{s['invalid']:>9,}{s['urls']:>10,}{s['domains']:>12,}"
            f"{s['only_here']:>11,}{s['new']:>11,}"
        )
    dns, red, load = stats["dns"], stats["redirects"], stats["load"]
    lines += [
        "",
        f"unique domains: {stats['unique_domains']:,}   seed URLs from sources: {stats['unique_urls']:,}"
        f"   invalid lines skipped: {stats['invalid_lines']:,}",
        f"DNS: {dns['ok']:,} live, {dns['failed']:,} failed ({dns['failed_new']:,} new → not created, "
        f"{dns['failed_existing']:,} existing → excluded), {dns['error']:,} errors/timeouts (kept); "
        f"{dns['queries_per_s'] or 0:,.0f} queries/s in the last run",
    ]
    if red.get("skipped"):
        lines.append("redirects: skipped")
    else:
        lines.append(
            f"redirects: {red['domains_probed']:,} live domains probed, {red['new_domains']:,} new domains "
            f"found ({red['new_domains_not_dns_failed']:,} not DNS-failed)"
        )
    lines.append(
        f"load: {load['created']:,} domains created, {load['seedlists']:,} preload seed lists written, "
        f"{load['excluded']:,} existing domains excluded (budget 0), "
        f"{load.get('restored', 0):,} excluded earlier and live again (budget restored), "
        f"{load['not_created_dns_failed']:,} new domains not created (DNS failed)"
    )
    return "\n".join(lines) + "\n"
