"""The `netharvest` console script."""

import os
import subprocess
import sys

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
