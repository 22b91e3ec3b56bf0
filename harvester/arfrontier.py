"""The adaptive-revisit frontier of a continuous job (Heritrix's ARFrontier, seed 002 §6.2; seed 000 §3).

"Each host has its own queue ... URIs are ordered by their time of next processing" and "a URI is
never done": after each visit it goes back to its host's queue stamped with the time the revisit
policy (:class:`harvester.revisit.policy.RevisitPolicy`) gives it. So, unlike the breadth-first
:class:`harvester.frontier.Frontier` whose queues are FIFO and drain:

* a **host queue** is a heap of its URIs by time of next processing. Its state (002 §6.2.1,
  AdaptiveRevisitHostQueue): **ready** (its earliest URI is due and its politeness wait is over),
  **busy** (it has as many URIs out as its *valence* allows), **snoozed** (URIs, none due yet, or the
  politeness wait not over: "the queue is snoozed until the time of next processing of its top URI or
  the politeness wait, whichever is later"), **empty**;
* queues themselves wait in a heap by the time they next become ready, so :meth:`next_ready` costs
  O(log hosts), whatever the number of URIs;
* politeness is the same arithmetic as every job's (last fetch duration × delay factor clamped to
  [min, max] ms, :func:`harvester.politeness.politeness_delay`), retries wait ``retry_delay_s`` by
  snoozing their queue ("Retry delays are enforced in the same way as politeness delays", 002), and a
  retried URI keeps its time of next processing;
* a **global fetch budget** (fetches per second for the whole job, the definition's setting) spaces
  fetches at least ``1 / budget`` seconds apart: over any interval of ``t`` seconds at most
  ``budget × t + 1`` fetches start, on top of per-host politeness. The policy plans with the budget;
  this frontier is what makes sure it is never exceeded (ARCHITECTURE.md, "RevisitPolicy"). Only fetches
  count (:meth:`ARFrontier.fetching`): a URI put back to wait for its host's robots.txt, or let go without a
  fetch because its host cannot be reached, does not take a fetch's slot.
* prerequisites (``dns:`` lookups, robots.txt: discovery paths ending in ``P``) are one-shot: they are
  fetched when due and then done, as in the breadth-first frontier (their own expiry asks for them again).

Persistence (002 §6.2.4, recovery): the URIs live in the same journal as the breadth-first frontier's
(``state/frontier.sqlite``: table ``uris``, seen-set, key/value state), plus a table ``ar`` holding per
URI its time of next processing, the policy's state (:meth:`RevisitPolicy.state_of`: wait, visits,
versions, last digest, validators…) and the URI's latest stored capture (what an identical-payload-digest
revisit refers to). Changes are written by :meth:`checkpoint` (every second), in one transaction with
the rest; after a kill -9 the frontier reloads every URI with its time and the policy its states, so
the schedule continues where it was: no URI starts from scratch. The policy's last plan
(:meth:`RevisitPolicy.plan_state`) is journalled after each replan, so a restart does not replan every URI
before its first fetch. A replan moves many URIs at once (a quarter of them, or all): their rows are written
:data:`MOVED_PER_CHECKPOINT` at a time, so no checkpoint holds the crawl for long (43 s for a million), and the
plan only once they all are; a kill -9 meanwhile leaves each row as it was, and the restarted crawl replans.
"""

from __future__ import annotations

import heapq
import itertools
import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harvester.frontier import QUEUED, Entry, Frontier, Politeness, fingerprint
from harvester.revisit.policy import host_of
from harvester.urimeta import UriMeta

#: Hosts and due URIs listed in a heartbeat (Progress.continuous).
MAX_HOSTS, MAX_DUE = 50, 20
#: The key/value row holding the policy's last plan (RevisitPolicy.plan_state).
PLAN_KEY = "ar_plan"
#: URIs moved by a replan journalled per checkpoint (about 0.1 s of JSON); URIs visited are all journalled.
MOVED_PER_CHECKPOINT = 2500


