"""The harvester's Celery app: `celery -A harvester.worker worker -Q harvest.focused`.

It is configured from the environment only (harvester.runtime), never from Django settings: a
harvester machine has the broker and a spool directory, nothing else.
"""

from __future__ import annotations

from typing import Any

from celery import Celery
from celery.signals import worker_init, worker_ready, worker_shutdown, worker_shutting_down

from harvester import celerylog
from harvester.runtime import celery_config, data_dir

data_dir().mkdir(parents=True, exist_ok=True)  # a harvester machine's spool (and embedded broker) live there
app = Celery("harvester")
app.conf.update(celery_config())
# One job per worker process, taken only when the process is free, acknowledged only when it ends.
app.conf.update(worker_concurrency=1, worker_prefetch_multiplier=1, task_acks_late=True)
app.autodiscover_tasks(["harvester"], related_name="runjob", force=True)  # harvester.run_job (runjob.py)
celerylog.install()  # a job handed back, a broker lost: one line each (harvester/celerylog.py)


@worker_ready.connect
def _sweep_receipts_periodically(**_: Any) -> None:
    """With harvester-side delivery, free the spool copies the chain has stored even while no job runs."""
    from harvester import delivery
    from harvester.runtime import spool_dir

    delivery.start_sweeper(spool_dir)


@worker_init.connect
def _name_this_run(**_: Any) -> None:
    """This run's token for its shutdown flag (harvester/shutdown.py), inherited by the pool processes."""
    from harvester import shutdown

    shutdown.begin()


@worker_shutting_down.connect
def _tell_crawls_to_stop(**_: Any) -> None:
    """A warm shutdown ends the running crawls at once, with a checkpoint (harvester/shutdown.py)."""
    from harvester import shutdown
    from harvester.runtime import spool_dir

    shutdown.announce(spool_dir())


@worker_shutdown.connect
def _forget_the_shutdown_flag(**_: Any) -> None:
    from harvester import shutdown
    from harvester.runtime import spool_dir

    shutdown.end(spool_dir())
