"""Benchmark: moving WARCs through an S3-protocol object store (indexer.objectstore, harvester.delivery).

    .venv/bin/python benchmarks/bench_delivery.py [--mb 256] [--rounds 2]

Starts moto's standalone S3 server (``moto_server``, a separate process on 127.0.0.1, as the tests use) and
times, on one file of ``--mb`` MiB of incompressible bytes: the harvester's delivery upload (``put``:
multipart in 16 MiB parts with per-part SHA-256), the chain's verified copy into an object location
(``upload_verified``: put + read back + hash), the chain's fetch of a delivered file (``download_verified``),
and, as the baseline, SHA-256 of the file from the page cache. moto keeps objects in memory and is written in
Python: the figures are a floor for netharvest's side, not a store's throughput (a MinIO or S3 is faster).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from loopback import free_port, wait_listening

from indexer import objectstore
from indexer.transfer import sha256_file


def _timed(label: str, size: int, fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    took = time.perf_counter() - start
    print(f"{label:<48} {took:8.2f} s  {size / took / 1e6:8.1f} MB/s")
    return took


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=256, help="file size in MiB (default 256)")
    parser.add_argument("--rounds", type=int, default=2, help="times each operation is run (default 2)")
    args = parser.parse_args(argv)
    port = free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.environ.update(
        {
            "NETHARVEST_S3_ENDPOINT_URL": f"http://127.0.0.1:{port}",
            "AWS_ACCESS_KEY_ID": "bench",
            "AWS_SECRET_ACCESS_KEY": "bench",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
    )
    try:
        wait_listening(port, 10)
        objectstore.client().create_bucket(Bucket="bench")
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "bench.warc.gz"
            with open(src, "wb") as f:
                for _ in range(args.mb):
                    f.write(os.urandom(1 << 20))
            size = src.stat().st_size
            digest = hashlib.sha256(src.read_bytes()).hexdigest()
            print(f"file: {args.mb} MiB, parts of {objectstore.PART_SIZE >> 20} MiB, moto_server on 127.0.0.1")
            for r in range(args.rounds):
                url, stored = f"s3://bench/delivery/{r}/bench.warc.gz", f"s3://bench/archive/{r}/bench.warc.gz"
                fetched = Path(tmp) / f"fetched-{r}"
                _timed("sha256 of the file (baseline)", size, partial(sha256_file, src))
                _timed(
                    "delivery put (multipart, part checksums)",
                    size,
                    partial(objectstore.put, src, url, digest, state=Path(tmp) / f"{r}.upload.json"),
                )
                _timed(
                    "chain upload_verified (put + read back)",
                    size,
                    partial(objectstore.upload_verified, src, stored, digest),
                )
                _timed(
                    "chain download_verified (fetch + hash)",
                    size,
                    partial(objectstore.download_verified, url, fetched, digest),
                )
                for key in (url, stored):
                    objectstore.delete(key)
                fetched.unlink()
    finally:
        server.terminate()
        server.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
