"""A page's fetch leaves no reference cycle behind (issue 14, harvester CPU per page).

Before, the closure that reconnects a fetch sent on a kept-alive connection referred to the fetch, which
held it: every page's fetch, request, capture, headers and Deferreds (~27 objects) waited for the cyclic
collector, which then spent its passes on them. The crawl child runs here (``python -m harvester.process``
on the benchmark's keep-alive site) with the collector saving what it finds, and the fetches found in
cycles are counted: at most one per connection may remain (the last fetch of each, at shutdown).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from crawlhelp import REPO, crawl_log, write_spec

sys.path.insert(0, str(REPO / "benchmarks"))
import bench_harvest

PAGES = 60
VALENCE = 2

CHILD = r"""
import gc, json, runpy, sys
gc.set_debug(gc.DEBUG_SAVEALL)
sys.argv = ["harvester.process", sys.argv[1]]
code = 0
try:
    runpy.run_module("harvester.process", run_name="__main__")
except SystemExit as exc:
    code = exc.code
gc.collect()
fetches = sum(1 for o in gc.garbage if type(o).__name__ == "_Fetch")
print(json.dumps({"code": code, "fetches_in_cycles": fetches}))
"""


def test_fetches_on_kept_alive_connections_are_freed_without_the_cyclic_collector(tmp_path: Path) -> None:
    server, port = bench_harvest.start_server(PAGES)
    try:
        job_dir = tmp_path / "job"
        write_spec(job_dir, bench_harvest.jobspec(f"http://127.0.0.1:{port}/p/0.html", 1, VALENCE))
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(job_dir)], cwd=REPO, capture_output=True, text=True, timeout=120
        )
    finally:
        server.kill()
        server.wait()
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["code"] == 0
    assert sum(1 for f in crawl_log(job_dir) if f[1] == "200") == PAGES
    assert result["fetches_in_cycles"] <= VALENCE
