"""Every benchmark in benchmarks/ runs here at a tiny size, so none can rot unnoticed.

A benchmark is run only by hand, at full size, when someone wants its figures for docs/BENCHMARKS.md;
two of them (bench_jobgen, bench_webui) had stopped working after a migration and nobody knew. Here each
one runs as the real command (a subprocess, as docs/BENCHMARKS.md says to run it) at a size that takes
seconds, must exit 0, and must have printed its figures: each figure line named in ``TINY`` is found in
its output, and every number it captures is a number above zero. A new ``benchmarks/bench_*.py`` with no
entry in ``TINY`` fails ``test_every_benchmark_has_a_tiny_size``.

Benchmarks that need PostgreSQL make their own databases (benchmarks/fresh_database.py), named after
this run's database so parallel runs do not collide, and this test drops them afterwards. A peer program
the machine lacks (``wget`` for bench_harvest) is skipped by the benchmark, which says so; our side still
runs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import free_port

REPO = Path(__file__).resolve().parents[1]
NUMBER = r"([0-9][0-9,]*(?:\.[0-9]+)?)"  # a figure as the benchmarks print it: 1,234 or 0.05


@dataclass(frozen=True)
class Tiny:
    """How a benchmark runs at a tiny size, and the figure lines it must print (regular expressions,
    searched line by line; ``NUMBER`` groups capture the figures, each must be above zero)."""

    args: Callable[[Path], list[str]]
    figures: list[str]
    database: bool = False  # makes its own PostgreSQL database(s): gets ``--database``
    databases: tuple[str, ...] = ("",)  # suffixes of the databases it makes, to drop afterwards
    needs_redis: bool = False
    env: dict[str, str] = field(default_factory=dict)


def table_row(label: str, columns: int) -> str:
    """A Markdown table row of the benchmark's output: its label, then ``columns`` figures."""
    cells = r" \| ".join([NUMBER + r"(?: ms)?"] * columns)
    return rf"^\| {re.escape(label)} \| {cells} \|"


