"""Harvester throughput: the real crawl process vs plain Scrapy vs ``wget --warc-file``, same run.

    .venv/bin/python benchmarks/bench_harvest.py --pages 5000 --rounds 2
    .venv/bin/python benchmarks/bench_harvest.py --pages 100000 --only memory

A generated loopback site (its own process: asyncio, keep-alive, precomputed responses) of
``--pages`` HTML pages of ~5 KB; page N links to pages 10N+1 … 10N+10, to page 0 and to its parent,
so a crawler must extract links and keep a seen-set to find them all. Contenders, alternated
round by round (the machine is shared: the median round of each is reported, with the load):

``netharvest``
    ``python -m harvester.process JOB_DIR``: the child crawl process a job runs in (frontier, scope,
    raw download handler, WARC writing, crawl.log, reports and metadata WARC at the end).
``engine-no-warc``
    The same with ``--no-archive``: our frontier/scope/link extraction on Scrapy's own download
    handler, no WARC (shows what the archive side costs apart from the crawl engine).
``scrapy``
    Plain Scrapy: a spider following ``<a href>`` with Scrapy's ``LinkExtractor``, its own scheduler
    and dupefilter, the same concurrency, reactor and log level; no WARC.
``scrapy-items1``
    The same with ``CONCURRENT_ITEMS = 1``, as our crawl process sets it (Scrapy 2.13+ starts
    ``CONCURRENT_ITEMS`` asyncio tasks per callback to process its output, 100 by default).
``wget``
    Debian's ``wget -r --warc-file`` (one connection, as wget does).
``netharvest-x2``
    The worker as a whole: two crawl processes at once, each on its own copy of the site.

Politeness off for everyone (no delay); per-host parallelism ``--valence`` for ours and
``CONCURRENT_REQUESTS_PER_DOMAIN`` for Scrapy. Pages/s = pages fetched / wall time of the process
(start-up and the end-of-job reports included); CPU = user + system seconds of the crawl process
(``os.wait4``), peak RSS from the same rusage. ``--only memory`` runs one netharvest crawl of
``--pages`` pages and reports its peak RSS (the bounded-memory check). With wget in the run, the
issue-14 goals are printed as ratios to it: CPU per page (goal ≤ 2×), one crawl process's pages/s
(≥ 0.6×), two crawl processes' together (≥ 1×).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

SERVER = r"""
import asyncio, sys
pages = int(sys.argv[1])
FILLER = b"<p>" + b"Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 8 + b"</p>\n"
def page(n):
    kids = "".join(f'<li><a href="/p/{k}.html">page {k}</a></li>' for k in range(10 * n + 1, 10 * n + 11)
                   if k < pages)
    up = f'<a href="/p/{(n - 1) // 10}.html">up</a>' if n else ""
    body = (f'<!DOCTYPE html><html><head><title>page {n}</title></head><body><h1>page {n}</h1>'
            f'<a href="/p/0.html">home</a> {up}<ul>{kids}</ul>').encode() + FILLER * 9 + b"</body></html>"
    return (b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n"
            % len(body)) + body
NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\nnot found"
cache = {}
def respond(target):
    if target.startswith(b"/p/") and target.endswith(b".html"):
        try:
            n = int(target[3:-5])
        except ValueError:
            return NOT_FOUND
        if 0 <= n < pages:
            r = cache.get(n)
            if r is None:
                r = cache[n] = page(n)
            return r
    return NOT_FOUND
