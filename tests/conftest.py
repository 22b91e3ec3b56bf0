"""Suite-wide fixtures. Which database and broker the suite uses is decided in tests/settings.py."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


def pytest_report_header(config: pytest.Config) -> list[str]:
    from django.conf import settings

    from tests.settings import BACKENDS

    return [
        f"netharvest backends: database = {BACKENDS['database']}, broker = {BACKENDS['broker']}",
        f"netharvest data dir: {settings.DATA_DIR}",
    ]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    from tests.settings import BACKENDS

    terminalreporter.write_line(
        f"netharvest backends used: database = {BACKENDS['database']}, broker = {BACKENDS['broker']}"
    )


def uses_postgres() -> bool:
    return os.environ.get("NETHARVEST_DATABASE_URL", "").startswith("postgres")


#: The ports the suite's servers are given: below the kernel's ephemeral range (32768-60999 on Linux), split
#: between the xdist workers. Why: a port found by binding port 0 comes from the ephemeral range, which also
#: gives every outgoing connection its port; closed again and handed to a server that binds it a moment later,
#: it could be taken in between by a client socket or by the other worker's server (a CI run failed so: pywb
#: died of "Address already in use" while the test talked to another test's server on its port).
_PORTS = range(20000, 32000)
_port_random = random.Random()  # its own: a test seeding the module's generator does not repeat our ports
_ports_given: deque[int] = deque(maxlen=200)  # not yet bound by their servers, perhaps


def free_port() -> int:
    """A port on 127.0.0.1 nobody listens on, from this xdist worker's share of :data:`_PORTS`."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    share = len(_PORTS) // workers
    first = _PORTS.start + (int(worker) % workers if worker.isdigit() else 0) * share
    for _ in range(share):
        port = first + _port_random.randrange(share)
        if {port - 1, port, port + 1} & set(_ports_given):
            continue  # given out lately (a caller may also use port + 1)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue  # in use, or still in TIME_WAIT
        _ports_given.append(port)
        return port
    raise RuntimeError(f"no free port in {first}-{first + share - 1}")


def wait_for(predicate: Callable[[], object], timeout: float, what: str) -> None:
    """Poll ``predicate`` until it is true; fail naming ``what`` when ``timeout`` seconds pass first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _stack_processes(only: str, queues: str) -> Iterator[Path]:
    """``netharvest up --only <only>`` on this test database and broker, after purging ``queues``; stopped
    (and waited for) afterwards. Yields the path of their log."""
    from django.conf import settings
    from django.db import connection

    if connection.vendor != "postgresql" or not os.environ.get("NETHARVEST_BROKER_URL", "").startswith("redis"):
        pytest.skip("a worker process needs the test database on PostgreSQL and a Redis broker")
    db = connection.settings_dict
    env = {
        **os.environ,
        "NETHARVEST_DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "NETHARVEST_DATA_DIR": str(settings.DATA_DIR),
        "DJANGO_SETTINGS_MODULE": "orchestrator.settings",
        # No demo site: its fixed ports clash between test runs side by side, and its harvest is not the test's.
        "NETHARVEST_DEMO": "0",
    }
    # Jobs that other tests dispatched and no worker took are still queued: not this test's to crawl.
    subprocess.run(
        [str(Path(sys.executable).parent / "celery"), "-A", "harvester.worker", "purge", "-f", "-Q", queues],
        env=env,
        check=True,
        capture_output=True,
    )
    log = open(settings.DATA_DIR / "up.log", "wb")
    # --no-demo: the tests serve their own sites; the demo's fixed ports may be taken by another stack.
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "netharvest"), "up", "--only", only, "--no-demo"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    yield settings.DATA_DIR / "up.log"
    stop_processes(process)
    log.close()


def stop_processes(*processes: subprocess.Popen[bytes]) -> None:
    """SIGTERM to each (all at once: their shutdowns overlap), then wait; a process group still there after a
    minute is killed. The processes must have been started with ``start_new_session=True``."""
    for process in processes:
        process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture
def workers(transactional_db: None) -> Iterator[Path]:
    """A high-priority harvester worker and the orchestrator's intake/indexer worker on this test
    database and broker, as `netharvest up` runs them. Yields the path of their log. The database is
    transactional: the workers see what the test commits."""
    yield from _stack_processes("worker-high,indexer", "harvest.focused,events")


@pytest.fixture
def continuous_workers(transactional_db: None) -> Iterator[Path]:
    """The continuous channel's harvester worker and the intake/indexer worker, as `netharvest up` runs them
    (issue 12: continuous jobs have workers of their own). Yields the path of their log."""
    yield from _stack_processes("worker-continuous,indexer", "harvest.continuous,events,indexer")


def closed_broker_url() -> str:
    """A Redis URL on a loopback port nothing listens on: every connection is refused at once."""
    return f"redis://127.0.0.1:{free_port()}/0"


@pytest.fixture
def broker_down() -> Iterator[Callable[[], None]]:
    """This process's Celery app pointed at a broker that refuses connections; the fixture's value brings the
    real broker back (at the latest when the test ends).

    Only the app's connection pools are reset (as Celery does after a fork), so the next publish connects to
    the URL in force."""
    from orchestrator.celery import app

    def point_at(url: str) -> None:
        app.conf.broker_url = url
        app._pool = None
        app.amqp._producer_pool = None

    real = app.conf.broker_url
    point_at(closed_broker_url())
    yield lambda: point_at(real)
    point_at(real)


@pytest.fixture(scope="session", autouse=True)
def _no_stale_control_queues() -> None:
    """Job ids restart with each test database, but control queues live on in Redis between sessions: a
    ``cancel`` fence left by an earlier session would make a harvester drop this session's job of that id."""
    broker = os.environ.get("NETHARVEST_BROKER_URL", "")
    if not broker.startswith("redis"):
        return  # the embedded broker lives in this session's own data directory
    from orchestrator.celery import app

    with app.connection_for_write() as conn:
        client = conn.default_channel.client
        for key in client.scan_iter("control.job-*"):
            client.delete(key)


