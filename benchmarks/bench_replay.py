"""Capture lookup benchmark (figures in docs/BENCHMARKS.md, section "Replay: capture lookup").

    .venv/bin/python benchmarks/bench_replay.py                   # 2,000,000-line master, 2,000 lookups
    .venv/bin/python benchmarks/bench_replay.py --lines 100000 --lookups 200

A master CDX of ``--lines`` lines (SURT keys of ``--lines / 4`` URLs on 5,000 hosts, 4 captures each, real
11-field lines, LC_ALL=C order) is generated once under ``--out``. Then the same random keys (half captured,
half never) are looked up by:

1. ``indexer.cdxsearch.iter_key`` (the web UI's capture lookup and calendar), in this process;
2. pywb, the replay service, through its CDX API (``/replay/all/cdx?url=…``) over the same file, one HTTP
   request per lookup on 127.0.0.1 (deploy/replay_server.py, pywb's own environment);
3. a linear scan of the file (what a lookup would cost without the sort), for a few keys only.

Each prints lookups/s and the mean milliseconds per lookup; ours and pywb's must find the same captures.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from loopback import free_port, wait_listening  # noqa: E402

from indexer.cdx import CDX_HEADER, surt_key  # noqa: E402
from indexer.cdxsearch import iter_key  # noqa: E402
from indexer.merge import write_sorted  # noqa: E402
from indexer.replaylayout import ALL, ReplayLayout  # noqa: E402

PYWB_PYTHON = ROOT / ".venv" / "tools" / "pywb" / "bin" / "python"


def url_of(i: int) -> str:
    return f"http://www.host{i % 5000}.example.fr/section{i % 37}/page{i}.html"


def make_master(path: Path, lines: int) -> None:
    urls = max(1, lines // 4)

    def generate():
        rng = random.Random(1)
        for i in range(urls):
            url = url_of(i)
            key = surt_key(url)
            for k in range(4):
                ts = f"202{k}0{rng.randint(1, 9)}1{rng.randint(0, 9)}120000"
                yield (
                    f"{key} {ts} {url} text/html 200 {'A' * 32} - - {rng.randint(500, 90000)} "
                    f"{rng.randint(0, 10**9)} job{k}-{i % 100:05d}.warc.gz\n"
                ).encode()

    write_sorted(generate(), path, CDX_HEADER)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=2_000_000)
    parser.add_argument("--lookups", type=int, default=2_000)
    parser.add_argument("--out", default=str(ROOT / "bench-out" / "replay"))
    args = parser.parse_args()

    index_dir = Path(args.out) / f"index-{args.lines}"
    layout = ReplayLayout(index_dir)
    if not layout.master_cdx.is_file():
        started = time.perf_counter()
        make_master(layout.master_cdx, args.lines)
        print(
            f"generated master.cdx: {args.lines:,} lines, {layout.master_cdx.stat().st_size / 2**20:,.1f} MB "
            f"in {time.perf_counter() - started:.1f} s"
        )
    layout.ensure()
    link = layout.indexes(ALL) / "master.cdx"
    if not link.is_symlink():
        link.symlink_to(layout.master_cdx)
    rng = random.Random(2)
    urls = max(1, args.lines // 4)
    keys = [url_of(rng.randrange(urls)) if n % 2 == 0 else f"http://never{n}.example.org/" for n in range(args.lookups)]
    print(
        f"master.cdx: {args.lines:,} lines, {layout.master_cdx.stat().st_size / 2**20:,.1f} MB; "
        f"{len(keys):,} lookups (half of captured URLs)"
    )

    started = time.perf_counter()
    ours = [len(list(iter_key(layout.master_cdx, surt_key(u)))) for u in keys]
    elapsed = time.perf_counter() - started
    print(
        f"| netharvest iter_key (binary search) | {len(keys) / elapsed:,.0f} lookups/s | "
        f"{elapsed / len(keys) * 1000:.3f} ms |"
    )

    if PYWB_PYTHON.exists():
        port = free_port()
        log = open(Path(tempfile.gettempdir()) / f"bench-replay-{port}.log", "wb")
        proc = subprocess.Popen(
            [
                str(PYWB_PYTHON),
                str(ROOT / "deploy" / "replay_server.py"),
                "--index-dir",
                str(index_dir),
                "--bind",
                f"127.0.0.1:{port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_listening(port, 60)
            base = f"http://127.0.0.1:{port}/replay/all/cdx?output=json&url="
            urllib.request.urlopen(base + urllib.request.quote(keys[0], safe=""), timeout=60).read()  # warm up
            started = time.perf_counter()
            theirs = []
            for u in keys:
                with urllib.request.urlopen(base + urllib.request.quote(u, safe=""), timeout=60) as r:
                    theirs.append(sum(1 for line in r.read().splitlines() if line.strip()))
            elapsed = time.perf_counter() - started
            print(
                f"| pywb CDX API (HTTP, 127.0.0.1) | {len(keys) / elapsed:,.0f} lookups/s | "
                f"{elapsed / len(keys) * 1000:.3f} ms |"
            )
            print(f"same captures found by both: {ours == theirs}")
        finally:
            proc.terminate()
            proc.wait(10)
            log.close()
    else:
        print(f"pywb is not installed at {PYWB_PYTHON}: its lookups are skipped (python3 deploy/dev.py install)")

    few = keys[:4]
    started = time.perf_counter()
    for u in few:
        prefix = surt_key(u).encode() + b" "
        with open(layout.master_cdx, "rb") as f:
            sum(1 for line in f if line.startswith(prefix))
    elapsed = time.perf_counter() - started
    print(f"| linear scan | {len(few) / elapsed:,.2f} lookups/s | {elapsed / len(few) * 1000:.1f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
