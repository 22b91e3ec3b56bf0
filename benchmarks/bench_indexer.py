"""Indexer benchmarks (figures in docs/BENCHMARKS.md, section "Indexer").

    .venv/bin/python benchmarks/bench_indexer.py                 # all three, full size
    .venv/bin/python benchmarks/bench_indexer.py --only cdx --cdx-mb 50   # a quick look

1. **CDX indexing** of generated ``.warc.gz`` files written exactly as the harvester writes them
   (``harvester.warcwriter.write_member``: one gzip member per record, level 6; response + request
   pairs, some revisits; HTML from a word pool, images as random bytes), at least 300 MB
   compressed. In the same run: ``zcat FILES > /dev/null`` (the floor: inflating alone),
   our ``write_cdx`` per file (ISA-L inflate, then with plain zlib), and ``cdxj-indexer -11``.
2. **Merge** of 10,000,000 CDX lines in 64 sorted files (``--merge-files 8 64``: each count in
   turn): our ``merge_sorted`` against ``LC_ALL=C sort -m`` and ``sort -m -u`` on the same files,
   wall time and peak RSS of each process; outputs compared.
3. **Dedup index**: size per million captures, and lookups/s (digest hits, digest misses, URL hits).

Each contender runs as its own process (peak RSS from GNU time); the contenders of a benchmark are
run in turn, round after round (``--repeat`` rounds), and the median of each is reported, because
the machine is shared and its load drifts. Generated inputs are cached under ``--out`` (``bench-out/``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from base64 import b32encode
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harvester.warcwriter import WarcRecord, warc_date, warcinfo_record, write_member  # noqa: E402

if TYPE_CHECKING:
    from indexer.dedup import Capture

PY = sys.executable


def run_measured(
    cmd: list[str], stdout_path: str | None = None, env: dict[str, str] | None = None
) -> tuple[float, float, int]:
    """Run a command; return (CPU seconds, wall seconds, peak RSS in MiB) of that process, as GNU
    time reports them (wait4's ru_maxrss would count the forking Python process's pages). Rates are
    computed on CPU time (user + system): on this shared 2-core machine the wall time mostly
    measures the other helpers' load; CPU time is what the work costs."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss_file:  # its own: runs may be parallel
        timed = ["/usr/bin/time", "-f", "%M %U %S", "-o", rss_file.name, *cmd]
        with open(stdout_path or os.devnull, "wb") as out:
            start = time.perf_counter()
            code = subprocess.run(timed, stdout=out, env={**os.environ, **(env or {})}, cwd=ROOT).returncode
            wall = time.perf_counter() - start
        if code != 0:
            raise SystemExit(f"failed: {' '.join(cmd)}")
        rss, user, system = rss_file.read().split()[-3:]
    # GNU time counts in 10 ms steps: a tiny run (the test suite's) may take "0.00 s" of CPU.
    return max(float(user) + float(system), 0.01), wall, int(rss) // 1024


def interleaved(
    rows: list[tuple[str, list[str], dict[str, object]]], repeat: int
) -> tuple[dict[str, tuple[float, float, int]], dict[str, list[float]]]:
    """Run the contenders in turn, ``repeat`` rounds (a load change hits all of them alike);
    each one's median CPU, wall and RSS, and each one's CPU time round by round (for per-round ratios)."""
    runs: dict[str, list[tuple[float, float, int]]] = {label: [] for label, _, _ in rows}
    for _ in range(repeat):
        for label, cmd, kw in rows:
            runs[label].append(run_measured(cmd, **kw))  # type: ignore[arg-type]
    medians = {
        label: (
            statistics.median(r[0] for r in rs),
            statistics.median(r[1] for r in rs),
            int(statistics.median(r[2] for r in rs)),
        )
        for label, rs in runs.items()
    }
    return medians, {label: [r[0] for r in rs] for label, rs in runs.items()}


