"""The replay service in tests: real pywb (deploy/replay_server.py, run by pywb's own Python in
``.venv/tools/pywb``, made by ``deploy/dev.py install``) over an index directory, on a free loopback port.

Other tests use it through the ``replay_service`` fixture (tests/conftest.py): it starts pywb over the
test's ``settings.NETHARVEST_INDEX_DIR`` and points ``settings.NETHARVEST_REPLAY_URL`` at it, so the web UI's
``/replay/…`` proxy (and anything loading pages through it) reaches a real replay of what the chain indexed.
"""

from __future__ import annotations

import os
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import free_port

REPO = Path(__file__).resolve().parents[1]
PYWB_PYTHON = REPO / ".venv" / "tools" / "pywb" / "bin" / "python"
LAUNCHER = REPO / "deploy" / "replay_server.py"


@dataclass
class ReplayService:
    process: subprocess.Popen[bytes]
    url: str  # e.g. http://127.0.0.1:PORT (pywb answers under /replay/)
    log: Path

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def pywb_tool(path: Path) -> Path:
    """``path``, a program of the pywb environment deploy/dev.py install makes; missing, the test is skipped,
    or failed where the services are required (CI must not pass by skipping replay)."""
    if not path.exists():
        if os.environ.get("NETHARVEST_REQUIRE_SERVICES") == "1":  # set by .ci/run
            pytest.fail(f"{path} is missing: deploy/dev.py install should have made it")
        pytest.skip(f"pywb is not installed in {path.parent.parent} (run: python3 deploy/dev.py install)")
    return path


def pywb_python() -> Path:
    return pywb_tool(PYWB_PYTHON)


def start_replay(index_dir: Path, log: Path) -> ReplayService:
    """pywb over ``index_dir``, answering on a free loopback port; waits until pywb itself answers.

    A port found free can be taken by another test's server before pywb binds it: then a connection succeeds
    (to that server) while pywb dies of "Address already in use". So readiness is pywb serving its own
    ``wombat.js``, and a pywb that lost its port is started again on another."""
    for _ in range(5):
        service = _start_once(index_dir, log)
        if service is not None:
            return service
    raise AssertionError(f"pywb found no free port: {log.read_text()[-3000:]}")


def _start_once(index_dir: Path, log: Path) -> ReplayService | None:
    port = free_port()
    out = open(log, "wb")
    process = subprocess.Popen(
        [str(pywb_python()), str(LAUNCHER), "--index-dir", str(index_dir), "--bind", f"127.0.0.1:{port}"],
        stdout=out,
        stderr=subprocess.STDOUT,
        cwd=REPO,
    )
    out.close()
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):  # up to 60 s on a loaded machine
        if process.poll() is not None:
            text = log.read_text()
            if "Address already in use" in text:
                return None
            raise AssertionError(f"pywb exited: {text[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/replay/static/wombat.js", timeout=2) as response:
                if response.status == 200 and process.poll() is None:
                    return ReplayService(process, url, log)
        except OSError:  # not listening yet, or another server on the port (its 404 is an HTTPError)
            pass
        time.sleep(0.1)
    process.kill()
    raise AssertionError(f"pywb did not start: {log.read_text()[-3000:]}")
