"""End to end through the real Celery worker: JobSpec → crawl child → WARC + crawl.log + reports +
JobResult, on the embedded filesystem broker, against the bundled test site on 127.0.0.1.

The worker is a real ``celery -A harvester.worker worker -P prefork`` subprocess; this test reads
the ``events`` queue directly with kombu (the messages the orchestrator's tasks would receive)
and writes Control messages to the job's control queue as the orchestrator does.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from crawlhelp import REPO, make_spec
from warcio.archiveiterator import ArchiveIterator

from harvester.contracts import (
    EVENTS_QUEUE,
    PROGRESS_TASK,
    RESULT_TASK,
    RUN_JOB_TASK,
    STARTED_TASK,
    JobResult,
    Progress,
    control_queue,
)

QUEUE = "harvest.test"
pytestmark = pytest.mark.slow


class Stack:
    """A harvester worker plus a client on the same embedded broker."""

    def __init__(self, data_dir: Path) -> None:
        from celery import Celery
        from kombu import Exchange, Queue

        self.data_dir = data_dir
        from harvester import runtime

        self.app = Celery("test-client")
        self.app.conf.update(runtime.celery_config())
        self.events = Queue(EVENTS_QUEUE, Exchange(EVENTS_QUEUE, type="direct"), routing_key=EVENTS_QUEUE)
        env = {**os.environ, "NETHARVEST_DATA_DIR": str(data_dir), "PYTHONUNBUFFERED": "1"}
        env.pop("NETHARVEST_BROKER_URL", None)
        self.log = open(data_dir / "worker.log", "wb")
        self.worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "harvester.worker",
                "worker",
                "-Q",
                QUEUE,
                "-c",
                "1",
                "-P",
                "prefork",
                "--loglevel=INFO",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "-n",
                "test-harvester@%h",
            ],
            cwd=REPO,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.seen: list[tuple[str, list[Any]]] = []

    def submit(self, spec: dict[str, Any]) -> None:
        self.app.send_task(RUN_JOB_TASK, args=[spec], queue=QUEUE)

    def control(self, job_id: int, action: str, argument: str = "") -> None:
        with self.app.connection_for_write() as conn:
            q = conn.SimpleQueue(control_queue(job_id))
            q.put({"job_id": job_id, "action": action, "argument": argument, "id": 1})
            q.close()

    def wait_for(self, task: str, timeout: float = 90, job_id: int | None = None) -> list[Any]:
        """The args of the next ``task`` message on the events queue (others are kept in .seen)."""
        for name, args in self.seen:
            if name == task and (job_id is None or _job_of(name, args) == job_id):
                self.seen.remove((name, args))
                return args
        deadline = time.time() + timeout
        with self.app.connection_for_read() as conn:
            queue = self.events(conn.default_channel)
            queue.declare()
            while time.time() < deadline:
                if self.worker.poll() is not None:
                    raise AssertionError(f"worker died: {(self.data_dir / 'worker.log').read_text()[-3000:]}")
                message = queue.get(no_ack=True)
                if message is None:
                    time.sleep(0.2)
                    continue
                name = message.headers.get("task")
                args = message.decode()[0]
                if name == task and (job_id is None or _job_of(name, args) == job_id):
                    return args
                self.seen.append((name, args))
        raise AssertionError(
            f"no {task} within {timeout}s; got {[n for n, _ in self.seen]}; worker log:\n"
            f"{(self.data_dir / 'worker.log').read_text()[-3000:]}"
        )

    def close(self) -> None:
        if self.worker.poll() is None:
            self.worker.send_signal(signal.SIGTERM)
            try:
                self.worker.wait(20)
            except subprocess.TimeoutExpired:
                self.worker.kill()
        self.log.close()


def _job_of(name: str, args: list[Any]) -> int | None:
    if name == STARTED_TASK:
        return int(args[0])
    if isinstance(args[0], dict):
        return int(args[0].get("job_id", -1))
    return None


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    # The embedded broker of a data directory of its own, for this module only: the environment is given back
    # afterwards (a later test that needs Redis must still find it).
    with pytest.MonkeyPatch.context() as env:
        data_dir = tmp_path_factory.mktemp("data")
        env.setenv("NETHARVEST_DATA_DIR", str(data_dir))
        env.delenv("NETHARVEST_BROKER_URL", raising=False)
        s = Stack(data_dir)
        yield s
        s.close()


def test_job_runs_through_the_worker(stack: Stack, sites: Any) -> None:
    a, b = sites
    spec = make_spec(
        [a.url],
        job_id=101,
        global_traps=[r".*/calendar\?month=202[0-4].*"],
        domains=[
            {
                "name": "site-a",
                "configuration": "default",
                "seeds": [a.url],
                "max_objects": -1,
                "max_bytes": -1,
                "traps": [r".*month=2027.*"],
            },
            {
                "name": "site-b",
                "configuration": "small",
                "seeds": [f"{b.url}news/"],
                "max_objects": 4,
                "max_bytes": -1,
                "traps": [],
            },
        ],
    )
    stack.submit(spec)
    started = stack.wait_for(STARTED_TASK, job_id=101)
    assert started[0] == 101 and started[1]
    result = JobResult.from_dict(stack.wait_for(RESULT_TASK, job_id=101)[0])
    assert result.status == "DONE", result.error_detail
    by_name = {d.name: d for d in result.domains}
    assert by_name["site-a"].stop_reason == "DOWNLOAD_COMPLETE"
    assert by_name["site-b"].stop_reason == "OBJECT_LIMIT"
    assert by_name["site-b"].objects == 4
    assert by_name["site-a"].objects > 30

    job_dir = stack.data_dir / "spool" / "101"
    # Every produced file exists, is named as the architecture says, and matches its checksum.
    import hashlib

    kinds = {f.kind for f in result.files}
    assert kinds == {"warc", "metadata"}
    for f in result.files:
        assert Path(f.path).is_file() and not f.name.endswith(".open")
        assert hashlib.sha256(Path(f.path).read_bytes()).hexdigest() == f.sha256
    # WARC records read back with warcio: warcinfo first, request/response pairs.
    warcs = [Path(f.path) for f in result.files if f.kind == "warc"]
    uris: dict[str, int] = {}
    for path in warcs:
        with open(path, "rb") as fh:
            records = list(ArchiveIterator(fh))
        assert records[0].rec_type == "warcinfo"
        for r in records:
            if r.rec_type in ("response", "revisit"):
                uris[r.rec_headers.get_header("WARC-Target-URI")] = r.http_headers.get_statuscode()
    assert uris[a.url] == "200"
    assert uris[f"{a.url}robots.txt"] == "200"
    assert uris[f"{a.url}old-page"] == "301"
    assert f"{a.url}private/secret.html" not in uris  # robots.txt disallows it
    # crawl.log: Heritrix lines with discovery paths and negative codes.
    lines = [ln.split() for ln in (job_dir / "logs" / "crawl.log").read_text().splitlines()]
    status = {f[3]: (f[1], f[4]) for f in lines}
    assert status[a.url] == ("200", "-")
    assert status[f"{a.url}robots.txt"] == ("200", "P")
    assert status[f"{a.url}private/secret.html"][0] == "-9998"
    assert status[f"{a.url}orphan.html"][1].endswith("M")  # only in the sitemap
    assert status[f"{a.url}img/photo2-2x.png"] == ("200", "LE")  # srcset
    assert status[f"{b.url}img/logo.png"][1] == "E"  # out-of-scope embed, fetched
    assert "http://example.invalid/outside.html" not in status  # out of scope: not even logged
    assert status[f"{a.url}calendar?month=2024-12"][0] == "-5001"  # global trap
    assert status[f"{a.url}calendar?month=2027-01"][0] == "-5001"  # domain trap
    assert any(f[1] == "-5003" for f in lines)  # site-b over its quota
    # Reports and the metadata WARC.
    assert (job_dir / "reports" / "crawl-report.txt").is_file()
    assert (job_dir / "reports" / "hosts-report.txt").is_file()
    assert (job_dir / "jobresult.json").is_file()


def test_invalid_jobspec_is_answered_not_crashed(stack: Stack) -> None:
    stack.submit({"version": 1, "job_id": 102, "kind": "selective"})
    result = JobResult.from_dict(stack.wait_for(RESULT_TASK, job_id=102)[0])
    assert result.status == "FAILED"
    assert result.error_category == "invalid-jobspec"
    assert "harvest_id" in result.error_detail or "missing" in result.error_detail


def test_progress_and_stop_control(stack: Stack, sites: Any) -> None:
    a, _ = sites
    # Politeness on (0.3 s between fetches) so the job is still running when we stop it.
    spec = make_spec([a.url], job_id=103, settings={"min_delay_ms": 300, "max_delay_ms": 300})
    stack.submit(spec)
    stack.wait_for(STARTED_TASK, job_id=103)
    progress = Progress.from_dict(stack.wait_for(PROGRESS_TASK, job_id=103, timeout=30)[0])
    assert progress.job_id == 103
    stack.control(103, "add_trap", r".*/news/.*")
    stack.control(103, "stop")
    result = JobResult.from_dict(stack.wait_for(RESULT_TASK, job_id=103, timeout=60)[0])
    assert result.status == "DONE"
    assert result.domains[0].stop_reason == "DOWNLOAD_UNFINISHED"
    assert json.loads((stack.data_dir / "spool" / "103" / "jobresult.json").read_text())["status"] == "DONE"


def test_a_cancelled_job_is_dropped_before_anything_starts(stack: Stack, sites: Any) -> None:
    """The fence on the embedded broker: a job whose control queue holds a cancel is never started, by any
    copy of its message (the cancel is put back after each reading)."""
    a, _ = sites
    stack.control(104, "cancel")
    log = stack.data_dir / "worker.log"
    for copy in (1, 2):
        stack.submit(make_spec([a.url], job_id=104))
        deadline = time.time() + 60
        while log.read_text().count("job 104: cancelled by the orchestrator") < copy:
            assert time.time() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)
    assert not (stack.data_dir / "spool" / "104").exists()
    assert not [n for n, args in stack.seen if _job_of(n, args) == 104]
    stack.submit(make_spec([a.url], job_id=105))  # the worker carries on with other jobs
    assert JobResult.from_dict(stack.wait_for(RESULT_TASK, job_id=105)[0]).status == "DONE"
    assert not [n for n, args in stack.seen if _job_of(n, args) == 104]


def test_a_job_by_reference_reads_its_spec_or_fails_clearly(stack: Stack, sites: Any) -> None:
    """Issue 15: the message is a JobRef; the worker reads the spec over HTTP (the orchestrator's API is stood
    in for by a server that serves job 131's spec and knows no job 132)."""
    import http.server
    import threading

    a, _ = sites
    spec = make_spec([a.url], job_id=131, max_objects=3)

    class Api(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(spec).encode() if self.path == "/api/v1/jobs/131/spec" else b'{"detail": "no job"}'
            self.send_response(200 if self.path == "/api/v1/jobs/131/spec" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Api)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}/api/v1/jobs"
    try:
        stack.submit({"version": 1, "job_id": 132, "spec_url": f"{base}/132/spec"})
        failed = JobResult.from_dict(stack.wait_for(RESULT_TASK, job_id=132)[0])
        assert (failed.status, failed.error_category) == ("FAILED", "jobspec-unreadable")
        assert failed.error_detail == f"job 132: {base}/132/spec: HTTP 404 Not Found"

        stack.submit({"version": 1, "job_id": 131, "spec_url": f"{base}/131/spec"})
        assert stack.wait_for(STARTED_TASK, job_id=131)[0] == 131
        result = JobResult.from_dict(stack.wait_for(RESULT_TASK, job_id=131)[0])
        assert result.status == "DONE", result.error_detail
        assert [(d.name, d.objects) for d in result.domains] == [("site-a", 3)]
        assert json.loads((stack.data_dir / "spool" / "131" / "jobspec.json").read_text())["job_id"] == 131
    finally:
        server.shutdown()


def test_a_warm_shutdown_stops_the_crawl_at_once_and_a_restarted_worker_carries_it_on(
    tmp_path: Path, sites: Any
) -> None:
    """SIGTERM to the worker (its warm shutdown, as `netharvest up` and docker stop send it): the crawl is ended
    with a checkpoint and the worker exits, instead of crawling on until it is killed; the job's message goes
    back to the broker, and the worker started again takes it and finishes the job from the checkpoint."""
    a, _ = sites
    with pytest.MonkeyPatch.context() as env:
        env.setenv("NETHARVEST_DATA_DIR", str(tmp_path))
        env.delenv("NETHARVEST_BROKER_URL", raising=False)
        first = Stack(tmp_path)
        try:
            # 60 ms between fetches: the site's ~60 URIs take several seconds, the shutdown comes after 5 lines.
            first.submit(make_spec([a.url], job_id=131, settings={"min_delay_ms": 60, "max_delay_ms": 60}))
            first.wait_for(STARTED_TASK, job_id=131)
            crawl_log = tmp_path / "spool" / "131" / "logs" / "crawl.log"
            deadline = time.time() + 60
            while time.time() < deadline and (not crawl_log.exists() or len(crawl_log.read_text().splitlines()) < 5):
                time.sleep(0.05)
            first.worker.send_signal(signal.SIGTERM)
            assert first.worker.wait(60) == 0
            lines_then = len(crawl_log.read_text().splitlines())
            assert lines_then < 40, "the crawl ran on after the worker was told to stop"
            assert not (tmp_path / "spool" / "131" / "jobresult.json").exists()
            worker_log = (tmp_path / "worker.log").read_text(errors="replace")
            assert "the worker is stopping" in worker_log
        finally:
            first.close()
        second = Stack(tmp_path)
        try:
            second.seen = [item for item in first.seen if item[0] != STARTED_TASK]
            result = JobResult.from_dict(second.wait_for(RESULT_TASK, job_id=131, timeout=120)[0])
            assert result.status == "DONE", result.error_detail
            harvester_log = (tmp_path / "spool" / "131" / "logs" / "harvester.log").read_text(errors="replace")
            assert "resumed job 131" in harvester_log
            uris = [ln.split()[3] for ln in crawl_log.read_text().splitlines()]
            assert f"{a.url}orphan.html" in uris
        finally:
            second.close()
