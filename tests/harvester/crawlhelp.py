"""Helpers for the crawl-engine tests: JobSpecs, running the crawl child the way the Celery task
does, reading crawl.log (imported by name: pytest puts this directory on sys.path)."""

from __future__ import annotations

import json
import os
import signal
import socketserver
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


class LoopbackTCPServer(socketserver.ThreadingTCPServer):
    """A raw TCP test server on a free loopback port, for tests that must control the bytes on the wire
    (http.server would tidy them): its handler threads die with the test, the port is reusable at once."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, handler: type[socketserver.BaseRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)


#: Politeness off: tests measure behaviour, not patience.
FAST = {"min_delay_ms": 0, "max_delay_ms": 0, "delay_factor": 0.0, "retry_delay_s": 1, "max_retries": 2}


def make_spec(
    seeds: list[str],
    job_id: int = 1,
    settings: dict[str, Any] | None = None,
    max_objects: int = -1,
    max_bytes: int = -1,
    traps: list[str] | None = None,
    global_traps: list[str] | None = None,
    time_limit_s: int = 0,
    domains: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "version": 1,
        "job_id": job_id,
        "harvest_id": 7,
        "harvest_name": "test harvest",
        "harvest_run": 1,
        "kind": "selective",
        "channel": "test",
        "template": "default",
        "settings": {**FAST, **(settings or {})},
        "domains": domains
        or [
            {
                "name": "site-a",
                "configuration": "default",
                "seeds": seeds,
                "max_objects": max_objects,
                "max_bytes": max_bytes,
                "traps": traps or [],
            }
        ],
        "global_traps": global_traps or [],
        "time_limit_s": time_limit_s,
    }


def continuous_spec(
    seeds: list[str], job_id: int = 1, settings: dict[str, Any] | None = None, **section: Any
) -> dict[str, Any]:
    """A continuous JobSpec dict: :func:`make_spec`'s with its ``continuous`` section (Heritrix's policy unless
    ``section`` gives a ``revisit``)."""
    spec = make_spec(seeds, job_id=job_id, settings=settings)
    spec["kind"] = "continuous"
    spec["continuous"] = {"revisit": {"policy": "heritrix"}, **section}
    return spec


def write_spec(job_dir: Path, spec: dict[str, Any]) -> None:
    job_dir.mkdir(parents=True, exist_ok=True)
    (job_dir / "jobspec.json").write_text(json.dumps(spec))


def start_crawl(job_dir: Path, *extra: str, stdin: int | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "harvester.process", str(job_dir), *extra],
        cwd=REPO,
        stdin=stdin,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def controlled_crawl(job_dir: Path) -> subprocess.Popen[bytes]:
    """The crawl child reading its controls (stop, pause, resume, add a trap) as lines on its stdin, as the
    harvester's worker drives it."""
    return start_crawl(job_dir, "--control-stdin", stdin=subprocess.PIPE)


def run_crawl(job_dir: Path, spec: dict[str, Any], timeout: float = 90) -> dict[str, Any]:
    """Run the crawl child to its end and return its JobResult dict."""
    write_spec(job_dir, spec)
    proc = start_crawl(job_dir)
    assert proc.wait(timeout) == 0, (job_dir / "logs" / "harvester.log").read_text()[-3000:]
    return json.loads((job_dir / "jobresult.json").read_text())


def crawl_log(job_dir: Path) -> list[list[str]]:
    """crawl.log lines split into fields."""
    return [line.split() for line in (job_dir / "logs" / "crawl.log").read_text().splitlines() if line]


def began(field: str) -> float:
    """crawl.log fetch-began field ``YYYYmmddHHMMSSmmm+dur`` → seconds."""
    stamp = field.split("+", 1)[0]
    return datetime.strptime(stamp[:14], "%Y%m%d%H%M%S").timestamp() + int(stamp[14:17]) / 1000


def fetched(job_dir: Path) -> dict[str, str]:
    """URI → status (as text) from crawl.log."""
    return {f[3]: f[1] for f in crawl_log(job_dir)}


def kill_mid_crawl(job_dir: Path, spec: dict[str, Any], lines: int = 25) -> set[str]:
    """Start the crawl child, kill -9 it once crawl.log has ``lines`` lines and a checkpoint
    (every second) has passed; return the URIs the frontier journal had done at that checkpoint."""
    write_spec(job_dir, spec)
    proc = start_crawl(job_dir)
    log = job_dir / "logs" / "crawl.log"
    deadline = time.time() + 30
    while time.time() < deadline:
        if log.exists() and len(log.read_text().splitlines()) >= lines:
            break
        time.sleep(0.05)
    time.sleep(1.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    db = sqlite3.connect(str(job_dir / "state" / "frontier.sqlite"))
    try:
        return {url for (url,) in db.execute("SELECT url FROM uris WHERE state=1")}
    finally:
        db.close()


#: ``answer(path, n)`` → (status, body): ``n`` counts the requests for ``path`` so far, this one included.
Answer = Callable[[str, int], tuple[int, bytes]]


@contextmanager
def tiny_site(answer: Answer) -> Iterator[str]:
    """A loopback HTTP/1.0 server answering every GET with ``answer`` (text/html); yields its base URL."""
    served: Counter[str] = Counter()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served[self.path] += 1
            status, body = answer(self.path, served[self.path])
            self.send_response(status)
            self.send_header("Content-Type", "text/plain" if self.path == "/robots.txt" else "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
