"""Hot-path benchmark: pages/s of plain Scrapy vs RawHTTPDownloadHandler + ArchiveMiddleware.

Goal: ≥ 0.85× plain Scrapy. Both crawls fetch the same N pages from a fast local asyncio server
(its own process, keep-alive capable); ours also writes the WARCs, crawl.log and reports.

    .venv/bin/python tests/harvester/test_fetch_bench.py [pages]    # prints the figures

As a test it is marked ``slow`` and only checks a loose floor (machines vary); the report quotes
the measured ratio.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve()
ROOT = HERE.parents[2]

SERVER = r"""
import asyncio, sys
BODY = (b"<html><head><title>bench</title></head><body>" + b"<p>lorem ipsum dolor sit amet</p>" * 600
        + b"</body></html>")
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n" % len(BODY)
async def handle(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            close = b"connection: close" in head.lower()
            writer.write(HEAD + (b"Connection: close\r\n\r\n" if close else b"\r\n") + BODY)
            await writer.drain()
            if close:
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

CRAWL = r"""
import json, sys, time, tempfile
import scrapy
from scrapy.crawler import CrawlerProcess
port, pages, mode, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
class S(scrapy.Spider):
    name = "bench"
    async def start(self):
        for i in range(pages):
            yield scrapy.Request(f"http://127.0.0.1:{port}/p/{i}", meta={"nh": {"path": "", "via": None,
                                 "hops": 0, "domain": "127.0.0.1", "seed": True}}, dont_filter=True)
    def parse(self, response):
        pass
settings = {"LOG_LEVEL": "ERROR", "TELNETCONSOLE_ENABLED": False, "ROBOTSTXT_OBEY": False,
            "CONCURRENT_REQUESTS": 16, "CONCURRENT_REQUESTS_PER_DOMAIN": 16, "COOKIES_ENABLED": False}
if mode == "archive":
    settings.update({
        "DOWNLOAD_HANDLERS": {"http": "harvester.fetch.RawHTTPDownloadHandler",
                              "https": "harvester.fetch.RawHTTPDownloadHandler"},
        "DOWNLOADER_MIDDLEWARES": {"harvester.archive.ArchiveMiddleware": 950},
        "NH_JOB": {"job_id": 1, "harvest_id": 1}, "NH_OUT_DIR": out, "NH_DEDUP": False,
        "NH_MAX_DOCUMENT_BYTES": 100 * 1024 * 1024})
process = CrawlerProcess(settings=settings)
t0 = time.monotonic()
process.crawl(S)
process.start()
print(json.dumps({"elapsed": time.monotonic() - t0}))
"""


def measure(pages: int = 2000, rounds: int = 2) -> dict[str, float]:
    server = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        best: dict[str, float] = {}
        for _ in range(rounds):
            for mode in ("plain", "archive"):
                with tempfile.TemporaryDirectory() as out:
                    proc = subprocess.run([sys.executable, "-c", CRAWL, str(port), str(pages), mode, out],
                                          cwd=ROOT, capture_output=True, text=True, timeout=600)
                    assert proc.returncode == 0, proc.stderr[-3000:]
                    elapsed = json.loads(proc.stdout.strip().splitlines()[-1])["elapsed"]
                    best[mode] = max(best.get(mode, 0.0), pages / elapsed)
        best["ratio"] = best["archive"] / best["plain"]
        return best
    finally:
        server.terminate()
        server.wait()


@pytest.mark.slow
def test_archiving_keeps_most_of_scrapys_speed():
    figures = measure(1000, rounds=1)
    print(figures)
    assert figures["ratio"] >= 0.6, figures


if __name__ == "__main__":  # pragma: no cover
    t0 = time.monotonic()
    print(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
    print(f"({time.monotonic() - t0:.0f}s)")
