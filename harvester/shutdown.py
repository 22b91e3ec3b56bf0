"""A harvester worker's warm shutdown reaches the crawls it supervises.

Celery's warm shutdown (SIGTERM, or the first Ctrl-C) lets running tasks finish; a crawl task finishes when
its crawl does, which for a continuous job is never. So `netharvest up` (and docker's stop) waited its grace
period while the crawl went on, with the dedup service already gone (full responses stored where revisits
would have done), then killed the worker with SIGKILL. Now the worker's main process announces the shutdown
(:func:`announce`, on Celery's ``worker_shutting_down`` signal) with a flag file in the spool; the supervising
task (harvester/runjob.py) sees it within one poll, ends its crawl child (SIGTERM: a checkpoint, resumable)
and hands the job's message back to the broker, so the job carries on from its checkpoint when a worker takes
it again (or, if the stack stays down past the heartbeat timeout, the reaper resubmits it, as for a worker that
died).

The flag is named by a token made for this run of this worker (:func:`begin`, on ``worker_init``, before the
pool processes are forked: they inherit it through the environment), not by a PID: the workers of one machine
or of a compose stack share the spool, and in containers every worker's main process is PID 1, so a PID would
let one worker's shutdown stop all the others, and a flag left behind would stop a later process that happened
to get that PID. The flag is removed when the worker has shut down (:func:`end`); one left by a worker killed
during its shutdown concerns nobody else.

A file, not a signal: the main process knows neither its pool processes' crawls nor their PIDs without
reaching into Celery's pool, and every pool process sees a file at once.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path

#: The environment variable holding this worker run's token (set in the main process, inherited by its pool).
TOKEN = "NETHARVEST_WORKER_RUN"


class WorkerStopping(Exception):
    """The worker is shutting down: the crawl was ended with a checkpoint, the job is to be handed back."""


def _flag(spool: Path) -> Path | None:
    token = os.environ.get(TOKEN, "")
    return spool / f".worker-stopping-{token}" if token else None


def begin() -> None:
    """Called when a worker starts (its main process, before the pool is forked)."""
    os.environ[TOKEN] = uuid.uuid4().hex


def announce(spool: Path) -> None:
    """Called in the worker's main process when its warm shutdown starts."""
    flag = _flag(spool)
    if flag is not None:
        spool.mkdir(parents=True, exist_ok=True)
        flag.touch()


def requested(spool: Path) -> bool:
    """Whether the worker running this task is shutting down (one stat per poll). False outside a worker."""
    flag = _flag(spool)
    return flag is not None and flag.exists()


def end(spool: Path) -> None:
    """Called when the worker has shut down (its pool drained): the flag has done its work."""
    flag = _flag(spool)
    if flag is not None:
        with contextlib.suppress(FileNotFoundError):
            flag.unlink()
