"""Celery's log for an operator: the events the stack is built to ride out are one line each, not a traceback.

Installed by every Celery app of the stack (harvester.worker, orchestrator.celery) when it is imported, so the
worker processes of ``netharvest up`` and of docker-compose log alike. A real failure keeps its traceback.
"""

from __future__ import annotations

import logging

from celery.worker.consumer.consumer import CONNECTION_RETRY
from kombu.exceptions import KombuError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

#: What a lost broker raises: socket errors, kombu's, and redis-py's own (not subclasses of OSError).
BROKER_ERRORS = (OSError, KombuError, RedisConnectionError, RedisTimeoutError)


class RejectsWithoutTraceback(logging.Filter):
    """A job message handed back (``Reject``: the worker is stopping, the spec cannot be read here) is a
    decision harvester.runjob made and logged, not an error; Celery logs every rejection with a traceback,
    and a Ctrl-C of ``netharvest up`` printed two of them, as if the shutdown had crashed. Its warning line
    (``reject requeue=True: <why>``) stays."""

    def filter(self, record: logging.LogRecord) -> bool:
        data = getattr(record, "data", None)
        if isinstance(data, dict) and data.get("description") == "rejected":
            record.exc_info = record.exc_text = None
        return True


class BrokerLossInOneLine(logging.Filter):
    """A broker that goes away (a Redis restart, a network blip) is waited for by every worker, and a running
    crawl goes on meanwhile (harvester.runtime.celery_config, harvester.runjob). Celery logs the loss with the
    whole chain of exceptions: a Redis restart of 8 s printed 15 tracebacks of about 60 lines across the
    stack's workers (operator run op23), which read as a crash. The warning stays, with the error that
    caused it on the same line: ``consumer: Connection to broker lost. Trying to re-establish the
    connection... (ConnectionError: Error 111 connecting to 127.0.0.1:6379. Connection refused.)``."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == CONNECTION_RETRY and record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            record.msg = f"{CONNECTION_RETRY} ({type(error).__name__}: {error})"
            record.args = ()
            record.exc_info = record.exc_text = None
        return True


class BeatBrokerLossInOneLine(logging.Filter):
    """Beat logs a scheduled task it could not send (``Message Error: Couldn't apply scheduled task
    reap-jobs: Error 111 connecting to ...``) with the exception's traceback and the whole call stack as a
    list. When the cause is a lost broker, the first line says all: beat sends the task at its next tick,
    and jobs left NEW are sent by ``submit-new-jobs`` once the broker answers (orchestrator.celery). Other
    causes keep their traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if str(record.msg).startswith("Message Error:") and error is not None and _caused_by_broker(error):
            record.msg, record.args = f"Message Error: {error} (the broker is unreachable; sent at the next tick)", ()
            record.exc_info = record.exc_text = None
        return True


def _caused_by_broker(error: BaseException) -> bool:
    """Whether ``error`` or one it was raised from (celery.beat wraps the cause in a SchedulingError)."""
    seen = 0
    current: BaseException | None = error
    while current is not None and seen < 8:
        if isinstance(current, BROKER_ERRORS):
            return True
        current, seen = current.__cause__ or current.__context__, seen + 1
    return False


class NoCancelNotice(logging.Filter):
    """Celery 5 warns at every reconnection that Celery 6 will cancel late-acknowledged tasks on a broker
    loss; the stack sets ``worker_cancel_long_running_tasks_on_connection_loss`` to False on purpose
    (harvester.runtime: a crawl goes on through an outage). The worker logs Python warnings through
    ``py.warnings`` with ``always`` (celery.app.log), so the notice is dropped there, not in ``warnings``."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "In Celery 5.1 we introduced an optional breaking change" not in record.getMessage()


def install() -> None:
    """Add the filters to the loggers (once, however often it is called)."""
    for name, kind in (
        ("celery.app.trace", RejectsWithoutTraceback),
        ("celery.worker.consumer.consumer", BrokerLossInOneLine),
        ("celery.beat", BeatBrokerLossInOneLine),
        ("py.warnings", NoCancelNotice),
    ):
        log = logging.getLogger(name)
        if not any(isinstance(f, kind) for f in log.filters):
            log.addFilter(kind())
