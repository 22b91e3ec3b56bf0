"""The harvester worker's log (harvester/worker.py): a job handed back is one warning line, no traceback."""

from __future__ import annotations

import logging

from celery import states
from celery.app.task import Context
from celery.app.trace import TraceInfo
from celery.exceptions import Reject

from harvester.contracts import RUN_JOB_TASK
from harvester.worker import app


def _log_rejection(reason: str) -> None:
    task = app.tasks[RUN_JOB_TASK]
    request = Context(id="job-7", args=[{"job_id": 7}], kwargs={}, hostname="harvester@test")
    try:
        raise Reject(reason, requeue=True)
    except Reject:
        TraceInfo(states.REJECTED).handle_reject(task, request)


def test_a_job_handed_back_is_one_warning_line_without_a_traceback(caplog):
    with caplog.at_level(logging.WARNING, logger="celery.app.trace"):
        _log_rejection("job 7: the worker is stopping")
    [record] = [r for r in caplog.records if r.name == "celery.app.trace"]
    assert record.levelno == logging.WARNING
    assert "reject requeue=True: job 7: the worker is stopping" in record.getMessage()
    assert record.exc_info is None
    assert "Traceback" not in caplog.text


def test_a_task_that_fails_still_logs_its_traceback(caplog):
    task = app.tasks[RUN_JOB_TASK]
    request = Context(id="job-8", args=[], kwargs={}, hostname="harvester@test")
    with caplog.at_level(logging.ERROR, logger="celery.app.trace"):
        try:
            raise ValueError("a real error")
        except ValueError as exc:
            TraceInfo(states.FAILURE, exc).handle_failure(task, request, store_errors=False, call_errbacks=False)
    assert "Traceback" in caplog.text and "a real error" in caplog.text
