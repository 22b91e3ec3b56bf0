"""Celery's log in the stack's workers (harvester/celerylog.py): a job handed back and a lost broker are one
warning line each, no traceback; real failures keep theirs."""

from __future__ import annotations

import logging
import warnings
from types import SimpleNamespace

from celery import states
from celery.app.task import Context
from celery.app.trace import TraceInfo
from celery.beat import Scheduler, SchedulingError
from celery.exceptions import Reject, reraise
from celery.worker.consumer.consumer import Consumer
from kombu.exceptions import EncodeError
from kombu.serialization import dumps
from redis.exceptions import ConnectionError as RedisConnectionError

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


def test_a_lost_broker_is_one_warning_line_with_its_cause(caplog):
    """Celery's own call on a broker loss after connecting (Consumer.on_connection_error_after_connected),
    with the chain of exceptions a Redis restart raises."""
    consumer = SimpleNamespace(
        app=app, connection=SimpleNamespace(collect=lambda: None), prefetch_multiplier=1, max_prefetch_count=1
    )
    logging.captureWarnings(True)  # as the worker does (celery.app.log), with the notice "always" shown
    try:
        with caplog.at_level(logging.WARNING), warnings.catch_warnings():
            warnings.simplefilter("always")
            try:
                try:
                    raise ConnectionRefusedError(111, "Connection refused")
                except ConnectionRefusedError as cause:
                    raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.") from cause
            except ConnectionError as exc:
                Consumer.on_connection_error_after_connected(consumer, exc)
    finally:
        logging.captureWarnings(False)
    [record] = [r for r in caplog.records if r.name == "celery.worker.consumer.consumer"]
    assert record.levelno == logging.WARNING
    assert record.getMessage() == (
        "consumer: Connection to broker lost. Trying to re-establish the connection... "
        "(ConnectionError: Error 111 connecting to 127.0.0.1:6379. Connection refused.)"
    )
    assert "Traceback" not in caplog.text
    assert "In Celery 5.1" not in caplog.text


def test_other_consumer_warnings_keep_their_traceback(caplog):
    with caplog.at_level(logging.WARNING, logger="celery.worker.consumer.consumer"):
        try:
            raise RuntimeError("something else")
        except RuntimeError:
            logging.getLogger("celery.worker.consumer.consumer").warning("other trouble", exc_info=True)
    assert "Traceback" in caplog.text and "something else" in caplog.text


def _beat_cannot_send(cause: Exception) -> None:
    """celery.beat's own call when a due task cannot be sent (Scheduler.apply_entry), its cause wrapped as
    Scheduler.apply_async wraps it (celery.exceptions.reraise inside the ``except``: ``__context__`` only)."""

    def apply_async(entry, producer=None, advance=False):
        try:
            raise cause
        except Exception as exc:
            reraise(SchedulingError, SchedulingError(f"Couldn't apply scheduled task {entry.name}: {exc}"), None)

    beat = SimpleNamespace(apply_async=apply_async)
    Scheduler.apply_entry(beat, SimpleNamespace(name="reap-jobs", task="orchestrator.reap_jobs"))


def test_beat_that_cannot_reach_the_broker_says_so_in_one_line(caplog):
    with caplog.at_level(logging.WARNING, logger="celery.beat"):
        _beat_cannot_send(RedisConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused."))
    [record] = [r for r in caplog.records if r.name == "celery.beat"]
    assert record.getMessage() == (
        "Message Error: Couldn't apply scheduled task reap-jobs: Error 111 connecting to 127.0.0.1:6379. "
        "Connection refused. (the broker is unreachable; sent at the next tick)"
    )
    assert record.levelno == logging.WARNING  # ridden out: a warning, as the workers' line
    assert "Traceback" not in caplog.text and "format_stack" not in caplog.text


def test_beat_that_cannot_send_for_another_reason_keeps_the_traceback(caplog):
    """A task whose arguments cannot be serialised: kombu's EncodeError (a KombuError, not a broker error)."""
    try:
        dumps({1}, serializer="json")
    except EncodeError as exc:
        unsendable = exc
    with caplog.at_level(logging.ERROR, logger="celery.beat"):
        _beat_cannot_send(unsendable)
    [record] = [r for r in caplog.records if r.name == "celery.beat"]
    assert record.levelno == logging.ERROR and "(the broker is unreachable" not in record.getMessage()
    assert "Traceback" in caplog.text and "not JSON serializable" in caplog.text


def test_beat_keeps_the_traceback_of_an_error_raised_while_a_socket_error_was_handled(caplog):
    def lookup() -> None:
        try:
            raise ConnectionResetError(104, "Connection reset by peer")
        except ConnectionResetError:
            raise KeyError("no such entry") from None

    try:
        lookup()
    except KeyError as exc:
        real = exc
    with caplog.at_level(logging.ERROR, logger="celery.beat"):
        _beat_cannot_send(real)
    assert "Traceback" in caplog.text and "(the broker is unreachable" not in caplog.text
