"""Benchmark: generate and dispatch the jobs of a 1,000,000-domain snapshot, then of its continuation
over 2,000,000 HarvestInfo rows, on PostgreSQL and the Redis broker.

    NETHARVEST_BROKER_URL=redis://127.0.0.1:6379/1 .venv/bin/python benchmarks/bench_jobgen.py [--domains 1000000]

Makes a fresh database (``--database``, nh_bench_jobgen), migrates it and seeds it: N domains through the
product's ``create_domains`` (a default seed list of 4 seeds and a default configuration each), then
set-based (benchmarks/rows.py: INSERT … SELECT with the columns of the real models): 0.5 % unexpired
aliases, 0.1 % expired aliases, 0.4 % excluded (budget 0), 1/7 with their own 2,000-object limit. Each phase runs in
its own process, through the real path (``scheduler.schedule_due_harvests`` claims the run and generates its
jobs in one transaction, then ``dispatch.submit_jobs`` publishes each job to ``harvest.snapshot``: by
reference, a JobRef naming the job and its spec's API URL, or with ``--inline`` the whole JobSpec as before
issue 15),
and reports its wall time, the CPU time of the process and of the PostgreSQL backend serving it (wall
time on a shared machine is mostly waiting for a core), and its peak memory (max RSS of that process;
PostgreSQL's own memory is not counted). Between the phases, 2 × N HarvestInfo rows are seeded: one
older snapshot over every configuration, and the first snapshot's results (60 % complete, 8 %
unfinished, 15 % object limit, 7 % size limit, 5 % time limit, 5 % configuration size limit). The
published messages are deleted from the broker at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def seed(n: int) -> float:
    """N domains through the product's ``create_domains``, then the benchmark's mix of budgets and
    aliases, and the two snapshot definitions; returns the seconds taken."""
    from rows import execute

    from orchestrator.harvest.curation.domains import create_domains
    from orchestrator.harvest.models import HarvestChannel, HarvestDefinition

    started = time.monotonic()
    execute("SET synchronous_commit = off")
    for first in range(1, n + 1, 20_000):
        create_domains([f"d{i}.dk" for i in range(first, min(first + 20_000, n + 1))])
    execute("UPDATE harvest_domain SET alias_of_id = id - 1 WHERE id %% 200 = 0")
    execute(
        "UPDATE harvest_domain SET alias_of_id = id - 1, alias_expires = now() - interval '1 day' "
        "WHERE id %% 1000 = 500"
    )
    execute(
        "UPDATE harvest_domainconfiguration SET max_objects = "
        "CASE WHEN id %% 250 = 1 THEN 0 WHEN id %% 7 = 0 THEN 2000 ELSE -1 END"
    )
    snapshot = HarvestChannel.objects.get(name="snapshot")
    HarvestDefinition.objects.create(
        name="broad-2025", kind="snapshot", active=False, runs=1, max_objects=10000, channel=snapshot
    )
    HarvestDefinition.objects.create(
        name="broad-2026", kind="snapshot", active=True, max_objects=10000, channel=snapshot
    )
    execute("ANALYZE")
    return time.monotonic() - started


def seed_history(n: int) -> float:
    """2 × N HarvestInfo rows (see the module docstring) and the continuation's definition."""
    from rows import execute, insert_select

    from orchestrator.harvest.models import HarvestDefinition, HarvestInfo, Job

    started = time.monotonic()
    execute("SET synchronous_commit = off")
    old = HarvestDefinition.objects.get(name="broad-2025")
    current = HarvestDefinition.objects.get(name="broad-2026")
    # an older snapshot over every configuration, in 100 jobs (100 more for the top-up below)
    insert_select(
        Job,
        {
            "harvest": str(old.pk),
            "harvest_run": "1",
            "channel": str(old.channel_id),
            "status": "'DONE'",
            "spec": "'{}'",
            "created": "now() - interval '1 year'",
        },
        "FROM generate_series(1, 200)",
    )
    first = Job.objects.filter(harvest=old).order_by("id").values_list("id", flat=True).first()
    insert_select(
        HarvestInfo,
        {
            "job": f"{first} + c.id %% 100",
            "harvest": str(old.pk),
            "domain": "c.domain_id",
            "configuration": "c.id",
            "objects_count": "50 + (c.id * 7919) %% 4000",
            "bytes_count": "(50 + (c.id * 7919) %% 4000) * (10000 + c.id %% 50000)",
            "stop_reason": "CASE WHEN c.id %% 3 = 0 THEN 'OBJECT_LIMIT' ELSE 'DOWNLOAD_COMPLETE' END",
            "date": "now() - interval '1 year'",
        },
        "FROM harvest_domainconfiguration c",
    )
    # the results of the snapshot just generated, then a top-up to exactly 2 × N rows
    insert_select(
        HarvestInfo,
        {
            "job": "jd.job_id",
            "harvest": "j.harvest_id",
            "domain": "c.domain_id",
            "configuration": "c.id",
            "objects_count": "100 + (c.id * 104729) %% 6000",
            "bytes_count": "(100 + (c.id * 104729) %% 6000) * 30000",
            "stop_reason": "CASE WHEN (c.id * 31) %% 100 < 60 THEN 'DOWNLOAD_COMPLETE' "
            "WHEN (c.id * 31) %% 100 < 68 THEN 'DOWNLOAD_UNFINISHED' "
            "WHEN (c.id * 31) %% 100 < 83 THEN CASE WHEN jd.max_objects = c.max_objects "
            "THEN 'CONFIG_OBJECT_LIMIT' ELSE 'OBJECT_LIMIT' END "
            "WHEN (c.id * 31) %% 100 < 90 THEN 'SIZE_LIMIT' WHEN (c.id * 31) %% 100 < 95 THEN 'TIME_LIMIT' "
            "ELSE 'CONFIG_SIZE_LIMIT' END",
            "date": "now() - interval '30 days'",
        },
        "FROM harvest_jobdomain jd JOIN harvest_job j ON j.id = jd.job_id "
        "JOIN harvest_domainconfiguration c ON c.id = jd.configuration_id WHERE j.harvest_id = %s",
        [current.pk],
    )
    missing = 2 * n - HarvestInfo.objects.count()
    insert_select(
        HarvestInfo,
        {
            "job": f"{first} + 100 + c.id %% 100",
            "harvest": str(old.pk),
            "domain": "c.domain_id",
            "configuration": "c.id",
            "objects_count": "80",
            "bytes_count": "80 * 20000",
            "stop_reason": "'DOWNLOAD_COMPLETE'",
            "date": "now() - interval '2 years'",
        },
        "FROM (SELECT * FROM harvest_domainconfiguration ORDER BY id LIMIT greatest(%s, 0)) c",
        [missing],
    )
    Job.objects.filter(harvest=current).update(status="DONE")
    # a third of the configurations stopped by their own object limit had it raised since
    execute("UPDATE harvest_domainconfiguration SET max_objects = 3000 WHERE max_objects = 2000 AND id %% 3 = 0")
    HarvestDefinition.objects.create(
        name="broad-2026-part-2",
        kind="snapshot",
        active=True,
        max_objects=20000,
        channel_id=current.channel_id,
        previous=current,
    )
    execute("ANALYZE")
    return time.monotonic() - started


