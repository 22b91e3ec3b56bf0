"""The frontier: per-host queues with politeness, valence and retries, persisted for resume.

Heritrix's model (seed 002, "frontier queue states"; glossary, "Queue States"): URIs wait in one
queue per politeness unit (host, or registrable domain), FIFO with prerequisites and retries at
the front. A queue is

* **ready** — it may emit a URI now;
* **in-process** (``busy``) — it has emitted as many URIs as its valence allows;
* **snoozed** — waiting for its time of next fetch (politeness delay, Retry-After, retry delay);
* **exhausted** — empty.

:meth:`Frontier.next_ready` emits the next URI of the ready queue that has waited longest (round
robin); :meth:`Frontier.finished` ends a fetch and snoozes the queue for the politeness delay;
:meth:`Frontier.schedule` puts a URI back to be processed at a given time (retries now; the
adaptive-revisit frontier will order whole queues by time of next processing through the same
call, so :class:`FrontierBase` is the interface that frontier implements).

Persistence: ``<spool>/<job>/state/frontier.sqlite`` journals every queued URI with its meta,
the seen-set (64-bit fingerprints of canonical keys) and key/value state (per-domain counters,
live-added traps, accumulated crawl time). Changes are batched in memory and committed by
:meth:`Frontier.checkpoint` (the crawl calls it every second and at the end), so after a kill -9
the next run reloads every URI not finished before the last checkpoint; nothing finished before
it is fetched again. SQLite's WAL journal makes the commit atomic.

Memory stays bounded: a queue keeps at most ``head_max`` URIs in memory (its head, plus any put
back at the front); the rest of its FIFO tail lives only in the journal (and the batch not yet
committed) and is read back ``head_max`` at a time as the head drains, as Heritrix keeps its
queues on disk. What remains per group (the JobSpec domain, for stop reasons and progress) is
counted as URIs come and go, never by walking the queues.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import sqlite3
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harvester.politeness import politeness_delay
from harvester.urimeta import UriMeta

#: A journalled URI's ``state`` column: waiting in its queue, or fetched (or given up on) for good.
QUEUED, DONE = 0, 1
_MISSING = object()
#: URIs a queue keeps in memory; the rest of its tail is read back from the journal as needed.
HEAD_MAX = 200
#: An empty queue's saved wake (politeness, Retry-After) is kept this long after it passed, then dropped (on
#: reopen, and by a checkpoint every WAKE_PRUNE_EVERY_S): a row per queue with URIs or woken in the last day,
#: not per queue ever. A queue with URIs keeps its row, however old: its delay (a Crawl-delay, a slow
#: server's) is what a restart waits (Frontier._load_wakes).
WAKE_KEEP_S = 86_400.0
WAKE_PRUNE_EVERY_S = 600.0


def fingerprint(key: str) -> int:
    """A signed 64-bit fingerprint of a canonical key (fits SQLite's INTEGER; 1 collision in ~10^19)."""
    return int.from_bytes(
        hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big", signed=True
    )


@dataclass(slots=True)
class Entry:
    """One queued URI: its id in the journal, the URL as found, how it was reached and retry count."""

    id: int
    url: str
    queue: str
    nh: UriMeta
    retries: int = 0


@dataclass(slots=True)
class HostQueue:
    key: str
    items: deque[Entry] = field(default_factory=deque)
    busy: int = 0
    wake: float = 0.0  # time of next fetch
    delay: float = 0.0  # the politeness delay after its last fetch (what a restart waits: Frontier._load_wakes)
    in_ready: bool = False
    retired: bool = False
    heaped: float = -1.0  # the wake time this queue is already on the snooze heap for
    spilled: int = 0  # URIs of the FIFO tail held only in the journal (ids above tail_id)
    tail_id: int = 0  # the highest id of the FIFO tail read into memory so far
    off_sequence: set[int] = field(default_factory=set)  # ids above tail_id that are in memory already
    # For frontier-report.txt (Heritrix's per-queue line); this run's figures, URIs reloaded from
    # the journal on resume counted as enqueued.
    enqueues: int = 0  # URIs ever queued here (totalEnqueues)
    spent: int = 0  # URIs disposed of, at Heritrix's default unit cost of 1 (totalExpenditure)
    errors: int = 0  # failed attempts (errorCount)
    last_dequeue: float = 0.0
    last_peeked: str = ""
    last_queued: str = ""


@dataclass(frozen=True, slots=True)
class Politeness:
    delay_factor: float = 0.0
    min_delay_ms: int = 0
    max_delay_ms: int = 0
    valence: int = 1
    crawl_delay_up_to_s: float = 0  # robots.txt Crawl-delay honoured up to this (0: ignored)

    def delay(self, duration_s: float, crawl_delay_s: float | None = None) -> float:
        return self.wake(0.0, duration_s, None, crawl_delay_s)

    def wake(self, now: float, duration_s: float, snooze_until: float | None, crawl_delay_s: float | None) -> float:
        """When a queue whose fetch ended at ``now`` may fetch again: after the politeness delay, or at a
        later ``snooze_until`` (Retry-After). Every frontier's :meth:`FrontierBase.finished` asks this."""
        wake = now + politeness_delay(
            duration_s, self.delay_factor, self.min_delay_ms, self.max_delay_ms, crawl_delay_s, self.crawl_delay_up_to_s
        )
        return wake if snooze_until is None else max(wake, snooze_until)


class FrontierBase(ABC):
    """What the crawl engine needs of a frontier (the adaptive-revisit frontier implements it too)."""

    @abstractmethod
    def add(self, url: str, key: str, nh: UriMeta, *, front: bool = False) -> Entry | None:
        """Queue a newly discovered URI unless its canonical ``key`` was seen; None if seen."""

    @abstractmethod
    def next_ready(self, now: float) -> Entry | None:
        """The next URI a ready queue may fetch now (its queue becomes busy), or None."""

    @abstractmethod
    def schedule(self, entry: Entry, when: float) -> None:
        """Put an emitted URI back in its queue, to be processed not before ``when``."""

    def fetching(self, now: float) -> None:  # noqa: B027 - no budget here: nothing to count
        """The URI :meth:`next_ready` gave is fetched now (not put back, skipped or waiting for a prerequisite):
        a frontier with a fetch budget counts it here, and only fetches."""

    @abstractmethod
    def finished(
        self,
        entry: Entry,
        now: float,
        duration_s: float,
        snooze_until: float | None = None,
        crawl_delay_s: float | None = None,
    ) -> None:
        """An emitted URI is done: release its queue after the politeness delay (at least the host's
        robots.txt ``crawl_delay_s``, up to the politeness's cap)."""

    @abstractmethod
    def next_wake(self) -> float | None:
        """When the earliest snoozed queue wakes (None: no snoozed queue)."""

    @abstractmethod
    def checkpoint(self) -> None:
        """Make everything so far durable."""


class Frontier(FrontierBase):
    """The breadth-first, per-queue politeness frontier of one job (see the module docstring)."""

    def __init__(
        self,
        db_path: str | Path | None,
        politeness: Politeness,
        queue_of: Callable[[str], str],
        group_of: Callable[[UriMeta], str] | None = None,
        head_max: int = HEAD_MAX,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.politeness = politeness
        #: The time of wakes set here and of a restart's waits: the ``now`` its callers pass comes from the same
        #: clock (the crawl engine's ``time.time()``; tests and the simulator give their own).
        self.clock = clock
        self.queue_of = queue_of
        self.group_of = group_of or (lambda nh: "")
        self.head_max = head_max if db_path is not None else 1 << 62  # no journal: all in memory
        self.remaining: dict[str, int] = {}
        self.queues: dict[str, HostQueue] = {}
        self._ready: deque[HostQueue] = deque()
        self._snoozed: list[tuple[float, str]] = []
        self.seen: set[int] = set()
        self.queued = 0
        self.in_flight = 0
        self.done = 0
        self._next_id = 1
        self.kv: dict[str, Any] = {}
        self._pending_insert: list[tuple[int, str, str, str, int]] = []
        self._pending_done: list[int] = []
        self._pending_retry: list[tuple[int, int]] = []
        self._pending_seen: list[int] = []
        self._pending_journal: list[tuple[str, str, str]] = []
        self._pending_journal_map: dict[tuple[str, str], Any] = {}
        self._dirty_kv: set[str] = set()
        self._dirty_wakes: dict[str, tuple[float, float]] = {}  # queue -> (wake, delay) since the last checkpoint
        self._wakes_pruned_at = 0.0
        self._prunable: dict[str, float] = {}  # queue -> journalled wake, for _prune_wakes to look at
        self.resumed = False
        self.db: sqlite3.Connection | None = None
        if db_path is not None:
            self._open(Path(db_path))

    # -- persistence ---------------------------------------------------------------------------
    def _open(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(f"""
            CREATE TABLE IF NOT EXISTS uris (id INTEGER PRIMARY KEY, queue TEXT NOT NULL, url TEXT NOT NULL,
                nh TEXT NOT NULL, retries INTEGER NOT NULL DEFAULT 0,
                state INTEGER NOT NULL DEFAULT {QUEUED});
            CREATE INDEX IF NOT EXISTS uris_state ON uris(state, id);
            CREATE INDEX IF NOT EXISTS uris_queue ON uris(queue, state, id);
            CREATE TABLE IF NOT EXISTS seen (fp INTEGER PRIMARY KEY) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS journal (kind TEXT NOT NULL, k TEXT NOT NULL, v TEXT NOT NULL,
                PRIMARY KEY (kind, k)) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS wakes (queue TEXT PRIMARY KEY, wake REAL NOT NULL, delay REAL NOT NULL)
                WITHOUT ROWID;
        """)
        if "delay" not in {row[1] for row in self.db.execute("PRAGMA table_info(wakes)")}:
            # a journal of the first version of this table (wakes only; never released, 2026-11-28)
            self.db.execute("ALTER TABLE wakes ADD COLUMN delay REAL NOT NULL DEFAULT 0")
        for k, v in self.db.execute("SELECT k, v FROM kv"):
            self.kv[k] = json.loads(v)
        self.seen = {fp for (fp,) in self.db.execute("SELECT fp FROM seen")}
        row = self.db.execute("SELECT COALESCE(MAX(id), 0) FROM uris").fetchone()
        self._next_id = int(row[0]) + 1
        self.done = int(self.db.execute(f"SELECT COUNT(*) FROM uris WHERE state={DONE}").fetchone()[0])
        self._load_queued()
        self._load_wakes()
        self.resumed = bool(self.seen)

    def _load_wakes(self) -> None:
        """After a stop, a crash or a kill -9, no queue fetches before its politeness wait is over (002 §6.2:
        a queue is snoozed until "the politeness delay" after its last fetch, whatever happened to the
        crawler meanwhile). The journal has each queue's wake (politeness, Retry-After, retry delay) and the
        politeness delay of its last fetch as of the last checkpoint; but a fetch may have gone out after it,
        up to the kill, and when that fetch ended is unknown. So every queue waits until its journalled wake
        or its delay from now, whichever is later (a queue never fetched: the minimum delay). Rows long past
        are dropped."""
        assert self.db is not None
        now = self.clock()
        journalled = {
            str(k): (float(w), float(d)) for k, w, d in self.db.execute("SELECT queue, wake, delay FROM wakes")
        }
        self._prunable = {k: wake for k, (wake, _) in journalled.items()}  # the whole table, once
        self.db.execute("BEGIN")
        for key in self._prune_wakes(self.db, now):
            del journalled[key]
        self.db.execute("COMMIT")
        least = self.politeness.delay(0.0)
        live = set(self._queue_keys())
        for key, (wake, delay) in journalled.items():
            if key not in live and wake > now:  # an empty queue: its wait holds for URIs found later
                self._restore_wake(key, wake, delay)
        for key in live:
            wake, delay = journalled.get(key, (0.0, least))
            delay = max(delay, least)  # a row written by schedule()/snooze() or the two-column table: 0
            self._restore_wake(key, max(wake, now + delay) if delay else wake, delay)  # no delay: no wait

    def _prune_wakes(self, db: sqlite3.Connection, now: float) -> list[str]:
        """Drop the journalled wakes long past of queues that hold no URI (see :data:`WAKE_KEEP_S`), in the
        caller's transaction; the queues dropped. Only the queues written since the last prune and the empty
        ones not yet old enough are looked at (on open, the whole table), not every row at each checkpoint:
        a checkpoint runs on the crawl's loop, and a continuous crawl keeps a row for every host."""
        done, gone = [], []
        for key, wake in self._prunable.items():
            if self._queue_holds(key):
                done.append(key)  # its row stays; written again after its next fetch, it is looked at again
            elif wake < now - WAKE_KEEP_S:
                db.execute("DELETE FROM wakes WHERE queue = ?", (key,))
                gone.append(key)
        for key in done + gone:
            del self._prunable[key]
        self._wakes_pruned_at = now
        return gone

    def _queue_keys(self) -> list[str]:
        return list(self.queues)

    def _queue_holds(self, key: str) -> bool:
        """Whether the queue has URIs (waiting, spilled to the journal or being fetched)."""
        q = self.queues.get(key)
        return q is not None and bool(q.items or q.spilled or q.busy)

    def _restore_wake(self, key: str, wake: float, delay: float) -> None:
        q = self._queue(key)
        q.delay = delay
        if wake > q.wake:
            q.wake = wake
            if not q.in_ready:  # a ready queue is re-checked by next_ready before it emits
                self._consider(q, self.clock())

    def _set_wake(self, q: HostQueue | Any, wake: float, delay: float | None = None) -> bool:
        """Move a queue's wake later (never earlier) and, after a fetch, record its politeness ``delay``;
        both journalled with the next checkpoint. True if the wake moved."""
        moved = wake > q.wake
        if moved:
            q.wake = wake
        if delay is not None:
            q.delay = delay
        if moved or delay is not None:
            self._dirty_wakes[q.key] = (q.wake, q.delay)
        return moved

    def _load_queued(self) -> None:
        """Put the journal's queued URIs back in their queues (a resume); the AR frontier orders its own."""
        assert self.db is not None
        for id_, queue, url, nh, retries in self.db.execute(
            f"SELECT id, queue, url, nh, retries FROM uris WHERE state={QUEUED} ORDER BY id"
        ):
            data = UriMeta.from_json(nh)
            self._count(data, 1)
            q = self._queue(queue)
            q.enqueues += 1
            q.last_queued = url
            if data.prerequisite:
                # Ahead of the URIs that wait for it, as it was queued (front): in id order a robots.txt asked
                # for again (its validity ended) would come after them, and they would wait for it for good.
                self._front_id(q, id_)
                self._enqueue(Entry(id_, url, queue, data, retries), front=True)
            elif q.spilled or len(q.items) >= self.head_max:
                q.spilled += 1
                self.queued += 1
            else:
                q.tail_id = id_
                self._enqueue(Entry(id_, url, queue, data, retries), front=False)

    def checkpoint(self) -> None:
        if self.db is None:
            self._pending_insert.clear()
            self._pending_done.clear()
            self._pending_retry.clear()
            self._pending_seen.clear()
            self._dirty_wakes.clear()
            return
        if not (
            self._pending_insert
            or self._pending_done
            or self._pending_retry
            or self._pending_seen
            or self._dirty_kv
            or self._pending_journal
            or self._dirty_wakes
            or self._extra_pending()
        ):
            return
        db = self.db
        db.execute("BEGIN")
        try:
            db.executemany(
                "INSERT OR REPLACE INTO uris (id, queue, url, nh, retries) VALUES (?,?,?,?,?)", self._pending_insert
            )
            db.executemany("INSERT OR IGNORE INTO seen (fp) VALUES (?)", ((f,) for f in self._pending_seen))
            db.executemany("UPDATE uris SET retries=? WHERE id=?", self._pending_retry)
            db.executemany(f"UPDATE uris SET state={DONE} WHERE id=?", ((i,) for i in self._pending_done))
            db.executemany("INSERT OR IGNORE INTO journal (kind, k, v) VALUES (?,?,?)", self._pending_journal)
            if self._dirty_kv:
                db.executemany(
                    "INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)",
                    ((k, json.dumps(self.kv[k])) for k in self._dirty_kv),
                )
            db.executemany(
                "INSERT OR REPLACE INTO wakes (queue, wake, delay) VALUES (?, ?, ?)",
                ((key, wake, delay) for key, (wake, delay) in self._dirty_wakes.items()),
            )
            self._prunable.update((key, wake) for key, (wake, _) in self._dirty_wakes.items())
            now = self.clock()
            if now >= self._wakes_pruned_at + WAKE_PRUNE_EVERY_S:
                self._prune_wakes(db, now)
            self._write_extra(db)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self._pending_insert.clear()
        self._pending_done.clear()
        self._pending_retry.clear()
        self._pending_seen.clear()
        self._pending_journal.clear()
        self._pending_journal_map.clear()
        self._dirty_kv.clear()
        self._dirty_wakes.clear()

    def _extra_pending(self) -> bool:
        """A subclass's own state waiting for the next checkpoint (the AR frontier's URI states)."""
        return False

    def _write_extra(self, db: sqlite3.Connection) -> None:
        """Write a subclass's own state inside the checkpoint's transaction (then clear what it wrote)."""

    def journal_add(self, kind: str, key: str, value: Any) -> None:
        """An append-only fact journalled with the next checkpoint (first value of a key wins):
        for state that grows with the crawl (the job's stored digests), unlike :meth:`set_state`."""
        if (kind, key) not in self._pending_journal_map:
            self._pending_journal_map[(kind, key)] = value
            self._pending_journal.append((kind, key, json.dumps(value)))

    def journal_get(self, kind: str, key: str) -> Any:
        """The first value journalled for ``key`` (committed or not), or None: a lookup in SQLite,
        so what the journal holds costs no memory."""
        value = self._pending_journal_map.get((kind, key))
        if value is not None or self.db is None:
            return value
        row = self.db.execute("SELECT v FROM journal WHERE kind=? AND k=?", (kind, key)).fetchone()
        return json.loads(row[0]) if row else None

    def journal_items(self, kind: str) -> Iterator[tuple[str, Any]]:
        """What was journalled under ``kind`` up to the last checkpoint."""
        if self.db is None:
            return
        for k, v in self.db.execute("SELECT k, v FROM journal WHERE kind=?", (kind,)):
            yield k, json.loads(v)

    def set_state(self, key: str, value: Any) -> None:
        """Key/value state journalled with the next checkpoint (counters, traps, crawl time)."""
        if self.kv.get(key, _MISSING) != value:
            self.kv[key] = value
            self._dirty_kv.add(key)

    def close(self) -> None:
        self.checkpoint()
        if self.db is not None:
            self.db.close()
            self.db = None

    # -- adding --------------------------------------------------------------------------------
    def mark_seen(self, key: str) -> None:
        """Remember a key without queueing it (a URI rejected and logged once)."""
        fp = fingerprint(key)
        if fp not in self.seen:
            self.seen.add(fp)
            self._pending_seen.append(fp)

    def was_seen(self, key: str) -> bool:
        return fingerprint(key) in self.seen

    def add(self, url: str, key: str, nh: UriMeta, *, front: bool = False) -> Entry | None:
        fp = fingerprint(key)
        if fp in self.seen:
            return None
        self.seen.add(fp)
        self._pending_seen.append(fp)
        entry = Entry(self._next_id, url, self.queue_of(url), nh)
        self._next_id += 1
        self._pending_insert.append((entry.id, entry.queue, url, nh.to_json(), QUEUED))
        self._count(nh, 1)
        q = self._queue(entry.queue)
        q.enqueues += 1
        q.last_queued = url
        if front:
            self._front_id(q, entry.id)
        elif q.spilled or len(q.items) >= self.head_max:
            q.spilled += 1  # only in the journal until the head drains
            self.queued += 1
            self._consider(q, self.clock())
            return entry
        else:
            q.tail_id = entry.id
        self._enqueue(entry, front=front)
        return entry

    @staticmethod
    def _front_id(q: HostQueue, id_: int) -> None:
        """Account for URI ``id_`` (the newest of ``q``) going to the front of ``q``: past the in-memory tail, or
        marked so that reading the spilled tail back from the journal skips it."""
        if q.spilled:
            q.off_sequence.add(id_)  # the refill must not read it back
        else:
            q.tail_id = id_

    def _count(self, nh: UriMeta, delta: int) -> None:
        group = self.group_of(nh)
        self.remaining[group] = self.remaining.get(group, 0) + delta

    def _refill(self, q: HostQueue) -> None:
        """Read the next ``head_max`` URIs of ``q``'s tail back from the journal (committed rows,
        then the batch not yet committed), skipping those already in memory."""
        assert self.db is not None
        want = min(self.head_max, q.spilled)
        rows = [
            r
            for r in self.db.execute(
                f"SELECT id, url, nh, retries FROM uris WHERE queue=? AND state={QUEUED} AND id>? ORDER BY id LIMIT ?",
                (q.key, q.tail_id, want + len(q.off_sequence)),
            )
            if r[0] not in q.off_sequence
        ]
        if len(rows) < want:
            last = rows[-1][0] if rows else q.tail_id
            rows += [
                (i, url, nh, retries)
                for i, queue, url, nh, retries in self._pending_insert
                if queue == q.key and i > last and i not in q.off_sequence
            ]
        taken = rows[:want]
        for id_, url, nh, retries in taken:
            q.items.append(Entry(id_, url, q.key, UriMeta.from_json(nh), retries))
            q.tail_id = id_
        q.spilled -= len(taken)
        q.off_sequence = {i for i in q.off_sequence if i > q.tail_id}

    def _queue(self, key: str) -> HostQueue:
        q = self.queues.get(key)
        if q is None:
            q = self.queues[key] = HostQueue(key)
        return q

    def _enqueue(self, entry: Entry, front: bool) -> None:
        q = self._queue(entry.queue)
        if front:
            q.items.appendleft(entry)
        else:
            q.items.append(entry)
        self.queued += 1
        self._consider(q, self.clock())

    def _consider(self, q: HostQueue, now: float) -> None:
        """Put ``q`` where it belongs: ready, snoozed (heap) or nowhere (busy/empty/retired)."""
        if q.in_ready or q.retired or not (q.items or q.spilled) or q.busy >= self.politeness.valence:
            return
        if q.wake > now:
            if q.heaped != q.wake:
                q.heaped = q.wake
                heapq.heappush(self._snoozed, (q.wake, q.key))
            return
        q.in_ready = True
        self._ready.append(q)

    def _wake_due(self, now: float) -> None:
        while self._snoozed and self._snoozed[0][0] <= now:
            wake, key = heapq.heappop(self._snoozed)
            q = self.queues.get(key)
            if q is not None and q.heaped == wake:
                q.heaped = -1.0
                self._consider(q, now)

    # -- emitting ------------------------------------------------------------------------------
    def next_ready(self, now: float) -> Entry | None:
        self._wake_due(now)
        while self._ready:
            q = self._ready.popleft()
            q.in_ready = False
            if q.retired or q.busy >= self.politeness.valence or q.wake > now:
                self._consider(q, now)
                continue
            if not q.items:
                if not q.spilled:
                    continue
                self._refill(q)
                if not q.items:  # the journal disagrees with the count: trust the journal
                    self.queued -= q.spilled
                    q.spilled = 0
                    continue
            entry = q.items.popleft()
            if not q.items and q.spilled:
                self._refill(q)
            q.last_dequeue = now
            q.last_peeked = entry.url
            q.busy += 1
            self.queued -= 1
            self.in_flight += 1
            self._count(entry.nh, -1)
            self._consider(q, now)  # a queue of valence > 1 may stay ready
            return entry
        return None

    def next_wake(self) -> float | None:
        while self._snoozed:
            wake, key = self._snoozed[0]
            q = self.queues.get(key)
            if q is not None and q.heaped == wake and (q.items or q.spilled) and not q.in_ready:
                return wake
            heapq.heappop(self._snoozed)
        return None

    def finished(
        self,
        entry: Entry,
        now: float,
        duration_s: float,
        snooze_until: float | None = None,
        crawl_delay_s: float | None = None,
    ) -> None:
        q = self._done(entry)
        delay = self.politeness.delay(duration_s, crawl_delay_s)
        self._set_wake(q, self.politeness.wake(now, duration_s, snooze_until, crawl_delay_s), delay)
        self._consider(q, now)

    def skip(self, entry: Entry, now: float) -> None:
        """An emitted URI disposed of without a fetch (robots, quota): no politeness wait."""
        self._consider(self._done(entry), now)

    def _done(self, entry: Entry) -> HostQueue:
        """Account an emitted URI as done, fetched or skipped alike; its queue, for the caller to reconsider."""
        q = self._queue(entry.queue)
        q.busy = max(q.busy - 1, 0)
        q.spent += 1
        self.in_flight = max(self.in_flight - 1, 0)
        self.done += 1
        self._pending_done.append(entry.id)
        return q

    def schedule(self, entry: Entry, when: float) -> None:
        """Back to the front of its queue (Heritrix: a retried URI goes back to its queue), the queue
        snoozed until ``when``. Used for retries; the caller has counted ``entry.retries``."""
        q = self._queue(entry.queue)
        q.busy = max(q.busy - 1, 0)
        self.in_flight = max(self.in_flight - 1, 0)
        self._pending_retry.append((entry.retries, entry.id))
        q.items.appendleft(entry)
        self.queued += 1
        self._count(entry.nh, 1)
        self._set_wake(q, when)
        self._consider(q, self.clock())

    def snooze(self, queue: str, until: float) -> None:
        """Hold a whole queue until ``until`` (Retry-After)."""
        q = self._queue(queue)
        if self._set_wake(q, until):
            if not q.in_ready:  # a ready queue is re-checked by next_ready before it emits
                self._consider(q, self.clock())

    def note_error(self, entry: Entry) -> None:
        """An attempt of ``entry`` failed (it is retried or given up on): its queue's errorCount."""
        self._queue(entry.queue).errors += 1

    # -- statistics ----------------------------------------------------------------------------
    def queue_report(self, now: float) -> list[dict[str, Any]]:
        """Every queue's state (as :meth:`queue_states` counts them) and figures, for Heritrix's
        per-queue frontier-report.txt (:func:`harvester.reports.frontier_report`)."""
        out = []
        for q in self.queues.values():
            size = len(q.items) + q.spilled
            if q.retired and size:
                state = "retired"
            elif not size:
                state = "in-process" if q.busy else "exhausted"
            elif q.busy >= self.politeness.valence:
                state = "in-process"
            elif q.wake > now:
                state = "snoozed"
            else:
                state = "ready"
            out.append(
                {
                    "queue": q.key,
                    "state": state,
                    "size": size,
                    "enqueues": q.enqueues,
                    "spent": q.spent,
                    "errors": q.errors,
                    "last_dequeue": q.last_dequeue or None,
                    "wake_in_s": q.wake - now if state == "snoozed" else None,
                    "last_peeked": q.last_peeked or None,
                    "last_queued": q.last_queued or None,
                }
            )
        return out

    def queue_states(self, now: float) -> dict[str, int]:
        ready = snoozed = busy = exhausted = 0
        for q in self.queues.values():
            if not (q.items or q.spilled):
                if q.busy:
                    busy += 1
                else:
                    exhausted += 1
            elif q.busy >= self.politeness.valence:
                busy += 1
            elif q.wake > now:
                snoozed += 1
            else:
                ready += 1
        return {
            "ready": ready,
            "in-process": busy,
            "snoozed": snoozed,
            "active": ready + busy + snoozed,
            "exhausted": exhausted,
        }

    def has_pending(self) -> bool:
        return self.queued > 0 or self.in_flight > 0

    def remaining_by_group(self) -> dict[str, int]:
        """Queued URIs (in memory or only in the journal) per ``group_of(nh)``."""
        return {k: v for k, v in self.remaining.items() if v > 0}
