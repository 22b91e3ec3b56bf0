"""One crawl of a job at a time on a spool: a second message for the same job (a duplicate publish, a
redelivery while the first worker is still on it) finds the job's lock held and does not crawl it again.

The orchestrator publishes a job's message before it marks the job SUBMITTED (orchestrator.harvest.jobs.dispatch),
so a crash between the two, or a reply lost to a timeout, can publish it twice; every publish carries the same
task id (``job-<id>``). An advisory ``flock`` on ``<spool>/<job>/.running`` is released by the kernel when
its holder dies, so a killed worker never leaves the job locked.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_FILE = ".running"


@contextmanager
def running_alone(job_dir: Path) -> Iterator[bool]:
    """Yield True holding the job's lock for the ``with`` block, or False at once if another process holds it."""
    job_dir.mkdir(parents=True, exist_ok=True)
    with open(job_dir / LOCK_FILE, "a+b") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
