"""A broker outage in the middle of a crawl costs nothing: real workers, real Redis behind a TCP proxy.

The harvester worker reaches Redis only through a proxy that the test cuts (every connection closed, new
ones refused) for several seconds while the crawl runs, then restores. The crawl child must go on through
it, the worker must reconnect, and the orchestrator (its events worker on Redis directly) must end up
with the job DONE, the whole site, the result recorded once, and both controls acknowledged: the one
applied before the outage and the one sent during it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from urllib.parse import urlsplit

import pytest

from harvester.testsite import serve_in_thread
from orchestrator.celery import app
from orchestrator.harvest.jobs import dispatch
from orchestrator.harvest.models import ArchiveFile, HarvestInfo, Job, JobControl
from tests.conftest import wait_for
from tests.orchestrator import realstack

pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True), pytest.mark.slow]

OUTAGE_S = 8


def test_a_broker_outage_mid_crawl_loses_nothing(tmp_path):
    if not realstack.uses_real_backends():
        pytest.skip("needs the real PostgreSQL and Redis")
    realstack.clean_broker()
    site = serve_in_thread(0)
    redis_port = urlsplit(app.conf.broker_url).port or 6379
    proxy = realstack.Proxy(redis_port)
    proxied = app.conf.broker_url.replace(f":{redis_port}/", f":{proxy.port}/")
    events = realstack.start_worker(
        "orchestrator", "events", "events", realstack.worker_env(tmp_path / "orch"), tmp_path / "events.log"
    )
    harvester = realstack.start_worker(
        "harvester.worker",
        "harvest.focused",
        "harvester",
        realstack.worker_env(tmp_path / "harvester", proxied),
        tmp_path / "harvester.log",
        concurrency=2,  # as the continuous worker of `netharvest up`: a free process waits for the next job
    )
    job_dir = tmp_path / "harvester" / "spool"
    try:
        job = realstack.site_job(site, delay_ms=600)  # ~40 URIs: a crawl of 25-30 s, so the outage is mid-crawl
        job_dir = job_dir / str(job.pk)
        assert dispatch.submit_jobs([job.pk]) == 1
        wait_for(lambda: Job.objects.get(pk=job.pk).status == "STARTED", 60, "the job to start")
        before = dispatch.send_control(Job.objects.get(pk=job.pk), "add_trap", r".*/no-trap-1/.*", "test")
        wait_for(
            lambda: JobControl.objects.get(pk=before.pk).acknowledged_at is not None,
            30,
            "the harvester to acknowledge the control sent before the outage",
        )

        proxy.cut()
        uris_at_cut = len(realstack.crawled_uris(job_dir))
        during = dispatch.send_control(Job.objects.get(pk=job.pk), "add_trap", r".*/no-trap-2/.*", "test")
        time.sleep(OUTAGE_S)  # the outage itself (not an assertion): the crawl must go on through it
        uris_at_restore = len(realstack.crawled_uris(job_dir))
        assert Job.objects.get(pk=job.pk).status == "STARTED", "the outage was not mid-crawl"
        proxy.restore()

        wait_for(lambda: Job.objects.get(pk=job.pk).status != "STARTED", 120, "the job to end")
        job.refresh_from_db()
        assert job.status == "DONE", (job.error_category, job.error_detail)
        assert uris_at_restore > uris_at_cut, "the crawl child stopped while the broker was away"
        # The worker lived through it, and is still consuming: not a consumer that died of the outage (celery
        # 5.7.0: "Unrecoverable error" on restoring the job's unacknowledged message) and a main process that
        # lingers only until its running task ends, then exits.
        log = (tmp_path / "harvester.log").read_text()
        assert "Unrecoverable error" not in log, log[-3000:]
        assert harvester.poll() is None, "the harvester worker died"
        # An outage the stack rides out is logged as one line with its cause, not as a crash (celerylog.py).
        lost = [line for line in log.splitlines() if "Connection to broker lost" in line]
        assert lost and all("Error" in line for line in lost), log[-3000:]
        assert "Traceback" not in log and "In Celery 5.1" not in log, log[-3000:]

        # The whole site: the same URIs as a crawl without an outage.
        reference = tmp_path / "reference" / "1"
        reference.mkdir(parents=True)
        spec = {**job.spec, "settings": {**job.spec["settings"], "min_delay_ms": 0, "max_delay_ms": 0}}
        (reference / "jobspec.json").write_text(json.dumps(spec))
        subprocess.run(
            [sys.executable, "-m", "harvester.process", str(reference)],
            cwd=realstack.REPO,
            timeout=180,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        assert realstack.crawled_uris(job_dir) == realstack.crawled_uris(reference)
        info = HarvestInfo.objects.get(job=job)
        assert info.stop_reason == "DOWNLOAD_COMPLETE"

        # Recorded once: one intake of the result, its files once.
        result = json.loads((job_dir / "jobresult.json").read_text())
        assert ArchiveFile.objects.filter(job=job).count() == len(result["files"]) > 0
        wait_for(lambda: not list((job_dir / "outbox").glob("*.json")), 30, "the outbox to be delivered")
        events_log = (tmp_path / "events.log").read_text()
        assert events_log.count(f"job {job.pk} DONE") == 1, events_log[-3000:]

        # The control sent while the harvester was cut off was applied and acknowledged once it was back.
        wait_for(
            lambda: JobControl.objects.get(pk=during.pk).acknowledged_at is not None,
            30,
            "the acknowledgement of the control sent during the outage",
        )
        # The job's own message was acknowledged after the outage: nothing left to redeliver.
        wait_for(lambda: not realstack.redis_client().hlen("unacked"), 30, "the job's message to be acknowledged")
    finally:
        proxy.cut()
        for worker in (harvester, events):
            realstack.stop_worker(worker)
        site.shutdown()
        realstack.clean_broker()
