"""A fresh, migrated PostgreSQL database and data directory for a benchmark run of the real commands."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg2


def fresh_database(
    name: str, prefix: str, extra_env: dict[str, str] | None = None, parent: str | None = None
) -> tuple[dict[str, str], str, Path]:
    """Drop and create database ``name``, migrate it; returns (environment, netharvest executable, work dir)."""
    admin = psycopg2.connect(host="127.0.0.1", user="postgres", dbname="postgres")
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {name}")
        cur.execute(f"CREATE DATABASE {name}")
    admin.close()
    work = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    env = {
        **os.environ,
        "NETHARVEST_DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{name}",
        "NETHARVEST_DATA_DIR": str(work),
        **(extra_env or {}),
    }
    exe = str(Path(sys.executable).parent / "netharvest")
    subprocess.run([exe, "migrate", "-v0"], env=env, check=True)
    return env, exe, work


def django_on_fresh_database(name: str, prefix: str) -> None:
    """A fresh, migrated database ``name`` and Django set up on it in this process, for the benchmarks that
    time views and queries in-process (the others run ``netharvest`` with the environment instead)."""
    os.environ.update(fresh_database(name, prefix, {"DJANGO_SETTINGS_MODULE": "orchestrator.settings"})[0])
    import django

    django.setup()
