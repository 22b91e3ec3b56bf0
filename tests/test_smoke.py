"""The whole stack as a newcomer starts it: `netharvest up` as real subprocesses, then Ctrl-C.

Checks that the web answers, that each worker is ready on its own queues (asked over the broker with
Celery's remote control, not read from a log), and that after SIGINT no process of the stack is
left running. Runs on the embedded default always, and on PostgreSQL + Redis when they answer.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from warcio.archiveiterator import ArchiveIterator

from tests.conftest import free_port
from tests.settings import _reachable

pytestmark = pytest.mark.smoke

EXPECTED_QUEUES = {
    "high": ["harvest.focused"],
    "low": ["harvest.snapshot"],
    "continuous": ["harvest.continuous"],
    "indexer": ["events", "indexer"],
    "qa": ["qa"],
}


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _worker_queues(env: dict[str, str]) -> dict[str, list[str]]:
    """Ask the workers over the broker which queues they consume (a separate process: clean config)."""
    script = (
        "import json; from harvester.worker import app;"
        "r = app.control.inspect(timeout=3).active_queues() or {};"
        "print(json.dumps({k.split('@')[0]: sorted(q['name'] for q in v) for k, v in r.items()}))"
    )
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    import json

    return json.loads(out.stdout.strip() or "{}")


def _job_status(env: dict[str, str], cwd: Path) -> str:
    exe = Path(sys.executable).parent / "netharvest"
    out = subprocess.run([str(exe), "jobs", "list"], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
    return out.stdout


def _demo_warc_responses(var: Path) -> int:
    """Response records in the demo job's WARC, wherever the chain has got it to (spool or archive)."""
    for _ in range(20):
        for path in sorted(var.rglob("1-1-*.warc.gz")):
            try:
                with path.open("rb") as stream:
                    return sum(1 for record in ArchiveIterator(stream) if record.rec_type == "response")
            except FileNotFoundError:
                continue  # moved by the indexer chain meanwhile
        time.sleep(0.5)
    return 0


def _chain_states(env: dict[str, str], cwd: Path) -> dict[str, int]:
    """Files per indexer-chain state, as `netharvest index status` shows them."""
    exe = Path(sys.executable).parent / "netharvest"
    out = subprocess.run(
        [str(exe), "index", "status"], env=env, cwd=cwd, capture_output=True, text=True, timeout=60
    ).stdout
    rows = out.split("Files by state", 1)[-1].split("\n\n", 1)[0].splitlines()[3:]
    return {row.split()[0]: int(row.split()[1]) for row in rows if row.strip()}


def _replay_through_web_ui(web: str, var: Path, page: str) -> bytes:
    """Log in as the stack's administrator (the password `netharvest up` keeps in the data directory) and fetch
    ``page`` as archived, through the web UI's /replay/ (pywb behind it); anonymous, the same URL is refused."""
    import http.cookiejar
    import re
    import urllib.parse

    target = f"{web}/replay/all/id_/{page}"
    anonymous = urllib.request.build_opener(_NoRedirect).open
    try:
        anonymous(target, timeout=30)
        raise AssertionError("replay answered an anonymous user")
    except urllib.error.HTTPError as refused:
        assert refused.code == 302 and "/login/" in refused.headers["Location"]
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    form = opener.open(f"{web}/login/", timeout=30).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
    password = (var / "admin-password").read_text().strip()
    data = urllib.parse.urlencode(
        {"csrfmiddlewaretoken": token, "username": "admin", "password": password, "next": "/"}
    ).encode()
    opener.open(
        urllib.request.Request(f"{web}/login/", data=data, headers={"Referer": f"{web}/login/"}), timeout=30
    ).read()
    with opener.open(target, timeout=60) as response:
        return response.read()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        return None


def _free_port_pair() -> int:
    while True:
        port = free_port()
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port + 1))
                return port
            except OSError:
                continue