TINY: dict[str, Tiny] = {
    "bench_api.py": Tiny(
        lambda tmp: ["--jobs", "200", "--running", "20", "--files", "1000", "--repeat", "1"],
        [r"^seeded 200 jobs \(20 running\), 1,000 archive files"]
        + [
            rf"^\| {re.escape(label)} \| {NUMBER} ms \| {NUMBER} ms \| {NUMBER} \|"
            for label in ("metrics scrape", "GET /api/v1/jobs (first page of 100)", "GET /api/v1/jobs/{id} (running)")
        ]
        + [rf"^  {family} +{NUMBER} ms" for family in ("jobs", "running", "chain")],
        database=True,
        needs_redis=True,
    ),
    "bench_broadcrawl.py": Tiny(
        lambda tmp: ["--domains", "300", "--configs-per-job", "50", "--harvesters", "2", "--job-seconds", "1"],
        [
            rf"^measured: 300 domains, {NUMBER} snapshot jobs, 2 stand-in harvesters",
            rf"^  all jobs DONE in {NUMBER} s; 305 HarvestInfo rows \(one per domain configuration: nothing lost\)",
            rf"^  selective job: submitted with \d+ snapshot jobs queued, started after {NUMBER} s",
            rf"^  intake: {NUMBER} events/s; PostgreSQL {NUMBER} transactions/s; Redis {NUMBER} commands/s",
            rf"^  dedup lookups: {NUMBER}/s",
            rf"^  broker commands: {NUMBER}/s",
            rf"^  indexer chain input: {NUMBER} MB/s: {NUMBER} chain processes",
        ],
        database=True,
        needs_redis=True,
    ),
    "bench_chain.py": Tiny(
        lambda tmp: ["--files", "2", "--records", "50", "--workdir", str(tmp)],
        [
            rf"^index step, {variant} +\S+ s CPU +\S+ s wall +{NUMBER} records/CPU-s"
            for variant in (r"two passes \(before\)", r"one pass \(index step\)")
        ]
        + [
            rf"^sha256sum of the spool files: +\S+ s +{NUMBER} MB/s",
            rf"^index run \(whole chain, 1 proc\): +{NUMBER} s .* {NUMBER} records/s +peak RSS {NUMBER} MB",
            rf"^index merge --big: +{NUMBER} s +100 master CDX lines +{NUMBER} lines/s +peak RSS {NUMBER} MB",
        ],
        database=True,
    ),
    "bench_delivery.py": Tiny(
        lambda tmp: ["--mb", "6", "--rounds", "1"],
        [
            rf"^{re.escape(label)} +\S+ s +{NUMBER} MB/s"
            for label in (
                "sha256 of the file (baseline)",
                "delivery put (multipart, part checksums)",
                "chain upload_verified (put + read back)",
                "chain download_verified (fetch + hash)",
            )
        ],
    ),
    "bench_continuous.py": Tiny(
        lambda tmp: ["--tiny"],
        # the real path's table, then the pure parts' (the replan's rows in both: the first is checked)
        [
            table_row(label, 1)
            for label in (
                "first round (all pages fetched once) s",
                "replan: planning s (in slices)",
                "replan: longest slice s",
                "replan: planning over s (fetching meanwhile)",
                "replan: checkpoints journalling the moves",
                "steady: fetches/s",
                "steady: CPU per fetch ms, continuous",
                "continuous / one-shot CPU per fetch",
                "restart: to the first fetch s",
                "restart: URIs journalled at the kill",
                "restart: reload journal s",
            )
        ]
        + [
            rf"^\| CPU per fetch ms, one-shot \(before / after\) \| {NUMBER} / {NUMBER} \|$",
            r"^\| restart: URIs lost, with fewer visits \| 0, 0 \|$",  # nothing lost to a kill -9
            r"^\| restart: replans before the first fetch \| 0 \|$",  # it goes on with its journalled plan
            r"^\| restart: plan restored \(no replan\) \| yes \|$",
            r"^\| URIs reloaded with their state \| 2,000 \|$",
        ],
    ),
    "bench_dedup_service.py": Tiny(
        lambda tmp: ["--captures", "3000", "--compare", "1000", "--uris", "500", "--out", str(tmp / "out")],
        [
            rf"^\| {re.escape(engine)} \| {NUMBER} \| {NUMBER} \| {NUMBER} \| {NUMBER} \| {NUMBER} \|"
            for engine in ("RocksDB (rocksdict, LZ4 + ZSTD, bloom)", "SQLite (indexer/dedup.py, today)")
        ]
        + [
            rf"^Dedup service: 3,000 captures fed in \S+ s \({NUMBER}/s, .* = {NUMBER} bytes per capture .*"
            r"SIGTERM exit 0;",
            rf"^harvester pattern: 500 URIs, .*: {NUMBER} ms per URI \(250 URL hits, 167 digest hits\)",
            rf"^single digest lookup: median {NUMBER} ms",
        ],
    ),
    "bench_harvest.py": Tiny(
        lambda tmp: ["--pages", "60", "--rounds", "1"],
        # Wall and CPU seconds are printed to 0.1 s, which a tiny wget run rounds to 0.0: pages/s and cpu/page
        # (computed before rounding) are the figures checked.
        [
            rf"^{mode} +pages= +{NUMBER} +wall= +[0-9.]+s +pages/s= +{NUMBER} +cpu= +[0-9.]+s +cpu/page= *{NUMBER}ms"
            for mode in ("netharvest", "engine-no-warc", "scrapy", "scrapy-items1", "netharvest-x2")
            + (("wget",) if shutil.which("wget") else ())
        ]
        + [rf"^netharvest +{NUMBER} x plain Scrapy"]
        + (
            [rf"^netharvest +{NUMBER} x wget's pages/s, +{NUMBER} x wget's CPU per page"]
            if shutil.which("wget")
            else []
        ),
    ),
    "bench_import_domains.py": Tiny(
        lambda tmp: ["--domains", "2000", "--parallel", "1"],
        [
            rf"2,000 lines imported in {NUMBER} s: {NUMBER} domains created",
            rf"^domains: 2,000 +parallel: 1 +wall: {NUMBER} s +rate: {NUMBER} lines/s "
            rf"+peak RSS of the command: {NUMBER} MB",
        ],
        database=True,
    ),
    "bench_replay.py": Tiny(
        lambda tmp: ["--lines", "4000", "--lookups", "40", "--out", str(tmp / "out")],
        [
            rf"^\| netharvest iter_key \(binary search\) \| {NUMBER} lookups/s \| {NUMBER} ms \|",
            rf"^\| pywb CDX API \(HTTP, 127.0.0.1\) \| {NUMBER} lookups/s \| {NUMBER} ms \|",
            r"^same captures found by both: True",
            rf"^\| linear scan \| {NUMBER} lookups/s \| {NUMBER} ms \|",
        ],
    ),
    "bench_indexer.py": Tiny(
        lambda tmp: [
            "--cdx-mb",
            "1",
            "--merge-lines",
            "20000",
            "--merge-files",
            "8",
            "--dedup-captures",
            "2000",
            "--repeat",
            "1",
            "--out",
            str(tmp / "out"),
        ],
        [
            rf"^\| netharvest write_cdx \(isal\) \| \S+ s \| \S+ s \| {NUMBER} MB/s \| {NUMBER} records/s",
            rf"^\| cdxj-indexer -11 \| \S+ s \| \S+ s \| {NUMBER} MB/s \| {NUMBER} records/s",
            rf"^ours \(isal\) vs cdxj-indexer: {NUMBER}x",
            rf"^\| merge_sorted \| \S+ s \| \S+ s \| {NUMBER} \|",  # a tiny merge takes 0.0 s: lines/s is the figure
            r"outputs identical to sort -m -u: True",
            rf"^Dedup index: 2,000 captures added in \S+ s wall \({NUMBER}/s\)",
            rf"^\| digest hits \| {NUMBER} \| {NUMBER} \| 2000 of 2000 \|",
        ],
    ),
    "bench_jobgen.py": Tiny(
        lambda tmp: ["--domains", "1000"],
        [
            r"^seeded 1,000 domains",
            rf'^snapshot: {{"jobs": {NUMBER}, "submitted": {NUMBER}, "domains": {NUMBER}, .*"peak_rss_mb": {NUMBER}',
            rf"^snapshot of 1,000 domains: END TO END {NUMBER} s wall \(generation {NUMBER} s "
            rf"\+ dispatch {NUMBER} s\), {NUMBER} s CPU .*peak RSS {NUMBER} MB",
            r"^seeded 2,000 HarvestInfo rows",
            rf'^continuation: {{"jobs": {NUMBER}, "submitted": {NUMBER}, "domains": {NUMBER}, '
            rf'.*"peak_rss_mb": {NUMBER}',
        ],
        database=True,
        needs_redis=True,
    ),
    "bench_jobs_pages.py": Tiny(
        lambda tmp: ["--jobs", "60", "--domains", "1000", "--repeat", "1"],
        [
            table_row(label, 2)
            for label in (
                "jobs list, first page",
                "jobs list, status=FAILED",
                "running jobs",
                "running.json",
                "job page (1,000 domains)",
                "QA index",
                "QA job",
                "QA broad run (200 jobs)",
            )
        ],
        database=True,
    ),
    "bench_preload.py": Tiny(
        lambda tmp: [
            "--domains",
            "1000",
            "--existing",
            "100",
            "--concurrency",
            "50",
            "--redirect-sample",
            "50",
            "--dns-port",
            str(free_port()),
            "--http-port",
            str(free_port()),
        ],
        [
            r"^1,500 source lines, 1,000 unique domains, 100 already in the database",
            rf"^total wall time {NUMBER} s; DNS 1,000 domains in \S+ s = {NUMBER} domains/s, {NUMBER} queries/s",
            rf"^redirect sample: 50 domains, {NUMBER} live probed with {NUMBER} requests",
        ],
        database=True,
        databases=("", "_redirects"),
    ),
    "bench_revisit.py": Tiny(
        lambda tmp: [
            "--tiny",
            "--by-class",
            "--oracle",
            "--ceiling",
            "--webs",
            "independent,sites",
            "--mixes",
            "mixed,cho",
            "--periods",
            "any",
        ],
        # versions, captured, share, freshness, visits are figures; politeness and budget violations must be 0
        [
            rf"^\| {policy} \| {budget} \| {NUMBER} \| {NUMBER} \| {NUMBER} \| {NUMBER} \| {NUMBER} \|"
            r"(?: [^|]+ \|){5} 0 \| 0 \|"
            for policy in ("fixed", "heritrix", "adaptive", "oracle", "oracle-sp", "oracle-period")
            for budget in ("starved", "ample")
        ]
        + [
            rf"^adaptive policy CPU at the starved budget: visited\(\) {NUMBER} µs per call \({NUMBER} calls\), "
            rf"replan\(\) {NUMBER} µs per URI and replan$",
            rf"^adaptive revisits at the starved budget, issued late by the frontier: mean {NUMBER} h, "
            rf"median {NUMBER} h, 90th percentile {NUMBER} h$",
            rf"^ceiling \(every change process known\), starved budget, freshness >= AR's {NUMBER}: {NUMBER} captured"
            rf" = {NUMBER} x AR \(freshness {NUMBER}\)$",
        ]
        # per class of page: pages, versions, AR captured/visits/freshness, adaptive captured/visits/freshness
        + [rf"^\| {cls} \|(?: {NUMBER} \|){{8}}$" for cls in ("static", "poisson", "periodic")]
        + [
            rf"^\| {mix} \| 1 \| {NUMBER} \| {NUMBER} \| {NUMBER} \| {NUMBER} \|"
            for mix in (r"mixed\+any", r"mixed\+sites\+any", r"cho\+any", r"cho\+sites\+any")
        ],
    ),
    "bench_revisit_cross.py": Tiny(
        lambda tmp: ["--tiny", "--oracle", "--weights", "1,3"],
        # every mix, every row: versions, captured, ratio to AR, freshness, visits (the difference to AR's may be 0)
        [
            rf"^\| {mix} \| 1 \| {policy} \| {NUMBER} \| {NUMBER} \| {NUMBER} \| {NUMBER} \| "
            rf"[+-][0-9.]+ \| {NUMBER} \|$"
            for mix in ("loguniform", "mixed", "static")
            for policy in ("Heritrix AR", "fixed", "adaptive w=1", "adaptive w=3", "oracle w=1", "oracle w=3")
        ],
    ),
    "bench_traps.py": Tiny(
        lambda tmp: ["--traps", "300", "--uris", "200", "--lines", "300", "--jobs", "2"],
        [
            rf"^  match\.build: {NUMBER} s wall",
            rf"^    first_pass: {NUMBER} ms per URI",
            r"^  the list: 300 lines",
            rf"^  save: {NUMBER} s wall",
            rf"^  jobgen: {NUMBER} s wall",
            r"^  2 jobs, JobSpec of one job",
            rf"^peak memory \(max RSS\): {NUMBER} MB",
        ],
        database=True,
    ),
    "bench_webui.py": Tiny(
        lambda tmp: ["--domains", "2000", "--jobs", "50", "--repeat", "1"],
        [r"^  jobs: 50 rows", r"^  archive files: 150 rows"]
        + [
            table_row(label, 2)
            for label in (
                "dashboard",
                "domains, first page",
                "domains, prefix `ab`",
                "domains, `*shop*` (rare infix)",
                "domains, in crawler traps `sessionid=4`",
                "domain page (most history)",
                "harvest definitions",
                "selective definition page",
                "trap lists",
            )
        ],
        database=True,
    ),
}


