"""Where things live on this machine, from the environment (ARCHITECTURE.md, "Running it").

Shared by every process of the stack: the orchestrator's settings read it for the broker, and a
harvester worker, which has no Django, reads it for the broker and its spool.
"""

from __future__ import annotations

import os
from pathlib import Path

from kombu.transport import TRANSPORT_ALIASES

# ``filesystem://`` means netharvest's atomic variant of kombu's transport, in every process.
TRANSPORT_ALIASES["filesystem"] = "harvester.fsbroker:Transport"


def data_dir() -> Path:
    """The data directory: embedded database and broker, spool, archive, index."""
    return Path(os.environ.get("NETHARVEST_DATA_DIR", "./var")).resolve()


def spool_dir() -> Path:
    return Path(os.environ.get("NETHARVEST_SPOOL_DIR", data_dir() / "spool")).resolve()


def broker_url() -> str:
    """``NETHARVEST_BROKER_URL``, or the embedded transport: kombu's filesystem queue in the data dir.

    The filesystem transport is a real multi-process broker (one file per message, atomic renames:
    harvester.fsbroker), so the embedded stack runs real workers on real queues, just as Redis does in
    production.
    """
    return os.environ.get("NETHARVEST_BROKER_URL", "").strip() or "filesystem://"


def broker_transport_options() -> dict[str, object]:
    if not broker_url().startswith("filesystem://"):
        # Jobs run for hours or days: Redis must not hand an unacknowledged job to a second worker
        # while the first is still on it (docs/DESIGN.md, "Long jobs and redelivery").
        return {"visibility_timeout": int(os.environ.get("NETHARVEST_VISIBILITY_TIMEOUT", 7 * 24 * 3600))}
    root = data_dir() / "broker"
    folders = {"data_folder_in": root / "queue", "data_folder_out": root / "queue",
               "control_folder": root / "control", "processed_folder": root / "processed"}
    for folder in folders.values():
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
        # harvester.tasks rides out the outage and delivers its messages afterwards.
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
