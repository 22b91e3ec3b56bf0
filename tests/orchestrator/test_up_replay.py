"""`netharvest up`'s replay process: started on loopback when pywb is installed, left out (saying so, so the rest
of the stack still runs) when it is not, refused on a busy port or a malformed address. The whole stack with
replay is tests/test_smoke.py. Likewise its page QA worker: started when Chromium (NETHARVEST_QA_CHROMIUM) is
there, left out with one line saying how to install it when not."""

from __future__ import annotations

import socket

import pytest
from django.core.management.base import CommandError

from orchestrator.harvest.management.commands.up import PROCFILE, Command
from tests.conftest import free_port
from tests.orchestrator.conftest import storage_env  # noqa: F401 - a fixture
from tests.replayhelp import pywb_python
from tests.webui.browserhelp import CHROMIUM, MISSING, REQUIRED

pytestmark = pytest.mark.django_db
PROCESSES = {"web": "…", "replay": "…"}


def test_replay_starts_on_loopback_when_pywb_is_installed(storage_env, monkeypatch):  # noqa: F811
    monkeypatch.setenv("NETHARVEST_PYWB_PYTHON", str(pywb_python()))
    port = free_port()
    line, bind, start = Command()._replay(PROCESSES, [], f"127.0.0.1:{port}", "127.0.0.1:8000")
    assert start and bind == f"127.0.0.1:{port}"
    assert line.startswith("  replay          http://127.0.0.1:8000/replay/all/<url>") and "NOT loopback" not in line
    assert (storage_env / "index" / "replay" / "collections" / "all" / "indexes").is_dir()  # refreshed first
    assert "NOT loopback" in Command()._replay(PROCESSES, [], f"0.0.0.0:{free_port()}", "x")[0]
    assert Command()._replay(PROCESSES, ["web"], f"127.0.0.1:{port}", "x") == ("", f"127.0.0.1:{port}", False)
    assert PROCFILE.is_file() and "replay:" in PROCFILE.read_text()


def test_without_pywb_the_stack_runs_without_replay_and_says_so(monkeypatch, tmp_path):
    monkeypatch.setenv("NETHARVEST_PYWB_PYTHON", str(tmp_path / "no-such-python"))
    line, _, start = Command()._replay(PROCESSES, [], f"127.0.0.1:{free_port()}", "127.0.0.1:8000")
    assert not start and "not started: pywb is not installed" in line and "deploy/dev.py install" in line


def test_busy_port_and_bad_address_are_refused(monkeypatch):
    monkeypatch.setenv("NETHARVEST_PYWB_PYTHON", str(pywb_python()))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        with pytest.raises(CommandError, match="in use: choose another with --replay-bind"):
            Command()._replay(PROCESSES, [], f"127.0.0.1:{busy.getsockname()[1]}", "x")
    with pytest.raises(CommandError, match="expected HOST:PORT"):
        Command()._replay(PROCESSES, [], "8090", "x")


QA_PROCESSES = {"web": "…", "qa": "…"}


@pytest.mark.skipif(bool(MISSING) and not REQUIRED, reason=MISSING)
def test_page_qa_worker_starts_when_chromium_is_there_and_says_so(settings):
    settings.NETHARVEST_QA_CHROMIUM = CHROMIUM
    line, start = Command()._qa(QA_PROCESSES, [], "127.0.0.1:8000")
    assert start and line == (
        f"  page QA         http://127.0.0.1:8000/jobs/<id>/qa/   (worker on queue qa, Chromium {CHROMIUM})\n"
    )
    assert Command()._qa(QA_PROCESSES, ["web"], "x") == ("", False)  # --only without qa
    assert "qa:" in PROCFILE.read_text()


def test_without_chromium_the_stack_runs_without_page_qa_and_says_how_to_install_it(settings, tmp_path):
    settings.NETHARVEST_QA_CHROMIUM = str(tmp_path / "chromium")
    line, start = Command()._qa(QA_PROCESSES, [], "127.0.0.1:8000")
    assert not start and line.count("\n") == 1
    assert line.startswith(f"  page QA         not started: Chromium not found at {tmp_path / 'chromium'}")
    assert "apt-get install chromium" in line