def test_every_benchmark_has_a_tiny_size() -> None:
    scripts = {p.name for p in (REPO / "benchmarks").glob("bench_*.py")}
    assert scripts - set(TINY) == set(), "give each new benchmark a tiny size in TINY (tests/test_benchmarks.py)"
    assert set(TINY) - scripts == set(), "TINY names a benchmark that is gone"


def figures_missing(output: str, patterns: list[str]) -> list[str]:
    """The figure lines not printed, or printed with a figure that is not a number above zero."""
    wrong = []
    for pattern in patterns:
        match = re.search(pattern, output, re.MULTILINE)
        if match is None:
            wrong.append(f"no line matches {pattern!r}")
        elif not all(float(g.replace(",", "")) > 0 for g in match.groups()):
            wrong.append(f"a figure is not above zero in {match.group(0)!r}")
    return wrong


def test_figures_are_checked() -> None:
    """The check itself: a missing line and a zero figure are both caught."""
    patterns = [rf"^rate: {NUMBER} lines/s", rf"^peak RSS {NUMBER} MB"]
    assert figures_missing("rate: 1,234.5 lines/s\npeak RSS 80 MB\n", patterns) == []
    assert len(figures_missing("rate: 0.0 lines/s\n", patterns)) == 2


@pytest.mark.parametrize("script", sorted(TINY))
def test_benchmark_runs_at_a_tiny_size(script: str, tmp_path: Path) -> None:
    tiny = TINY[script]
    url = os.environ.get("NETHARVEST_DATABASE_URL", "")
    if tiny.database and not url.startswith("postgres"):
        pytest.skip("the benchmark makes its own PostgreSQL database")
    if tiny.needs_redis and not os.environ.get("NETHARVEST_BROKER_URL", "").startswith("redis://"):
        pytest.skip("the benchmark publishes to Redis")
    database = f"{url.rsplit('/', 1)[-1]}_{Path(script).stem}"
    args = [*tiny.args(tmp_path), *(["--database", database] if tiny.database else [])]
    (tmp_path / "tmp").mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "NETHARVEST_DATA_DIR": str(tmp_path),
        "TMPDIR": str(tmp_path / "tmp"),
        **tiny.env,
    }
    try:
        proc = subprocess.run(
            [sys.executable, f"benchmarks/{script}", *args],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
    finally:
        if tiny.database:
            drop_databases([database + suffix for suffix in tiny.databases])
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert figures_missing(proc.stdout, tiny.figures) == [], proc.stdout[-3000:]
    if script == "bench_harvest.py" and not shutil.which("wget"):
        assert "wget not found" in proc.stderr  # the peer is missing: the benchmark says it skipped it


def drop_databases(names: list[str]) -> None:
    import psycopg2

    admin = psycopg2.connect(host="127.0.0.1", user="postgres", dbname="postgres")
    admin.autocommit = True
    try:
        with admin.cursor() as cur:
            for name in names:
                cur.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        admin.close()
