"""Short leases on the indexer chain's claims, on real PostgreSQL: a live worker whose step outlasts the lease
keeps its file (it renews the lease while it works), a worker whose claim was taken over stops its step and
records nothing, and a killed worker's file is released and queued again by the sweep once its lease ran out.

The lease is 1 s here (2 min in production); nothing asserts how fast anything runs: a step "outlasts the
lease" by waiting until the time its first lease would have run out has passed."""

from __future__ import annotations

import base64
import json
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from orchestrator.celery import app
from orchestrator.harvest.chain import steps as chain
from orchestrator.harvest.chain.leases import LeaseKeeper, still_mine
from orchestrator.harvest.models import ArchiveFile
from orchestrator.harvest.models.archive import IndexState
from tests.conftest import wait_for
from tests.orchestrator.chainhelp import harvest
from tests.orchestrator.test_chain_celery import REPO, _process_env

pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True)]

LEASE_S = 1.0  # also in KILLED's environment


@pytest.fixture
def short_lease(settings: Any) -> float:
    settings.NETHARVEST_INDEX_LEASE_S = LEASE_S
    return LEASE_S


def _claim_elsewhere(file_id: int, state: str, take_over: bool = False) -> str | None:
    """Another worker's claim attempt, on its own database connection (a thread of its own)."""
    answer: list[str | None] = []

    def attempt() -> None:
        try:
            answer.append(chain.claim(file_id, state, take_over=take_over))
        finally:
            connection.close()

    thread = threading.Thread(target=attempt)
    thread.start()
    thread.join()
    return answer[0]


def _wait_past(moment: Any) -> None:
    while timezone.now() <= moment:
        time.sleep(0.05)


def test_a_step_slower_than_the_lease_keeps_its_claim_and_finishes(warcs, storage_env, short_lease, monkeypatch):
    job = harvest(warcs[:1], storage_env / "spool")
    f = ArchiveFile.objects.get(job=job)
    real = chain.STEPS[IndexState.HARVESTED]
    others: list[str | None] = []

    def slow_ingest(current: ArchiveFile) -> dict[str, Any]:
        first_lease_ends = timezone.now() + chain.lease()
        for _ in range(3):  # three times past the lease this worker took; another worker tries each time
            _wait_past(first_lease_ends)
            others.append(_claim_elsewhere(current.pk, IndexState.HARVESTED))
            first_lease_ends += chain.lease()
        return real.run(current)

    monkeypatch.setitem(chain.STEPS, IndexState.HARVESTED, replace(real, run=slow_ingest))
    assert chain.advance(f.pk) == IndexState.CLEANED  # every step done by this one worker
    assert others == [None, None, None]  # the file was never handed to the other worker
    f.refresh_from_db()
    assert f.sha256 and not f.claim_token and f.claimed_until is None


def test_a_worker_whose_claim_was_taken_over_stops_and_records_nothing(warcs, storage_env, short_lease, monkeypatch):
    job = harvest(warcs[:1], storage_env / "spool")
    f = ArchiveFile.objects.get(job=job)
    real = chain.STEPS[IndexState.HARVESTED]
    taken: list[str | None] = []
    reached_the_end: list[bool] = []

    def cut_off_ingest(current: ArchiveFile) -> dict[str, Any]:
        # Another worker takes the file over (as after this one was suspended past its lease); this worker
        # carries on with its long loop, whose renewal points must stop it.
        taken.append(_claim_elsewhere(current.pk, IndexState.HARVESTED, take_over=True))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            still_mine()
            time.sleep(0.05)
        reached_the_end.append(True)
        return real.run(current)

    monkeypatch.setitem(chain.STEPS, IndexState.HARVESTED, replace(real, run=cut_off_ingest))
    assert chain.advance(f.pk) == IndexState.HARVESTED  # stopped: the step is not done by this worker
    assert taken[0] and not reached_the_end
    f.refresh_from_db()
    assert (f.index_state, f.claim_token, f.sha256, f.error) == (IndexState.HARVESTED, taken[0], "", "")


#: A worker that claims a file's ingest with a 1 s lease and is killed with SIGKILL in the middle of it.
KILLED = """
import os, signal, sys
import django
django.setup()
from orchestrator.harvest.chain import steps as chain
assert chain.claim(int(sys.argv[1]), "HARVESTED")
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_workers_claim_is_released_and_queued_by_the_sweep_after_its_lease(
    warcs, storage_env, short_lease, settings
):
    if connection.vendor != "postgresql" or not app.conf.broker_url.startswith("redis"):
        pytest.skip("needs the real PostgreSQL and Redis")
    job = harvest(warcs[:2], storage_env / "spool")
    victim, alive = ArchiveFile.objects.filter(job=job).order_by("name")
    _purge()
    env = {**_process_env(storage_env, settings), "NETHARVEST_INDEX_LEASE_S": "1"}
    killed = subprocess.run([sys.executable, "-c", KILLED, str(victim.pk)], cwd=REPO, env=env, timeout=60)
    assert killed.returncode == -signal.SIGKILL
    victim.refresh_from_db()
    dead_token, queued_before = victim.claim_token, victim.queued_at
    assert dead_token and queued_before  # intake queued it on commit; the dead worker had taken that message

    live_token = chain.claim(alive.pk, IndexState.HARVESTED)  # a live worker's claim on the other file
    with LeaseKeeper(lambda: chain.renew(alive.pk, IndexState.HARVESTED, live_token), LEASE_S / 4, "alive"):
        wait_for(
            lambda: ArchiveFile.objects.get(pk=victim.pk).claimed_until < timezone.now(),
            10,
            "the dead worker's lease to run out",
        )
        _wait_past(timezone.now() + chain.lease())  # the live claim has outlived its first lease too
        assert chain.sweep() == 1  # the dead claim only: the live one was renewed
        victim.refresh_from_db()
        assert victim.claim_token == "" and victim.queued_at > queued_before  # released, and queued again
        assert _queued_files() == [victim.pk]
        assert chain.sweep() == 0  # queued a moment ago, not claimed since: waiting its turn, not queued twice
    assert ArchiveFile.objects.get(pk=alive.pk).claim_token == live_token
    assert not chain._record(victim.pk, IndexState.HARVESTED, dead_token, index_state=IndexState.INGESTED)
    assert chain.advance(victim.pk) == IndexState.CLEANED  # what the indexer worker does with the message
    _purge()


def _purge() -> None:
    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge("indexer")


def _queued_files() -> list[int]:
    """The file ids of the chain's messages waiting in the ``indexer`` queue (Celery's JSON protocol 2 body:
    base64 of ``[args, kwargs, embed]``)."""
    with app.connection_for_write() as conn:
        messages = [json.loads(m) for m in conn.default_channel.client.lrange("indexer", 0, -1)]
    return [json.loads(base64.b64decode(m["body"]))[0][0] for m in messages]
