"""Benchmark: crawler traps at scale. 100,000 traps matched per URI, a live trap added to them, and a
120,000-line global trap list saved through the web form and used to generate jobs, on PostgreSQL.

    .venv/bin/python benchmarks/bench_traps.py [--traps 100000] [--uris 20000] [--lines 120000] [--jobs 4]

Phases, each timed (wall and CPU of this process):

* **match**: a ``TrapSet`` (harvester/scope.py, RE2 via harvester/patterns.py) of ``--traps`` patterns
  of four common shapes (a section of a host, a session id on a host, a calendar under a host's
  subdomains, print pages with an alternation: 48 to 60 characters) plus the issue's two hostile
  patterns: its build time (checking and compiling, as a job does at its start), then the cost per URI
  over ``--uris`` URLs (90 % with a 24-segment path matching nothing, 10 % caught by a trap), a first
  pass (RE2 builds its DFA states lazily) and a second one, and adding one live trap.
* **save**: a ``--lines`` global trap list (about 55 bytes a line: 6.6 MB at 120,000, as in the issue)
  uploaded as a file through ``webui.forms.library.TrapListForm`` (form and model validation, save).
* **jobgen**: ``jobgen.generate_jobs`` of a selective definition whose ``--jobs`` domains each get a
  job of their own (``max_configs=1``), every JobSpec carrying the list; the JobSpec size of one job.

Makes a fresh database (nh_bench_traps), migrated in-process. A tiny run (``--traps 300 --uris 200
--lines 300 --jobs 2``) is part of the test suite (tests/test_benchmarks.py) so the benchmark
never rots.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

HOSTILE = [r"(.|.)*Z", r".*(.*/)*calendar/.*"]


def trap(i: int) -> str:
    """One of four common trap shapes, numbered so that every line is distinct."""
    return (
        rf"https?://(www\.)?example\.org/section{i}/trap/.*",
        rf"https?://(www\.)?site{i}\.dk/.*[?&](sid|session)=.*",
        rf"https?://[^/]*\.site{i}\.org/calendar/\d{{4}}/\d{{2}}/.*",
        rf"http://host{i}\.fr/(archive|print)/(a|b)+/page{i}\.html",
    )[i % 4]


def uris(n: int, traps: int) -> list[str]:
    deep = "/".join(f"seg{s}" for s in range(24))
    out = []
    for j in range(n):
        if j % 10 == 9:
            out.append(f"http://example.org/section{(j * 4) % max(traps, 1) // 4 * 4}/trap/page{j}.html")
        else:
            out.append(f"http://www.example{j}.dk/{deep}/page{j}.html")
    return out


def timed(label: str, fn: Callable[[], Any], results: dict[str, Any]) -> Any:
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    results[label] = {"wall_s": round(time.perf_counter() - wall, 3), "cpu_s": round(time.process_time() - cpu, 3)}
    print(f"  {label}: {results[label]['wall_s']:.3f} s wall, {results[label]['cpu_s']:.3f} s CPU", flush=True)
    return value


def bench_match(n_traps: int, n_uris: int, results: dict[str, Any], hostile: bool = True) -> None:
    from harvester.scope import TrapSet

    patterns = [trap(i) for i in range(n_traps)] + (HOSTILE if hostile else [])
    traps = timed("match.build", lambda: TrapSet(patterns), results)
    urls = uris(n_uris, n_traps)
    hits = timed("match.first_pass", lambda: sum(traps.matches(u) for u in urls), results)
    timed("match.second_pass", lambda: sum(traps.matches(u) for u in urls), results)
    expected = sum(1 for j in range(n_uris) if j % 10 == 9)
    assert hits == expected, f"{hits} URIs trapped, expected {expected}"
    for phase in ("first_pass", "second_pass"):
        per = results[f"match.{phase}"]["wall_s"] / max(n_uris, 1) * 1000
        results[f"match.{phase}"]["ms_per_uri"] = round(per, 4)
        print(f"    {phase}: {per:.4f} ms per URI", flush=True)
    timed("match.add_live_trap", lambda: traps.extend([r".*/live/trap/.*"]), results)
    assert traps.matches("http://e.org/live/trap/x")


def setup_django(db: str) -> None:
    """A fresh migrated database (benchmarks/fresh_database.py), then Django in this process."""
    from benchmarks.fresh_database import fresh_database

    env, _, _ = fresh_database(db, "nh-bench-traps-", parent=os.environ.get("NETHARVEST_DATA_DIR"))
    os.environ.update(env)
    os.environ["DJANGO_SETTINGS_MODULE"] = "orchestrator.settings"
    import django

    django.setup()


def bench_save_and_jobgen(n_lines: int, n_jobs: int, results: dict[str, Any]) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from orchestrator.harvest.curation.domains import create_domains
    from orchestrator.harvest.jobs import jobgen
    from orchestrator.harvest.models import Domain, GlobalCrawlerTrapList, HarvestChannel, HarvestDefinition, Job
    from webui.forms.library import TrapListForm

    text = "\n".join(trap(i) for i in range(n_lines)) + "\n"
    results["save.file_bytes"] = len(text.encode())
    print(f"  the list: {n_lines:,} lines, {len(text.encode()) / 1e6:.1f} MB", flush=True)

    def save() -> GlobalCrawlerTrapList:
        form = TrapListForm(
            data={"name": "big", "description": "", "active": "on", "traps": ""},
            files={"upload": SimpleUploadedFile("traps.txt", text.encode(), "text/plain")},
        )
        assert form.is_valid(), form.errors.as_text()[:2000]
        return form.save()

    saved = timed("save", save, results)
    assert len(saved.traps.splitlines()) == n_lines

    names = [f"trapbench{i}.dk" for i in range(n_jobs)]
    create_domains(names)
    definition = HarvestDefinition.objects.create(
        name="trapbench", kind="selective", channel=HarvestChannel.objects.get(name="focused")
    )
    definition.configurations.set([d.default_configuration for d in Domain.objects.filter(name__in=names)])
    ids = timed("jobgen", lambda: jobgen.generate_jobs(definition, run=1, max_configs=1), results)
    assert len(ids) == n_jobs
    spec = Job.objects.get(pk=ids[0]).spec
    assert len(spec["global_traps"]) == n_lines
    results["jobgen.jobs"] = len(ids)
    results["jobgen.spec_bytes"] = len(json.dumps(spec))
    print(f"  {len(ids)} jobs, JobSpec of one job: {results['jobgen.spec_bytes'] / 1e6:.1f} MB", flush=True)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traps", type=int, default=100_000)
    parser.add_argument("--uris", type=int, default=20_000)
    parser.add_argument("--lines", type=int, default=120_000)
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--database", default="nh_bench_traps")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument(
        "--no-hostile",
        action="store_true",
        help="leave the two hostile traps out (to time a backtracking engine, which never ends)",
    )
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"traps": args.traps, "uris": args.uris, "lines": args.lines}
    print(
        f"match: {args.traps:,} traps (+{0 if args.no_hostile else len(HOSTILE)} hostile), {args.uris:,} URIs",
        flush=True,
    )
    bench_match(args.traps, args.uris, results, hostile=not args.no_hostile)
    print(f"save + jobgen on PostgreSQL ({args.database})", flush=True)
    setup_django(args.database)
    bench_save_and_jobgen(args.lines, args.jobs, results)
    results["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"peak memory (max RSS): {results['max_rss_mb']} MB", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
