"""Page QA's Celery tasks, on their own queue ``qa`` (orchestrator/celery.py routes ``orchestrator.qa.*`` there):
a worker of its own with a bounded number of browsers (``--pool threads --concurrency``,
``NETHARVEST_QA_BROWSERS``), niced, so loading pages in Chromium never takes a harvester's or the indexer's turn.
The work is in orchestrator.harvest.qa.pageqa, where the claim makes a run happen once."""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_shutting_down

from orchestrator.harvest.qa import pageqa


@worker_shutting_down.connect
def _stop_passes(**_: object) -> None:
    """Ctrl-C or a deployment: running passes stop after their current page and go back to the queue. The qa
    worker runs its tasks in threads (``--pool threads``), so this flag, set in the worker's main process,
    reaches them."""
    pageqa.request_stop()


@shared_task(name=pageqa.RUN_TASK, ignore_result=True)
def run(run_id: int) -> str:
    """One QA pass (claimed first: a duplicate message finds it taken and does nothing)."""
    done = pageqa.run_pass(run_id)
    return done.status if done is not None else "taken"


@shared_task(name="orchestrator.qa.sweep", ignore_result=True)
def sweep() -> int:
    """Passes the chain's hook missed, and runs whose message was lost."""
    return pageqa.sweep()
