"""Benchmark: /metrics scrapes and REST API reads on a seeded PostgreSQL database.

    .venv/bin/python benchmarks/bench_api.py [--jobs 5000] [--running 200] [--files 100000] [--repeat 7]

Makes a fresh database (``--database``, netharvest_bench_api), migrates it, and seeds ``--jobs`` jobs in every
status over both channels, ``--running`` of them STARTED with a Progress heartbeat, and ``--files`` archive
files (95 % done with the chain, the rest spread over its states, some failed). Then times, through Django's
test client in-process (view, queries, serialisation; no HTTP server), one /metrics scrape (with the broker
on ``NETHARVEST_BROKER_URL``) and a few API reads with a token, 1 warm-up + ``--repeat`` times each, and prints
the median, the max and the number of SQL queries; then what each metric family cost in the last scrape.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DB = "netharvest_bench_api"


def seed(n_jobs: int, n_running: int, n_files: int) -> None:
    from django.utils import timezone

    from orchestrator.harvest.models import ArchiveFile, HarvestChannel, HarvestDefinition, Job

    rng = random.Random(15)
    focused, snapshot = HarvestChannel.objects.get(name="focused"), HarvestChannel.objects.get(name="snapshot")
    definitions = [
        HarvestDefinition.objects.create(name=f"selective {i}", kind="selective", channel=focused) for i in range(10)
    ] + [HarvestDefinition.objects.create(name="broad", kind="snapshot", channel=snapshot)]
    now = timezone.now()
    statuses = ["DONE"] * 90 + ["FAILED"] * 5 + ["RESUBMITTED"] * 2 + ["SUBMITTED"] * 2 + ["NEW"]
    jobs = []
    for k in range(n_jobs):
        definition = definitions[k % len(definitions)]
        running = k < n_running
        progress = (
            {
                "at": now.isoformat(),
                "uris_done": rng.randrange(10**6),
                "uris_queued": rng.randrange(10**5),
                "uris_failed": rng.randrange(1000),
                "bytes": rng.randrange(10**11),
                "uri_rate": rng.random() * 50,
                "kb_rate": rng.random() * 5000,
                "domains": {f"d{i}.fr": {"objects": i, "bytes": i * 1000} for i in range(50)},
            }
            if running
            else {}
        )
        jobs.append(
            Job(
                harvest=definition,
                harvest_run=1 + k // 50,
                channel=definition.channel,
                spec={"domains": []},
                status="STARTED" if running else rng.choice(statuses),
                created=now,
                progress=progress,
                harvester=f"harvester-{k % 40}@host{k % 40}" if running else "",
                last_heartbeat=now if running else None,
            )
        )
    Job.objects.bulk_create(jobs, batch_size=2000)
    job_ids = list(Job.objects.values_list("id", flat=True))
    pending = ["HARVESTED", "INGESTED", "INDEXED", "TRANSFERRED", "BACKED_UP", "FAILED"]
    files = []
    for i in range(n_files):
        state = "CLEANED" if rng.random() < 0.95 else rng.choice(pending)
        files.append(
            ArchiveFile(
                name=f"f{i:08d}.warc.gz",
                job_id=job_ids[i % len(job_ids)],
                size=10**9,
                sha256="",
                index_state=state,
                failed_step="INDEXED" if state == "FAILED" else "",
            )
        )
        if len(files) == 20_000:
            ArchiveFile.objects.bulk_create(files)
            files = []
    ArchiveFile.objects.bulk_create(files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--running", type=int, default=200)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--database", default=DB, help="made afresh (dropped first if it exists)")
    args = parser.parse_args()
    from fresh_database import django_on_fresh_database
    from timed_get import timed_get

    django_on_fresh_database(args.database, "bench-api-")
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment
    from prometheus_client.parser import text_string_to_metric_families

    from orchestrator.api import tokens

    t0 = time.monotonic()
    seed(args.jobs, args.running, args.files)
    with connection.cursor() as cur:
        cur.execute("ANALYZE")
    print(
        f"seeded {args.jobs:,} jobs ({args.running:,} running), {args.files:,} archive files in "
        f"{time.monotonic() - t0:.0f} s",
        flush=True,
    )
    setup_test_environment()
    token = tokens.create(User.objects.create_superuser("bench", password="x"))[1]
    client = Client(REMOTE_ADDR="127.0.0.1")
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    from orchestrator.harvest.models import Job

    job = Job.objects.filter(status="STARTED").values_list("id", flat=True).first()
    print(f"| request | median | max | SQL queries | (n={args.repeat}) |\n|---|---|---|---|---|")
    for label, url, headers in (
        ("metrics scrape", "/metrics", {}),
        ("GET /api/v1/jobs (first page of 100)", "/api/v1/jobs", auth),
        ("GET /api/v1/jobs?status=FAILED", "/api/v1/jobs?status=FAILED", auth),
        ("GET /api/v1/jobs/{id} (running)", f"/api/v1/jobs/{job}", auth),
        ("GET /api/v1/definitions", "/api/v1/definitions", auth),
    ):
        median, worst, queries = timed_get(client, url, args.repeat, **headers)
        print(f"| {label} | {median:.1f} ms | {worst:.1f} ms | {queries} | `{url}` |", flush=True)
    text = client.get("/metrics").content.decode()
    print("\nlast scrape, per family:")
    for family in text_string_to_metric_families(text):
        if family.name == "netharvest_scrape_seconds":
            for sample in family.samples:
                print(f"  {sample.labels['family']:<8} {sample.value * 1000:.2f} ms")
    print(f"scrape size: {len(text):,} bytes, {text.count(chr(10)):,} lines")


if __name__ == "__main__":
    main()
