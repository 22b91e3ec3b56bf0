"""The indexer chain's Celery tasks (queue ``indexer``: every task named ``orchestrator.index.*`` is routed
there by orchestrator/celery.py). They only call orchestrator.harvest.chain.steps and .merging, where the
claims and the crash safety live, so running them twice or after a kill is always safe."""

from __future__ import annotations

from celery import shared_task

from orchestrator.harvest.archive import replay
from orchestrator.harvest.chain import merging
from orchestrator.harvest.chain import steps as chain


@shared_task(name=chain.INDEX_FILE_TASK, ignore_result=True)
def index_file(file_id: int) -> str:
    """Every step one file still needs (ingest → index → transfer → backup → delete)."""
    try:
        return chain.advance(file_id)
    except chain.ChainError:
        return "gone"  # the row was deleted since the message was sent: nothing to do


@shared_task(name="orchestrator.index.sweep", ignore_result=True)
def sweep() -> int:
    """Queue files left behind (a lost message, a killed worker) and retry failed ones a few times; bring the
    replay service's links up to date (orchestrator.harvest.archive.replay), in case a refresh after a step failed."""
    queued = chain.sweep()
    replay.refresh_quietly("the sweep")
    return queued


@shared_task(name="orchestrator.index.merge", ignore_result=True)
def merge(big: bool = True) -> None:
    """The daily merge, then (by default) the bigmerge into the master indexes."""
    merging.merge()
    if big:
        merging.bigmerge()
