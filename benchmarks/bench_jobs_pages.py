"""Benchmark: the Jobs and QA pages on a seeded PostgreSQL database (10,000 jobs, a broad crawl per year).

    .venv/bin/python benchmarks/bench_jobs_pages.py [--jobs 10000] [--domains 200000]

Makes a fresh database (``--database``, netharvest_bench_jobs), migrates it, and seeds: ``--domains``
domains (with their default configurations), 12 harvest definitions (10 selective, 2 snapshot), ``--jobs`` jobs over two
years in every status, one JobStats row per ended job (30 MIME types, 8 status codes, 6 TLDs), and
HarvestInfo for one snapshot run per year over every domain (1,000 domains per job) plus the selective
jobs' domains. Then times each page through Django's test client in-process (the view, its queries
and the Jinja2 rendering; no HTTP server), 7 times after one warm-up, and prints the median and max.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DB = "netharvest_bench_jobs"
MIMES = [
    "text/html",
    "image/jpeg",
    "image/png",
    "text/css",
    "application/javascript",
    "application/pdf",
    "image/gif",
    "text/plain",
    "application/json",
    "image/svg+xml",
    "font/woff2",
    "video/mp4",
    "audio/mpeg",
    "application/xml",
    "image/webp",
] + [f"application/x-type-{i}" for i in range(15)]
CODES = ["200", "301", "302", "304", "403", "404", "500", "503"]
TLDS = ["fr", "dk", "com", "net", "org", "eu"]


def seed(n_jobs: int, n_domains: int) -> dict[str, object]:
    from django.utils import timezone

    from orchestrator.harvest.curation.domains import create_domains
    from orchestrator.harvest.models import (
        DomainConfiguration,
        HarvestChannel,
        HarvestDefinition,
        HarvestInfo,
        Job,
        JobStats,
    )

    rng = random.Random(6)
    t0 = time.monotonic()
    names = [f"d{i:07d}-{rng.randrange(10**6)}.{TLDS[i % len(TLDS)]}" for i in range(n_domains)]
    for start in range(0, n_domains, 20_000):
        create_domains(names[start : start + 20_000])
    print(f"  domains: {n_domains:,} in {time.monotonic() - t0:.0f} s", flush=True)
    focused, snapshot = HarvestChannel.objects.get(name="focused"), HarvestChannel.objects.get(name="snapshot")
    selective = [
        HarvestDefinition.objects.create(name=f"selective {i}", kind="selective", channel=focused) for i in range(10)
    ]
    broad = [
        HarvestDefinition.objects.create(name=f"broad {y}", kind="snapshot", channel=snapshot) for y in (2025, 2026)
    ]
    configs = list(DomainConfiguration.objects.order_by("id").values_list("id", "domain_id", "domain__name"))
    per_job = 1000
    broad_jobs = len(configs) // per_job
    now = timezone.now()
    jobs: list[Job] = []
    for year_index, definition in enumerate(broad):
        for k in range(broad_jobs):
            ended = now.replace(year=2025 + year_index, month=6, day=1) + timezone.timedelta(minutes=k)
            jobs.append(
                Job(
                    harvest=definition,
                    harvest_run=1,
                    channel=snapshot,
                    spec={"domains": []},
                    status="DONE",
                    created=ended,
                    ended_at=ended,
                    domain_count=per_job,
                )
            )
    statuses = ["DONE"] * 90 + ["FAILED"] * 5 + ["RESUBMITTED"] * 2 + ["STARTED"] + ["SUBMITTED"] + ["NEW"]
    for k in range(n_jobs - len(jobs)):
        definition = selective[k % 10]
        created = now - timezone.timedelta(hours=k % (2 * 365 * 24))
        status = rng.choice(statuses)
        jobs.append(
            Job(
                harvest=definition,
                harvest_run=1 + k // 10 % 200,
                channel=focused,
                spec={"domains": []},
                status=status,
                created=created,
                domain_count=20,
                ended_at=created if status in ("DONE", "FAILED", "RESUBMITTED") else None,
            )
        )
    Job.objects.bulk_create(jobs, batch_size=5000)
    jobs = list(Job.objects.select_related("harvest").order_by("id"))
    infos = []
    tops: dict[int, list[list[object]]] = {}
    broad_by_year = [j for j in jobs if j.harvest.kind == "snapshot"]
    for index, job in enumerate(broad_by_year):
        chunk = configs[(index % broad_jobs) * per_job : (index % broad_jobs + 1) * per_job]
        mine = []
        for config_id, domain_id, name in chunk:
            objects = int(rng.paretovariate(0.9))
            mine.append([name, objects, objects * 30000])
            infos.append(
                HarvestInfo(
                    job=job,
                    harvest_id=job.harvest_id,
                    domain_id=domain_id,
                    configuration_id=config_id,
                    objects_count=objects,
                    bytes_count=objects * 30000,
                    stop_reason="DOWNLOAD_COMPLETE" if objects < 5000 else "OBJECT_LIMIT",
                    date=job.ended_at,
                )
            )
        tops[job.pk] = sorted(mine, key=lambda r: -r[2])[:100]  # what record_job_stats keeps (by bytes)
        if len(infos) >= 50_000:
            HarvestInfo.objects.bulk_create(infos, batch_size=10_000)
            infos = []
    HarvestInfo.objects.bulk_create(infos, batch_size=10_000)
    stats = []
    for job in jobs:
        if job.status not in ("DONE", "FAILED", "RESUBMITTED"):
            continue
        mimes = {m: [rng.randint(1, 5000), rng.randint(1000, 10**8)] for m in MIMES}
        stats.append(
            JobStats(
                job=job,
                harvest_id=job.harvest_id,
                harvest_run=job.harvest_run,
                kind=job.harvest.kind,
                year=job.ended_at.year,
                domains=job.domain_count,
                objects_count=sum(v[0] for v in mimes.values()),
                bytes_count=sum(v[1] for v in mimes.values()),
                mime_types=mimes,
                status_codes={c: rng.randint(1, 9000) for c in CODES},
                tlds={t: [rng.randint(1, 300), rng.randint(1, 9000), rng.randint(1, 10**9)] for t in TLDS},
                size_buckets={"0": 10, "1–9": 500, "10–99": 300, "100–999": 150, "1,000–9,999": 35, "10,000+": 5},
                stop_reasons={"DOWNLOAD_COMPLETE": 990, "OBJECT_LIMIT": 10},
                reports_source="bench",
                top_domains=tops.get(job.pk)
                or [[configs[rng.randrange(len(configs))][2], 100, 10**6] for _ in range(20)],
            )
        )
    JobStats.objects.bulk_create(stats, batch_size=5000)
    print(
        f"  seeded {len(jobs):,} jobs, {HarvestInfo.objects.count():,} HarvestInfo rows, "
        f"{len(stats):,} JobStats rows in {time.monotonic() - t0:.0f} s",
        flush=True,
    )
    return {
        "selective": selective[3],
        "broad": broad[1],
        "broad_job": broad_by_year[-1],
        "failed": Job.objects.filter(status="FAILED").first(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--domains", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--database", default=DB, help="made afresh (dropped first if it exists)")
    args = parser.parse_args()
    from fresh_database import django_on_fresh_database
    from timed_get import timed_get

    django_on_fresh_database(args.database, "bench-jobs-")
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment

    objects = seed(args.jobs, args.domains)
    with connection.cursor() as cur:
        cur.execute("ANALYZE")
    setup_test_environment()
    client = Client()
    client.force_login(User.objects.create_superuser("bench", password="x"))
    sel, broad, broad_job, failed = objects["selective"], objects["broad"], objects["broad_job"], objects["failed"]
    year = broad_job.ended_at.year
    pages = [
        ("jobs list, first page", "/jobs/"),
        ("jobs list, page 150", "/jobs/?page=150"),
        ("jobs list, status=FAILED", "/jobs/?status=FAILED"),
        ("jobs list, definition + dates", f"/jobs/?harvest={sel.pk}&created_from=2026-01-01&created_to=2026-12-31"),
        ("running jobs", "/jobs/running/"),
        ("running.json", "/jobs/running.json"),
        ("job page (1,000 domains)", f"/jobs/{broad_job.pk}/"),
        ("job page (failed selective)", f"/jobs/{failed.pk}/"),
        ("QA index", "/qa/"),
        ("QA job", f"/qa/job/{broad_job.pk}/"),
        ("QA selective run vs previous", f"/qa/harvest/{sel.pk}/run/5/"),
        ("QA broad run (200 jobs)", f"/qa/harvest/{broad.pk}/run/1/"),
        (f"QA year {year} vs {year - 1}", f"/qa/year/{year}/"),
        (f"QA year {year} CSV", f"/qa/year/{year}/?format=csv"),
    ]
    print(f"| page | median | max | (n={args.repeat}) |\n|---|---|---|---|")
    for label, url in pages:
        median, worst, _ = timed_get(client, url, args.repeat)
        print(f"| {label} | {median:.0f} ms | {worst:.0f} ms | `{url}` |", flush=True)


if __name__ == "__main__":
    main()
