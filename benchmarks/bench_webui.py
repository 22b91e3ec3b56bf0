"""Benchmark: the web UI's list and search pages over 4,000,000 domains and 10,000 jobs in PostgreSQL.

    .venv/bin/python benchmarks/bench_webui.py [--domains 4000000] [--jobs 10000] [--reuse] [--repeat 15]

Makes its own database (``--database``, nh_bench_webui), migrates it, and seeds it: N domains through the
product's ``create_domains`` (each with its default seed list and configuration; 0.1 % with comments,
0.05 % with crawler traps), then set-based (benchmarks/rows.py: INSERT … SELECT with the columns of the
real models): 200 active daily selective harvests of 50 domains each and 5 snapshots, the jobs spread
over them (20 running, 2 % failed), one HarvestInfo per job and domain, and three archive files per job.
Then it times each page through Django's test client (the full stack below the socket: URL routing, the
role check, queries, Jinja2 rendering) as a viewer: one warm-up request, then ``--repeat`` timed ones;
it prints the median and the slowest. ``--reuse`` skips the seeding when the database is already there.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
TLDS = ["fr", "dk", "se", "no", "de", "com", "org"]


def exists(database: str) -> bool:
    admin = psycopg2.connect(host="127.0.0.1", user="postgres", dbname="postgres")
    try:
        with admin.cursor() as cur:
            cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database])
            return cur.fetchone() is not None
    finally:
        admin.close()


def domain_name(i: int) -> str:
    """Names spread over the alphabet and the TLDs; one in 5,000 a `shop-` name (a rare infix)."""
    return f"{'shop-' if i % 5000 == 0 else ''}{hashlib.md5(str(i).encode()).hexdigest()[: 3 + i % 9]}{i}.{TLDS[i % 7]}"


def seed(domains: int, jobs: int) -> None:
    from rows import execute, insert_select

    from orchestrator.harvest.curation.domains import create_domains
    from orchestrator.harvest.models import (
        ArchiveFile,
        HarvestChannel,
        HarvestDefinition,
        HarvestInfo,
        Job,
        Schedule,
    )

    channels = dict(HarvestChannel.objects.values_list("name", "id"))
    # A bulk load builds the trigram indexes once at the end, as an operator would.
    execute("DROP INDEX IF EXISTS domain_name_trgm")
    started = time.monotonic()
    for first in range(1, domains + 1, 20_000):
        create_domains([domain_name(i) for i in range(first, min(first + 20_000, domains + 1))])
    print(
        f"  domains (each with its seed list and configuration): {domains:,} in {time.monotonic() - started:.1f} s",
        flush=True,
    )
    execute(
        "UPDATE harvest_domain SET comments = 'Deposit agreement ' || id WHERE id %% 1000 = 0",
        label="domains with comments",
    )
    execute(
        "UPDATE harvest_domain SET crawler_traps = '.*/calendar/.*' || chr(10) || '.*sessionid=' || id "
        "WHERE id %% 2000 = 0",
        label="domains with crawler traps",
    )
    execute(
        "CREATE INDEX domain_name_trgm ON harvest_domain USING gin (name gin_trgm_ops)", label="trigram index on names"
    )
    schedule = Schedule.objects.create(
        name="daily 03:00", every=1, unit="day", anytime=False, at_minute=0, at_hour=3, end="never"
    )
    insert_select(
        HarvestDefinition,
        {
            "name": "'selective ' || k",
            "kind": "'selective'",
            "active": "true",
            "channel": str(channels["focused"]),
            "schedule": str(schedule.pk),
            "next_date": "date_trunc('day', now()) + interval '1 day 3 hours'",
        },
        "FROM generate_series(1, 200) k",
        label="selective definitions",
    )
    insert_select(
        HarvestDefinition,
        {"name": "'snapshot ' || k", "kind": "'snapshot'", "channel": str(channels["snapshot"])},
        "FROM generate_series(1, 5) k",
        label="snapshot definitions",
    )
    insert_select(
        HarvestDefinition.configurations.through,
        {"harvestdefinition": "h.id", "domainconfiguration": "c.id"},
        "FROM harvest_harvestdefinition h JOIN harvest_domainconfiguration c "
        "ON c.domain_id BETWEEN (substr(h.name, 11)::int - 1) * 50 + 1 AND substr(h.name, 11)::int * 50 "
        "WHERE h.kind = 'selective'",
        label="selections (50 domains each)",
    )
    hours_ago = f"now() - ({jobs} - i) * interval '1 hour'"
    insert_select(
        Job,
        {
            "harvest": "h.id",
            "harvest_run": "1 + i / 205",
            "channel": "h.channel_id",
            "status": "CASE WHEN i %% 500 = 1 THEN 'STARTED' WHEN i %% 50 = 0 THEN 'FAILED' ELSE 'DONE' END",
            "spec": "'{}'",
            "domain_count": "50",
            "created": hours_ago,
            "started_at": hours_ago,
            "ended_at": f"CASE WHEN i %% 500 = 1 THEN NULL ELSE {hours_ago} + interval '30 minutes' END",
            "last_heartbeat": "now()",
            "harvester": "'harvester-' || (i %% 8)",
            "progress": "CASE WHEN i %% 500 = 1 THEN jsonb_build_object('uris_done', i, 'uris_queued', 500, "
            "'bytes', i * 1000, 'uri_rate', 10.5, 'kb_rate', 250.0) ELSE '{}'::jsonb END",
            "error_category": "CASE WHEN i %% 50 = 0 THEN 'harvester_lost' ELSE '' END",
            "error_detail": "CASE WHEN i %% 50 = 0 THEN 'no heartbeat for 15 minutes' ELSE '' END",
        },
        "FROM generate_series(1, %s) i, (SELECT array_agg(id ORDER BY id) AS ids FROM harvest_harvestdefinition) "
        "defs, harvest_harvestdefinition h WHERE h.id = defs.ids[1 + i %% 205]",
        [jobs],
        label="jobs",
    )
    execute(
        "UPDATE harvest_harvestdefinition h SET runs = (SELECT coalesce(max(harvest_run), 0) "
        "FROM harvest_job j WHERE j.harvest_id = h.id)"
    )
    insert_select(
        HarvestInfo,
        {
            "job": "j.id",
            "harvest": "j.harvest_id",
            "domain": "c.domain_id",
            "configuration": "c.id",
            "objects_count": "100 + (j.id * 7 + c.id) %% 5000",
            "bytes_count": "(1000 + (j.id * 13 + c.id) %% 900000) * 100",
            "stop_reason": "CASE WHEN (j.id + c.id) %% 7 = 0 THEN 'SIZE_LIMIT' ELSE 'DOWNLOAD_COMPLETE' END",
            "date": "j.ended_at",
        },
        "FROM harvest_job j JOIN harvest_harvestdefinition_configurations hc ON hc.harvestdefinition_id = j.harvest_id "
        "JOIN harvest_domainconfiguration c ON c.id = hc.domainconfiguration_id WHERE j.status = 'DONE'",
        label="harvest history (per job and domain)",
    )
    insert_select(
        ArchiveFile,
        {
            "name": "'job' || j.id || '-' || k || '.warc.gz'",
            "kind": "'warc'",
            "job": "j.id",
            "harvest": "j.harvest_id",
            "size": "1073741824",
            "sha256": "md5(j.id::text)",
            "records": "1000",
            "index_state": "(ARRAY['CLEANED','CLEANED','CLEANED','INDEXED','TRANSFERRED','FAILED'])"
            "[1 + (j.id + k) %% 6]",
        },
        "FROM harvest_job j, generate_series(1, 3) k",
        label="archive files",
    )
    started = time.monotonic()
    execute("VACUUM ANALYZE")
    print(f"  vacuum analyze: {time.monotonic() - started:.1f} s", flush=True)


def pages() -> list[tuple[str, str]]:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(
            "SELECT d.name FROM harvest_domain d JOIN harvest_harvestinfo i ON i.domain_id = d.id "
            "GROUP BY d.name ORDER BY count(*) DESC LIMIT 1"
        )
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
    from timed_get import timed_get

    user, _ = User.objects.get_or_create(username="bench-viewer")
    user.groups.add(Group.objects.get(name="viewer"))
    client = Client()
    client.force_login(user)
    print("\n| Page | median ms | slowest ms |\n|---|---:|---:|")
    for label, url in pages():
        median, worst, _ = timed_get(client, url, repeat)
        print(f"| {label} | {median:.0f} | {worst:.0f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", type=int, default=4_000_000)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--database", default="nh_bench_webui")
    parser.add_argument("--reuse", action="store_true", help="keep an already seeded database")
    args = parser.parse_args()
    extra = {"NETHARVEST_ALLOWED_HOSTS": "testserver", "DJANGO_SETTINGS_MODULE": "orchestrator.settings"}
    if args.reuse and exists(args.database):
        fresh = False
        os.environ.update(
            extra,
            NETHARVEST_DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{args.database}",
            NETHARVEST_DATA_DIR=os.environ.get("NETHARVEST_DATA_DIR") or tempfile.mkdtemp(prefix="bench-webui-"),
        )
        # a reused database may lag the code's migrations
        subprocess.run([str(Path(sys.executable).parent / "netharvest"), "migrate", "-v0"], check=True)
    else:
        from fresh_database import fresh_database

        fresh = True
        os.environ.update(fresh_database(args.database, "bench-webui-", extra)[0])
    import django

    django.setup()
    if fresh:
        started = time.monotonic()
        print(f"seeding {args.domains:,} domains and {args.jobs:,} jobs:")
        seed(args.domains, args.jobs)
        print(f"seeded in {time.monotonic() - started:.0f} s")
    time_pages(args.repeat)


if __name__ == "__main__":
    main()
