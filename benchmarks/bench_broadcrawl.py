"""A national broad crawl, run small on this machine with real processes, then extrapolated (docs/SCALE.md).

    NETHARVEST_BROKER_URL=redis://127.0.0.1:6379/3 .venv/bin/python benchmarks/bench_broadcrawl.py \\
        --domains 20000 --configs-per-job 250 --harvesters 8 --job-seconds 4

**Measured** (real processes, real Redis and PostgreSQL): a fresh database with ``--domains`` domains made
by the product's ``create_domains``; the snapshot's jobs generated and dispatched by the real scheduler and
dispatcher (``--configs-per-job`` per job); ``--harvesters`` stand-in harvesters (tests/standin_harvester.py:
the real contract, started / a progress message every second / JobResult, without crawling) on
``harvest.snapshot``, one on ``harvest.focused``, and the orchestrator's real ``events`` worker recording
everything in the database. While the snapshot queue is deep, a selective job is generated and dispatched:
its wait (submitted → started) is the channel-starvation figure. Sampled every 0.5 s: queue depths, jobs by
state, PostgreSQL transactions (pg_stat_database) and Redis commands (INFO). At the end every job must be
DONE with one HarvestInfo row per domain: nothing lost.

**Modelled** (printed after, from the parameters below and the measured rates): 2,000,000 domains, 40
harvester workers, a 10-week window; queue depths, broker and database load per second, dedup lookups per
second, index growth, and which part saturates first. Each figure's formula is in :func:`model`.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

SAMPLE_S = 0.5


def _celery(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    exe = str(Path(sys.executable).parent / "celery")
    return subprocess.Popen(
        [exe, *args, "--without-gossip", "--without-mingle", "--loglevel", "WARNING"],
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        cwd=ROOT,
    )


def measure(args: argparse.Namespace) -> dict[str, float]:
    """The real run (module docstring); returns its figures."""
    import redis
    from fresh_database import fresh_database

    env, _, work = fresh_database(
        args.database,
        "sim-broadcrawl-",
        {
            "NETHARVEST_LOG_LEVEL": "WARNING",
            "DJANGO_SETTINGS_MODULE": "orchestrator.settings",
            "PYTHONPATH": str(ROOT),
            "NETHARVEST_MAX_CONFIGS_PER_JOB": str(args.configs_per_job),
            "NETHARVEST_SPEC_BASE_URL": "",
            "NETHARVEST_DEMO": "0",
        },
    )
    os.environ.update(env)
    import django

    django.setup()
    from django.db import connection

    from orchestrator.harvest.curation.domains import create_domains
    from orchestrator.harvest.jobs import dispatch, jobgen
    from orchestrator.harvest.models import Domain, HarvestChannel, HarvestDefinition, HarvestInfo, Job
    from orchestrator.harvest.scheduling import scheduler

    n = args.domains
    for first in range(1, n + 1, 20_000):
        create_domains([f"sim{i}.dk" for i in range(first, min(first + 20_000, n + 1))])
    HarvestDefinition.objects.create(
        name="national",
        kind="snapshot",
        active=True,
        max_objects=10000,
        channel=HarvestChannel.objects.get(name="snapshot"),
    )
    news = HarvestDefinition.objects.create(
        name="news", kind="selective", active=False, channel=HarvestChannel.objects.get(name="focused")
    )
    news.configurations.set([d.default_configuration for d in Domain.objects.order_by("id")[:5]])
    client = redis.Redis.from_url(os.environ["NETHARVEST_BROKER_URL"])
    queues = ("harvest.snapshot", "harvest.focused", "events")
    client.delete(*queues)
    db = connection.settings_dict["NAME"]

    def counters() -> tuple[int, int]:
        with connection.cursor() as cur:
            cur.execute("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s", [db])
            xacts = cur.fetchone()[0]
        return xacts, int(client.info("stats")["total_commands_processed"])

    penv = {**env, "STANDIN_JOB_SECONDS": str(args.job_seconds)}
    procs = [
        _celery(
            ["-A", "orchestrator", "worker", "-Q", "events", "-c", "2", "-n", "events@%h"], env, work / "events.log"
        ),
        _celery(
            [
                "-A",
                "tests.standin_harvester",
                "worker",
                "-Q",
                "harvest.snapshot",
                "-c",
                str(args.harvesters),
                "-n",
                "low@%h",
            ],
            penv,
            work / "low.log",
        ),
        _celery(
            ["-A", "tests.standin_harvester", "worker", "-Q", "harvest.focused", "-c", "1", "-n", "high@%h"],
            {**penv, "STANDIN_JOB_SECONDS": "1"},
            work / "high.log",
        ),
    ]
    figures: dict[str, float] = {}
    try:
        from orchestrator.celery import app

        ready_by = time.monotonic() + 120  # the three workers answer a ping: the selective wait is not start-up
        while len(app.control.ping(timeout=1.0) or []) < len(procs):
            if time.monotonic() > ready_by:
                sys.exit(f"the workers did not start; logs in {work}")
        x0, r0 = counters()
        started = time.monotonic()
        ids = scheduler.schedule_due_harvests()
        figures["generate_s"] = time.monotonic() - started
        figures["jobs"] = len(ids)
        figures["submitted"] = dispatch.submit_jobs(ids)
        figures["generate_dispatch_s"] = time.monotonic() - started
        peak = dict.fromkeys(queues, 0)
        selective_id, selective_sent, waited, deadline = None, 0.0, None, time.monotonic() + args.timeout
        while True:
            depth = {q: int(client.llen(q)) for q in queues}
            peak = {q: max(peak[q], depth[q]) for q in queues}
            if selective_id is None and depth["harvest.snapshot"] > 0 and time.monotonic() - started > 1:
                figures["snapshot_queue_at_selective"] = depth["harvest.snapshot"]
                selective_id = jobgen.generate_jobs(news, 1)[0]
                selective_sent = time.monotonic()
                dispatch.submit_jobs([selective_id])
            if (
                selective_id
                and waited is None
                and Job.objects.filter(pk=selective_id, started_at__isnull=False).exists()
            ):
                waited = time.monotonic() - selective_sent
            left = Job.objects.exclude(status="DONE").count()
            if not left:
                break
            if time.monotonic() > deadline:
                sys.exit(f"timed out with {left} jobs not DONE; logs in {work}")
            time.sleep(SAMPLE_S)
        wall = time.monotonic() - started
        x1, r1 = counters()
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
    infos = HarvestInfo.objects.count()
    expected = sum(Job.objects.values_list("domain_count", flat=True))
    if infos != expected:
        sys.exit(f"lost results: {infos} HarvestInfo rows for {expected} domain configurations")
    figures.update(
        wall_s=wall,
        domains_done=infos,
        selective_wait_s=waited if waited is not None else -1,
        peak_snapshot_queue=peak["harvest.snapshot"],
        peak_events_queue=peak["events"],
        db_xact_per_s=(x1 - x0) / wall,
        redis_cmd_per_s=(r1 - r0) / wall,
        # each job sends started, a progress a second and its result (the stand-in's cadence)
        events=Job.objects.count() * (math.ceil(args.job_seconds) + 2),
    )
    figures["events_per_s"] = figures["events"] / wall
    client.delete(*queues)
    return figures


def model(p: argparse.Namespace, measured: dict[str, float] | None) -> list[tuple[str, str]]:
    """The national crawl on paper. Every rate is a total over the platform, per second, steady state."""
    jobs = -(-p.national_domains // p.national_configs_per_job)
    uris = p.national_domains * p.objects_per_domain
    bytes_total = uris * p.bytes_per_object
    crawl_s = uris / (p.workers * p.uri_rate)
    window_s = p.weeks * 7 * 86400
    fetch_rate = p.workers * p.uri_rate
    running = p.workers  # one job per worker while the snapshot lasts
    progress_per_s = running / p.progress_interval_s
    warcs_per_s = fetch_rate * p.bytes_per_object / p.warc_bytes
    # Broker: each running job polls its control queue once a second (harvester.runjob), sends progress, and
    # each closed WARC is a file message; every message is ~3 Redis commands (LPUSH, BRPOP, ack).
    broker_cmd = running * 1.0 + 3 * (progress_per_s + warcs_per_s)
    # Database: a progress heartbeat is one transaction (intake.record_progress); each WARC ~6 (record, the
    # chain's 5 steps: ingest, index, copy, replica, clean); the reaper and beat's sweeps ~1/s.
    db_xact = progress_per_s + 6 * warcs_per_s + 1
    dedup = fetch_rate * p.dedup_lookups_per_uri
    cdx_bytes = uris * p.cdx_line_bytes
    chain_procs = -(-fetch_rate * p.bytes_per_object / 1e6 // p.chain_mb_s)
    dedup_bytes = uris * p.dedup_bytes_per_capture
    rows = [
        (f"jobs (of {p.national_configs_per_job:,} domains each)", f"{jobs:,}"),
        ("URIs to fetch", f"{uris:,.0f}"),
        ("bytes to fetch", f"{bytes_total / 1e12:,.1f} TB"),
        (
            f"crawl time at {p.uri_rate:g} URIs/s per worker",
            f"{crawl_s / 86400:,.1f} days ({crawl_s / window_s:.0%} of the {p.weeks}-week window)",
        ),
        ("snapshot queue depth at dispatch", f"{jobs - p.workers:,} jobs waiting (one running per worker)"),
        ("queue drain", f"one job ends every {crawl_s / jobs / 60:,.0f} min"),
        (
            "fetch rate, whole platform",
            f"{fetch_rate:,.0f} URIs/s, {fetch_rate * p.bytes_per_object * 8 / 1e9:.2f} Gbit/s",
        ),
        ("dedup lookups", f"{dedup:,.0f}/s"),
        ("broker commands", f"{broker_cmd:,.0f}/s"),
        ("database transactions", f"{db_xact:,.1f}/s"),
        (f"WARCs closed ({p.warc_bytes / 1e6:,.0f} MB each)", f"{warcs_per_s * 3600:,.0f}/hour"),
        ("CDX index growth", f"{cdx_bytes / 1e9:,.0f} GB ({cdx_bytes / crawl_s * 86400 / 1e9:,.1f} GB/day)"),
        ("dedup index growth (SQLite, 364 MiB/million)", f"{dedup_bytes / 1e9:,.0f} GB"),
        (
            "indexer chain input",
            f"{fetch_rate * p.bytes_per_object / 1e6:,.0f} MB/s: {chain_procs:,.0f} chain "
            f"processes at {p.chain_mb_s:g} MB/s each",
        ),
        (
            "archive writes (copy + replica)",
            f"{2 * fetch_rate * p.bytes_per_object / 1e6:,.0f} MB/s, {2 * bytes_total / 1e12:,.1f} TB stored",
        ),
    ]
    if measured:
        needed = progress_per_s + warcs_per_s
        rows += [
            (
                "events the intake must record",
                f"{needed:,.1f}/s; handled here {measured['events_per_s']:,.1f}/s with "
                f"the events queue at most {measured['peak_events_queue']:.0f} deep (a lower bound of its capacity)",
            ),
        ]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", type=int, default=20_000, help="measured run: domains")
    parser.add_argument("--configs-per-job", type=int, default=250, help="measured run: configurations per job")
    parser.add_argument("--harvesters", type=int, default=8, help="measured run: stand-in harvester processes")
    parser.add_argument("--job-seconds", type=float, default=4, help="measured run: a stand-in job's length")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--database", default="nh_bench_broadcrawl", help="made afresh (dropped first if it exists)")
    parser.add_argument("--model-only", action="store_true", help="print the model without the measured run")
    model_args = parser.add_argument_group("the national crawl (model)")
    model_args.add_argument("--national-domains", type=int, default=2_000_000)
    model_args.add_argument("--national-configs-per-job", type=int, default=10_000)
    model_args.add_argument("--workers", type=int, default=40)
    model_args.add_argument("--weeks", type=float, default=10)
    model_args.add_argument(
        "--objects-per-domain",
        type=float,
        default=600,
        help="mean URIs per domain under a 10,000-object budget (an assumption: set yours)",
    )
    model_args.add_argument(
        "--bytes-per-object", type=float, default=38_000, help="NetarchiveSuite's default, as jobgen's estimator"
    )
    model_args.add_argument("--uri-rate", type=float, default=25, help="URIs/s one harvester worker sustains")
    model_args.add_argument("--progress-interval-s", type=float, default=5.0)
    model_args.add_argument("--warc-bytes", type=float, default=1e9)
    model_args.add_argument(
        "--dedup-lookups-per-uri",
        type=float,
        default=2.0,
        help="a digest lookup per response and a URL lookup (validators) per URI",
    )
    model_args.add_argument("--cdx-line-bytes", type=float, default=300)
    model_args.add_argument(
        "--chain-mb-s",
        type=float,
        default=2.0,
        help="one indexer chain process (docs/BENCHMARKS.md, Indexer chain: 2.0 MB/s at load 10)",
    )
    model_args.add_argument("--dedup-bytes-per-capture", type=float, default=364 * 2**20 / 1e6)
    args = parser.parse_args()
    measured = None
    if not args.model_only:
        if not os.environ.get("NETHARVEST_BROKER_URL", "").startswith("redis://"):
            sys.exit("set NETHARVEST_BROKER_URL to a Redis database the simulation may fill (and empty)")
        measured = measure(args)
        print(
            f"measured: {args.domains:,} domains, {measured['jobs']:.0f} snapshot jobs, {args.harvesters} stand-in "
            f"harvesters, {args.job_seconds:g} s per job, load average {os.getloadavg()[0]:.1f}"
        )
        print(
            f"  generate + dispatch: {measured['generate_dispatch_s']:.2f} s (generate {measured['generate_s']:.2f} s)"
        )
        print(
            f"  all jobs DONE in {measured['wall_s']:.1f} s; {measured['domains_done']:,} HarvestInfo rows "
            f"(one per domain configuration: nothing lost)"
        )
        print(
            f"  peak queue depth: harvest.snapshot {measured['peak_snapshot_queue']:.0f}, "
            f"events {measured['peak_events_queue']:.0f}"
        )
        if "snapshot_queue_at_selective" in measured:
            print(
                f"  selective job: submitted with {measured['snapshot_queue_at_selective']:.0f} snapshot jobs "
                f"queued, started after {measured['selective_wait_s']:.2f} s"
            )
        else:  # the harvesters took every job while dispatch was still sending: no queue to overtake
            print("  selective job: not measured (the snapshot queue was never deep: more jobs or longer ones)")
        print(
            f"  intake: {measured['events_per_s']:.1f} events/s; PostgreSQL {measured['db_xact_per_s']:.1f} "
            f"transactions/s; Redis {measured['redis_cmd_per_s']:.0f} commands/s"
        )
    print(f"model: {args.national_domains:,} domains, {args.workers} workers, {args.weeks:g} weeks")
    for label, value in model(args, measured):
        print(f"  {label}: {value}")


if __name__ == "__main__":
    main()
