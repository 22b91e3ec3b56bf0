"""A real stack for the reliability tests: the orchestrator's events worker and real harvester workers on
Redis, a TCP proxy in front of the broker that a test can cut, and a job over the bundled test site.

Nothing is mocked: the workers are ``celery … worker`` processes, the crawl is the real crawl child, the
intake writes the test database (which the workers reach through ``NETHARVEST_DATABASE_URL``).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from django.db import connection

from harvester.testsite import TestSiteServer
from orchestrator.celery import app
from orchestrator.harvest.models import ArchiveFile, Job
from tests.conftest import free_port, wait_for
from tests.orchestrator import factories

REPO = Path(__file__).resolve().parents[2]
#: Queues the tests use: emptied before and after (job ids restart with each test database, so a
#: control queue, which outlives a job, is emptied too).
QUEUES = ("harvest.focused", "events", "indexer")


def uses_real_backends() -> bool:
    return connection.vendor == "postgresql" and app.conf.broker_url.startswith("redis")


def redis_client() -> Any:
    with app.connection_for_write() as conn:
        return conn.default_channel.client


def clean_broker() -> None:
    with app.connection_for_write() as conn:
        channel = conn.default_channel
        for queue in QUEUES:
            channel.queue_purge(queue)
        client = channel.client
        for key in client.scan_iter("control.job-*"):
            client.delete(key)
        client.delete("unacked", "unacked_index")


def worker_env(data_dir: Path, broker_url: str | None = None) -> dict[str, str]:
    s = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "orchestrator.settings",
        "PYTHONUNBUFFERED": "1",
        "NETHARVEST_DATABASE_URL": f"postgres://{s['USER']}@{s['HOST']}:{s['PORT']}/{s['NAME']}",
        "NETHARVEST_DATA_DIR": str(data_dir),
        "NETHARVEST_BROKER_URL": broker_url or app.conf.broker_url,
    }
    env.pop("NETHARVEST_SPOOL_DIR", None)
    return env


def start_worker(
    app_name: str, queue: str, name: str, env: dict[str, str], log: Path, concurrency: int = 1
) -> subprocess.Popen[bytes]:
    """A real Celery worker in its own process group (so a test can kill it with its crawl child), serving
    ``queue`` (comma-separated for several), appending to ``log``."""
    celery = str(Path(sys.executable).parent / "celery")
    return subprocess.Popen(
        [
            celery,
            "-A",
            app_name,
            "worker",
            "-Q",
            queue,
            "-c",
            str(concurrency),
            "-P",
            "prefork",
            "-n",
            f"{name}@%h",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "--loglevel",
            "INFO",
        ],
        cwd=REPO,
        env=env,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def stop_worker(worker: subprocess.Popen[bytes]) -> None:
    if worker.poll() is None:
        worker.terminate()
        try:
            worker.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
    try:
        os.killpg(worker.pid, signal.SIGKILL)  # a crawl child left behind
    except ProcessLookupError:
        pass


def site_job(site: TestSiteServer, delay_ms: int) -> Job:
    """A selective job over the test site (domain ``site-a.fr``), politeness ``delay_ms`` between fetches."""
    job = factories.job(domains=["site-a.fr"])
    spec = job.spec
    spec["settings"].update(
        min_delay_ms=delay_ms, max_delay_ms=delay_ms, delay_factor=0.0, retry_delay_s=1, max_retries=1
    )
    spec["domains"][0]["seeds"] = [site.url]
    job.spec = spec
    job.save(update_fields=["spec"])
    return job


def crawled_uris(job_dir: Path) -> set[str]:
    log = job_dir / "logs" / "crawl.log"
    return {line.split()[3] for line in log.read_text().splitlines() if line.strip()} if log.exists() else set()


class Proxy:
    """A TCP proxy on 127.0.0.1 in front of ``target_port``, which a test can cut and restore.

    ``cut`` closes every connection and the listening socket, so new connections are refused, as when
    the broker's host goes away; ``restore`` listens on the same port again.
    """

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = free_port()
        self.lock = threading.Lock()
        self.sockets: list[socket.socket] = []
        self.listener: socket.socket | None = None
        self.restore()

    def restore(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        with self.lock:
            if self.listener is not None:
                try:
                    self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept()
                except OSError:
                    pass
                self.listener.close()
                self.listener = None
            for s in self.sockets:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
            self.sockets.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            with self.lock:
                if self.listener is not listener:  # cut meanwhile
                    client.close()
                    upstream.close()
                    return
                self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def queued_controls(job_id: int) -> list[str]:
    """The actions waiting in a job's control queue on Redis (kombu keeps each body base64-encoded)."""
    import base64
    import json

    from harvester.contracts import control_queue

    actions = []
    for raw in redis_client().lrange(control_queue(job_id), 0, -1):
        envelope = json.loads(raw)
        body = envelope["body"]
        if envelope.get("properties", {}).get("body_encoding") == "base64":
            body = base64.b64decode(body)
        actions.append(json.loads(body)["action"])
    return actions


def files_under(directory: Path) -> dict[str, tuple[int, int]]:
    """Every file below ``directory``: relative path → (size, mtime in ns)."""
    return {
        str(p.relative_to(directory)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def wait_indexed(job: Job, log: Path) -> Job:
    """Wait until ``job`` is DONE and every file of it through the indexer chain (CLEANED: its captures are in
    the index and the dedup index the next job consults); a job that FAILED fails the test with ``log``'s tail."""
    wait_for(lambda: Job.objects.get(pk=job.pk).status in ("DONE", "FAILED"), 240, f"job {job.pk} to end")
    job.refresh_from_db()
    assert job.status == "DONE", (job.error_category, job.error_detail, log.read_text()[-4000:])
    wait_for(
        lambda: (
            ArchiveFile.objects.filter(job=job).exists()
            and set(ArchiveFile.objects.filter(job=job).values_list("index_state", flat=True)) == {"CLEANED"}
        ),
        240,
        f"job {job.pk}'s files through the indexer chain",
    )
    return job
