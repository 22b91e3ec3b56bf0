"""Benchmark: generate and dispatch the jobs of a 1,000,000-domain snapshot, then of its continuation
over 2,000,000 HarvestInfo rows, on PostgreSQL and the Redis broker.

    NETHARVEST_BROKER_URL=redis://127.0.0.1:6379/1 .venv/bin/python benchmarks/bench_jobgen.py [--domains 1000000]

Makes a fresh database (nh_bench_jobgen), migrates it and seeds it set-based (generate_series SQL):
N domains with a default seed list (4 seeds) and configuration; 0.5 % unexpired aliases, 0.1 % expired
aliases, 0.4 % excluded (budget 0), 1/7 with their own 2,000-object limit. Each phase runs in its own
process, through the real path (``scheduler.schedule_due_harvests`` claims the run and generates its
jobs in one transaction, then ``dispatch.submit_jobs`` publishes each JobSpec to ``harvest.snapshot``),
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
import tempfile
import time
from pathlib import Path

import psycopg2

DB = "nh_bench_jobgen"
URL = f"postgres://postgres@127.0.0.1:5432/{DB}"


def sql(statements: list[str], params: dict[str, object]) -> float:
    started = time.monotonic()
    with psycopg2.connect(host="127.0.0.1", user="postgres", dbname=DB) as conn, conn.cursor() as cur:
        cur.execute("SET synchronous_commit = off")
        for statement in statements:
            cur.execute(statement, params)
    return time.monotonic() - started


SEED = [
    "INSERT INTO harvest_domain (id, name, comments, crawler_traps, extended, created) "
    "SELECT i, 'd' || i || '.dk', '', '', '{}', now() FROM generate_series(1, %(n)s) i",
    "UPDATE harvest_domain SET alias_of_id = id - 1 WHERE id %% 200 = 0",
    "UPDATE harvest_domain SET alias_of_id = id - 1, alias_expires = now() - interval '1 day' "
    "WHERE id %% 1000 = 500",
    "INSERT INTO harvest_seedlist (id, domain_id, name, seeds, comments) "
    "SELECT i, i, 'defaultseeds', 'http://d' || i || '.dk/' || chr(10) || 'https://d' || i || '.dk/' || chr(10) "
    "|| 'http://www.d' || i || '.dk/' || chr(10) || 'https://www.d' || i || '.dk/', '' "
    "FROM generate_series(1, %(n)s) i",
    "INSERT INTO harvest_domainconfiguration (id, domain_id, name, template_id, max_objects, max_bytes, is_default, "
    "comments) SELECT i, i, 'defaultconfig', (SELECT id FROM harvest_crawltemplate WHERE name = 'default'), "
    "CASE WHEN i %% 250 = 1 THEN 0 WHEN i %% 7 = 0 THEN 2000 ELSE -1 END, -1, true, '' "
    "FROM generate_series(1, %(n)s) i",
    "INSERT INTO harvest_domainconfiguration_seedlists (configuration_id, seedlist_id) "
    "SELECT i, i FROM generate_series(1, %(n)s) i",
    *[f"SELECT setval(pg_get_serial_sequence('{t}', 'id'), %(n)s)"
      for t in ("harvest_domain", "harvest_seedlist", "harvest_domainconfiguration")],
    "INSERT INTO harvest_harvestdefinition (name, kind, comments, audience, active, runs, extended, created, edited, "
    "skipped_events, crawler_traps, max_objects, max_bytes, max_job_running_time_s, revisit_initial_wait_s, "
    "revisit_min_wait_s, revisit_max_wait_s, revisit_changed_factor, revisit_unchanged_factor, "
    "revisit_strip_regexes, channel_id) "
    "SELECT name, 'snapshot', '', '', active, runs, '{}', now(), now(), 0, '', 10000, -1, 0, 86400, 3600, "
    "2419200, 1.5, 1.5, '', (SELECT id FROM harvest_harvestchannel WHERE name = 'snapshot') "
    "FROM (VALUES ('broad-2025', false, 1), ('broad-2026', true, 0)) AS v(name, active, runs)",
    "ANALYZE",
]

HISTORY = [
    # an older snapshot over every configuration, in 100 jobs (100 more for the top-up below)
    "INSERT INTO harvest_job (harvest_id, harvest_run, channel_id, status, spec, domain_count, expected_objects, "
    "expected_bytes, created, progress, error_category, error_detail, harvester) "
    "SELECT h.id, 1, h.channel_id, 'DONE', '{}', 0, 0, 0, now() - interval '1 year', '{}', '', '', '' "
    "FROM harvest_harvestdefinition h, generate_series(1, 200) WHERE h.name = 'broad-2025'",
    "INSERT INTO harvest_harvestinfo (job_id, harvest_id, domain_id, configuration_id, objects, bytes, stop_reason, "
    "\"date\") SELECT j.first + c.id %% 100, j.harvest_id, c.domain_id, c.id, 50 + (c.id * 7919) %% 4000, "
    "(50 + (c.id * 7919) %% 4000) * (10000 + c.id %% 50000), "
    "CASE WHEN c.id %% 3 = 0 THEN 'OBJECT_LIMIT' ELSE 'DOWNLOAD_COMPLETE' END, now() - interval '1 year' "
    "FROM harvest_domainconfiguration c, (SELECT MIN(id) AS first, MIN(harvest_id) AS harvest_id FROM harvest_job "
    "WHERE harvest_id = (SELECT id FROM harvest_harvestdefinition WHERE name = 'broad-2025')) j",
    # the results of the snapshot just generated, then a top-up to exactly 2 × N rows
    "INSERT INTO harvest_harvestinfo (job_id, harvest_id, domain_id, configuration_id, objects, bytes, stop_reason, "
    "\"date\") SELECT jd.job_id, j.harvest_id, c.domain_id, c.id, 100 + (c.id * 104729) %% 6000, "
    "(100 + (c.id * 104729) %% 6000) * 30000, CASE "
    "WHEN (c.id * 31) %% 100 < 60 THEN 'DOWNLOAD_COMPLETE' WHEN (c.id * 31) %% 100 < 68 THEN 'DOWNLOAD_UNFINISHED' "
    "WHEN (c.id * 31) %% 100 < 83 THEN CASE WHEN jd.max_objects = c.max_objects THEN 'CONFIG_OBJECT_LIMIT' "
    "ELSE 'OBJECT_LIMIT' END WHEN (c.id * 31) %% 100 < 90 THEN 'SIZE_LIMIT' "
    "WHEN (c.id * 31) %% 100 < 95 THEN 'TIME_LIMIT' ELSE 'CONFIG_SIZE_LIMIT' END, now() - interval '30 days' "
    "FROM harvest_jobdomain jd JOIN harvest_job j ON j.id = jd.job_id "
    "JOIN harvest_domainconfiguration c ON c.id = jd.configuration_id "
    "WHERE j.harvest_id = (SELECT id FROM harvest_harvestdefinition WHERE name = 'broad-2026')",
    "INSERT INTO harvest_harvestinfo (job_id, harvest_id, domain_id, configuration_id, objects, bytes, stop_reason, "
    "\"date\") SELECT j.first + 100 + c.id %% 100, j.harvest_id, c.domain_id, c.id, 80, 80 * 20000, "
    "'DOWNLOAD_COMPLETE', now() - interval '2 years' FROM harvest_domainconfiguration c, "
    "(SELECT MIN(id) AS first, MIN(harvest_id) AS harvest_id FROM harvest_job WHERE harvest_id = "
    "(SELECT id FROM harvest_harvestdefinition WHERE name = 'broad-2025')) j "
    "WHERE c.id <= 2 * %(n)s - (SELECT COUNT(*) FROM harvest_harvestinfo)",
    "UPDATE harvest_job SET status = 'DONE' WHERE harvest_id = "
    "(SELECT id FROM harvest_harvestdefinition WHERE name = 'broad-2026')",
    # a third of the configurations stopped by their own object limit had it raised since
    "UPDATE harvest_domainconfiguration SET max_objects = 3000 WHERE max_objects = 2000 AND id %% 3 = 0",
    "INSERT INTO harvest_harvestdefinition (name, kind, comments, audience, active, runs, extended, created, edited, "
    "skipped_events, crawler_traps, max_objects, max_bytes, max_job_running_time_s, revisit_initial_wait_s, "
    "revisit_min_wait_s, revisit_max_wait_s, revisit_changed_factor, revisit_unchanged_factor, "
    "revisit_strip_regexes, channel_id, previous_id) "
    "SELECT 'broad-2026-part-2', 'snapshot', '', '', true, 0, '{}', now(), now(), 0, '', 20000, -1, 0, 86400, "
    "3600, 2419200, 1.5, 1.5, '', channel_id, id FROM harvest_harvestdefinition WHERE name = 'broad-2026'",
    "ANALYZE",
]


def phase() -> None:
    """One generation + dispatch, in this process: prints a JSON line of figures."""
    import django

    django.setup()
    from django.db import connection

    from orchestrator.harvest import dispatch, scheduler
    from orchestrator.harvest.models import Job

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
    print(json.dumps({
        "jobs": len(ids), "submitted": submitted, "domains": sum(j.domain_count for j in jobs.only("domain_count")),
        "generate_s": round(generated, 1), "dispatch_s": round(total - generated, 1), "total_s": round(total, 1),
        "generate_cpu_s": {"python": round(cpu1 - cpu0, 1), "postgres": round(db1 - db0, 1)},
        "dispatch_cpu_s": {"python": round(cpu2 - cpu1, 1), "postgres": round(db2 - db1, 1)},
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "load_average": [round(load, 1), round(os.getloadavg()[0], 1)],
    }))


def _cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _cpu_of(pid: int) -> float:
    """CPU seconds of a process on this machine (the PostgreSQL backend serving the run)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_phase(env: dict[str, str]) -> dict[str, float]:
    result = subprocess.run([sys.executable, __file__, "--phase"], env=env, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(result.stderr[-3000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", type=int, default=1_000_000)
    parser.add_argument("--phase", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        phase()
        return
    broker = os.environ.get("NETHARVEST_BROKER_URL", "")
    if not broker.startswith("redis://"):
        sys.exit("set NETHARVEST_BROKER_URL to the Redis database the benchmark may fill (and empty)")
    admin = psycopg2.connect(host="127.0.0.1", user="postgres", dbname="postgres")
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {DB}")
        cur.execute(f"CREATE DATABASE {DB}")
    env = {**os.environ, "NETHARVEST_DATABASE_URL": URL, "NETHARVEST_LOG_LEVEL": "WARNING",
           "NETHARVEST_DATA_DIR": tempfile.mkdtemp(prefix="bench-jobgen-"),
           "DJANGO_SETTINGS_MODULE": "orchestrator.settings", "PYTHONPATH": str(Path(__file__).parent.parent)}
    subprocess.run([str(Path(sys.executable).parent / "netharvest"), "migrate", "-v0"], env=env, check=True)
    n = args.domains
    print(f"seeded {n:,} domains in {sql(SEED, {'n': n}):.1f} s")
    snapshot = run_phase(env)
    print(f"snapshot: {json.dumps(snapshot)}")
    seconds = sql(HISTORY, {"n": n})
    with psycopg2.connect(host="127.0.0.1", user="postgres", dbname=DB) as conn, conn.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM harvest_harvestinfo")
        infos = cur.fetchone()[0]
    print(f"seeded {infos:,} HarvestInfo rows in {seconds:.1f} s")
    continuation = run_phase(env)
    print(f"continuation: {json.dumps(continuation)}")
    import redis

    client = redis.Redis.from_url(broker)
    print(f"broker: removed {client.llen('harvest.snapshot')} published job messages from harvest.snapshot")
    client.delete("harvest.snapshot")
    print(f"load average after the run: {os.getloadavg()}")


if __name__ == "__main__":
    main()
