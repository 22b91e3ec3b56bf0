"""Celery's log for an operator: the events the stack is built to ride out are one line each, not a traceback.

Installed by every Celery app of the stack (harvester.worker, orchestrator.celery) when it is imported, so the
worker processes of ``netharvest up`` and of docker-compose log alike. A real failure keeps its traceback.
"""

from __future__ import annotations

import logging

from celery.beat import SchedulingError
from celery.worker.consumer.consumer import CONNECTION_RETRY
from kombu.exceptions import ConnectionError as KombuConnectionError
from kombu.exceptions import OperationalError
from kombu.exceptions import TimeoutError as KombuTimeoutError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

#: What a lost broker raises: socket errors, kombu's connection errors, and redis-py's own (not subclasses of
#: OSError). Not all of KombuError: a task whose arguments cannot be serialised raises kombu's EncodeError,
#: a real error that must keep its traceback.
BROKER_ERRORS = (
    OSError,
    OperationalError,
    KombuConnectionError,
    KombuTimeoutError,
    RedisConnectionError,
    RedisTimeoutError,
)


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
            record.levelno, record.levelname = logging.WARNING, "WARNING"  # ridden out, as the workers' line
        return True


def _caused_by_broker(error: BaseException) -> bool:
    """Whether the task could not be sent because of the broker: ``error`` itself, or the error a
    SchedulingError wraps (celery.beat re-raises the cause inside its ``except`` with
    celery.exceptions.reraise, which sets ``__context__`` only). Nothing further down the chain counts: an
    error raised while some socket error was being handled is not a lost broker."""
    if isinstance(error, SchedulingError):
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    return isinstance(error, BROKER_ERRORS)


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
