"""Production is safe by default: the web server refuses a placeholder or missing secret key (a real
gunicorn), `netharvest check --deploy` is clean with the HTTPS switches set, and the example
configuration and docker-compose.yml hold no secret values."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import free_port

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
GOOD_KEY = secrets.token_urlsafe(50)
HTTPS_SWITCHES = {
    "NETHARVEST_PROXY_SSL_HEADER": "X-Forwarded-Proto",
    "NETHARVEST_SECURE_COOKIES": "1",
    "NETHARVEST_SSL_REDIRECT": "1",
    "NETHARVEST_HSTS_SECONDS": "31536000",
    "NETHARVEST_HSTS_INCLUDE_SUBDOMAINS": "1",
    "NETHARVEST_HSTS_PRELOAD": "1",
    "NETHARVEST_ALLOWED_HOSTS": "netharvest.example.org",
}


def environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A production-like environment: no NETHARVEST_* from the test run, DEBUG off, its own data dir."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETHARVEST_") and k != "DJANGO_SETTINGS_MODULE"}
    env.update(NETHARVEST_DATA_DIR=str(tmp_path / "var"), **extra)
    return env


def gunicorn(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """gunicorn as docker-compose starts web; it exits by itself only when its workers cannot boot."""
    return subprocess.run(
        [
            str(BIN / "gunicorn"),
            "orchestrator.wsgi:application",
            "--bind",
            f"127.0.0.1:{free_port()}",
            "--workers",
            "1",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "key, reason",
    [
        (None, "NETHARVEST_SECRET_KEY is not set"),
        ("short-but-random-Xy7", "NETHARVEST_SECRET_KEY is too weak"),
    ],
)
def test_web_refuses_to_start_without_a_real_key(tmp_path, key, reason):
    env = environment(tmp_path, **({"NETHARVEST_SECRET_KEY": key} if key else {}))
    done = gunicorn(env)
    assert done.returncode != 0
    assert f"the web server refuses to start: {reason}" in done.stderr
    assert "secrets.token_urlsafe(50)" in done.stderr  # it says how to make one


def test_the_examples_placeholder_key_stops_every_process(tmp_path):
    env = environment(tmp_path, NETHARVEST_SECRET_KEY="CHANGE-ME-to-a-long-random-string")
    done = gunicorn(env)
    assert done.returncode != 0 and "NETHARVEST_SECRET_KEY is a placeholder" in done.stderr
    migrate = subprocess.run(
        [str(BIN / "netharvest"), "migrate", "--noinput"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert migrate.returncode != 0 and "NETHARVEST_SECRET_KEY is a placeholder" in migrate.stderr


def test_web_starts_with_a_real_key_and_in_development_without_one(tmp_path):
    for extra in ({"NETHARVEST_SECRET_KEY": GOOD_KEY}, {"NETHARVEST_DEBUG": "1"}):
        done = subprocess.run(
            [sys.executable, "-c", "import orchestrator.wsgi"],
            cwd=REPO,
            env=environment(tmp_path, **extra),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr


def test_check_deploy_is_clean_with_the_https_switches(tmp_path):
    def check(**extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(BIN / "netharvest"), "check", "--deploy", "--fail-level", "WARNING"],
            cwd=REPO,
            env=environment(tmp_path, **extra),
            capture_output=True,
            text=True,
            timeout=120,
        )

    clean = check(NETHARVEST_SECRET_KEY=GOOD_KEY, **HTTPS_SWITCHES)
    assert clean.returncode == 0, clean.stderr
    assert "System check identified no issues" in clean.stdout
    bare = check()
    assert bare.returncode != 0
    for problem in ("netharvest.E001", "security.W004", "security.W008", "security.W012", "security.W016"):
        assert problem in bare.stderr


def test_the_example_and_compose_files_hold_no_secret_values():
    example = (REPO / "deploy" / "netharvest.env.example").read_text()
    values = dict(line.split("=", 1) for line in example.splitlines() if line and not line.startswith("#"))
    assert values["NETHARVEST_SECRET_KEY"] == ""
    assert "CHANGE-ME" not in example and ":netharvest@" not in example
    compose = (REPO / "docker-compose.yml").read_text()
    assert "env_file: deploy/netharvest.env.example" not in compose
    assert "${NETHARVEST_SECRET_KEY:?" in compose and "${NETHARVEST_DB_PASSWORD:?" in compose
    assert not re.search(r"POSTGRES_PASSWORD: *netharvest\b", compose)
    assert "netharvest:netharvest@" not in compose
    for name in HTTPS_SWITCHES:  # every switch is documented where operators look
        assert name in example and name in (REPO / "README.md").read_text()
