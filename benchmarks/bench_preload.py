"""Benchmark: `netharvest preload` of 3,000,000 source lines holding 2,000,000 unique domains.

    .venv/bin/python benchmarks/bench_preload.py [--domains 2000000] [--existing 200000] [--concurrency 1000]

Makes a fresh database (netharvest_bench_preload), imports ``--existing`` of the domains first (the
database source), writes three sources (a registry list with duplicates, a selection of URLs, another
workflow's hosts) of 1.5 lines per unique domain, starts the loopback DNS server of the tests in its
own process (names whose first label ends in 0 do not exist: 10 %), and times the real command as a
subprocess, redirect probes off (they need an HTTP answer per live domain; tests cover them).
Reports the command's own step timings, lookups/s and peak memory.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import string
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fresh_database import fresh_database

DB = "netharvest_bench_preload"
ROOT = Path(__file__).resolve().parent.parent


def name(i: int, rng: random.Random) -> str:
    return (
        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(4, 10)))
        + str(i)
        + rng.choice([".fr", ".fr", ".fr", ".re", ".nc", ".com"])
    )


def make_sources(work: Path, count: int) -> tuple[list[Path], list[str], int]:
    rng = random.Random(7)
    domains = [name(i, rng) for i in range(count)]
    registry, library, other = work / "registry.txt", work / "library.txt", work / "other.txt"
    lines = 0
    a, b = int(count * 0.90), int(count * 0.95)
    with registry.open("w") as f:  # 90 % of the domains, plus duplicates: 1.2 × count lines
        for i in range(a):
            f.write(domains[i] + "\n")
        for _ in range(int(count * 0.3)):
            f.write(domains[rng.randrange(a)] + "\n")
        lines += a + int(count * 0.3)
    with library.open("w") as f:  # URLs: 5 % new domains, the rest overlapping the registry
        for i in range(a, b):
            f.write(f"http://www.{domains[i]}/\n")
        for _ in range(int(count * 0.10)):
            f.write(f"https://{domains[rng.randrange(b)]}/page{rng.randrange(100)}.html\n")
        lines += (b - a) + int(count * 0.10)
    with other.open("w") as f:  # hosts: the last 5 % new, plus known ones
        for i in range(b, count):
            f.write(domains[i] + "\n")
        for _ in range(int(count * 0.10)):
            f.write("www." + domains[rng.randrange(count)] + "\n")
        lines += (count - b) + int(count * 0.10)
    return [registry, library, other], domains, lines


def start_server(module: str, port: int, env: dict[str, str]) -> subprocess.Popen[str]:
    """One of the tests' loopback servers in its own process (the other core), once it listens."""
    server = subprocess.Popen(
        [sys.executable, "-m", f"tests.preload.{module}", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    if not server.stdout.readline():
        sys.exit(f"the loopback {module} did not start (is port {port} taken?)")
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", type=int, default=2_000_000)
    parser.add_argument("--existing", type=int, default=200_000)
    parser.add_argument("--concurrency", type=int, default=1000)
    parser.add_argument("--database", default=DB, help="made afresh (dropped first if it exists)")
    parser.add_argument("--dns-port", type=int, default=15353)
    parser.add_argument("--http-port", type=int, default=18080)
    parser.add_argument(
        "--redirect-sample",
        type=int,
        default=20000,
        help="then a second preload of this many domains with redirect probes on (0 = none)",
    )
    args = parser.parse_args()

    env, exe, work = fresh_database(args.database, "bench-preload-", {"PYTHONPATH": str(ROOT)})
    sources, domains, lines = make_sources(work, args.domains)
    existing = work / "existing.txt"
    existing.write_text("".join(d + "\n" for d in domains[: args.existing]))
    subprocess.run([exe, "import-domains", str(existing)], env=env, check=True, capture_output=True)
    print(f"{lines:,} source lines, {args.domains:,} unique domains, {args.existing:,} already in the database")

    dns = start_server("dns_server", args.dns_port, env)
    try:
        command = [
            exe,
            "preload",
            "--workdir",
            str(work / "preload"),
            "--nameserver",
            f"127.0.0.1:{args.dns_port}",
            "--dns-concurrency",
            str(args.concurrency),
            "--skip-redirects",
        ]
        command += [f"--source={p.stem}={p}" for p in sources]
        started = time.monotonic()
        result = subprocess.run(command, env=env, capture_output=True, text=True)
        elapsed = time.monotonic() - started
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        if result.returncode != 0:
            sys.exit(result.stderr[-5000:])
        print(result.stdout)
        steps = [line for line in result.stderr.splitlines() if ": done in " in line]
        print("\n".join(steps))
        stats = json.loads((work / "preload" / "stats.json").read_text())
        d = stats["dns"]
        print(
            f"total wall time {elapsed:,.1f} s; DNS {d['checked_this_run']:,} domains in {d['seconds']:,.1f} s = "
            f"{d['domains_per_s']:,.0f} domains/s, {d['queries_per_s']:,.0f} queries/s at concurrency "
            f"{args.concurrency}; peak RSS of the command {peak_kb / 1024:,.0f} MB"
        )
        if args.redirect_sample:
            redirect_sample(args, domains[: args.redirect_sample])
    finally:
        dns.terminate()


def redirect_sample(args: argparse.Namespace, domains: list[str]) -> None:
    """A second preload, into its own fresh database, of a sample with redirect probes on."""
    env, exe, work = fresh_database(args.database + "_redirects", "bench-preload-redirects-", {"PYTHONPATH": str(ROOT)})
    source = work / "sample.txt"
    source.write_text("".join(d + "\n" for d in domains))
    http = start_server("http_server", args.http_port, env)
    try:
        started = time.monotonic()
        result = subprocess.run(
            [
                exe,
                "preload",
                "--workdir",
                str(work / "preload"),
                f"--source=sample={source}",
                "--nameserver",
                f"127.0.0.1:{args.dns_port}",
                "--http-port",
                str(args.http_port),
                "--dns-concurrency",
                str(args.concurrency),
            ],
            env=env,
            capture_output=True,
            text=True,
        )
        elapsed = time.monotonic() - started
    finally:
        http.terminate()
    if result.returncode != 0:
        sys.exit(result.stderr[-5000:])
    stats = json.loads((work / "preload" / "stats.json").read_text())
    r = stats["redirects"]
    rate = r["requests_this_run"] / max(r["seconds"], 0.001)  # a tiny sample can take less than the 0.1 s stamp
    print(
        f"redirect sample: {len(domains):,} domains, {r['domains_probed']:,} live probed with "
        f"{r['requests_this_run']:,} requests in {r['seconds']:,.1f} s = {rate:,.0f} requests/s, "
        f"{r['new_domains']:,} new domains found; whole run {elapsed:,.1f} s"
    )


if __name__ == "__main__":
    main()
