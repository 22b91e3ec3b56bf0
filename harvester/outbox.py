"""A job's outbox: the messages a harvester owes the orchestrator, kept on disk until the broker took them.

Why: a broker outage must not lose the started message, a heartbeat or (above all) the JobResult, and
must not stop the crawl. Every message for the ``events`` queue is first written here, in the job's
spool (``<spool>/<job>/outbox/``), one JSON file per message, written atomically under a sequence
number; :meth:`Outbox.flush` publishes them in that order and removes each one only after the broker
accepted it (a Redis ``LPUSH`` has returned, the filesystem transport's rename is done). A crash between
the publish and the removal sends that message again, so delivery is at least once, in order; the
orchestrator's intake is idempotent (a duplicate started, heartbeat, control acknowledgement or
JobResult changes nothing), which makes it exactly once in effect.

Heartbeats are coalesced: a new one replaces the ones not yet sent, so an outage of hours leaves one
file, not thousands.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harvester.process import write_json_atomic

logger = logging.getLogger(__name__)

OUTBOX_DIR = "outbox"


class Outbox:
    """The pending messages of one job; one process (the job's task) writes and flushes it."""

    def __init__(self, job_dir: Path) -> None:
        self.path = job_dir / OUTBOX_DIR
        self.path.mkdir(parents=True, exist_ok=True)
        existing = self.pending()
        self._next = int(existing[-1].name.split("-", 1)[0]) + 1 if existing else 1

    def pending(self) -> list[Path]:
        """The messages not yet accepted by the broker, oldest first."""
        return sorted(p for p in self.path.glob("*.json") if p.name[0].isdigit())

    def put(self, task: str, args: list[Any], coalesce: bool = False) -> None:
        """Keep ``task(*args)`` for delivery; with ``coalesce``, it replaces that task's undelivered ones."""
        if coalesce:
            for old in self.pending():
                if old.name.split("-", 1)[1] == f"{task}.json":
                    old.unlink(missing_ok=True)
        write_json_atomic(self.path / f"{self._next:012d}-{task}.json", {"task": task, "args": args})
        self._next += 1

    def flush(self, publish: Callable[[str, list[Any]], None]) -> None:
        """Publish the pending messages in order.

        Stops at the first one the broker does not take, raising its error (the caller decides how long
        to wait before the next try); a message that cannot be read is set aside, not retried.
        """
        for path in self.pending():
            try:
                message = json.loads(path.read_text(encoding="utf-8"))
                task, args = message["task"], message["args"]
            except (OSError, ValueError, KeyError, TypeError) as exc:
                logger.error("outbox: unreadable message %s set aside: %s", path, exc)
                os.replace(path, path.with_name(f"bad-{path.name}"))
                continue
            publish(task, args)
            path.unlink(missing_ok=True)