def per_round(numerator: list[float], denominator: list[float]) -> str:
    """The CPU-time ratio of two contenders round by round (they ran back to back, under the same
    load): median and range, the figure that says whether a goal holds reliably."""
    ratios = sorted(a / b for a, b in zip(numerator, denominator, strict=True))
    return f"per round: median {statistics.median(ratios):.2f}x, range {ratios[0]:.2f}-{ratios[-1]:.2f}x"


def load() -> str:
    return "load average " + " / ".join(f"{x:.1f}" for x in os.getloadavg())


# ---------------------------------------------------------------- CDX

WORDS = (
    "archive web harvest national library deposit crawl page news article culture museum "
    "government research school sport music film book history science data open public "
    "the of and to in for on with by from at as is are was be this that it"
).split()


def _pools(rng: random.Random) -> tuple[bytes, bytes]:
    text = " ".join(rng.choice(WORDS) + ("</p>\n<p>" if rng.random() < 0.05 else "") for _ in range(900_000)).encode()
    return text, rng.randbytes(16 << 20)


def _sha1(data: bytes) -> str:
    return "sha1:" + b32encode(hashlib.sha1(data).digest()).decode()


def make_warcs(directory: Path, total_mb: int, file_mb: int = 100, seed: int = 7) -> list[Path]:
    """Generated WARCs, written the harvester's way, until ``total_mb`` MiB compressed."""
    directory.mkdir(parents=True, exist_ok=True)
    done = directory / f".complete-{total_mb}"
    if done.exists():
        return sorted(directory.glob("*.warc.gz"))
    for p in directory.glob("*.warc.gz"):
        p.unlink()
    rng = random.Random(seed)
    text, noise = _pools(rng)
    files: list[Path] = []
    written = 0
    serial = 0
    n = 0
    while written < total_mb << 20:
        path = directory / f"1-1-20261123000000-{serial:05d}-bench.warc.gz"
        serial += 1
        with open(path, "wb") as out:
            info = warcinfo_record(path.name, [("isPartOf", "bench")])
            write_member(out, info, None, 6)
            while out.tell() < file_mb << 20:
                n += 1
                host = f"www.site{rng.randrange(5000)}.{rng.choice(['fr', 'dk', 'com', 'org'])}"
                kind = rng.random()
                if kind < 0.55:
                    size = int(rng.lognormvariate(9.6, 0.8))  # median ~15 KB of HTML
                    start = rng.randrange(len(text) - size - 1)
                    body = b"<html><body><p>" + text[start : start + size] + b"</p></body></html>"
                    url, ctype = f"http://{host}/page/{n}.html", "text/html; charset=utf-8"
                elif kind < 0.9:
                    size = int(rng.lognormvariate(9.8, 1.0))  # images: incompressible
                    start = rng.randrange(len(noise) - size - 1) if size < len(noise) - 1 else 0
                    body = noise[start : start + size]
                    url, ctype = f"http://{host}/img/{n}.jpg", "image/jpeg"
                else:
                    body = b"<a href='/'>moved</a>"
                    url, ctype = f"http://{host}/old/{n}", "text/html"
                status = "301 Moved Permanently" if kind >= 0.9 else "200 OK"
                head = (
                    f"HTTP/1.1 {status}\r\nServer: bench\r\nContent-Type: {ctype}\r\n"
                    f"Content-Length: {len(body)}\r\n"
                    + (f"Location: http://{host}/\r\n" if kind >= 0.9 else "")
                    + "\r\n"
                ).encode()
                date = warc_date(datetime(2026, 11, 23, n // 3600 % 24, n // 60 % 60, n % 60, tzinfo=UTC))
                digest = _sha1(body)
                common = [("WARC-Date", date), ("WARC-Target-URI", url), ("WARC-IP-Address", "192.0.2.1")]
                if rng.random() < 0.08:
                    rec = WarcRecord(
                        "revisit",
                        [
                            *common,
                            ("WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"),
                            ("WARC-Payload-Digest", digest),
                        ],
                        [head],
                        len(head),
                        "application/http; msgtype=response",
                    )
                else:
                    rec = WarcRecord(
                        "response",
                        [*common, ("WARC-Payload-Digest", digest), ("WARC-Block-Digest", _sha1(head + body))],
                        [head, body],
                        len(head) + len(body),
                        "application/http; msgtype=response",
                    )
                write_member(out, rec, info.record_id, 6)
                req = f"GET /{n} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: bench\r\nConnection: close\r\n\r\n".encode()
                write_member(
                    out,
                    WarcRecord(
                        "request",
                        [("WARC-Date", date), ("WARC-Target-URI", url)],
                        [req],
                        len(req),
                        "application/http; msgtype=request",
                    ),
                    info.record_id,
                    6,
                )
            written += out.tell()
        files.append(path)
        print(f"  generated {path.name}: {path.stat().st_size / 2**20:.0f} MiB", flush=True)
    done.touch()
    return files


def bench_cdx(out: Path, total_mb: int, repeat: int) -> None:
    warcs = make_warcs(out / "warcs", total_mb, file_mb=min(100, total_mb))
    size = sum(p.stat().st_size for p in warcs)
    names = [str(p) for p in warcs]
    cdx_dir = out / "cdx"
    cdx_dir.mkdir(exist_ok=True)
    ours = (
        "import sys, zlib, indexer.warcscan as w\n"
        "from pathlib import Path\nfrom indexer.cdx import write_cdx\n"
        "if sys.argv[1] == 'zlib': w._inflate_lib = zlib\n"
        "n = sum(write_cdx(p, Path(sys.argv[2]) / (Path(p).name + '.cdx')) for p in sys.argv[3:])\n"
        "print(n)\n"
    )
    lines_file = out / "cdx-lines.txt"
    subprocess.run([PY, "-c", ours, "isal", str(cdx_dir), *names], check=True, cwd=ROOT, stdout=open(lines_file, "wb"))
    records = int(lines_file.read_text())
    print(f"\nCDX: {len(warcs)} files, {size / 2**20:.0f} MiB compressed, {records} CDX lines; {load()}")
    print("| run | CPU time | wall time | MB/s (CPU) | records/s (CPU) | peak RSS |")
    rows: list[tuple[str, list[str], dict[str, object]]] = [
        ("zcat FILES > /dev/null", ["zcat", *names], {}),
        ("netharvest write_cdx (isal)", [PY, "-c", ours, "isal", str(cdx_dir), *names], {}),
        ("netharvest write_cdx (zlib)", [PY, "-c", ours, "zlib", str(cdx_dir), *names], {}),
        ("cdxj-indexer -11", [str(Path(PY).with_name("cdxj-indexer")), "-11", "-o", str(out / "ref.cdx"), *names], {}),
    ]
    results = {}
    medians, cpu_runs = interleaved(rows, repeat)
    for label, (cpu, wall, rss) in medians.items():
        results[label] = cpu
        print(
            f"| {label} | {cpu:.2f} s | {wall:.1f} s | {size / 2**20 / cpu:.0f} MB/s "
            f"| {records / cpu:,.0f} records/s | {rss} MiB |",
            flush=True,
        )
    ratio = results["cdxj-indexer -11"] / results["netharvest write_cdx (isal)"]
    rounds = per_round(cpu_runs["cdxj-indexer -11"], cpu_runs["netharvest write_cdx (isal)"])
    print(f"ours (isal) vs cdxj-indexer: {ratio:.2f}x (ratio of medians); {rounds}; {load()}")


# ---------------------------------------------------------------- merge


def make_sorted_files(directory: Path, lines: int, files: int, seed: int = 11) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    done = directory / f".complete-{lines}-{files}"
    paths = [directory / f"day-{i:02d}.cdx" for i in range(files)]
    if done.exists():
        return paths
    rng = random.Random(seed)
    per = lines // files
    tlds = ["fr", "dk", "com", "org", "de", "no"]
    for i, path in enumerate(paths):
        batch = []
        for j in range(per):
            host = f"{rng.choice(tlds)},site{rng.randrange(200_000)},www"
            path_part = f"/{rng.choice(WORDS)}/{rng.randrange(10**6)}.html"
            ts = f"2026{rng.randrange(1, 13):02d}{rng.randrange(1, 29):02d}{rng.randrange(10**6):06d}"
            digest = b32encode(rng.randbytes(20)).decode()
            warc = f"{i}-7-20261123000000-{j % 97:05d}-h.warc.gz"
            batch.append(
                f"{host}){path_part} {ts} http://www.site{host}{path_part} text/html 200 {digest} - - "
                f"{rng.randrange(500, 90000)} {rng.randrange(10**9)} {warc}\n".encode()
            )
        batch.sort()
        path.write_bytes(b"".join(batch))
    done.touch()
    return paths


def bench_merge(out: Path, lines: int, files: int, repeat: int) -> None:
    inputs = make_sorted_files(out / f"merge-in-{files}", lines, files)
    size = sum(p.stat().st_size for p in inputs)
    names = [str(p) for p in inputs]
    ours_out, sort_out = out / "merged-ours.cdx", out / "merged-sort.cdx"
    ours = (
        "import sys\nfrom pathlib import Path\nfrom indexer.merge import merge_sorted\n"
        "merge_sorted([Path(p) for p in sys.argv[2:]], Path(sys.argv[1]))\n"
    )
    print(f"\nMerge: {lines:,} lines in {files} sorted files, {size / 2**20:.0f} MiB; {load()}")
    env = {"LC_ALL": "C"}
    print("| run | CPU time | wall time | lines/s (CPU) | peak RSS |")
    med, cpu_runs = interleaved(
        [
            ("sort -m", ["sort", "-m", "-o", str(sort_out), *names], {"env": env}),
            ("sort -m -u", ["sort", "-m", "-u", "-o", str(sort_out) + ".u", *names], {"env": env}),
            ("ours", [PY, "-c", ours, str(ours_out), *names], {}),
        ],
        repeat,
    )
    (t_sort, w_sort, rss_sort), (t_sortu, w_sortu, rss_sortu), (t_ours, w_ours, rss_ours) = med.values()
    print(f"| LC_ALL=C sort -m | {t_sort:.2f} s | {w_sort:.1f} s | {lines / t_sort:,.0f} | {rss_sort} MiB |")
    print(f"| LC_ALL=C sort -m -u | {t_sortu:.2f} s | {w_sortu:.1f} s | {lines / t_sortu:,.0f} | {rss_sortu} MiB |")
    print(f"| merge_sorted | {t_ours:.2f} s | {w_ours:.1f} s | {lines / t_ours:,.0f} | {rss_ours} MiB |", flush=True)
    # merge_sorted collapses identical lines, as `sort -m -u` does: that is the peer its output must equal.
    same = subprocess.run(["cmp", "-s", str(ours_out), str(sort_out) + ".u"]).returncode == 0
    print(
        f"ours / sort -m -u: {t_ours / t_sortu:.2f}x CPU time, {w_ours / w_sortu:.2f}x wall time; "
        f"ours / sort -m: {t_ours / t_sort:.2f}x CPU time; outputs identical to sort -m -u: {same}; {load()}"
    )
    print(f"ours / sort -m -u CPU time {per_round(cpu_runs['ours'], cpu_runs['sort -m -u'])}")
    for p in (ours_out, sort_out, Path(str(sort_out) + ".u")):
        p.unlink(missing_ok=True)


# ---------------------------------------------------------------- dedup


def captures_of(n: int, seed: int = 3) -> tuple[list[str], list[str], Callable[[int, int], Iterator[Capture]]]:
    """``n`` synthetic captures for the dedup index (one digest and one URL each; the URLs spread over
    200,000 sites): their digests, their URLs and a generator of the captures ``lo`` to ``hi``, so a
    benchmark adds them in batches. Shared by the SQLite index's benchmark and the dedup service's."""
    from indexer.dedup import Capture

    rng = random.Random(seed)
    digests = [_sha1(i.to_bytes(8, "big")) for i in range(n)]
    urls = [f"http://www.site{rng.randrange(200_000)}.fr/{rng.choice(WORDS)}/{i}.html" for i in range(n)]

    def gen(lo: int, hi: int) -> Iterator[Capture]:
        for i in range(lo, hi):
            name = f"1-7-20261123000000-{i % 500:05d}-h.warc.gz"
            yield Capture(
                digests[i],
                urls[i],
                f"2026112300{i % 10000:04d}",
                name,
                (i * 7919) % 10**9,
                "text/html",
                f'"{i:x}"',
                "Mon, 23 Nov 2026 00:00:00 GMT",
            )

    return digests, urls, gen


def bench_dedup(out: Path, captures: int) -> None:
    from indexer.dedup import DedupIndex

    path = out / "dedup.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    digests, urls, gen = captures_of(captures)
    rng = random.Random(3)

    start = time.perf_counter()
    cpu = time.process_time()
    with DedupIndex(path) as idx:
        for lo in range(0, captures, 100_000):
            idx.add(gen(lo, min(captures, lo + 100_000)))
        idx.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    t_add = time.perf_counter() - start
    c_add = time.process_time() - cpu
    size = path.stat().st_size
    n = min(100_000, captures)
    with DedupIndex(path, readonly=True) as idx:
        sample = rng.sample(range(captures), n)
        timings = {}
        for label, fn, keys in (
            ("digest hits", idx.by_digest, [digests[i] for i in sample]),
            ("digest misses", idx.by_digest, [_sha1(b"miss" + i.to_bytes(8, "big")) for i in range(n)]),
            ("URL hits", idx.by_url, [urls[i] for i in sample]),
        ):
            start, cpu = time.perf_counter(), time.process_time()
            found = sum(fn(k) is not None for k in keys)
            timings[label] = (n / (time.perf_counter() - start), n / (time.process_time() - cpu), found)
    print(
        f"\nDedup index: {captures:,} captures added in {t_add:.1f} s wall ({captures / t_add:,.0f}/s), "
        f"{c_add:.1f} s CPU ({captures / c_add:,.0f}/s); "
        f"file {size / 2**20:.0f} MiB = {size / 2**20 / (captures / 1e6):.0f} MiB per million captures; {load()}"
    )
    print("| lookups | per second (wall) | per second (CPU) | found |")
    for label, (rate, cpu_rate, found) in timings.items():
        print(f"| {label} | {rate:,.0f} | {cpu_rate:,.0f} | {found} of {n} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=["cdx", "merge", "dedup"])
    ap.add_argument("--cdx-mb", type=int, default=300)
    ap.add_argument("--merge-lines", type=int, default=10_000_000)
    ap.add_argument("--merge-files", type=int, nargs="+", default=[8, 64])
    ap.add_argument("--dedup-captures", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--out", type=Path, default=ROOT / "bench-out" / "indexer")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} cores, {shutil.disk_usage(args.out).free / 2**30:.0f} GiB free; {load()}")
    if args.only in (None, "cdx"):
        bench_cdx(args.out, args.cdx_mb, args.repeat)
    if args.only in (None, "merge"):
        for files in args.merge_files:
            bench_merge(args.out, args.merge_lines, files, args.repeat)
    if args.only in (None, "dedup"):
        bench_dedup(args.out, args.dedup_captures)


if __name__ == "__main__":
    main()