def iso(t: float | None) -> str | None:
    if t is None:
        return None
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(slots=True)
class ARQueue:
    """One host's URIs by time of next processing (a heap of ``(next_at, id)``, stale items skipped)."""

    key: str
    heap: list[tuple[float, int]] = field(default_factory=list)
    size: int = 0  # URIs of this queue that are not done (waiting or out)
    busy: int = 0
    wake: float = 0.0  # politeness / retry snooze: no issue before this
    delay: float = 0.0  # the politeness delay after its last fetch (Frontier._load_wakes)
    heaped: float = -1.0  # the time this queue is on the frontier's queue heap for
    enqueues: int = 0
    spent: int = 0
    errors: int = 0
    last_dequeue: float = 0.0
    last_peeked: str = ""
    last_queued: str = ""


class ARFrontier(Frontier):
    """See the module docstring. ``policy`` is the job's :class:`~harvester.revisit.policy.RevisitPolicy`:
    it times each new URI's first visit (``add``) and holds the URI states this frontier journals."""

    def __init__(
        self,
        db_path: str | Path | None,
        politeness: Politeness,
        queue_of: Callable[[str], str],
        group_of: Callable[[UriMeta], str] | None = None,
        *,
        policy: Any,
        budget_per_s: float | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.policy = policy
        self.budget_per_s = budget_per_s
        self._budget_next = 0.0
        self.arq: dict[str, ARQueue] = {}
        self._qheap: list[tuple[float, str]] = []
        self.entries: dict[int, Entry] = {}  # every URI not done, out or waiting
        self.next_at: dict[int, float] = {}
        self.out: set[int] = set()  # issued, not yet finished
        self.by_url: dict[str, int] = {}
        self.one_shot: set[int] = set()
        self.capture: dict[int, list[Any]] = {}  # id -> [target_uri, warc_date, record_id, payload_digest]
        self._planned: dict[int, float] = {}  # next time given by the policy for an issued URI
        self._drop: set[int] = set()  # issued URIs removed meanwhile: done when they come back
        self._dirty: set[int] = set()
        self._moved: set[int] = set()  # moved by a replan, not yet journalled (MOVED_PER_CHECKPOINT at a time)
        #: A replan's moves are still being applied (ContinuousCrawlJob): its plan is not journalled meanwhile.
        self.plan_pending = False
        #: Journal every move at the next checkpoint (the last one, with no fetch left to wait for it).
        self.drain_all = False
        self._dirty_hosts: set[str] = set()
        self._plan_of: float | None = None  # the next_replan_at of the plan last journalled
        super().__init__(db_path, politeness, queue_of, group_of, clock=clock)

    # -- persistence ---------------------------------------------------------------------------
    def _load_queued(self) -> None:
        assert self.db is not None
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS ar (id INTEGER PRIMARY KEY, next_at REAL NOT NULL, policy TEXT, capture TEXT)"
        )
        # Per-host validator and date trust, a row per host: each checkpoint writes the hosts that changed, not
        # all of them (one JSON value of every host once cost 0.4 s a second at 100,000 hosts).
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS ar_hosts (host TEXT PRIMARY KEY, state TEXT NOT NULL) WITHOUT ROWID"
        )
        legacy = self.kv.pop("ar_hosts", None)  # a journal of before 2026-11-28: one kv value
        if legacy:
            rows = [(host, json.dumps(state)) for host, state in legacy.items()]
            self.db.executemany("INSERT OR IGNORE INTO ar_hosts (host, state) VALUES (?, ?)", rows)
            self.db.execute("DELETE FROM kv WHERE k = 'ar_hosts'")
        for host, state in self.db.execute("SELECT host, state FROM ar_hosts"):
            self.policy.restore_host(host, json.loads(state))
        counters = self.kv.get("ar_policy_counters")
        if counters:
            self.policy.counters.update(counters)
        if self.seen and self.budget_per_s:
            # A resumed crawl's first fetch waits 1 / budget: the last one may have started just before a kill,
            # after the last checkpoint, so no journalled time could say when it was (Frontier._load_wakes).
            self._budget_next = self.clock() + 1.0 / self.budget_per_s
        rows = self.db.execute(
            "SELECT u.id, u.queue, u.url, u.nh, u.retries, a.next_at, a.policy, a.capture "
            "FROM uris u LEFT JOIN ar a ON a.id = u.id "
            f"WHERE u.state={QUEUED} ORDER BY u.id"
        )
        for id_, queue, url, nh, retries, next_at, policy_state, capture in rows:
            data = UriMeta.from_json(nh)
            entry = Entry(id_, url, queue, data, retries)
            if policy_state:
                self.policy.restore(url, json.loads(policy_state))
            if capture:
                self.capture[id_] = json.loads(capture)
            one_shot = self._is_one_shot(data)
            if next_at is None:  # added but not yet checkpointed with its time: due now
                next_at = 0.0 if one_shot else self.policy.add(url, self.clock())
            self._insert(entry, float(next_at), one_shot)
        if self.policy.restore_plan(self.kv.pop(PLAN_KEY, None) or {}):  # read once: not kept in memory
            self._plan_of = self.policy.next_replan_at

    def _queue_keys(self) -> list[str]:
        return list(self.arq)

    def _queue_holds(self, key: str) -> bool:
        q = self.arq.get(key)
        return q is not None and q.size > 0

    def _restore_wake(self, key: str, wake: float, delay: float) -> None:
        q = self._q(key)
        q.delay = delay
        if wake > q.wake:
            q.wake = wake
            self._consider_q(q)

    def _extra_pending(self) -> bool:
        return bool(self._dirty or self._moved or self._dirty_hosts or self.policy.next_replan_at != self._plan_of)

    def _write_extra(self, db: sqlite3.Connection) -> None:
        rows = []
        self._moved -= self._dirty
        moved = list(itertools.islice(self._moved, None if self.drain_all else MOVED_PER_CHECKPOINT))
        for id_ in (*self._dirty, *moved):
            entry = self.entries.get(id_)
            if entry is None or id_ not in self.next_at:
                continue
            state = None if id_ in self.one_shot else self.policy.state_of(entry.url)
            capture = self.capture.get(id_)
            rows.append(
                (
                    id_,
                    self.next_at[id_],
                    None if state is None else json.dumps(state),
                    None if capture is None else json.dumps(capture),
                )
            )
        db.executemany("INSERT OR REPLACE INTO ar (id, next_at, policy, capture) VALUES (?,?,?,?)", rows)
        hosts = [(host, self.policy.host_state_of(host)) for host in self._dirty_hosts]
        db.executemany(
            "INSERT OR REPLACE INTO ar_hosts (host, state) VALUES (?, ?)",
            ((host, json.dumps(state)) for host, state in hosts if state is not None),
        )
        self._moved.difference_update(moved)
        if self.policy.next_replan_at != self._plan_of and not self._moved and not self.plan_pending:
            # a replan, all its moves applied and written
            plan = self.policy.plan_state()
            db.execute("INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)", (PLAN_KEY, json.dumps(plan)))
            self._plan_of = self.policy.next_replan_at
        counters = dict(self.policy.counters)
        self.kv["ar_policy_counters"] = counters
        db.execute("INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)", ("ar_policy_counters", json.dumps(counters)))
        self._dirty.clear()
        self._dirty_hosts.clear()

    # -- the queues ----------------------------------------------------------------------------
    @staticmethod
    def _is_one_shot(nh: UriMeta) -> bool:
        return nh.prerequisite

    def _q(self, key: str) -> ARQueue:
        q = self.arq.get(key)
        if q is None:
            q = self.arq[key] = ARQueue(key)
        return q

    def _insert(self, entry: Entry, next_at: float, one_shot: bool) -> None:
        q = self._q(entry.queue)
        self.entries[entry.id] = entry
        self.next_at[entry.id] = next_at
        self.by_url[entry.url] = entry.id
        if one_shot:
            self.one_shot.add(entry.id)
        q.size += 1
        q.enqueues += 1
        q.last_queued = entry.url
        self.queued += 1
        self._count(entry.nh, 1)
        heapq.heappush(q.heap, (next_at, entry.id))
        self._consider_q(q)

    def _head(self, q: ARQueue) -> tuple[float, int] | None:
        """The queue's earliest waiting URI (stale heap items dropped)."""
        while q.heap:
            at, id_ = q.heap[0]
            if id_ in self.entries and id_ not in self.out and self.next_at.get(id_) == at:
                return at, id_
            heapq.heappop(q.heap)
        return None

    def _ready_at(self, q: ARQueue) -> float | None:
        head = self._head(q)
        if head is None or q.busy >= self.politeness.valence:
            return None
        return max(head[0], q.wake)

    def _consider_q(self, q: ARQueue) -> None:
        at = self._ready_at(q)
        if at is not None and at != q.heaped:
            q.heaped = at
            heapq.heappush(self._qheap, (at, q.key))

    # -- FrontierBase --------------------------------------------------------------------------
    def add(self, url: str, key: str, nh: UriMeta, *, front: bool = False) -> Entry | None:
        fp = fingerprint(key)
        if fp in self.seen:
            return None
        self.seen.add(fp)
        self._pending_seen.append(fp)
        return self._new(url, nh, front)

    def readd(self, url: str, nh: UriMeta) -> Entry | None:
        """A URI seen before but no longer in the frontier (a seed removed, then added again): back in,
        its schedule from the policy. None if it is in the frontier already. A seed removed while its fetch
        was out and added again before the fetch came back stays: no longer dropped, new to the policy."""
        id_ = self.by_url.get(url)
        if id_ is None:
            return self._new(url, nh, False)
        if id_ not in self._drop:
            return None
        self._drop.discard(id_)
        self.policy.add(url, self.clock())
        return self.entries[id_]

    def _new(self, url: str, nh: UriMeta, front: bool) -> Entry:
        entry = Entry(self._next_id, url, self.queue_of(url), nh)
        self._next_id += 1
        self._pending_insert.append((entry.id, entry.queue, url, nh.to_json(), 0))
        one_shot = self._is_one_shot(nh)
        at = 0.0 if (front or one_shot) else self.policy.add(url, self.clock())
        self._insert(entry, at, one_shot)
        self._dirty.add(entry.id)
        return entry

    def next_ready(self, now: float) -> Entry | None:
        if self.budget_per_s and now < self._budget_next:
            return None
        while self._qheap and self._qheap[0][0] <= now:
            at, key = heapq.heappop(self._qheap)
            q = self.arq.get(key)
            if q is None or q.heaped != at:
                continue
            q.heaped = -1.0
            ready = self._ready_at(q)
            if ready is None:
                continue
            if ready > now:
                self._consider_q(q)
                continue
            _, id_ = heapq.heappop(q.heap)
            entry = self.entries[id_]
            self.out.add(id_)
            q.busy += 1
            q.last_dequeue = now
            q.last_peeked = entry.url
            self.queued -= 1
            self.in_flight += 1
            self._consider_q(q)  # valence > 1: it may stay ready
            return entry
        return None

    def fetching(self, now: float) -> None:
        """The URI just issued is fetched: the next fetch waits ``1 / budget`` s (see the module docstring)."""
        if self.budget_per_s:
            self._budget_next = max(self._budget_next, now) + 1.0 / self.budget_per_s

    def next_wake(self) -> float | None:
        while self._qheap:
            at, key = self._qheap[0]
            q = self.arq.get(key)
            if q is not None and q.heaped == at:
                return max(at, self._budget_next) if self.budget_per_s else at
            heapq.heappop(self._qheap)
        return None

    def planned(self, entry: Entry, at: float) -> None:
        """The policy's time of next processing for an issued URI (set before :meth:`finished`)."""
        self._planned[entry.id] = at

    def _release(self, entry: Entry) -> ARQueue:
        q = self._q(entry.queue)
        q.busy = max(q.busy - 1, 0)
        self.out.discard(entry.id)
        self.in_flight = max(self.in_flight - 1, 0)
        return q

    def finished(
        self,
        entry: Entry,
        now: float,
        duration_s: float,
        snooze_until: float | None = None,
        crawl_delay_s: float | None = None,
    ) -> None:
        q = self._release(entry)
        q.spent += 1
        self.done += 1
        delay = self.politeness.delay(duration_s, crawl_delay_s)
        self._set_wake(q, self.politeness.wake(now, duration_s, snooze_until, crawl_delay_s), delay)
        self._settle(entry)
        self._consider_q(q)

    def unfetched(self, entry: Entry) -> None:
        """Issued but not fetched, to be tried again (a continuous job's URI whose host's DNS lookup failed or
        whose robots.txt did not answer): back at the time the policy planned (:meth:`planned`), with no
        politeness wait, as for a skip."""
        q = self._release(entry)
        q.spent += 1
        self._settle(entry)
        self._consider_q(q)

    def _settle(self, entry: Entry) -> None:
        """Back in its queue at the policy's time; a one-shot URI, a removed one or one never planned leaves."""
        at = self._planned.pop(entry.id, None)
        if entry.id in self.one_shot or entry.id in self._drop or at is None:
            self._forget(entry)
        else:
            self._requeue(entry, at)

    def skip(self, entry: Entry, now: float) -> None:
        """Disregarded without a fetch (robots, trap, quota): "stamped with a time of next processing
        as far into the future as possible" (002 §6.2), i.e. never again: it leaves the frontier."""
        q = self._release(entry)
        q.spent += 1
        self._planned.pop(entry.id, None)
        self._forget(entry)
        self._consider_q(q)

    def schedule(self, entry: Entry, when: float) -> None:
        """A retry: back in its queue with its time of next processing unchanged, the queue snoozed
        until ``when``."""
        q = self._release(entry)
        self._pending_retry.append((entry.retries, entry.id))
        self._planned.pop(entry.id, None)
        self._set_wake(q, when)
        if entry.id in self._drop:
            self._forget(entry)
        else:
            self._requeue(entry, self.next_at[entry.id])
        self._consider_q(q)

    def snooze(self, queue: str, until: float) -> None:
        q = self._q(queue)
        if self._set_wake(q, until):
            self._consider_q(q)

    def note_error(self, entry: Entry) -> None:
        self._q(entry.queue).errors += 1

    def _requeue(self, entry: Entry, at: float) -> None:
        q = self._q(entry.queue)
        self.next_at[entry.id] = at
        self.queued += 1
        heapq.heappush(q.heap, (at, entry.id))
        self._dirty.add(entry.id)
        self._dirty_hosts.add(host_of(entry.url))  # the policy's host, not the queue (domain scope, a port)

    def _forget(self, entry: Entry) -> None:
        """The URI leaves the frontier for good (done in the journal)."""
        id_ = entry.id
        if id_ not in self.entries:
            return
        if id_ not in self.one_shot and self.by_url.get(entry.url) == id_:
            self.policy.remove(entry.url)  # the policy plans only what the frontier holds
        del self.entries[id_]
        self.next_at.pop(id_, None)
        self.one_shot.discard(id_)
        self._drop.discard(id_)
        self.capture.pop(id_, None)
        if self.by_url.get(entry.url) == id_:
            del self.by_url[entry.url]
        self._q(entry.queue).size -= 1
        self._count(entry.nh, -1)
        self._pending_done.append(id_)

    def remove(self, url: str) -> bool:
        """Take a URI out (a seed removed from the definition): never visited again. False if absent."""
        id_ = self.by_url.get(url)
        if id_ is None:
            return False
        entry = self.entries[id_]
        if id_ in self.out:
            self._drop.add(id_)  # done when its fetch comes back
        else:
            self.queued -= 1
            self._forget(entry)
        return True

    def removed(self, entry: Entry) -> bool:
        """Whether ``entry`` left the frontier (a removed seed), or leaves it when its fetch in flight comes
        back: its visit must not be recorded (it would bring the URI back into the policy)."""
        return entry.id not in self.entries or entry.id in self._drop

    def reschedule(self, url: str, at: float) -> None:
        """The policy moved a URI's time of next processing (a replan)."""
        id_ = self.by_url.get(url)
        if id_ is None or id_ in self.out or self.next_at.get(id_) == at:
            return
        entry = self.entries[id_]
        self.next_at[id_] = at
        q = self._q(entry.queue)
        heapq.heappush(q.heap, (at, id_))
        self._moved.add(id_)
        self._consider_q(q)

    def entry_of(self, url: str) -> Entry | None:
        id_ = self.by_url.get(url)
        return None if id_ is None else self.entries.get(id_)

    def has_pending(self) -> bool:
        return True  # a continuous crawl never runs out of work: it ends when it is stopped

    # -- statistics ----------------------------------------------------------------------------
    def _state(self, q: ARQueue, now: float) -> str:
        if q.size <= 0:
            return "empty"
        if q.busy >= self.politeness.valence:
            return "busy"
        head = self._head(q)
        if head is None:
            return "busy" if q.busy else "empty"
        return "ready" if max(head[0], q.wake) <= now else "snoozed"

    def ar_queue_states(self, now: float) -> dict[str, int]:
        out = {"ready": 0, "snoozed": 0, "busy": 0, "empty": 0}
        for q in self.arq.values():
            out[self._state(q, now)] += 1
        return out

    def queue_states(self, now: float) -> dict[str, int]:
        s = self.ar_queue_states(now)
        return {
            "ready": s["ready"],
            "in-process": s["busy"],
            "snoozed": s["snoozed"],
            "active": s["ready"] + s["busy"] + s["snoozed"],
            "exhausted": s["empty"],
        }

    def queue_report(self, now: float) -> list[dict[str, Any]]:
        state_names = {"busy": "in-process", "empty": "exhausted"}
        out = []
        for q in self.arq.values():
            state = self._state(q, now)
            head = self._head(q)
            out.append(
                {
                    "queue": q.key,
                    "state": state_names.get(state, state),
                    "size": max(q.size, 0),
                    "enqueues": q.enqueues,
                    "spent": q.spent,
                    "errors": q.errors,
                    "last_dequeue": q.last_dequeue or None,
                    "wake_in_s": (max(head[0], q.wake) - now) if state == "snoozed" and head else None,
                    "last_peeked": q.last_peeked or None,
                    "last_queued": q.last_queued or None,
                }
            )
        return out

    def hosts(self, now: float) -> list[dict[str, Any]]:
        """Per host queue (at most :data:`MAX_HOSTS`, the soonest first): state, URIs, next issue time."""
        rows = []
        for q in self.arq.values():
            head = self._head(q)
            at = max(head[0], q.wake) if head else None
            rows.append(
                {
                    "host": q.key,
                    "state": self._state(q, now),
                    "uris": max(q.size, 0),
                    "next_at": iso(at),
                    "_at": at if at is not None else float("inf"),
                }
            )
        rows.sort(key=lambda r: (r["_at"], r["host"]))
        for r in rows:
            del r["_at"]
        return rows[:MAX_HOSTS]

    def due_next(self) -> list[tuple[Entry, float]]:
        """The :data:`MAX_DUE` revisitable URIs that come up first: by time of next processing, or by when their
        host's queue wakes if that is later (a host whose lookup failed sleeps until it may be tried again);
        among URIs due at the same moment (a sleeping host's), in the order their queue issues them.

        Every progress heartbeat (5 s) asks, in the reactor: a scan of every URI cost 0.13 s at 100,000 URIs
        and 0.8 s at 1,000,000 (docs/BENCHMARKS.md, "Continuous crawl at scale"). The queues' heaps are already
        ordered by time of next processing, and a queue's wake delays all its URIs alike, so the soonest URIs
        are a merge of each queue's first ones: a walk down each heap (stale items skipped), O(hosts + MAX_DUE
        log hosts) whatever the number of URIs."""
        entries, out, one_shot, next_at = self.entries, self.out, self.one_shot, self.next_at

        def waiting(heap: list[tuple[float, int]]) -> Iterator[tuple[float, int]]:
            """The queue's waiting URIs in its heap's order, without popping: a heap's smallest items are found
            by walking it from the root, the children of each item taken next."""
            if not heap:
                return
            walk = [(heap[0], 0)]
            while walk:
                (at, id_), i = heapq.heappop(walk)
                if id_ in entries and id_ not in out and id_ not in one_shot and next_at.get(id_) == at:
                    yield at, id_
                for child in (2 * i + 1, 2 * i + 2):
                    if child < len(heap):
                        heapq.heappush(walk, (heap[child], child))

        merge: list[tuple[float, float, int, Iterator[tuple[float, int]], float]] = []
        for q in self.arq.values():
            self._head(q)  # the stale items before its first waiting URI dropped, as issuing from it would
            items = waiting(q.heap)
            first = next(items, None)
            if first is not None:
                merge.append((max(first[0], q.wake), first[0], first[1], items, q.wake))
        heapq.heapify(merge)  # (due, at, id) is unique: the id tells any two apart before the iterator
        found: list[tuple[Entry, float]] = []
        listed: set[int] = set()
        while merge and len(found) < MAX_DUE:
            due, _, id_, items, wake = heapq.heappop(merge)
            if id_ not in listed:  # a URI pushed twice at the same time is one URI
                listed.add(id_)
                found.append((entries[id_], due))
            following = next(items, None)
            if following is not None:
                heapq.heappush(merge, (max(following[0], wake), following[0], following[1], items, wake))
        return found
