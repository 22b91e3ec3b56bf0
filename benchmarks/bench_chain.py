"""Benchmark: the indexer chain (`netharvest index run`, then `netharvest index merge --big`) over generated WARCs.

    .venv/bin/python benchmarks/bench_chain.py [--files 40] [--records 2000] [--workdir /tmp]

Makes a fresh PostgreSQL database (netharvest_bench_chain), migrates it, writes one gzipped WARC of
``--records`` HTML responses (varied payloads, ~2.5 KB each) and gives a job ``--files`` copies of it under
distinct names in a spool directory, recorded through the real result intake. Then times, as subprocesses:
the whole chain in one process (ingest: SHA-256; index: CDX + dedup feed; transfer and backup: verified
copies to two storage locations and a replica on the same disk; delete), and merge + bigmerge into the
master CDX and PATH. Beside them, ``sha256sum`` of the same bytes as the disk/hash baseline (the chain reads
each file about five times: two hashes, the index step, and two copies that are re-read to verify them).

Before the chain, the index step alone (CDX + dedup feed of every spool file, in this process) is timed both
ways, alternated ``--index-rounds`` times so load changes on a shared machine hit both alike: the old two
passes (``write_cdx`` then ``add_warc``, each parsing the WARC) and the one pass the chain uses
(``indexer.indexpass.index_warc``). CPU seconds are the fair figure under load; wall is printed beside them.
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from io import BytesIO
from pathlib import Path

DB = "netharvest_bench_chain"
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fresh_database import fresh_database  # noqa: E402


def make_warc(path: Path, records: int) -> None:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    rng = random.Random(7)
    words = [f"word{i}" for i in range(5000)]
    with path.open("wb") as out:
        writer = WARCWriter(out, gzip=True)
        for i in range(records):
            body = ("<html><body>" + " ".join(rng.choices(words, k=300)) + "</body></html>").encode()
            headers = StatusAndHeaders(
                "200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(body)))], protocol="HTTP/1.1"
            )
            record = writer.create_warc_record(
                f"http://host{i % 50}.example.fr/page/{i}", "response", payload=BytesIO(body), http_headers=headers
            )
            writer.write_record(record)


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one command (its own rusage, from wait4)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed with exit status {proc.returncode}")
    return wall, usage.ru_maxrss / 1024


def index_step(paths: list[Path], work: Path, rounds: int) -> dict[str, list[tuple[float, float]]]:
    """CPU and wall seconds of the index step over ``paths``: two passes vs one pass, alternated."""
    from indexer.cdx import write_cdx
    from indexer.dedup import DedupIndex
    from indexer.dedupfeed import add_warc
    from indexer.indexpass import index_warc

    def two_passes(out: Path) -> None:
        with DedupIndex(out / "dedup.sqlite") as dedup:
            for p in paths:
                write_cdx(p, out / (p.name + ".cdx"), filename=p.name)
                add_warc(dedup, p, p.name)

    def one_pass(out: Path) -> None:
        with DedupIndex(out / "dedup.sqlite") as dedup:
            for p in paths:
                result = index_warc(p, out / (p.name + ".cdx"), filename=p.name)
                with result.captures:
                    dedup.add(result.captures)

    variants = [("two passes (before)", two_passes), ("one pass (index step)", one_pass)]
    times: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in variants}
    for i in range(rounds):
        for name, step in variants if i % 2 == 0 else variants[::-1]:
            out = work / "index-step"
            out.mkdir()
            cpu, wall = time.process_time(), time.perf_counter()
            step(out)
            times[name].append((time.process_time() - cpu, time.perf_counter() - wall))
            shutil.rmtree(out)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--index-rounds", type=int, default=3, help="alternated rounds of the index step timing")
    parser.add_argument("--workdir", default=tempfile.gettempdir())
    parser.add_argument("--database", default=DB, help="made afresh (dropped first if it exists)")
    args = parser.parse_args()

    env, netharvest, work = fresh_database(
        args.database,
        "bench-chain-",
        {"DJANGO_SETTINGS_MODULE": "orchestrator.settings", "NETHARVEST_LOG_LEVEL": "WARNING"},
        args.workdir,
    )
    for name in ("node1", "node2", "backup", "spool"):
        (work / name).mkdir()
    env.update(
        {
            "NETHARVEST_INDEX_DIR": str(work / "index"),
            "NETHARVEST_STORAGE_LOCATIONS": f"node1={work / 'node1'},node2={work / 'node2'}",
            "NETHARVEST_BACKUP_LOCATION": f"backup={work / 'backup'}",
        }
    )
    os.environ.update(env)

    import django

    django.setup()
    from orchestrator.harvest.jobs import intake
    from tests.orchestrator import factories

    warc = work / "template.warc.gz"
    make_warc(warc, args.records)
    job = factories.job(domains=["example.fr"], status="STARTED")
    spool = work / "spool" / str(job.pk) / "warcs"
    spool.mkdir(parents=True)
    files = []
    from indexer.transfer import sha256_file

    digest = sha256_file(warc)
    for i in range(args.files):
        dest = spool / f"{job.pk}-{job.harvest_id}-20261123120000-{i:05d}-bench.warc.gz"
        shutil.copyfile(warc, dest)
        files.append({"name": dest.name, "path": str(dest), "size": dest.stat().st_size, "sha256": digest})
    intake.record_result(
        {
            "version": 1,
            "job_id": job.pk,
            "status": "DONE",
            "ended": "2026-11-23T12:00:00Z",
            "files": files,
            "domains": [],
        }
    )
    total = sum(f["size"] for f in files)
    with gzip.open(warc) as g:
        uncompressed = len(g.read()) * args.files

    subprocess.run(["sync"], check=True)
    step_times = index_step([Path(f["path"]) for f in files], work, args.index_rounds)
    sha_wall, _ = run(["sha256sum", *[f["path"] for f in files]], env)
    chain_wall, chain_rss = run([netharvest, "index", "run"], env)
    merge_wall, merge_rss = run([netharvest, "index", "merge", "--big"], env)
    lines = sum(1 for _ in open(work / "index" / "master.cdx", "rb")) - 1

    mb = total / 1024 / 1024
    print(
        f"{args.files} WARCs x {args.records} records: {mb:.1f} MB gzipped ({uncompressed / 1024 / 1024:.0f} MB "
        f"uncompressed), {args.files * args.records} records"
    )
    for name, samples in step_times.items():
        cpu = sorted(c for c, _ in samples)[len(samples) // 2]
        wall = sorted(w for _, w in samples)[len(samples) // 2]
        print(
            f"index step, {name:22s} {cpu:7.2f} s CPU  {wall:7.2f} s wall  "
            f"{args.files * args.records / max(cpu, 1e-9):8.0f} records/CPU-s  (median of {len(samples)})"
        )
    print(f"sha256sum of the spool files:     {sha_wall:7.2f} s  {mb / sha_wall:7.1f} MB/s")
    print(
        f"index run (whole chain, 1 proc):  {chain_wall:7.2f} s  {mb / chain_wall:7.1f} MB/s  "
        f"{args.files / chain_wall:6.1f} files/s  {args.files * args.records / chain_wall:8.0f} records/s  "
        f"peak RSS {chain_rss:.0f} MB"
    )
    print(
        f"index merge --big:                {merge_wall:7.2f} s  {lines} master CDX lines  "
        f"{lines / merge_wall:8.0f} lines/s  peak RSS {merge_rss:.0f} MB"
    )
    shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
