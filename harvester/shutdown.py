"""A harvester worker's warm shutdown reaches the crawls it supervises.

Celery's warm shutdown (SIGTERM, or the first Ctrl-C) lets running tasks finish; a crawl task finishes when
its crawl does, which for a continuous job is never. So `netharvest up` (and docker's stop) waited its grace
period while the crawl went on, with the dedup service already gone (full responses stored where revisits
would have done), then killed the worker with SIGKILL. The worker's main process now announces the shutdown
(:func:`announce`, on Celery's ``worker_shutting_down`` signal) with a flag file in the spool named by its
PID; the supervising task (harvester/runjob.py, in a pool process whose parent is that main process, or in
the main process itself with the solo pool) sees it within one poll, ends its crawl child (SIGTERM: a
checkpoint, resumable) and hands the job's message back to the broker, so the job carries on from its
checkpoint when a worker takes it again (or, if the stack stays down past the heartbeat timeout, the reaper
resubmits it, as for a worker that died).

A file, not a signal: the main process does not know its pool processes' crawls, and a flag file is seen by
every pool process of the worker at once without reaching into Celery's pool. It is named by PID and removed
when a worker starts (:func:`clear`), so a PID reused after a reboot never stops a new worker's crawls.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

_FLAG = ".worker-stopping-{pid}"


class WorkerStopping(Exception):
    """The worker is shutting down: the crawl was ended with a checkpoint, the job is to be handed back."""


def _flag(spool: Path, pid: int) -> Path:
    return spool / _FLAG.format(pid=pid)


def announce(spool: Path) -> None:
    """Called in the worker's main process when its warm shutdown starts."""
    spool.mkdir(parents=True, exist_ok=True)
    _flag(spool, os.getpid()).touch()


def clear(spool: Path) -> None:
    """Called when a worker starts: a flag left by an earlier process with this PID means nothing now."""
    with contextlib.suppress(FileNotFoundError):
        _flag(spool, os.getpid()).unlink()


def requested(spool: Path) -> bool:
    """Whether the worker running this task is shutting down (a stat or two per poll)."""
    return _flag(spool, os.getppid()).exists() or _flag(spool, os.getpid()).exists()