_ID_BLOCKS = iter(range(1, 10**6))


@pytest.fixture(autouse=True)
def _ids_never_repeat_on_sqlite(request: pytest.FixtureRequest) -> None:
    """On SQLite a rolled-back test hands its row ids out again (``sqlite_sequence`` rolls back with the test),
    while what is named after an id outlives the test: a job's control queue in the embedded broker, its
    spool directory in the session's data directory, QA sums cached under a definition's id. A later test's
    job 1 then finds an earlier test's ``cancel`` fence or ``spool/1``. Each test's rows start at ids of their
    own (per xdist worker too), as PostgreSQL's sequences, which a rollback does not rewind, already give."""
    marker = request.node.get_closest_marker("django_db")
    if marker is None:
        return
    request.getfixturevalue("transactional_db" if marker.kwargs.get("transaction") else "db")
    from django.db import connection

    if connection.vendor != "sqlite":
        return
    from tests.settings import worker_index

    floor = worker_index() * 10**9 + next(_ID_BLOCKS) * 1000
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%%AUTOINCREMENT%%'")
        tables = [name for (name,) in cursor.fetchall()]
        cursor.execute("DELETE FROM sqlite_sequence")
        cursor.executemany("INSERT INTO sqlite_sequence (name, seq) VALUES (%s, %s)", [(t, floor) for t in tables])


@pytest.fixture
def replay_service(settings, tmp_path: Path) -> Iterator[object]:
    """Real pywb over this test's ``settings.NETHARVEST_INDEX_DIR`` (set it first, e.g. with the
    orchestrator's ``storage_env``), reachable through the web UI's ``/replay/…`` proxy: the fixture points
    ``settings.NETHARVEST_REPLAY_URL`` at it. Yields a tests.replayhelp.ReplayService (``.url``, ``.log``)."""
    from tests.replayhelp import start_replay

    service = start_replay(Path(settings.NETHARVEST_INDEX_DIR), tmp_path / "replay.log")
    settings.NETHARVEST_REPLAY_URL = service.url
    yield service
    service.stop()


@pytest.fixture
def own_index(tmp_path, settings, monkeypatch):
    """This test's own index directory and dedup index, for this process and (through the environment) the
    workers: the session's shared ones hold earlier tests' captures, whose rows are gone, and the test site's
    unchanged files would be stored as revisits of WARCs replay can no longer find."""
    index = tmp_path / "index"
    for name, value in (("NETHARVEST_INDEX_DIR", index), ("NETHARVEST_DEDUP_INDEX", index / "dedup.sqlite3")):
        monkeypatch.setenv(name, str(value))
        setattr(settings, name, value)
    return index


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """A real S3-protocol server on 127.0.0.1 (moto's standalone server, in a thread of this process) for the
    whole session; the environment points boto3 at it (NETHARVEST_S3_ENDPOINT_URL, test credentials), so
    worker processes started by the tests reach it too. Never a mock of boto3's calls."""
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    saved = {
        k: os.environ.get(k)
        for k in (
            "NETHARVEST_S3_ENDPOINT_URL",
            "AWS_ENDPOINT_URL_S3",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_DEFAULT_REGION",
        )
    }
    os.environ.update(
        {
            "NETHARVEST_S3_ENDPOINT_URL": endpoint,
            "AWS_ENDPOINT_URL_S3": endpoint,
            "AWS_ACCESS_KEY_ID": "netharvest-test",
            "AWS_SECRET_ACCESS_KEY": "netharvest-test",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
    )
    yield endpoint
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    server.stop()


@pytest.fixture
def s3_bucket(s3_endpoint: str, request: pytest.FixtureRequest) -> str:
    """A new empty bucket for this test: its ``s3://`` URL."""
    import re

    from indexer import objectstore

    name = re.sub(r"[^a-z0-9-]", "-", f"t{len(_BUCKETS)}-{request.node.name.lower()}")[:60].strip("-")
    _BUCKETS.append(name)
    objectstore.client().create_bucket(Bucket=name)
    return f"s3://{name}"


_BUCKETS: list[str] = []
