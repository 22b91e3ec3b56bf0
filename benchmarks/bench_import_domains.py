"""Benchmark: `netharvest import-domains` of 1,000,000 generated domains into PostgreSQL.

    .venv/bin/python benchmarks/bench_import_domains.py [--domains 1000000] [--parallel 2]

Makes a fresh database (netharvest_bench_import), migrates it, writes a file of N random .dk/.fr/.se
domains with 0.1 % invalid lines and 0.5 % duplicates, and times the real command as a subprocess.
Reports wall time, lines/s and the command's peak memory (max RSS).
"""

from __future__ import annotations

import argparse
import random
import resource
import string
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fresh_database import fresh_database

DB = "netharvest_bench_import"


def make_file(path: Path, count: int) -> None:
    rng = random.Random(42)
    tlds = [".dk", ".fr", ".se", ".no", ".de", ".co.uk", ".com"]
    with path.open("w") as f:
        seen: list[str] = []
        for i in range(count):
            if i % 1000 == 999:
                f.write("www.not-registrable.dk\n")  # invalid: a host, not a domain
                continue
            if i % 200 == 199 and seen:
                f.write(rng.choice(seen) + "\n")
                continue
            name = "".join(rng.choices(string.ascii_lowercase + string.digits, k=rng.randint(6, 16)))
            domain = name + rng.choice(tlds)
            if len(seen) < 10000:
                seen.append(domain)
            f.write(domain + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", type=int, default=1_000_000)
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--database", default=DB, help="made afresh (dropped first if it exists)")
    args = parser.parse_args()

    env, exe, work = fresh_database(args.database, "bench-import-")
    source = work / "domains.txt"
    make_file(source, args.domains)

    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.monotonic()
    result = subprocess.run(
        [exe, "import-domains", str(source), "--parallel", str(args.parallel), "--show-errors", "0"],
        env=env,
        capture_output=True,
        text=True,
    )
    elapsed = time.monotonic() - started
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # Exit status 1 says lines were refused: this file has invalid lines on purpose (one in 1,000).
    if result.returncode not in (0, 1):
        sys.exit(result.stderr)
    print(result.stdout.strip())
    print(
        f"domains: {args.domains:,}  parallel: {args.parallel}  wall: {elapsed:.1f} s  "
        f"rate: {args.domains / elapsed:,.0f} lines/s  peak RSS of the command: {max(peak_kb, before) / 1024:.0f} MB"
    )


if __name__ == "__main__":
    main()
