"""Keeping a short lease alive while the work it covers runs (the indexer chain's claims, steps.py).

A claim's lease is short (``NETHARVEST_INDEX_LEASE_S``, 2 minutes), so the claim of a worker killed with
SIGKILL runs out within minutes and the sweep hands the file to another worker. A *live* worker keeps its
claim however long its step takes (copying a 50 GB WARC): a :class:`LeaseKeeper` thread renews it every
quarter lease with one conditional ``UPDATE … SET claimed_until = now + lease WHERE claim_token = <mine>``.
If that UPDATE finds no row, the claim was taken over (this worker was stopped or cut off from the database
for longer than a lease): the keeper marks it lost, and the step's next :meth:`LeaseKeeper.check` (called
once per chunk by the long loops) raises :class:`ClaimLost`, so the step stops and records nothing; the
step's own record is conditional on the token as well. A renewal that fails (the database briefly away) is
retried at the next beat; only "no row" means lost.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from contextvars import ContextVar
from types import TracebackType

from django.db import connection

log = logging.getLogger(__name__)


class ClaimLost(Exception):
    """This worker's claim was taken over by another worker: stop, record nothing."""


class LeaseKeeper:
    """Renew a claim every ``every_s`` seconds in a thread for the ``with`` block; :meth:`check` raises
    :class:`ClaimLost` once a renewal found the claim gone. ``renew`` returns False when it is gone."""

    def __init__(self, renew: Callable[[], bool], every_s: float, what: str) -> None:
        self.renew, self.every_s, self.what = renew, every_s, what
        self._stop, self._lost = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lease {what}", daemon=True)

    def __enter__(self) -> LeaseKeeper:
        self._token = _current.set(self)
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
        _current.reset(self._token)

    @property
    def lost(self) -> bool:
        return self._lost.is_set()

    def check(self) -> None:
        if self._lost.is_set():
            raise ClaimLost(f"{self.what}: the claim was taken over by another worker")

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.every_s):
                try:
                    kept = self.renew()
                except Exception as exc:  # the database briefly away: try again at the next beat
                    log.warning("%s: could not renew the claim (retrying): %s", self.what, exc)
                    continue
                if not kept:
                    log.warning("%s: the claim was taken over by another worker; stopping", self.what)
                    self._lost.set()
                    return
        finally:
            connection.close()  # this thread's own database connection


_current: ContextVar[LeaseKeeper | None] = ContextVar("lease", default=None)


def still_mine() -> None:
    """A renewal point for the long loops (a ``tick`` of indexer.transfer): raises :class:`ClaimLost` if the
    lease of the step running in this context was taken over; nothing outside a :class:`LeaseKeeper`."""
    keeper = _current.get()
    if keeper is not None:
        keeper.check()
