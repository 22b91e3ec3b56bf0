"""Where things live on this machine, from the environment (ARCHITECTURE.md, "Running it").

Shared by every process of the stack: the orchestrator's settings read it for the broker, and a
harvester worker, which has no Django, reads it for the broker and its spool.
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path

from kombu.transport import TRANSPORT_ALIASES

# ``filesystem://`` means netharvest's atomic variant of kombu's transport, in every process.
TRANSPORT_ALIASES["filesystem"] = "harvester.fsbroker:Transport"


def data_dir() -> Path:
    """The data directory: embedded database and broker, spool, archive, index."""
    return Path(os.environ.get("NETHARVEST_DATA_DIR", "./var")).resolve()


def embedded_database() -> Path:
    """The embedded default's SQLite database (NETHARVEST_DATABASE_URL unset)."""
    return data_dir() / "netharvest.sqlite3"


def spool_dir() -> Path:
    return Path(os.environ.get("NETHARVEST_SPOOL_DIR", data_dir() / "spool")).resolve()


def child_stall_s() -> float:
    """``NETHARVEST_CHILD_STALL_S``: how long a crawl child may show no progress before the worker ends it
    (harvester.runjob.StallWatch); harvester.defaults.CHILD_STALL_S when unset."""
    from harvester.defaults import CHILD_STALL_S

    return _seconds("NETHARVEST_CHILD_STALL_S", CHILD_STALL_S)


def child_restart_window_s() -> float:
    """``NETHARVEST_CHILD_RESTART_WINDOW_S``: the window in which a crawl child is restarted once
    (harvester.runjob.restart_budget); harvester.defaults.CHILD_RESTART_WINDOW_S when unset."""
    from harvester.defaults import CHILD_RESTART_WINDOW_S

    return _seconds("NETHARVEST_CHILD_RESTART_WINDOW_S", CHILD_RESTART_WINDOW_S)


