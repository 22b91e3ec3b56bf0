"""A stand-in harvester for orchestrator tests: consumes the real harvest queues and answers with the
real messages (started, progress, JobResult) after ``STANDIN_JOB_SECONDS``, without crawling.

    celery -A tests.standin_harvester worker --queues harvest.snapshot --concurrency 1

It speaks the same contract as the real harvester (harvester.contracts), so dispatch, priorities and
result intake are tested end to end on the real broker without the crawler's cost.
"""

from __future__ import annotations

import os
import socket
import time
from datetime import UTC, datetime

from celery import Celery

from harvester.contracts import (
    EVENTS_QUEUE,
    PROGRESS_TASK,
    RESULT_TASK,
    RUN_JOB_TASK,
    STARTED_TASK,
    DomainResult,
    JobResult,
    JobSpec,
    Progress,
)
from harvester.runtime import celery_config
from harvester.specfetch import resolve

app = Celery("standin")
app.conf.update(celery_config())
app.conf.update(worker_concurrency=1, worker_prefetch_multiplier=1, task_acks_late=True)


def _now() -> str:
    return datetime.now(UTC).isoformat()


@app.task(name=RUN_JOB_TASK, acks_late=True)
def run_job(spec_data: dict) -> None:
    spec = JobSpec.from_dict(resolve(spec_data))  # a JobRef's spec read from the API, as the harvester does
    started = _now()
    app.send_task(STARTED_TASK, args=[spec.job_id, f"standin@{socket.gethostname()}"], queue=EVENTS_QUEUE)
    deadline = time.monotonic() + float(os.environ.get("STANDIN_JOB_SECONDS", "0"))
    while time.monotonic() < deadline:
        app.send_task(
            PROGRESS_TASK, args=[Progress(job_id=spec.job_id, at=_now(), uris_done=1).to_dict()], queue=EVENTS_QUEUE
        )
        time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
    result = JobResult(
        job_id=spec.job_id,
        status="DONE",
        started=started,
        ended=_now(),
        domains=tuple(
            DomainResult(d.name, d.configuration, objects=3, bytes=3000, stop_reason="DOWNLOAD_COMPLETE")
            for d in spec.domains
        ),
        harvester=f"standin@{socket.gethostname()}",
    )
    app.send_task(RESULT_TASK, args=[result.to_dict()], queue=EVENTS_QUEUE)
