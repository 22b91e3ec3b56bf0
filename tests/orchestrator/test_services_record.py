"""The service addresses `netharvest up` records in the data directory (orchestrator/services.py): read by a
command run from another shell when its environment leaves them unset; the environment always wins; and an
earlier `up`'s record never keeps a new `up` from starting its own dedup service. The whole path (run-now twice
from another shell, revisits in the second job) is tests/orchestrator/test_cli_reharvest_dedup.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from orchestrator import services
from orchestrator.harvest.management.commands.up import Command
from tests.conftest import free_port

REPO = Path(__file__).resolve().parents[2]


def test_setting_prefers_the_environment_then_the_record_then_the_default(tmp_path, monkeypatch):
    monkeypatch.delenv("NETHARVEST_DEDUP_URL", raising=False)
    assert services.setting("NETHARVEST_DEDUP_URL", tmp_path, "") == ""  # `up` never ran here
    services.record(tmp_path, {"NETHARVEST_DEDUP_URL": "http://127.0.0.1:8713", "OTHER": "x"})
    assert services.recorded(tmp_path) == {"NETHARVEST_DEDUP_URL": "http://127.0.0.1:8713", "NETHARVEST_REPLAY_URL": ""}
    assert services.setting("NETHARVEST_DEDUP_URL", tmp_path, "") == "http://127.0.0.1:8713"
    monkeypatch.setenv("NETHARVEST_DEDUP_URL", "http://dedup:8095")
    assert services.setting("NETHARVEST_DEDUP_URL", tmp_path, "") == "http://dedup:8095"
    monkeypatch.setenv("NETHARVEST_DEDUP_URL", "")  # set empty: no service, whatever was recorded
    assert services.setting("NETHARVEST_DEDUP_URL", tmp_path, "") == ""


def test_a_damaged_record_is_ignored(tmp_path, monkeypatch):
    monkeypatch.delenv("NETHARVEST_REPLAY_URL", raising=False)
    (tmp_path / services.SERVICES_FILE).write_text("{not json")
    assert services.setting("NETHARVEST_REPLAY_URL", tmp_path, "http://127.0.0.1:8090") == "http://127.0.0.1:8090"
    (tmp_path / services.SERVICES_FILE).write_text('["a list"]')
    assert services.recorded(tmp_path) == {}


def test_a_process_of_the_install_reads_the_record_in_its_settings(tmp_path):
    """What `harvests run-now` does in its own process: orchestrator.settings, then the JobSpec's dedup_index."""
    services.record(
        tmp_path, {"NETHARVEST_DEDUP_URL": "http://127.0.0.1:8713", "NETHARVEST_REPLAY_URL": "http://127.0.0.1:8712"}
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETHARVEST_")}
    env.update(NETHARVEST_DATA_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="orchestrator.settings")
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "from orchestrator.harvest.chain.storage import dedup_location; "
        "print(dedup_location()); print(settings.NETHARVEST_REPLAY_URL)"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["http://127.0.0.1:8713", "http://127.0.0.1:8712"]


def test_an_earlier_record_does_not_keep_up_from_starting_its_own_dedup_service(settings, monkeypatch):
    monkeypatch.delenv("NETHARVEST_DEDUP_URL", raising=False)
    settings.NETHARVEST_DEDUP_URL = "http://127.0.0.1:8713"  # as read from an earlier `up`'s record
    bind = f"127.0.0.1:{free_port()}"
    line, url, start = Command()._dedup({"dedup": "…"}, [], bind)
    assert start and url == f"http://{bind}" and line.startswith(f"  dedup           http://{bind}")
    monkeypatch.setenv("NETHARVEST_DEDUP_URL", "http://dedup-host:8095")  # given: a service elsewhere
    assert Command()._dedup({"dedup": "…"}, [], bind)[1:] == ("http://dedup-host:8095", False)
