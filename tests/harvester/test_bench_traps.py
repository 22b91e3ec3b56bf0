"""benchmarks/bench_traps.py at a tiny size, so the benchmark of the trap figures in docs/BENCHMARKS.md
keeps running: its own assertions (every trapped URI found, every line saved, every job carrying the list)
hold at any size. Needs PostgreSQL (the benchmark makes its own database, named after this run's)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.services
def test_bench_traps_runs_at_a_tiny_size(tmp_path: Path) -> None:
    if not os.environ.get("NETHARVEST_DATABASE_URL", "").startswith("postgres"):
        pytest.skip("the benchmark runs on PostgreSQL")
    base = os.environ["NETHARVEST_DATABASE_URL"].rsplit("/", 1)[-1]
    out = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, "benchmarks/bench_traps.py", "--traps", "300", "--uris", "200", "--lines", "300",
         "--jobs", "2", "--database", f"{base}_bench_traps", "--json", str(out)],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), "NETHARVEST_DATA_DIR": str(tmp_path)},
        capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    figures = json.loads(out.read_text())
    assert figures["jobgen.jobs"] == 2 and figures["lines"] == 300
    assert {"match.build", "match.first_pass", "match.add_live_trap", "save", "jobgen"} <= set(figures)