def phase() -> None:
    """One generation + dispatch, in this process: prints a JSON line of figures."""
    import django

    django.setup()
    from django.db import connection

    from orchestrator.harvest.jobs import dispatch
    from orchestrator.harvest.models import Job
    from orchestrator.harvest.scheduling import scheduler

    with connection.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        backend = cur.fetchone()[0]
    load = os.getloadavg()[0]
    started, cpu0, db0 = time.monotonic(), _cpu_self(), _cpu_of(backend)
    ids = scheduler.schedule_due_harvests()
    generated, cpu1, db1 = time.monotonic() - started, _cpu_self(), _cpu_of(backend)
    submitted = dispatch.submit_jobs(ids)
    total, cpu2, db2 = time.monotonic() - started, _cpu_self(), _cpu_of(backend)
    jobs = Job.objects.filter(pk__in=ids)
    print(
        json.dumps(
            {
                "jobs": len(ids),
                "submitted": submitted,
                "domains": sum(j.domain_count for j in jobs.only("domain_count")),
                "generate_s": round(generated, 3),
                "dispatch_s": round(total - generated, 3),
                "total_s": round(total, 3),
                "generate_cpu_s": {"python": round(cpu1 - cpu0, 3), "postgres": round(db1 - db0, 3)},
                "dispatch_cpu_s": {"python": round(cpu2 - cpu1, 3), "postgres": round(db2 - db1, 3)},
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                "load_average": [round(load, 1), round(os.getloadavg()[0], 1)],
            }
        )
    )