def _run_stack(tmp_path: Path, extra_env: dict[str, str], demo: bool) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETHARVEST_") and k != "DJANGO_SETTINGS_MODULE"}
    env.update(NETHARVEST_DATA_DIR=str(tmp_path / "var"), **extra_env)
    log = (tmp_path / "up.log").open("w")
    exe = Path(sys.executable).parent / "netharvest"
    demo_port = _free_port_pair()
    args = ["--demo", "--demo-port", str(demo_port)] if demo else ["--no-demo"]
    args += ["--replay-bind", f"127.0.0.1:{free_port()}", "--dedup-bind", f"127.0.0.1:{free_port()}"]
    proc = subprocess.Popen(
        [str(exe), "up", "--bind", f"127.0.0.1:{port}", *args],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=tmp_path,
    )
    try:
        deadline = time.monotonic() + 120
        status = None
        while time.monotonic() < deadline and status != 200:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/admin/login/", timeout=2) as response:
                    status = response.status
            except OSError:
                time.sleep(0.5)
        assert status == 200, (tmp_path / "up.log").read_text()[-3000:]
        queues: dict[str, list[str]] = {}
        while time.monotonic() < deadline and queues != EXPECTED_QUEUES:
            queues = _worker_queues(env)
        assert queues == EXPECTED_QUEUES, (tmp_path / "up.log").read_text()[-3000:]
        output = (tmp_path / "up.log").read_text()
        assert "login: admin / " in output
        # The replay address, as the README says: through the web UI (pywb itself on loopback only).
        assert f"replay          http://127.0.0.1:{port}/replay/all/<url>" in output and "NOT loopback" not in output
        stack = _descendants(proc.pid)
        assert len(stack) >= 5
        if demo:
            # The README's promise: the demo definition is scheduled by beat, crawled by the high-priority
            # worker and recorded as DONE, with a readable WARC of the bundled site.
            jobs = ""
            while time.monotonic() < deadline + 240 and " DONE " not in jobs:
                time.sleep(2)
                jobs = _job_status(env, tmp_path)
            assert " DONE " in jobs, jobs + (tmp_path / "up.log").read_text()[-3000:]
            assert _demo_warc_responses(tmp_path / "var") > 20
            # ... and the indexer worker takes its files through the whole chain (the intake queues them).
            states: dict[str, int] = {}
            while time.monotonic() < deadline + 300 and not (
                states.get("CLEANED") and sum(states.values()) == states["CLEANED"]
            ):
                time.sleep(2)
                states = _chain_states(env, tmp_path)
            assert states.get("CLEANED") and sum(states.values()) == states["CLEANED"], (
                states,
                (tmp_path / "up.log").read_text()[-3000:],
            )
            # ... and "open it in replay": the demo's home page as archived, through the web UI's login.
            home = f"http://127.0.0.1:{demo_port}/"
            with urllib.request.urlopen(home, timeout=30) as live:
                assert _replay_through_web_ui(f"http://127.0.0.1:{port}", tmp_path / "var", home) == live.read()
            stack = _descendants(proc.pid)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        log.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(pid) for pid in stack):
        time.sleep(0.2)
    assert not [pid for pid in stack if _alive(pid)], "processes left running after Ctrl-C"
    assert proc.returncode == 0, (tmp_path / "up.log").read_text()[-3000:]


def test_stack_on_the_embedded_default_runs_the_demo(tmp_path):
    _run_stack(tmp_path, {}, demo=True)
    assert (tmp_path / "var" / "netharvest.sqlite3").exists()
    assert (tmp_path / "var" / "broker" / "queue").is_dir()


@pytest.mark.services
def test_stack_on_postgresql_and_redis(tmp_path):
    if not (_reachable("127.0.0.1", 5432) and _reachable("127.0.0.1", 6379)):
        if os.environ.get("NETHARVEST_REQUIRE_SERVICES") == "1":
            pytest.fail("PostgreSQL and Redis must be reachable on 127.0.0.1 here")
        pytest.skip("PostgreSQL or Redis not reachable on 127.0.0.1")
    import psycopg2

    # Named after this run's database, so runs with different databases never share (or drop) each other's.
    base = os.environ.get("NETHARVEST_DATABASE_URL", "").rsplit("/", 1)[-1] or "netharvest"
    name = f"{base}_smoke"
    admin = psycopg2.connect(host="127.0.0.1", port=5432, user="postgres", dbname="postgres")
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute(f'DROP DATABASE IF EXISTS "{name}"')
        cur.execute(f'CREATE DATABASE "{name}"')
    admin.close()
    import redis

    # This test's own Redis database, fresh too: eight away from the session's (xdist workers take the ones
    # just below it, tests/settings.py), on the session's Redis server.
    broker = urlsplit(os.environ.get("NETHARVEST_BROKER_URL", "") or "redis://127.0.0.1:6379/15")
    db = (int(broker.path.strip("/") or 0) + 8) % 16
    redis.Redis(host=broker.hostname or "127.0.0.1", port=broker.port or 6379, db=db).flushdb()
    _run_stack(
        tmp_path,
        {
            "NETHARVEST_DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{name}",
            "NETHARVEST_BROKER_URL": f"redis://{broker.hostname}:{broker.port or 6379}/{db}",
        },
        demo=False,
    )
    assert not (tmp_path / "var" / "netharvest.sqlite3").exists()