async def handle(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            target = head.split(b" ", 2)[1]
            writer.write(respond(target))
            await writer.drain()
            if b"connection: close" in head.lower():
                break
    except Exception:
        pass
    writer.close()
async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()
asyncio.run(main())
"""

PLAIN_SCRAPY = r"""
import json, sys, time
import scrapy
from scrapy.crawler import CrawlerProcess
from scrapy.linkextractors import LinkExtractor
seed, out, concurrency, valence, items = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
class Plain(scrapy.Spider):
    name = "plain"
    start_urls = [seed]
    extractor = LinkExtractor()
    pages = 0
    def parse(self, response):
        Plain.pages += 1
        for link in self.extractor.extract_links(response):
            yield response.follow(link.url)
settings = {"LOG_LEVEL": "INFO", "LOG_FILE": out + "/scrapy.log", "TELNETCONSOLE_ENABLED": False,
            "ROBOTSTXT_OBEY": False, "CONCURRENT_REQUESTS": concurrency,
            "CONCURRENT_REQUESTS_PER_DOMAIN": valence, "DOWNLOAD_DELAY": 0, "RETRY_ENABLED": False,
            "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
            "DEPTH_LIMIT": 0, "LOGSTATS_INTERVAL": 60, "CONCURRENT_ITEMS": items}
process = CrawlerProcess(settings)
process.crawl(Plain)
process.start()
print(json.dumps({"pages": Plain.pages}))
"""


def start_server(pages: int) -> tuple[subprocess.Popen[str], int]:
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(pages)], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    return server, int(server.stdout.readline())


def jobspec(seed: str, job_id: int, valence: int) -> dict[str, Any]:
    return {
        "version": 1,
        "job_id": job_id,
        "harvest_id": 1,
        "harvest_name": "bench",
        "harvest_run": 1,
        "kind": "selective",
        "channel": "bench",
        "template": "bench",
        "settings": {
            "scope": "host",
            "max_hops": 100,
            "robots": "ignore",
            "delay_factor": 0.0,
            "min_delay_ms": 0,
            "max_delay_ms": 0,
            "host_valence": valence,
            "max_retries": 0,
            "dedup": True,
        },
        "domains": [{"name": "127.0.0.1", "configuration": "bench", "seeds": [seed]}],
    }


def _rusage_run(args: list[str], **kw: Any) -> tuple[float, float, int, int]:
    """Run to the end: (wall s, cpu s, max RSS MB, exit status)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(args, **kw)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return (time.monotonic() - t0, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024, proc.returncode)


def _pages_in_crawl_log(job_dir: Path) -> int:
    n = 0
    with open(job_dir / "logs" / "crawl.log", encoding="utf-8") as f:
        for line in f:
            fields = line.split(None, 4)
            if len(fields) > 3 and fields[1] == "200" and fields[3].endswith(".html"):
                n += 1
    return n


def run_netharvest(seed: str, work: Path, valence: int, archive: bool = True) -> dict[str, Any]:
    job_dir = work / ("job" if archive else "job-noarc")
    job_dir.mkdir(parents=True)
    (job_dir / "jobspec.json").write_text(json.dumps(jobspec(seed, 1, valence)))
    args = [sys.executable, "-m", "harvester.process", str(job_dir)] + ([] if archive else ["--no-archive"])
    wall, cpu, rss, rc = _rusage_run(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert rc == 0, (job_dir / "logs" / "harvester.log").read_text()[-3000:]
    pages = (
        _pages_in_crawl_log(job_dir)
        if archive
        else json.loads((job_dir / "jobresult.json").read_text())["stats"]["uris_done"]
    )
    warc = sum(p.stat().st_size for p in (job_dir / "warcs").glob("*.warc.gz")) if archive else 0
    return {"pages": pages, "wall": wall, "cpu": cpu, "rss_mb": rss, "warc_mb": round(warc / 2**20, 1)}


def run_scrapy(seed: str, work: Path, concurrency: int, valence: int, items: int = 100) -> dict[str, Any]:
    out = work / "scrapy"
    out.mkdir()
    result = out / "result.json"
    with open(result, "w") as f:
        wall, cpu, rss, rc = _rusage_run(
            [sys.executable, "-c", PLAIN_SCRAPY, seed, str(out), str(concurrency), str(valence), str(items)],
            cwd=ROOT,
            stdout=f,
            stderr=subprocess.DEVNULL,
        )
    assert rc == 0, (out / "scrapy.log").read_text()[-3000:]
    pages = json.loads(result.read_text().strip().splitlines()[-1])["pages"]
    return {"pages": pages, "wall": wall, "cpu": cpu, "rss_mb": rss}


def run_wget(seed: str, work: Path) -> dict[str, Any]:
    out = work / "wget"
    out.mkdir()
    args = [
        "wget",
        "-r",
        "-l",
        "inf",
        "-np",
        "-nd",
        "-nv",
        "--delete-after",
        "-e",
        "robots=off",
        "-P",
        str(out / "files"),
        f"--warc-file={out / 'bench'}",
        "--no-warc-keep-log",
        "-o",
        str(out / "wget.log"),
        seed,
    ]
    wall, cpu, rss, rc = _rusage_run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert rc in (0, 8), (out / "wget.log").read_text()[-2000:]  # 8: some 404 (none expected)
    pages = sum(
        1
        for line in (out / "wget.log").read_text().splitlines()
        if line.endswith('" [1]') or " URL:" in line and ".html" in line
    )
    warc = (out / "bench.warc.gz").stat().st_size
    return {"pages": pages, "wall": wall, "cpu": cpu, "rss_mb": rss, "warc_mb": round(warc / 2**20, 1)}


def run_pair(seeds: list[str], work: Path, valence: int) -> dict[str, Any]:
    """Two crawl processes at once (the worker running two jobs): aggregate pages/s."""
    t0 = time.monotonic()
    procs = []
    for i, seed in enumerate(seeds):
        job_dir = work / f"pair{i}"
        job_dir.mkdir(parents=True)
        (job_dir / "jobspec.json").write_text(json.dumps(jobspec(seed, 10 + i, valence)))
        procs.append(
            (
                subprocess.Popen(
                    [sys.executable, "-m", "harvester.process", str(job_dir)],
                    cwd=ROOT,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                ),
                job_dir,
            )
        )
    cpu = 0.0
    for proc, _ in procs:
        _, status, usage = os.wait4(proc.pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        cpu += usage.ru_utime + usage.ru_stime
    wall = time.monotonic() - t0
    pages = sum(_pages_in_crawl_log(d) for _, d in procs)
    return {"pages": pages, "wall": wall, "cpu": cpu}


def show(name: str, r: dict[str, Any]) -> str:
    rate = r["pages"] / r["wall"]
    extra = "".join(f"  {k}={r[k]}" for k in ("rss_mb", "warc_mb") if k in r)
    return (
        f"{name:15s} pages={r['pages']:6d}  wall={r['wall']:7.1f}s  pages/s={rate:7.1f}  "
        f"cpu={r['cpu']:6.1f}s  cpu/page={1000 * r['cpu'] / max(r['pages'], 1):5.2f}ms{extra}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--valence", type=int, default=8, help="parallel connections per host")
    parser.add_argument("--concurrency", type=int, default=32, help="Scrapy CONCURRENT_REQUESTS (ours: 32)")
    parser.add_argument(
        "--only",
        choices=("netharvest", "engine-no-warc", "scrapy", "scrapy-items1", "wget", "netharvest-x2", "memory"),
        action="append",
    )
    args = parser.parse_args()
    modes = args.only or ["netharvest", "engine-no-warc", "scrapy", "scrapy-items1", "wget", "netharvest-x2"]
    if shutil.which("wget") is None and "wget" in modes:
        print("wget not found (apt-get install -y wget): skipping it", file=sys.stderr)
        modes.remove("wget")
    server, port = start_server(args.pages)
    server2, port2 = start_server(args.pages) if "netharvest-x2" in modes else (None, 0)
    seed = f"http://127.0.0.1:{port}/p/0.html"
    runs: dict[str, list[dict[str, Any]]] = {}
    print(f"load average at start: {' / '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    try:
        if modes == ["memory"]:
            with tempfile.TemporaryDirectory() as tmp:
                r = run_netharvest(seed, Path(tmp), args.valence)
            print(show("netharvest", r))
            return 0
        for rnd in range(args.rounds):
            for mode in modes:
                with tempfile.TemporaryDirectory() as tmp:
                    work = Path(tmp)
                    if mode == "netharvest":
                        r = run_netharvest(seed, work, args.valence)
                    elif mode == "engine-no-warc":
                        r = run_netharvest(seed, work, args.valence, archive=False)
                    elif mode == "scrapy":
                        r = run_scrapy(seed, work, args.concurrency, args.valence)
                    elif mode == "scrapy-items1":
                        r = run_scrapy(seed, work, args.concurrency, args.valence, items=1)
                    elif mode == "wget":
                        r = run_wget(seed, work)
                    else:
                        r = run_pair([seed, f"http://127.0.0.1:{port2}/p/0.html"], work, args.valence)
                print(f"round {rnd + 1}: " + show(mode, r), flush=True)
                runs.setdefault(mode, []).append(r)
    finally:
        for s in (server, server2):
            if s is not None:
                s.terminate()
                s.wait()
    print(f"\nmedian of {args.rounds} rounds (load average at end: {' / '.join(f'{x:.1f}' for x in os.getloadavg())}):")
    med = {mode: median_run(rs) for mode, rs in runs.items()}
    for mode, r in med.items():
        print(show(mode, r))
    rate = {mode: r["pages"] / r["wall"] for mode, r in med.items()}
    per_page = {mode: r["cpu"] / max(r["pages"], 1) for mode, r in med.items()}
    if "scrapy" in med:
        for mode in med:
            print(f"{mode:15s} {rate[mode] / rate['scrapy']:5.2f} x plain Scrapy's pages/s")
    if "wget" in med:
        for mode in med:
            print(
                f"{mode:15s} {rate[mode] / rate['wget']:5.2f} x wget's pages/s, "
                f"{per_page[mode] / per_page['wget']:5.2f} x wget's CPU per page"
            )
    return 0


def median_run(rs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median over the rounds (pages, wall, CPU and RSS separately; the lower middle one
    of an even number of rounds, so each figure is one that was measured)."""
    return {
        k: (statistics.median_low(r[k] for r in rs) if isinstance(rs[0][k], int | float) else rs[0][k]) for k in rs[0]
    }


if __name__ == "__main__":
    sys.exit(main())
