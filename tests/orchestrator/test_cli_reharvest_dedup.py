"""`netharvest harvests run-now` from another shell while `netharvest up` runs: the re-harvest deduplicates.

`up` gives its processes the dedup service's address in the environment (NETHARVEST_DEDUP_URL). A command run
from a separate shell does not have it: it generated the JobSpec itself, naming the SQLite dedup index, which
nothing feeds while the service runs, so the second harvest of an unchanged site stored every response again and
no revisit record. `up` now records its service addresses in the data directory (orchestrator/services.py) and
every process of the install reads them when its environment leaves them unset.

The stack is real (`up --only worker-high,indexer,dedup` on the embedded default in a data directory of the
test's own); the CLI runs as a newcomer types it, with nothing but NETHARVEST_DATA_DIR in its environment.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from orchestrator import services
from orchestrator.harvest.models.fields import spec_json
from tests.conftest import free_port
from tests.staticsite import StaticServer, write_site

pytestmark = pytest.mark.smoke

NETHARVEST = str(Path(sys.executable).parent / "netharvest")
IDENTICAL = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
QUICK_TEMPLATE = (
    "from orchestrator.harvest.models import CrawlTemplate; CrawlTemplate.objects.create(name='quick', "
    "min_delay_ms=0, max_delay_ms=0, delay_factor=0, retry_delay_s=1, max_retries=1)"
)


def _shell_env(var: Path) -> dict[str, str]:
    """A separate shell's environment: the data directory and nothing else of netharvest's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETHARVEST_") and k != "DJANGO_SETTINGS_MODULE"}
    env["NETHARVEST_DATA_DIR"] = str(var)
    return env


def _cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([NETHARVEST, *args], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def _query(db: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    with sqlite3.connect(db, timeout=30) as conn:
        return conn.execute(sql, params).fetchall()


def _wait(predicate, timeout: float, what: str, log: Path) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}\n{log.read_text()[-4000:]}")


def _run_now_and_index(env: dict[str, str], var: Path, log: Path) -> int:
    """`harvests run-now` from the separate shell; wait until the job is DONE and its files CLEANED (its
    captures in the dedup service the next job asks)."""
    _cli(env, "harvests", "run-now", "static site")
    db = var / "netharvest.sqlite3"
    (job,) = _query(db, "SELECT max(id) FROM harvest_job")[0]
    _wait(lambda: _query(db, "SELECT status FROM harvest_job WHERE id=?", job)[0][0] in ("DONE", "FAILED"), 240,
          f"job {job} to end", log)  # fmt: skip
    assert _query(db, "SELECT status FROM harvest_job WHERE id=?", job)[0][0] == "DONE", log.read_text()[-4000:]

    def cleaned() -> bool:
        states = {s for (s,) in _query(db, "SELECT index_state FROM harvest_archivefile WHERE job_id=?", job)}
        return states == {"CLEANED"}

    _wait(cleaned, 240, f"job {job}'s files through the indexer chain", log)
    return int(job)


def _revisits(var: Path, job: int) -> dict[str, str]:
    out = {}
    for warc in (var / "archive" / str(job)).glob(f"{job}-*.warc.gz"):
        with warc.open("rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_type == "revisit":
                    out[rec.rec_headers.get_header("WARC-Target-URI")] = rec.rec_headers.get_header("WARC-Profile")
    return out


def test_run_now_from_another_shell_names_the_stacks_dedup_service(tmp_path: Path) -> None:
    var = tmp_path / "var"
    paths = write_site(tmp_path / "site", pages=20)
    site = StaticServer(tmp_path / "site")
    dedup_bind = f"127.0.0.1:{free_port()}"
    env = _shell_env(var)
    log_path = tmp_path / "up.log"
    log = log_path.open("w")
    up = subprocess.Popen(
        [NETHARVEST, "up", "--no-demo", "--only", "worker-high,indexer,dedup", "--dedup-bind", dedup_bind],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=tmp_path,
        start_new_session=True,
    )
    try:
        _wait(lambda: (var / services.SERVICES_FILE).exists(), 120, "up to record its services", log_path)
        recorded = json.loads((var / services.SERVICES_FILE).read_text())
        assert recorded["NETHARVEST_DEDUP_URL"] == f"http://{dedup_bind}"
        _cli(env, "shell", "-c", QUICK_TEMPLATE)
        (tmp_path / "seeds.txt").write_text(site.url + "\n")
        _cli(env, "harvests", "create", "static site", "--seeds", str(tmp_path / "seeds.txt"), "--template", "quick")
        first = _run_now_and_index(env, var, log_path)
        second = _run_now_and_index(env, var, log_path)
    finally:
        up.send_signal(signal.SIGINT)
        try:
            up.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(up.pid, signal.SIGKILL)
            up.wait()
        log.close()
        site.shutdown()
    expected = {site.url + p.lstrip("/") for p in paths}
    found = _revisits(var, second)
    assert found[site.url + "p19.html"] == IDENTICAL  # fetched in full (links read), stored as a revisit
    assert found[site.url + "img/i19.png"] == NOT_MODIFIED  # asked conditionally, answered 304
    assert set(found) == expected  # an unchanged site: nothing stored twice
    assert _revisits(var, first) == {}
    db = var / "netharvest.sqlite3"
    for job in (first, second):
        spec = json.loads(spec_json(_query(db, "SELECT spec FROM harvest_job WHERE id=?", job)[0][0]))
        assert spec["dedup_index"] == f"http://{dedup_bind}"  # not var/index/dedup.sqlite3, which nothing feeds
