"""Benchmark: the web UI's list and search pages over 4,000,000 domains and 10,000 jobs in PostgreSQL.

    .venv/bin/python benchmarks/bench_webui.py [--domains 4000000] [--jobs 10000] [--reuse] [--repeat 15]

Makes its own database (nh_bench_webui), migrates it, and seeds it set-based (INSERT … SELECT over
generate_series; a few seconds per million rows): N domains each with its default seed list and
configuration (0.1 % with comments, 0.05 % with crawler traps), 200 active daily selective harvests of
50 domains each and 5 snapshots, the jobs spread over them (20 running, 2 % failed), one HarvestInfo per
job and domain, and three archive files per job. Then it times each page through Django's test client
(the full stack below the socket: URL routing, the role check, queries, Jinja2 rendering) as a viewer:
one warm-up request, then ``--repeat`` timed ones; it prints the median and the slowest. ``--reuse`` skips
the seeding when the database is already there.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg2

DB = "nh_bench_webui"
URL = f"postgres://postgres@127.0.0.1:5432/{DB}"
TLDS = "ARRAY['fr','dk','se','no','de','com','org']"


def create_database(reuse: bool) -> bool:
    """True if the database must be seeded."""
    admin = psycopg2.connect(host="127.0.0.1", user="postgres", dbname="postgres")
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DB])
        if reuse and cur.fetchone():
            return False
        cur.execute(f"DROP DATABASE IF EXISTS {DB}")
        cur.execute(f"CREATE DATABASE {DB}")
    return True


def step(cur, label: str, sql: str, params: list | None = None) -> None:
    started = time.monotonic()
    cur.execute(sql.replace(" % ", " %% "), params or [])  # SQL's modulo, not a parameter
    print(f"  {label}: {cur.rowcount:,} rows in {time.monotonic() - started:.1f} s", flush=True)


def seed(domains: int, jobs: int) -> None:
    conn = psycopg2.connect(URL)
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute("SELECT id FROM harvest_crawltemplate WHERE name = 'default'")
        template = cur.fetchone()[0]
        cur.execute("SELECT name, id FROM harvest_harvestchannel")
        channels = dict(cur.fetchall())
        # A bulk load builds the trigram indexes once at the end, as an operator would.
        cur.execute("DROP INDEX IF EXISTS domain_name_trgm")
        step(cur, "domains", f"""
            INSERT INTO harvest_domain (name, comments, crawler_traps, extended, created)
            SELECT CASE WHEN i % 5000 = 0 THEN 'shop-' ELSE '' END || substr(md5(i::text), 1, 3 + i % 9) || i
                   || '.' || ({TLDS})[1 + i % 7],
                   CASE WHEN i % 1000 = 0 THEN 'Deposit agreement ' || i ELSE '' END,
                   CASE WHEN i % 2000 = 0 THEN '.*/calendar/.*' || chr(10) || '.*sessionid=' || i ELSE '' END,
                   '{{}}', now() - (i % 1000) * interval '1 hour'
            FROM generate_series(1, %s) i""", [domains])
        step(cur, "seed lists", "INSERT INTO harvest_seedlist (domain_id, name, seeds, comments) "
                                "SELECT id, 'defaultseeds', 'http://' || name || '/', '' FROM harvest_domain")
        step(cur, "configurations", "INSERT INTO harvest_domainconfiguration (domain_id, name, template_id, "
                                    "max_objects, max_bytes, is_default, comments) "
                                    "SELECT id, 'defaultconfig', %s, -1, -1, true, '' FROM harvest_domain", [template])
        step(cur, "configuration seed lists", "INSERT INTO harvest_domainconfiguration_seedlists "
             "(configuration_id, seedlist_id) SELECT c.id, s.id FROM harvest_domainconfiguration c "
             "JOIN harvest_seedlist s USING (domain_id)")
        step(cur, "trigram index on names", "CREATE INDEX domain_name_trgm ON harvest_domain "
                                            "USING gin (name gin_trgm_ops)")
        cur.execute("INSERT INTO harvest_schedule (name, comments, every, unit, anytime, at_minute, at_hour, \"end\") "
                    "VALUES ('daily 03:00', '', 1, 'day', false, 0, 3, 'never') RETURNING id")
        schedule = cur.fetchone()[0]
        common = ("comments, audience, extended, created, edited, skipped_events, crawler_traps, max_objects, "
                  "max_bytes, max_job_running_time_s, revisit_initial_wait_s, revisit_min_wait_s, "
                  "revisit_max_wait_s, revisit_changed_factor, revisit_unchanged_factor, revisit_strip_regexes")
        values = "'', '', '{}', now(), now(), 0, '', -1, -1, 0, 86400, 3600, 2419200, 1.5, 1.5, ''"
        step(cur, "selective definitions", f"""
            INSERT INTO harvest_harvestdefinition
                (name, kind, active, runs, channel_id, schedule_id, next_date, {common})
            SELECT 'selective ' || k, 'selective', true, 0, %s, %s,
                   date_trunc('day', now()) + interval '1 day 3 hours', {values}
            FROM generate_series(1, 200) k""", [channels["focused"], schedule])
        step(cur, "snapshot definitions", f"""
            INSERT INTO harvest_harvestdefinition (name, kind, active, runs, channel_id, {common})
            SELECT 'snapshot ' || k, 'snapshot', false, 0, %s, {values} FROM generate_series(1, 5) k""",
             [channels["snapshot"]])
        step(cur, "selections (50 domains each)", """
            INSERT INTO harvest_harvestdefinition_configurations (harvestdefinition_id, domainconfiguration_id)
            SELECT h.id, c.id FROM harvest_harvestdefinition h
            JOIN harvest_domainconfiguration c ON c.domain_id BETWEEN (substr(h.name, 11)::int - 1) * 50 + 1
                                                                  AND substr(h.name, 11)::int * 50
            WHERE h.kind = 'selective'""")
        step(cur, "jobs", """
            WITH defs AS (SELECT array_agg(id ORDER BY id) AS ids FROM harvest_harvestdefinition)
            INSERT INTO harvest_job (harvest_id, harvest_run, channel_id, status, spec, domain_count,
                                     expected_objects, expected_bytes, created, started_at, ended_at, last_heartbeat,
                                     harvester, progress, error_category, error_detail)
            SELECT defs.ids[1 + i % 205], 1 + i / 205, h.channel_id,
                   CASE WHEN i % 500 = 1 THEN 'STARTED' WHEN i % 50 = 0 THEN 'FAILED' ELSE 'DONE' END,
                   '{}', 50, 0, 0, now() - (%s - i) * interval '1 hour', now() - (%s - i) * interval '1 hour',
                   CASE WHEN i % 500 = 1 THEN NULL
                        ELSE now() - (%s - i) * interval '1 hour' + interval '30 minutes' END,
                   now(), 'harvester-' || (i % 8),
                   CASE WHEN i % 500 = 1 THEN jsonb_build_object('uris_done', i, 'uris_queued', 500, 'bytes', i * 1000,
                        'uri_rate', 10.5, 'kb_rate', 250.0) ELSE '{}'::jsonb END,
                   CASE WHEN i % 50 = 0 THEN 'harvester_lost' ELSE '' END,
                   CASE WHEN i % 50 = 0 THEN 'no heartbeat for 15 minutes' ELSE '' END
            FROM generate_series(1, %s) i, defs, harvest_harvestdefinition h WHERE h.id = defs.ids[1 + i % 205]""",
             [jobs, jobs, jobs, jobs])
        cur.execute("UPDATE harvest_harvestdefinition h SET runs = (SELECT coalesce(max(harvest_run), 0) "
                    "FROM harvest_job j WHERE j.harvest_id = h.id)")
        step(cur, "harvest history (per job and domain)", """
            INSERT INTO harvest_harvestinfo (job_id, harvest_id, domain_id, configuration_id, objects, bytes,
                                             stop_reason, date)
            SELECT j.id, j.harvest_id, c.domain_id, c.id, 100 + (j.id * 7 + c.id) % 5000,
                   (1000 + (j.id * 13 + c.id) % 900000) * 100,
                   CASE WHEN (j.id + c.id) % 7 = 0 THEN 'max_bytes' ELSE 'completed' END, j.ended_at
            FROM harvest_job j
            JOIN harvest_harvestdefinition_configurations hc ON hc.harvestdefinition_id = j.harvest_id
            JOIN harvest_domainconfiguration c ON c.id = hc.domainconfiguration_id
            WHERE j.status = 'DONE'""")
        step(cur, "archive files", """
            INSERT INTO harvest_archivefile (name, kind, job_id, harvest_id, size, sha256, harvester_sha256,
                                             spool_path, index_state, cdx_path, records, error, created, updated)
            SELECT 'job' || j.id || '-' || k || '.warc.gz', 'warc', j.id, j.harvest_id, 1073741824, md5(j.id::text),
                   '', '', (ARRAY['CLEANED','CLEANED','CLEANED','INDEXED','TRANSFERRED','FAILED'])[1 + (j.id + k) % 6],
                   '', 1000, '', now(), now()
            FROM harvest_job j, generate_series(1, 3) k""")
        started = time.monotonic()
        cur.execute("VACUUM ANALYZE")
        print(f"  vacuum analyze: {time.monotonic() - started:.1f} s", flush=True)
    conn.close()


def pages() -> list[tuple[str, str]]:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("SELECT d.name FROM harvest_domain d JOIN harvest_harvestinfo i ON i.domain_id = d.id "
                    "GROUP BY d.name ORDER BY count(*) DESC LIMIT 1")
        busy = cur.fetchone()[0]
        cur.execute("SELECT id FROM harvest_harvestdefinition WHERE name = 'selective 1'")
        selective = cur.fetchone()[0]
        cur.execute("SELECT name FROM harvest_domain WHERE id = (SELECT max(id) / 2 FROM harvest_domain)")
        middle = cur.fetchone()[0]
    return [
        ("dashboard", "/"),
        ("domains, first page", "/domains/"),
        ("domains, a page deep in the list (keyset)", f"/domains/?after={middle}"),
        ("domains, prefix `ab`", "/domains/?q=ab"),
        ("domains, prefix `ab`, next page", "/domains/?q=ab&after=ab0"),
        ("domains, `*shop*` (rare infix)", "/domains/?q=*shop*"),
        ("domains, `*77*` (common infix)", "/domains/?q=*77*"),
        ("domains, `?b*.se`", "/domains/?q=%3Fb*.se"),
        ("domains, `*zzz*` (no match)", "/domains/?q=*zzz*"),
        ("domains, in crawler traps `sessionid=4`", "/domains/?q=sessionid%3D4&in=crawler_traps"),
        ("domains, in comments `agreement 99`", "/domains/?q=agreement+99&in=comments"),
        ("domain page (most history)", f"/domains/{busy}/"),
        ("harvest definitions", "/definitions/"),
        ("selective definition page", f"/definitions/{selective}/"),
        ("schedules", "/schedules/"),
        ("templates", "/templates/"),
        ("channels", "/channels/"),
        ("trap lists", "/traps/"),
    ]


def time_pages(repeat: int) -> None:
    from django.contrib.auth.models import Group, User
    from django.test import Client

    user, _ = User.objects.get_or_create(username="bench-viewer")
    user.groups.add(Group.objects.get(name="viewer"))
    client = Client()
    client.force_login(user)
    print("\n| Page | median ms | slowest ms |\n|---|---:|---:|")
    for label, url in pages():
        response = client.get(url)
        if response.status_code != 200:
            sys.exit(f"{url}: HTTP {response.status_code}")
        timings = []
        for _ in range(repeat):
            started = time.perf_counter()
            client.get(url)
            timings.append((time.perf_counter() - started) * 1000)
        print(f"| {label} | {statistics.median(timings):.0f} | {max(timings):.0f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", type=int, default=4_000_000)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--reuse", action="store_true", help="keep an already seeded database")
    args = parser.parse_args()
    data_dir = os.environ.get("NETHARVEST_DATA_DIR") or tempfile.mkdtemp(prefix="bench-webui-")
    os.environ.update(NETHARVEST_DATABASE_URL=URL, NETHARVEST_ALLOWED_HOSTS="testserver", NETHARVEST_DATA_DIR=data_dir,
                      DJANGO_SETTINGS_MODULE="orchestrator.settings")
    fresh = create_database(args.reuse)
    exe = str(Path(sys.executable).parent / "netharvest")
    subprocess.run([exe, "migrate", "-v0"], check=True)  # a reused database may lag the code's migrations
    if fresh:
        started = time.monotonic()
        print(f"seeding {args.domains:,} domains and {args.jobs:,} jobs:")
        seed(args.domains, args.jobs)
        print(f"seeded in {time.monotonic() - started:.0f} s")
    import django

    django.setup()
    time_pages(args.repeat)


if __name__ == "__main__":
    main()