def _cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _cpu_of(pid: int) -> float:
    """CPU seconds of a process on this machine (the PostgreSQL backend serving the run)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def summary(what: str, figures: dict[str, Any]) -> str:
    """The figures the goal names (issue 15: < 20 s end to end, < 1 GB), on one line."""
    cpu = sum(figures["generate_cpu_s"].values()) + sum(figures["dispatch_cpu_s"].values())
    return (
        f"{what}: END TO END {figures['total_s']} s wall (generation {figures['generate_s']} s + dispatch "
        f"{figures['dispatch_s']} s), {cpu:.3f} s CPU (Python + PostgreSQL backend), peak RSS "
        f"{figures['peak_rss_mb']} MB, load average {figures['load_average'][0]}–{figures['load_average'][1]}"
    )


def run_phase(env: dict[str, str]) -> dict[str, Any]:
    result = subprocess.run([sys.executable, __file__, "--phase"], env=env, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(result.stderr[-3000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", type=int, default=1_000_000)
    parser.add_argument("--database", default="nh_bench_jobgen", help="made afresh (dropped first if it exists)")
    parser.add_argument(
        "--inline",
        action="store_true",
        help="publish whole JobSpecs (as before issue 15), not JobRefs (dispatch by reference)",
    )
    parser.add_argument("--phase", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        phase()
        return
    broker = os.environ.get("NETHARVEST_BROKER_URL", "")
    if not broker.startswith("redis://"):
        sys.exit("set NETHARVEST_BROKER_URL to the Redis database the benchmark may fill (and empty)")
    from fresh_database import fresh_database

    env, _, _ = fresh_database(
        args.database,
        "bench-jobgen-",
        {
            "NETHARVEST_LOG_LEVEL": "WARNING",
            "DJANGO_SETTINGS_MODULE": "orchestrator.settings",
            "PYTHONPATH": str(ROOT),
            # By reference, the message names where the harvester reads the spec; no harvester runs here.
            "NETHARVEST_SPEC_BASE_URL": "" if args.inline else "http://orchestrator.invalid:8000",
        },
    )
    print(f"dispatch: {'whole JobSpecs (--inline)' if args.inline else 'by reference (JobRef)'}")
    os.environ.update(env)
    import django
    from django.db import connection

    django.setup()
    n = args.domains
    print(f"seeded {n:,} domains in {seed(n):.1f} s")
    connection.close()
    snapshot = run_phase(env)
    print(f"snapshot: {json.dumps(snapshot)}")
    print(summary(f"snapshot of {n:,} domains", snapshot))
    seconds = seed_history(n)
    from orchestrator.harvest.models import HarvestInfo

    print(f"seeded {HarvestInfo.objects.count():,} HarvestInfo rows in {seconds:.1f} s")
    connection.close()
    continuation = run_phase(env)
    print(f"continuation: {json.dumps(continuation)}")
    print(summary("continuation", continuation))
    import redis

    client = redis.Redis.from_url(broker)
    print(
        f"broker: removed {client.llen('harvest.snapshot')} published job messages from harvest.snapshot "
        f"({(client.memory_usage('harvest.snapshot') or 0) / 1e6:.2f} MB in Redis)"
    )
    client.delete("harvest.snapshot")
    print(f"load average after the run: {os.getloadavg()}")


if __name__ == "__main__":
    main()
