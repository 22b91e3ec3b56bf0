"""One real, small harvest shared by the statistics and jobs-page tests: the bundled test site on two
loopback ports, crawled by the real crawl child (``python -m harvester.process``), leaving real WARCs,
crawl.log, Heritrix reports and a metadata WARC in a spool directory. It runs once per test process
(cached); each test then records its JobResult against its own job rows through the real intake.
"""

from __future__ import annotations

import copy
import functools
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harvester.testsite import serve_in_thread
from orchestrator.harvest.jobs import intake
from orchestrator.harvest.models import HarvestDefinition, Job, JobStatus
from tests.orchestrator import factories

REPO = Path(__file__).resolve().parents[2]
#: JobSpec domain names → budgets (max objects); site-b is cut by its budget (OBJECT_LIMIT).
DOMAINS = {"site-a.fr": 40, "site-b.dk": 5}
FAST = {"min_delay_ms": 0, "max_delay_ms": 0, "delay_factor": 0.0, "retry_delay_s": 1, "max_retries": 1}


@dataclass(frozen=True)
class Crawl:
    job_dir: Path
    result: dict[str, Any]
    ports: tuple[int, int]


@functools.cache
def crawled() -> Crawl:
    a = serve_in_thread(0)
    b = serve_in_thread(0, peer_port=a.port)
    a.peer_port = b.port
    job_dir = Path(tempfile.mkdtemp(prefix="nh-jobs-crawl-")) / "900001"
    job_dir.mkdir(parents=True)
    seeds = {"site-a.fr": f"http://127.0.0.1:{a.port}/", "site-b.dk": f"http://127.0.0.1:{b.port}/"}
    spec = {
        "version": 1,
        "job_id": 900001,
        "harvest_id": 1,
        "harvest_name": "qa test",
        "harvest_run": 1,
        "kind": "selective",
        "channel": "focused",
        "template": "default",
        "settings": FAST,
        "domains": [
            {
                "name": name,
                "configuration": "defaultconfig",
                "seeds": [seeds[name]],
                "max_objects": limit,
                "max_bytes": -1,
                "traps": [r".*/calendar\?month=20(2[0-4]|3\d).*"],
            }
            for name, limit in DOMAINS.items()
        ],
        "global_traps": [],
        "time_limit_s": 0,
    }
    (job_dir / "jobspec.json").write_text(json.dumps(spec))
    proc = subprocess.run(
        [sys.executable, "-m", "harvester.process", str(job_dir)],
        cwd=REPO,
        timeout=180,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    if proc.returncode != 0:
        raise RuntimeError((job_dir / "logs" / "harvester.log").read_text()[-3000:])
    result = json.loads((job_dir / "jobresult.json").read_text())
    return Crawl(job_dir, result, (a.port, b.port))


def previous_harvester(crawl: Crawl | None = None) -> Crawl:
    """The crawl's JobResult as a harvester of before issue 16 sent it: without ``figures`` (the QA figures as
    data), so intake reads them from the text reports."""
    crawl = crawl or crawled()
    return Crawl(crawl.job_dir, {k: v for k, v in crawl.result.items() if k != "figures"}, crawl.ports)


def make_job(definition: HarvestDefinition | None = None, status: str = JobStatus.STARTED, **fields: Any) -> Job:
    """A job over the crawl's domains (budgets as in the crawl), in ``status``."""
    return factories.job(
        definition, domains=list(DOMAINS), limits={d: (n, -1) for d, n in DOMAINS.items()}, status=status, **fields
    )


def running_job(domains: dict[str, dict[str, int]], alerts: list[str] | None = None) -> Job:
    """A STARTED job with one heartbeat recorded through the real intake: 30 URIs done, 200 queued, 1 failed,
    4096 bytes, 2.5 URIs/s (2.0 on average), 12 KB/s (10.0); ``domains`` and ``alerts`` as given."""
    job = make_job(status=JobStatus.STARTED)
    assert intake.record_progress(
        {
            "job_id": job.pk,
            "at": "2026-11-23T10:00:00Z",
            "uris_done": 30,
            "uris_queued": 200,
            "uris_failed": 1,
            "bytes": 4096,
            "uri_rate": 2.5,
            "avg_uri_rate": 2.0,
            "kb_rate": 12.0,
            "avg_kb_rate": 10.0,
            "domains": domains,
            "alerts": alerts or [],
        }
    )
    return job


def record(job: Job, crawl: Crawl | None = None, *, rename: bool = True) -> Job:
    """Record the crawl's JobResult as ``job``'s, through the real intake (statistics included).

    File names are unique across the archive, so each job gets its own names (``rename``); the paths
    still point at the one crawl's spool, which is where the reports are read from.
    """
    crawl = crawl or crawled()
    result = copy.deepcopy(crawl.result)
    result["job_id"] = job.pk
    configs = {
        d.configuration.domain.name: d.configuration.name for d in job.domains.select_related("configuration__domain")
    }
    for d in result["domains"]:
        d["configuration"] = configs[d["name"]]
    if rename:
        for f in result["files"]:
            f["name"] = f"j{job.pk}-{f['name']}"
    return intake.record_result(result)


def end_now(job: Job) -> Job:
    """Record a DONE JobResult for ``job`` that ended just now, without files: site-a.fr 40 objects, 70,000 bytes,
    DOWNLOAD_COMPLETE; site-b.dk 5 objects, 3,096 bytes, DOWNLOAD_UNFINISHED."""
    return intake.record_result(
        {
            "version": 1,
            "job_id": job.pk,
            "status": "DONE",
            "started": "2026-11-23T10:00:00Z",
            "ended": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "files": [],
            "domains": [
                {
                    "name": "site-a.fr",
                    "configuration": "defaultconfig",
                    "objects": 40,
                    "bytes": 70000,
                    "stop_reason": "DOWNLOAD_COMPLETE",
                },
                {
                    "name": "site-b.dk",
                    "configuration": "defaultconfig",
                    "objects": 5,
                    "bytes": 3096,
                    "stop_reason": "DOWNLOAD_UNFINISHED",
                },
            ],
        }
    )
