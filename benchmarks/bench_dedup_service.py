"""The dedup service (issue 15): which engine, and what a harvester pays per URI over the network.

    .venv/bin/python benchmarks/bench_dedup_service.py --captures 1000000 --compare 200000

1. **Engines** (``--compare`` captures, in this process, one key per call as the service's store sees a lookup):
   bytes per capture on disk and lookups/s (digest hits, digest misses, URL hits) for RocksDB (rocksdict, the
   service's store), LMDB (if ``lmdb`` is installed), PostgreSQL (if ``--database`` is given) and the SQLite
   file of today (indexer/dedup.py). Every engine holds the same two maps with the same rules.
2. **The service** (``--captures``): the real process (``python -m indexer.dedupservice serve``) on 127.0.0.1,
   fed through the client in the chain's batches of 10,000 (captures/s), then a harvester's pattern through one
   keep-alive connection: each page's outlinks prefetched in one ``/lookup`` of ``--links`` URLs, then one
   digest lookup per fetched URI. The figure is milliseconds per URI (both lookups), plus single-lookup latency.

Captures as in bench_indexer.py: random URLs on 200,000 hosts, distinct digests, 500 WARC file names.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_indexer import _sha1, captures_of, load  # noqa: E402

from indexer.dedup import Capture, DedupIndex  # noqa: E402
from indexer.dedupclient import DedupClient, DedupServiceError  # noqa: E402
from indexer.dedupstore import DedupStore, _digest_value, _url_value, digest_key, disk_bytes, url_key  # noqa: E402


def _rate(fn: Callable[[str], object], keys: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    found = sum(fn(k) is not None for k in keys)
    return len(keys) / (time.perf_counter() - start), found


# ---------------------------------------------------------------- engines


class Lmdb:
    def __init__(self, path: Path) -> None:
        import lmdb

        self.env = lmdb.open(str(path), map_size=1 << 36, subdir=True, sync=False, writemap=True)

    def add(self, captures: Iterator[Capture]) -> None:
        # The same rules as the store: read, keep the earliest per digest / latest per URL, write.
        with self.env.begin(write=True) as txn:
            for c in captures:
                old = txn.get(digest_key(c.digest))
                if old is None or c.timestamp < old.split(b"\0")[1].decode():
                    txn.put(digest_key(c.digest), _digest_value(c))
                txn.put(url_key(c.url), _url_value(c))

    def get(self, key: bytes) -> bytes | None:
        with self.env.begin() as txn:
            return txn.get(key)

    def size(self) -> int:
        self.env.sync(True)
        info, stat = self.env.info(), self.env.stat()
        return (info["last_pgno"] + 1) * stat["psize"]


def bench_engines(out: Path, n: int, database: str | None) -> None:
    digests, urls, gen = captures_of(n)
    rng = random.Random(5)
    sample = rng.sample(range(n), min(n, 50_000))
    hits_d = [digests[i] for i in sample]
    misses = [_sha1(b"miss" + i.to_bytes(8, "big")) for i in range(len(sample))]
    hits_u = [urls[i] for i in sample]
    rows: list[tuple[str, float, float, tuple[float, float, float], str]] = []

    def run(
        name: str,
        add: Callable[[], None],
        size: Callable[[], int],
        by_digest: Callable[[str], object],
        by_url: Callable[[str], object],
    ) -> None:
        start = time.perf_counter()
        add()
        t_add = time.perf_counter() - start
        nbytes = size()
        rates = tuple(_rate(fn, keys) for fn, keys in ((by_digest, hits_d), (by_digest, misses), (by_url, hits_u)))
        assert rates[0][1] == len(sample) and rates[1][1] == 0 and rates[2][1] == len(sample), name
        rows.append((name, nbytes / n, n / t_add, tuple(r[0] for r in rates), f"{nbytes / 2**20:,.0f} MiB"))

    store = DedupStore(out / "rocks")

    def rocks_add() -> None:
        for lo in range(0, n, 100_000):
            store.add(gen(lo, min(n, lo + 100_000)))
        store.db.flush()
        store.db.compact_range(None, None)

    run(
        "RocksDB (rocksdict, LZ4 + ZSTD, bloom)",
        rocks_add,
        lambda: disk_bytes(out / "rocks"),
        store.by_digest,
        store.by_url,
    )
    store.close()

    try:
        env = Lmdb(out / "lmdb")
    except ImportError:
        print("LMDB: not measured (pip install lmdb)")
    else:

        def lmdb_add() -> None:
            for lo in range(0, n, 100_000):
                env.add(gen(lo, min(n, lo + 100_000)))

        run(
            "LMDB (py-lmdb, same keys and values)",
            lmdb_add,
            env.size,
            lambda d: env.get(digest_key(d)),
            lambda u: env.get(url_key(u)),
        )

    if database:
        bench_postgres(database, n, gen, run)

    sqlite_path = out / "dedup.sqlite"
    idx = DedupIndex(sqlite_path)

    def sqlite_add() -> None:
        for lo in range(0, n, 100_000):
            idx.add(gen(lo, min(n, lo + 100_000)))
        idx.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    run("SQLite (indexer/dedup.py, today)", sqlite_add, lambda: sqlite_path.stat().st_size, idx.by_digest, idx.by_url)
    idx.close()

    print(f"\nEngines: {n:,} captures, {len(sample):,} lookups of each kind, one key per call; {load()}")
    print("| engine | bytes per capture | captures added/s | digest hits/s | digest misses/s | URL hits/s | size |")
    print("|---|---|---|---|---|---|---|")
    for name, per, add_rate, (dh, dm, uh), size in rows:
        print(f"| {name} | {per:,.0f} | {add_rate:,.0f} | {dh:,.0f} | {dm:,.0f} | {uh:,.0f} | {size} |")


def bench_postgres(database: str, n: int, gen: Callable[[int, int], Iterator[Capture]], run: Callable) -> None:
    import psycopg2
    import psycopg2.extras

    admin = psycopg2.connect(host="127.0.0.1", user="postgres", dbname="postgres")
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {database}")
        cur.execute(f"CREATE DATABASE {database}")
    conn = psycopg2.connect(host="127.0.0.1", user="postgres", dbname=database)
    try:
        with conn.cursor() as cur:
            cur.execute("CREATE TABLE by_digest (digest bytea PRIMARY KEY, value bytea NOT NULL, ts text NOT NULL)")
            cur.execute("CREATE TABLE by_url (url text PRIMARY KEY, value bytea NOT NULL, ts text NOT NULL)")
        conn.commit()

        def add() -> None:
            with conn.cursor() as cur:
                for lo in range(0, n, 10_000):
                    batch = list(gen(lo, min(n, lo + 10_000)))
                    psycopg2.extras.execute_values(
                        cur,
                        "INSERT INTO by_digest VALUES %s ON CONFLICT (digest) DO "
                        "UPDATE SET value=excluded.value, ts=excluded.ts WHERE "
                        "excluded.ts < by_digest.ts",
                        [(digest_key(c.digest), _digest_value(c), c.timestamp) for c in batch],
                    )
                    psycopg2.extras.execute_values(
                        cur,
                        "INSERT INTO by_url VALUES %s ON CONFLICT (url) DO UPDATE "
                        "SET value=excluded.value, ts=excluded.ts WHERE "
                        "excluded.ts >= by_url.ts",
                        [(c.url, _url_value(c), c.timestamp) for c in batch],
                    )
            conn.commit()
            with conn.cursor() as cur:
                conn.autocommit = True
                cur.execute("VACUUM ANALYZE")

        def size() -> int:
            with conn.cursor() as cur:
                cur.execute("SELECT pg_total_relation_size('by_digest') + pg_total_relation_size('by_url')")
                return int(cur.fetchone()[0])

        cur = conn.cursor()

        def by_digest(d: str) -> object:
            cur.execute("SELECT value FROM by_digest WHERE digest = %s", (digest_key(d),))
            return cur.fetchone()

        def by_url(u: str) -> object:
            cur.execute("SELECT value FROM by_url WHERE url = %s", (u,))
            return cur.fetchone()

        run("PostgreSQL 15 (two tables, bytea values, 127.0.0.1)", add, size, by_digest, by_url)
    finally:
        conn.close()
        with admin.cursor() as c:
            c.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        admin.close()


# ---------------------------------------------------------------- the service


def bench_service(out: Path, n: int, uris: int, links: int) -> None:
    digests, urls, gen = captures_of(n, seed=11)
    port_probe = __import__("socket").socket()
    port_probe.bind(("127.0.0.1", 0))
    port = port_probe.getsockname()[1]
    port_probe.close()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "indexer.dedupservice",
            "serve",
            "--store",
            str(out / "svc"),
            "--bind",
            f"127.0.0.1:{port}",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
    )
    client = DedupClient(f"http://127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                client.health()
                break
            except DedupServiceError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.1)
        start = time.perf_counter()
        fed = client.add(gen(0, n))
        t_feed = time.perf_counter() - start
        again = time.perf_counter()
        client.add(gen(0, min(n, 100_000)))  # a re-fed WARC: read, compare, nothing written
        t_refeed = time.perf_counter() - again
        health = client.health()
        store_bytes = disk_bytes(out / "svc")

        # A harvester's pattern: a page's outlinks prefetched in one lookup (half of them known to the service),
        # then one digest lookup per fetched URI (a third of them duplicates of earlier captures).
        rng = random.Random(13)
        known = rng.sample(range(n), min(n, uris))
        page_urls = [urls[i] if k % 2 else f"http://new{k}.example/{k}" for k, i in enumerate(known)]
        page_digests = [digests[i] if k % 3 == 0 else _sha1(b"new" + k.to_bytes(8, "big")) for k, i in enumerate(known)]
        start = time.perf_counter()
        url_hits = digest_hits = 0
        for lo in range(0, uris, links):
            _, found = client.lookup([], page_urls[lo : lo + links])
            url_hits += len(found)
            for d in page_digests[lo : lo + links]:
                digest_hits += len(client.lookup([d], [])[0])
        per_uri_ms = (time.perf_counter() - start) * 1000 / uris
        singles = [time.perf_counter()]
        for d in page_digests[:2000]:
            client.lookup([d], [])
            singles.append(time.perf_counter())
        gaps = sorted((b - a) * 1000 for a, b in zip(singles, singles[1:], strict=False))
        batch = [digests[i] for i in known[:5000]]
        start = time.perf_counter()
        got = len(client.lookup(batch, [])[0])
        batch_rate = len(batch) / (time.perf_counter() - start)
    finally:
        client.close()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(60)
    print(
        f"\nDedup service: {fed:,} captures fed in {t_feed:.1f} s ({fed / t_feed:,.0f}/s, batches of 10,000 over "
        f"HTTP); re-feeding {min(n, 100_000):,} of them {t_refeed:.1f} s; store {store_bytes / 2**20:,.0f} MiB = "
        f"{store_bytes / n:,.0f} bytes per capture ({health['keys']:,} keys, before the final compaction); "
        f"SIGTERM exit {code}; {load()}"
    )
    print(
        f"harvester pattern: {uris:,} URIs, outlinks prefetched {links} per lookup, one digest lookup per URI: "
        f"{per_uri_ms:.3f} ms per URI ({url_hits:,} URL hits, {digest_hits:,} digest hits)"
    )
    print(
        f"single digest lookup: median {gaps[len(gaps) // 2]:.3f} ms, p99 {gaps[int(len(gaps) * 0.99)]:.3f} ms; "
        f"one lookup of 5,000 digests: {batch_rate:,.0f} digests/s ({got:,} found)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--captures", type=int, default=1_000_000, help="captures in the service's store")
    ap.add_argument("--compare", type=int, default=200_000, help="captures per engine in the comparison (0: skip)")
    ap.add_argument("--uris", type=int, default=20_000, help="URIs of the harvester pattern")
    ap.add_argument("--links", type=int, default=50, help="outlinks per page (URLs per prefetch lookup)")
    ap.add_argument("--database", help="also measure PostgreSQL in this (new, dropped afterwards) database")
    ap.add_argument("--out", type=Path, help="working directory (default: a temporary one, removed)")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-dedup-"))
    out.mkdir(parents=True, exist_ok=True)
    try:
        if args.compare:
            bench_engines(out, args.compare, args.database)
        bench_service(out, args.captures, min(args.uris, args.captures), args.links)
    finally:
        if args.out is None:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
