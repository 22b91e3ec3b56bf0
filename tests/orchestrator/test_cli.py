"""The `netharvest` console script."""

import os
import subprocess
import sys
from pathlib import Path

import pytest


def netharvest(*args: str) -> subprocess.CompletedProcess:
    exe = os.path.join(os.path.dirname(sys.executable), "netharvest")
    return subprocess.run(
        [exe, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"},
    )


def test_help_lists_netharvest_commands_for_crawl_engineers():
    result = netharvest("--help")
    assert result.returncode == 0
    for command in ("up", "migrate", "import-domains", "NETHARVEST_DATABASE_URL"):
        assert command in result.stdout


@pytest.mark.django_db
def test_dashed_command_names_reach_their_command(tmp_path):
    result = netharvest("import-domains", "--help")
    assert result.returncode == 0 and "one registrable domain or IP per line" in result.stdout
    result = netharvest("import-domains", str(tmp_path / "missing.txt"))
    assert result.returncode != 0 and "missing.txt: no such file" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_reader_that_goes_away_ends_the_command_quietly():
    """`netharvest jobs list | head -1` printed a BrokenPipeError traceback (the run it made was kept)."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line
    try:
        exe = os.path.join(os.path.dirname(sys.executable), "netharvest")
        result = subprocess.run(
            [exe, "help", "--all"],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            env={**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"},
        )
    finally:
        os.close(write)
    assert (result.returncode, result.stderr) == (141, "")


def test_overview_names_every_jobs_action_and_every_process_up_starts():
    """The overview went stale when `jobs qa` / `jobs patch` and the qa and continuous workers came: it is checked
    against the jobs command's own parser and the Procfile `up` runs."""
    import argparse

    from orchestrator.cli import OVERVIEW
    from orchestrator.harvest.management.commands.jobs import Command as Jobs
    from orchestrator.harvest.management.commands.up import PROCFILE

    parser = Jobs().create_parser("netharvest", "jobs")
    actions = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    entry = OVERVIEW.split("\n  jobs ")[1].split("\n  job-stats")[0]
    assert set(actions) >= {"qa", "patch", "reject"}
    assert [a for a in actions if a not in entry] == []
    up = OVERVIEW.split("\n  up ")[1].split("\n  migrate")[0]
    words = {
        "web": "web",
        "beat": "beat",
        "worker-high": "high",
        "worker-low": "low",
        "worker-continuous": "continuous",
        "indexer": "indexer",
        "dedup": "dedup",
        "replay": "replay",
        "qa": "page QA",
    }
    processes = [line.split(":")[0] for line in PROCFILE.read_text().splitlines() if line and line[0].isalpha()]
    assert set(processes) == set(words)  # a new process: say how the overview names it
    assert [p for p in processes if words[p] not in up] == []


def test_a_celery_broker_variable_that_would_split_the_stack_is_refused_in_one_line(tmp_path, monkeypatch):
    """An operator's run set ``BROKER_URL`` where netharvest reads ``NETHARVEST_BROKER_URL``: Celery's command line
    takes ``BROKER_URL``, so the workers listened on Redis while the web UI and the commands sent jobs to the
    embedded broker, and the job stayed SUBMITTED with nothing in any log. Now every process refuses it: the
    command in one line, before anything starts (``up`` too); the same broker in both is fine."""
    from harvester.runtime import ConfigError, broker_url

    env = {k: v for k, v in os.environ.items() if k not in ("BROKER_URL", "CELERY_BROKER_URL")}
    env.update(NETHARVEST_DATA_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="tests.settings")
    env.pop("NETHARVEST_BROKER_URL", None)
    exe = os.path.join(os.path.dirname(sys.executable), "netharvest")
    for command in (["jobs", "list"], ["up"]):
        result = subprocess.run(
            [exe, *command],
            capture_output=True,
            text=True,
            timeout=60,
            env={**env, "BROKER_URL": "redis://:pw@h:6379/0"},
        )
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert result.stderr.strip().splitlines() == [
            "netharvest: BROKER_URL is redis://:**@h:6379/0 but NETHARVEST_BROKER_URL is unset (the embedded broker): "
            "Celery's workers would use BROKER_URL and the rest of the stack would not; set NETHARVEST_BROKER_URL to "
            "the broker and unset BROKER_URL"
        ]
    worker = subprocess.run(
        [sys.executable, "-c", "import harvester.worker"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "NETHARVEST_BROKER_URL": "redis://a:6379/0", "CELERY_BROKER_URL": "redis://b:6379/0"},
    )
    assert worker.returncode == 1 and worker.stderr.strip().splitlines()[-1].startswith(
        "harvester.runtime.ConfigError: CELERY_BROKER_URL is redis://b:6379/0 but NETHARVEST_BROKER_URL is redis://a"
    )
    monkeypatch.setenv("CELERY_BROKER_URL", broker_url())  # the same broker: fine
    assert broker_url() == os.environ["CELERY_BROKER_URL"]
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://elsewhere:6379/0")
    with pytest.raises(ConfigError, match="^CELERY_BROKER_URL is redis://elsewhere:6379/0 but.*option sets it"):
        broker_url()
    monkeypatch.delenv("CELERY_BROKER_URL")
    monkeypatch.setenv("NETHARVEST_BROKER_URL", "redis://127.0.0.1:6379/0")
    for same in ("redis://127.0.0.1", "redis://127.0.0.1:6379/0/"):  # the same broker, spelt otherwise
        monkeypatch.setenv("BROKER_URL", same)
        assert broker_url() == "redis://127.0.0.1:6379/0"
    monkeypatch.setenv("BROKER_URL", " redis://127.0.0.1:6379/0")  # kombu finds no host in it
    with pytest.raises(ConfigError, match=r"\(with spaces around it\)"):
        broker_url()


def test_a_command_away_from_the_stack_says_where_the_database_is_in_one_line(tmp_path):
    """The embedded default keeps its database in ./var of where `netharvest up` runs: typed in another
    directory, a command made an empty ./var there and died of "no such table" with a traceback. The embedded
    broker too (a newcomer's default): importing the Celery app made ./var/broker."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in ("NETHARVEST_DATABASE_URL", "NETHARVEST_BROKER_URL", "NETHARVEST_DATA_DIR", "DJANGO_SETTINGS_MODULE")
    }
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])

    def run(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "orchestrator.cli", *args]
        return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)

    result = run("jobs", "list")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"netharvest: no database at {tmp_path.resolve() / 'var' / 'netharvest.sqlite3'}: run this where "
        "`netharvest up` runs (its data directory is ./var there), set NETHARVEST_DATA_DIR (or "
        "NETHARVEST_DATABASE_URL) to the stack's, or make one here with `netharvest migrate`"
    ]
    assert list(tmp_path.iterdir()) == []  # nothing made here
    helped = run("jobs", "--help")  # a command's help needs no database
    assert helped.returncode == 0 and "resubmit" in helped.stdout, helped.stderr