def _seconds(name: str, default: float) -> float:
    """A positive number of seconds from the environment; ``default`` when unset or not one."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not math.isfinite(value) or value <= 0:
        # A worker must not refuse its jobs over it: say so once per job and keep the default.
        logging.getLogger(__name__).error(
            "%s=%r: expected a number of seconds greater than 0; using %.0f", name, text, default
        )
        return default
    return value


class ConfigError(Exception):
    """The environment configures the stack in a way it cannot run: one line saying what and how to mend it."""


#: Broker variables Celery reads by itself: ``BROKER_URL`` by its command line's ``--broker`` option (every
#: ``celery`` worker and beat of the stack), ``CELERY_BROKER_URL`` by its settings.
CELERY_BROKER_VARIABLES = ("BROKER_URL", "CELERY_BROKER_URL")


def broker_url() -> str:
    """``NETHARVEST_BROKER_URL``, or the embedded transport: kombu's filesystem queue in the data dir.

    The filesystem transport is a real multi-process broker (one file per message, atomic renames:
    harvester.fsbroker), so the embedded stack runs real workers on real queues, just as Redis does in
    production.

    A Celery broker variable set to another broker is refused (:class:`ConfigError`): the workers and beat,
    started by Celery's command line, would take ``BROKER_URL`` while the web UI and ``netharvest`` commands
    would not, and jobs would be sent where no worker listens (an operator's run set ``BROKER_URL`` for
    ``NETHARVEST_BROKER_URL``: its job stayed SUBMITTED, with nothing in any log).
    """
    url = os.environ.get("NETHARVEST_BROKER_URL", "").strip() or "filesystem://"
    for name in CELERY_BROKER_VARIABLES:
        other = os.environ.get(name, "")  # as Celery takes it: " redis://h" is not redis://h to kombu
        if other.strip() and _broker_key(other) != _broker_key(url):
            from kombu.utils.url import maybe_sanitize_url

            ours = "unset (the embedded broker)" if url == "filesystem://" else maybe_sanitize_url(url)
            how = " (Celery's --broker option sets it)" if name == "CELERY_BROKER_URL" else ""
            theirs = maybe_sanitize_url(other.strip()) + (" (with spaces around it)" if other != other.strip() else "")
            raise ConfigError(
                f"{name} is {theirs} but NETHARVEST_BROKER_URL is {ours}: Celery's workers would "
                f"use {name} and the rest of the stack would not; set NETHARVEST_BROKER_URL to the broker and "
                f"unset {name}{how}"
            )
    return url


def _broker_key(url: str) -> tuple[object, ...]:
    """What makes two broker URLs the same broker, as kombu reads them (its defaults filled in: ``redis://h`` is
    ``redis://h:6379/0``, Redis's database ``/`` is 0). No connection is made."""
    from kombu import Connection

    info = Connection(url).info()
    vhost = str(info["virtual_host"] or "").strip("/")
    if info["transport"] == "redis":
        vhost = vhost or "0"
    return info["transport"], str(info["hostname"]).lower(), info["port"], info["userid"], info["password"], vhost


#: Seconds to connect to the broker, and for one command on a connected socket (every app of the stack).
BROKER_CONNECT_TIMEOUT_S = 3.0
BROKER_SOCKET_TIMEOUT_S = 5.0


def broker_transport_options() -> dict[str, object]:
    if not broker_url().startswith("filesystem://"):
        # Jobs run for hours or days: Redis must not hand an unacknowledged job to a second worker
        # while the first is still on it (docs/DESIGN.md, "Long jobs and redelivery").
        options: dict[str, object] = {
            "visibility_timeout": int(os.environ.get("NETHARVEST_VISIBILITY_TIMEOUT", 7 * 24 * 3600))
        }
        if broker_url().startswith(("redis://", "rediss://")):
            # A broker host that vanishes without a reset (powered off, cut off) must be noticed in seconds,
            # not at TCP's ~15-minute give-up: until then a harvester's messages (heartbeats included) hang
            # on a dead socket and the reaper takes its live job for dead. Longer than kombu's 1 s BRPOP.
            options.update(
                socket_connect_timeout=BROKER_CONNECT_TIMEOUT_S,
                socket_timeout=BROKER_SOCKET_TIMEOUT_S,
                socket_keepalive=True,
            )
        return options
    root = data_dir() / "broker"
    folders = {
        "data_folder_in": root / "queue",
        "data_folder_out": root / "queue",
        "control_folder": root / "control",
        "processed_folder": root / "processed",
    }
    if data_dir().is_dir():  # made by settings (orchestrator) or the harvester worker, not by merely importing an
        for folder in folders.values():  # app: a command typed elsewhere must leave no ./var behind (orchestrator.cli)
            folder.mkdir(parents=True, exist_ok=True)
    return {**{k: str(v) for k, v in folders.items()}, "store_processed": False, "polling_interval": 0.5}


def celery_config() -> dict[str, object]:
    """Broker settings every Celery app of the stack shares, so they all meet on the same queues."""
    return {
        "broker_url": broker_url(),
        "broker_transport_options": broker_transport_options(),
        "broker_connection_retry_on_startup": True,
        # A lost broker is waited for, however long (a worker that gave up would take its running crawl
        # down with it), and a crawl running with a late ack goes on meanwhile (Celery 6 would cancel it):
        # harvester.runjob rides out the outage and delivers its messages afterwards.
        "broker_connection_retry": True,
        "broker_connection_max_retries": None,
        "worker_cancel_long_running_tasks_on_connection_loss": False,
        "task_serializer": "json",
        "accept_content": ["json"],
        "result_backend": None,
        "task_ignore_result": True,
        "task_acks_late": True,
        "task_reject_on_worker_lost": False,
        "worker_prefetch_multiplier": 1,
        "worker_hijack_root_logger": False,
        "enable_utc": True,
        "timezone": "UTC",
    }
