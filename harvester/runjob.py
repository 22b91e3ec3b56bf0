"""The harvester's Celery task: ``harvester.run_job(spec_dict)`` on a ``harvest.<channel>`` queue.

What it does, in order:

1. Read the JobSpec (a :class:`~harvester.contracts.JobRef` message points at it: :mod:`harvester.specfetch`;
   one it cannot read is answered with a FAILED JobResult, ``error_category="jobspec-unreadable"``) and
   validate it. A :class:`ContractError` is answered with a FAILED JobResult
   (``error_category="invalid-jobspec"``, the JSON path and problem as detail); the task does
   not raise, so a bad message is not redelivered forever.
2. The fence: read the job's control queue (``control.job-<id>``) BEFORE anything else. A
   ``cancel`` there means the orchestrator ended the job for good (reaped, resubmitted, rejected):
   this message is stale (a redelivery, a duplicate publish), so it is dropped with one log line,
   without a spool directory, a started message or a result. The cancel is put back, so every later
   stale copy meets it too. Other controls found there (a stop sent while the job waited) are
   forwarded to the crawl child once it runs.
3. Take the job's spool lock (:mod:`harvester.joblock`): a second delivery of a job this spool is crawling
   right now (the orchestrator published it twice) returns without crawling.
   If ``<spool>/<job_id>/jobresult.json`` already says DONE (the message was redelivered after the
   job ended but before the ack), send that result again and stop: the orchestrator records a
   result idempotently.
4. Queue ``STARTED_TASK(job_id, hostname)`` and start the crawl child (:mod:`harvester.process`) on
   the job's spool directory; if that directory already holds frontier state (a crash, a
   redelivery, a resubmission), the child resumes it instead of starting over. A job that
   ``continues_job`` an earlier one takes over that job's spool when it has none of its own
   (:func:`take_over`: frontier and seen-set, budgets, report tallies, crawl.log, WARCs).
5. While the child runs: queue its Progress every ``PROGRESS_INTERVAL_S`` (``PROGRESS_TASK``),
   forward Control messages to the child within a second (acknowledging each once forwarded),
   queue ``CONTROL_APPLIED_TASK`` for each control the child says it applied, and (continuous jobs)
   ``RECORD_FILES_TASK`` for each WARC the child closed while running. A ``cancel`` stops
   the child (checkpointed, resumable by a resubmission's take-over) and no result is sent.
6. Queue the child's JobResult (``RESULT_TASK``) and return only once the outbox is delivered. If
   the child died without a result (killed, out of memory, a crash before it could write), the
   result is a FAILED one saying how it ended, with the tail of its log; its spool state stays, so
   resubmitting the job resumes it.

Every message to the ``events`` queue goes through the job's :class:`~harvester.outbox.Outbox`, and
the broker is reached through :class:`BrokerLink`, which never lets a broker outage reach the crawl:
it notes the failure and tries again with back-off (up to ``BROKER_RETRY_MAX_S``) while the child
goes on; the outbox is delivered in order once the broker is back. Messages go by task name only:
the harvester never imports the orchestrator.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from queue import Empty
from typing import Any

from celery.exceptions import Reject
from kombu.exceptions import KombuError

from harvester import delivery, shutdown
from harvester.contracts import (
    CONTROL_APPLIED_TASK,
    EVENTS_QUEUE,
    PROGRESS_TASK,
    RECORD_FILES_TASK,
    RESULT_TASK,
    RUN_JOB_TASK,
    STARTED_TASK,
    ContractError,
    FileResult,
    JobResult,
    JobSpec,
    control_queue,
    is_job_ref,
)
from harvester.defaults import BROKER_RETRY_MAX_S, PROGRESS_INTERVAL_S
from harvester.joblock import running_alone
from harvester.linereader import last_lines
from harvester.outbox import Outbox
from harvester.process import (
    ALIVE_FILE,
    APPLIED_FILE,
    ENGINE_LOG,
    EXIT_INTERRUPTED,
    JOBSPEC_FILE,
    PROGRESS_FILE,
    RESULT_FILE,
    failed_result,
    now_iso,
    start_child,
    write_json_atomic,
)
from harvester.restarts import RestartBudget
from harvester.runtime import child_restart_window_s, child_stall_s, spool_dir
from harvester.specfetch import SpecUnreadable, resolve
from harvester.takeover import take_over
from harvester.worker import app
from indexer import objectstore

logger = logging.getLogger(__name__)

#: How often the parent looks at the child, the control queue and the progress file.
POLL_INTERVAL_S = 0.5
#: How long a crawl child asked to stop (SIGTERM) has to checkpoint and exit before it is killed.
CHILD_TERM_GRACE_S = 30
#: A crawl child has at least this long to start (imports, opening its frontier) before StallWatch counts.
CHILD_STARTUP_S = 120
#: A crawl child that stalled (StallWatch) or was killed by a signal nobody here sent (the kernel's OOM killer,
#: an operator's kill -9) is started again from its checkpoint this many times within
#: ``NETHARVEST_CHILD_RESTART_WINDOW_S`` (an hour; after a stall at least two stall limits: restart_budget); the
#: next stall or kill within it fails the job
#: (``crawl-process-stalled`` / ``crawl-process-died``): what ended it would most likely end it again.
CHILD_RESTARTS = 1
#: How long a resubmitted job waits for the job it continues to stop being crawled on this machine.
TAKEOVER_WAIT_S = 300.0
#: How long a harvester that cannot read job specs (token, API unreachable) waits before handing a job's message
#: back to the queue for another harvester: no hot loop, and no job failed for this machine's fault.
SPEC_HANDBACK_S = 30.0


def _hostname(task: Any) -> str:
    return str(getattr(task.request, "hostname", None) or socket.gethostname())


def _broker_errors() -> tuple[type[BaseException], ...]:
    with app.connection() as conn:
        return (OSError, KombuError, *conn.connection_errors, *conn.channel_errors)


def publish(task: str, args: list[Any]) -> None:
    """One message to the ``events`` queue, or the broker's error within a second or two: the caller
    (an outbox flush) keeps the message and tries again later, so Celery's own retries are short."""
    app.send_task(
        task,
        args=args,
        queue=EVENTS_QUEUE,
        retry=True,
        retry_policy={"max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 0.5},
    )


class BrokerLink:
    """A job's line to the broker: its control queue in, its outbox out.

    No broker error ever leaves it: a failed operation closes the connection, logs once that the
    broker is gone, and makes every operation a no-op until the back-off (0.5 s, doubling to
    ``BROKER_RETRY_MAX_S``) has passed; the first operation that works again logs how long it was.
    So a broker outage of any length costs the crawl nothing but the delay of its messages.
    """

    def __init__(self, job_id: int) -> None:
        self.job_id = job_id
        self.errors = _broker_errors()
        self._conn: Any = None
        self._queue: Any = None
        self._delay = 0.0
        self._retry_at = 0.0
        self._down_since: float | None = None

    def attempt(self, operation: Callable[[], Any]) -> bool:
        """Run ``operation`` unless the link is waiting out a back-off; False if it did not run or failed."""
        if time.monotonic() < self._retry_at:
            return False
        try:
            operation()
        except self.errors as exc:
            self._failed(exc)
            return False
        if self._down_since is not None:
            logger.warning("job %s: the broker is back after %.0f s", self.job_id, time.monotonic() - self._down_since)
            self._down_since = None
        self._delay = 0.0
        return True

    def until_done(self, operation: Callable[[], Any]) -> None:
        """Run ``operation`` until it works, however long the broker is away."""
        while not self.attempt(operation):
            time.sleep(max(self._retry_at - time.monotonic(), 0.05))

    def _failed(self, exc: BaseException) -> None:
        if self._down_since is None:
            self._down_since = time.monotonic()
            logger.warning(
                "job %s: the broker is unreachable (%s); the crawl goes on, its messages wait in the outbox",
                self.job_id,
                exc,
            )
        self._delay = min(max(self._delay * 2, 0.5), BROKER_RETRY_MAX_S)
        self._retry_at = time.monotonic() + self._delay
        self.close()

    def receive(self) -> list[Any] | None:
        """The Control messages waiting in the job's queue (unacknowledged), or None if the broker is away."""
        got: list[Any] = []

        def read() -> None:
            if self._queue is None:
                self._conn = app.connection_for_write()
                self._conn.ensure_connection(max_retries=1)
                self._queue = self._conn.SimpleQueue(control_queue(self.job_id))
            while True:
                try:
                    got.append(self._queue.get(block=False))
                except Empty:
                    return

        return got if self.attempt(read) else None

    def close(self) -> None:
        for thing in (self._queue, self._conn):
            if thing is not None:
                try:
                    thing.close()
                except Exception:  # a dead connection may fail to close in many ways
                    pass
        self._queue = self._conn = None


def _payload(message: Any) -> Any:
    payload = message.payload
    if isinstance(payload, (bytes, str)):
        try:
            payload = json.loads(payload)
        except ValueError:
            payload = None
    return payload


def _is_cancel(payload: Any) -> bool:
    return isinstance(payload, dict) and payload.get("action") == "cancel"


def fence(link: BrokerLink, requeue_others: bool = False) -> tuple[bool, list[Any]]:
    """Read the control queue before the job starts: (cancelled?, the other controls waiting).

    A cancel is put back (requeued) so it fences every later stale copy of the job's message too; with
    ``requeue_others`` (a look before the job's spec is read) the other controls are put back as well.
    """
    messages = link.receive()
    while messages is None:  # the message just came from the broker: it will be back soon
        time.sleep(POLL_INTERVAL_S)
        messages = link.receive()
    cancelled = False
    pending = []
    for message in messages:
        if _is_cancel(_payload(message)):
            cancelled = True
            link.attempt(message.requeue)
        elif requeue_others:
            link.attempt(message.requeue)
        else:
            pending.append(message)
    return cancelled, pending


#: A line that begins a record of the crawl's engine log (``2026-11-29 09:55:34 [scrapy.core.engine] INFO: ...``)
#: or a Python traceback.
_RECORD_START = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d|Traceback ")
#: A line of a traceback's body: a frame, or the exception it ends with (``MemoryError: ...``).
_TRACEBACK_BODY = re.compile(r'  File "|[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b')
#: How far back a traceback the tail begins inside is looked for, in lines and bytes of the log.
_TRACEBACK_LINES, _TAIL_MAX_BYTES = 200, 1 << 20


def _log_tail(job_dir: Path, lines: int = 20) -> str:
    """The end of the crawl's engine log for a failed job's detail, from the first whole record in its last
    ``lines`` lines: cut at a fixed count it began inside Scrapy's settings dump (``'RETRY_TIMES': 30,``),
    which reads as garbage on the job's page. When the cut falls inside a traceback, the tail starts at the
    traceback instead: its last line is the failure's reason. Only the log's end is read (a continuous
    crawl's log grows for months)."""
    try:
        every = last_lines(job_dir / ENGINE_LOG, lines + _TRACEBACK_LINES, _TAIL_MAX_BYTES)
    except OSError:
        return ""
    start = max(0, len(every) - lines)
    tail = every[start:]
    first = next((i for i, line in enumerate(tail) if _RECORD_START.match(line)), len(tail))
    if any(_TRACEBACK_BODY.match(line) for line in tail[:first]):
        back = range(start - 1, -1, -1)
        begins = next((i for i in back if every[i].startswith("Traceback ")), None)
        return "\n".join(tail if begins is None else every[begins:])
    return "\n".join(tail[first:] if first < len(tail) else tail)


def _how_it_ended(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = str(-returncode)
        return f"the crawl process was killed by {name}"
    if returncode == EXIT_INTERRUPTED:
        return "the crawl process was interrupted (state kept: resubmit to resume)"
    return f"the crawl process exited with status {returncode} without a result"


class TakeoverBusy(Exception):
    """The job to be taken over is still being crawled on this machine."""


@contextmanager
def _old_job_stopped(old_dir: Path, spec: JobSpec) -> Iterator[None]:
    """Hold the old job's spool lock (harvester.joblock) for the take-over, waiting up to
    ``TAKEOVER_WAIT_S`` for it: a job the orchestrator reaped may still be crawled here by a worker that was
    only cut off from the broker, and its files must not move under it. Its ``cancel`` fence makes it
    checkpoint and stop as soon as it hears the broker again."""
    deadline = time.monotonic() + TAKEOVER_WAIT_S
    said = False
    while True:
        with running_alone(old_dir) as alone:
            if alone:
                yield
                return
        if time.monotonic() >= deadline:
            raise TakeoverBusy(
                f"job {old_dir.name}, which job {spec.job_id} continues, is still being crawled "
                f"on this machine after {TAKEOVER_WAIT_S:.0f} s: stop it (its worker), then resubmit"
            )
        if not said:
            logger.warning(
                "job %s: job %s is still being crawled here; waiting for it to stop before taking it over",
                spec.job_id,
                old_dir.name,
            )
            said = True
        time.sleep(1.0)


def prepare_job_dir(spec: JobSpec, root: Path | None = None) -> Path:
    """``<spool>/<job_id>`` with the JobSpec in it; seeded from ``continues_job``'s spool if any."""
    root = root or spool_dir()
    job_dir = root / str(spec.job_id)
    state = job_dir / "state" / "frontier.sqlite"
    if spec.continues_job is not None and not state.exists():
        old_dir = root / str(spec.continues_job)
        if not old_dir.is_dir():
            take_over(old_dir, job_dir, spec)  # not on this machine: it says so and starts over
        else:
            with _old_job_stopped(old_dir, spec):
                take_over(old_dir, job_dir, spec)
    write_json_atomic(job_dir / JOBSPEC_FILE, spec.to_dict())
    return job_dir


class _ProgressRelay:
    """The child's progress file → the outbox (coalesced) every ``PROGRESS_INTERVAL_S``.

    Sent on every interval while the child lives, even when the child has not rewritten the file (its
    reactor busy with a long checkpoint, say): the heartbeat says this worker is alive, and the reaper
    fails a job after a minute without one."""

    def __init__(self, job_dir: Path, outbox: Outbox) -> None:
        self.path = job_dir / PROGRESS_FILE
        self.outbox = outbox
        self.last_sent = 0.0

    def poll(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last_sent < PROGRESS_INTERVAL_S:
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        self.last_sent = now
        self.outbox.put(PROGRESS_TASK, [data], coalesce=True)


class _LinesRelay:
    """Reads the whole JSON lines a child appends to a file in its job directory, from where it left off.

    A restarted parent reads the file from its start again: what it relays must be idempotent at the
    orchestrator (it is: acknowledgements keep the first time, files are registered once by name)."""

    def __init__(self, path: Path, job_id: int, outbox: Outbox) -> None:
        self.path = path
        self.job_id = job_id
        self.outbox = outbox
        self.offset = 0

    def new_lines(self) -> list[Any]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return []
        end = data.rfind(b"\n") + 1  # a line still being written waits for the next poll
        self.offset += end
        out = []
        for line in data[:end].splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
        return out


class _AppliedRelay(_LinesRelay):
    """The child's ``controls-applied.jsonl`` → ``CONTROL_APPLIED_TASK`` messages in the outbox."""

    def __init__(self, job_dir: Path, job_id: int, outbox: Outbox) -> None:
        super().__init__(job_dir / APPLIED_FILE, job_id, outbox)

    def poll(self) -> None:
        for entry in self.new_lines():
            try:
                control_id, at = int(entry["id"]), str(entry["at"])
            except (KeyError, TypeError, ValueError):
                continue
            if control_id > 0:
                self.outbox.put(CONTROL_APPLIED_TASK, [self.job_id, control_id, at])


class Heartbeat:
    """The progress heartbeat while the parent is busy with something else than its loop: uploading (a
    continuous job's closed WARCs mid-run, the job's files at its end) or waiting out a store outage.

    Why: the reaper fails a job after ``NETHARVEST_HEARTBEAT_TIMEOUT_S`` without a heartbeat, and refuses its
    result then; gigabytes to upload take longer than that (issue 15 review). Passed as the ``tick`` of
    indexer.objectstore.put (called per part) and harvester.delivery.wait; it does its work at most every
    ``PROGRESS_INTERVAL_S``: the progress relay and an outbox flush, as the supervise loop does."""

    def __init__(self, relay: _ProgressRelay, link: BrokerLink, outbox: Outbox) -> None:
        self.relay = relay
        self.link = link
        self.outbox = outbox
        self.last = time.monotonic()

    def __call__(self) -> None:
        now = time.monotonic()
        if now - self.last < PROGRESS_INTERVAL_S:
            return
        self.last = now
        self.relay.poll(force=True)
        self.link.attempt(lambda: self.outbox.flush(publish))


class _FilesRelay(_LinesRelay):
    """A continuous job's ``files-closed.jsonl`` (WARCs it closed while running) → ``RECORD_FILES_TASK``.

    With a delivery target each file is reported once it is in the store. A file the store cannot take now (an
    outage) waits, alone, for its next try (backing off to ``delivery.RETRY_MAX_S``); the others are reported
    meanwhile. A file that can never be delivered (objectstore.permanent) is reported with its spool path
    after one error line, as harvester.delivery does at the job's end."""

    def __init__(self, job_dir: Path, job_id: int, outbox: Outbox) -> None:
        from harvester.continuous import FILES_CLOSED

        super().__init__(job_dir / FILES_CLOSED, job_id, outbox)
        self.job_dir = job_dir
        self.undelivered: list[Any] = []
        self.delay = 0.0
        self.retry_at = 0.0

    def poll(self, tick: objectstore.Tick = objectstore.no_tick) -> None:
        files = self.undelivered + self.new_lines()
        self.undelivered = []
        target = delivery.target()
        if target is not None and files:
            files = self._deliver(files, target, tick)
        if files:
            self.outbox.put(RECORD_FILES_TASK, [self.job_id, files])

    def _deliver(self, files: list[Any], target: str, tick: objectstore.Tick) -> list[Any]:
        if time.monotonic() < self.retry_at:
            self.undelivered = files
            return []
        out = []
        for entry in files:
            try:
                f = FileResult.from_dict(entry, "file")
            except ContractError as exc:
                logger.error("job %s: a bad line in files-closed.jsonl (%s): skipped", self.job_id, exc)
                continue
            try:
                out.append(dataclasses.asdict(delivery.deliver_file(f, self.job_dir, target, tick)))
            except Exception as exc:
                if objectstore.permanent(exc):
                    logger.error("job %s: %s not delivered, for good: %s", self.job_id, f.name, exc)
                    out.append(entry)
                    continue
                self.undelivered.append(entry)
                self.delay = min(max(self.delay * 2, 0.5), delivery.RETRY_MAX_S)
                logger.warning(
                    "job %s: delivering %s failed (%s); retrying in %.1f s", self.job_id, f.name, exc, self.delay
                )
        if not self.undelivered:
            self.delay = 0.0
        self.retry_at = time.monotonic() + self.delay
        return out


def _forward(message: Any, child: subprocess.Popen[bytes], job_id: int, link: BrokerLink) -> bool:
    """Hand one Control message to the child; True if it was a cancel."""
    payload = _payload(message)
    if not (isinstance(payload, dict) and payload.get("job_id") == job_id):
        logger.warning("job %s: dropping a control message for someone else: %r", job_id, payload)
        link.attempt(message.ack)
        return False
    try:
        assert child.stdin is not None
        child.stdin.write((json.dumps(payload) + "\n").encode())
        child.stdin.flush()
    except (BrokenPipeError, OSError):
        link.attempt(message.requeue)
        return False
    if _is_cancel(payload):
        link.attempt(message.requeue)  # the fence stays for any stale copy of this job's message
        return True
    link.attempt(message.ack)
    return False


class StallWatch:
    """Says when a crawl child has stopped showing signs of life: its ``alive`` file (touched by a timer in
    its reactor every ``ALIVE_INTERVAL_S``, through checkpoints, pauses and idle waits alike) untouched
    for ``limit_s``. Counted from the child's start, so one stuck before its first touch is seen too.

    The heartbeat relay (``_ProgressRelay``) keeps telling the orchestrator that this *worker* lives; this
    is what tells the worker that its *child* does not, so a stuck reactor (a bug, a hostile page, a hung
    file system) never holds a job in STARTED for ever."""

    def __init__(self, job_dir: Path, limit_s: float) -> None:
        self.path = job_dir / ALIVE_FILE
        self.limit_s = limit_s
        self.restart()

    def restart(self) -> None:
        self.since = time.time()

    def quiet_for(self) -> float | None:
        """Seconds without a sign of life when that is more than the limit, else None. Until the child's
        first write (it imports Scrapy, opens its frontier) the limit is at least ``CHILD_STARTUP_S``."""
        try:
            written = self.path.stat().st_mtime
        except OSError:
            written = 0.0
        started = written > self.since
        quiet = time.time() - (written if started else self.since)
        return quiet if quiet > (self.limit_s if started else max(self.limit_s, CHILD_STARTUP_S)) else None


def _killed_by_a_signal(child: subprocess.Popen[bytes], job_dir: Path) -> bool:
    """The child ended by a signal without a result (we send none but through :func:`_end_child`, whose callers
    decide themselves): its checkpoint is whole (committed in one SQLite transaction), so it can go on."""
    return child.returncode is not None and child.returncode < 0 and not (job_dir / RESULT_FILE).exists()


def _end_child(child: subprocess.Popen[bytes], why: str) -> None:
    """SIGTERM (the child checkpoints and exits, resumable), SIGCONT in case it was stopped, SIGKILL after
    ``CHILD_TERM_GRACE_S`` if its reactor is too stuck to take the signal."""
    if child.poll() is not None:
        return
    logger.info("ending crawl process %s: %s", child.pid, why)
    child.terminate()
    try:
        child.send_signal(signal.SIGCONT)
        child.wait(CHILD_TERM_GRACE_S)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def restart_budget() -> RestartBudget:
    """The worker's budget of crawl-child restarts: :data:`CHILD_RESTARTS` in ``NETHARVEST_CHILD_RESTART_WINDOW_S``.

    Until 2026-11-28 it was one restart for the job's whole life: right for a crash loop, wrong for a continuous
    crawl of months, which a second OOM kill a week after the first left FAILED until a curator resubmitted it (an
    operator's run killed one twice, 40 s apart, and it failed; that stays so). After a stall the window is at
    least two stall limits (``NETHARVEST_CHILD_STALL_S``, at least :data:`CHILD_STARTUP_S`, after which StallWatch
    ends a child stuck from its start): a child stuck again at every start is ended that long after each
    restart, and a shorter window would restart it for ever, the job never failing."""
    window = child_restart_window_s()
    stall_window = max(window, 2 * max(child_stall_s(), CHILD_STARTUP_S))
    return RestartBudget(window, CHILD_RESTARTS, stall_window_s=stall_window)


def _close_stdin(child: subprocess.Popen[bytes]) -> None:
    if child.stdin is not None:
        try:
            child.stdin.close()
        except OSError:
            pass


def supervise(
    spec: JobSpec, job_dir: Path, link: BrokerLink, outbox: Outbox, waiting: list[Any] | None = None
) -> JobResult | None:
    """Run the child to its end, relaying progress and controls; the JobResult to send, or None when the
    orchestrator cancelled the job meanwhile (the child checkpointed: a resubmission takes it over)."""
    child = start_child(job_dir)
    relay = _ProgressRelay(job_dir, outbox)
    applied = _AppliedRelay(job_dir, spec.job_id, outbox)
    closed = _FilesRelay(job_dir, spec.job_id, outbox)
    heartbeat = Heartbeat(relay, link, outbox)
    watch = StallWatch(job_dir, child_stall_s())
    started = now_iso()
    cancelled = False
    restarts = restart_budget()
    stalled: JobResult | None = None
    try:
        messages = list(waiting or ())
        while child.poll() is None or (not cancelled and restarts.allows() and _killed_by_a_signal(child, job_dir)):
            if child.returncode is not None:
                restarts.spend()
                logger.warning(
                    "job %s: %s: starting it again from its checkpoint",
                    spec.job_id,
                    _how_it_ended(child.returncode),
                )
                child = start_child(job_dir)
                watch.restart()
                messages = []
                continue
            for message in messages:
                if child.poll() is None and not cancelled:
                    cancelled = _forward(message, child, spec.job_id, link)
            relay.poll()
            applied.poll()
            closed.poll(heartbeat)
            link.attempt(lambda: outbox.flush(publish))
            quiet = watch.quiet_for()
            if quiet is not None:
                _end_child(child, why=f"no progress for {quiet:.0f} s")
                _close_stdin(child)
                if cancelled:  # the orchestrator has ended this job: never start it again
                    break
                if not restarts.allows(stalled=True):
                    stalled = failed_result(
                        spec.job_id,
                        "crawl-process-stalled",
                        f"the crawl process made no progress for {quiet:.0f} s, again after "
                        f"a restart from its checkpoint; killed\n{_log_tail(job_dir)}".strip(),
                        started,
                    )
                    break
                restarts.spend()
                logger.warning(
                    "job %s: the crawl process made no progress for %.0f s: killed, starting it again "
                    "from its checkpoint",
                    spec.job_id,
                    quiet,
                )
                child = start_child(job_dir)
                watch.restart()
                messages = []
                continue
            time.sleep(POLL_INTERVAL_S)
            if not cancelled and child.poll() is None and shutdown.requested(spool_dir()):
                _end_child(child, why="the worker is stopping")
                raise shutdown.WorkerStopping(f"job {spec.job_id}")
            messages = [] if cancelled else (link.receive() or [])
        if cancelled:
            try:
                child.wait(30)
            except subprocess.TimeoutExpired:
                child.kill()
    except BaseException:
        # The worker itself is going away (warm shutdown, an error here): let the child checkpoint.
        _end_child(child, why="the worker is stopping")
        raise
    finally:
        _close_stdin(child)
    relay.poll(force=True)
    applied.poll()
    closed.poll(heartbeat)
    if stalled is not None:
        return stalled
    result_file = job_dir / RESULT_FILE
    if cancelled and not (child.returncode == 0 and result_file.exists()):
        return None
    if child.returncode == 0 and result_file.exists():
        try:
            return JobResult.from_dict(json.loads(result_file.read_text(encoding="utf-8")))
        except (ValueError, ContractError) as exc:
            return failed_result(spec.job_id, "bad-result", f"{result_file}: {exc}", started)
    if result_file.exists():  # the child failed but said why
        try:
            result = JobResult.from_dict(json.loads(result_file.read_text(encoding="utf-8")))
            result_file.unlink()  # a FAILED result must not stop a later resume
            return result
        except (ValueError, ContractError, OSError):
            pass
    detail = _how_it_ended(child.returncode)
    tail = _log_tail(job_dir)
    return failed_result(spec.job_id, "crawl-process-died", f"{detail}\n{tail}".strip(), started)


def _deliver(link: BrokerLink, outbox: Outbox) -> None:
    """Return only when every message of the outbox is with the broker (the job's own message is then
    acknowledged; a worker that dies before leaves it to be redelivered, and the outbox is sent again)."""
    link.until_done(lambda: outbox.flush(publish))


def _refuse(spec_dict: Any, category: str, exc: Exception) -> dict[str, Any]:
    """A job message that cannot be run: a FAILED result saying why (the intake takes it only for a job no
    harvester has started), not raised, so a bad message is not redelivered for ever."""
    job_id = spec_dict.get("job_id") if isinstance(spec_dict, dict) else None
    result = failed_result(
        job_id if isinstance(job_id, int) and not isinstance(job_id, bool) else 0, category, str(exc)
    )
    logger.error("rejected the job message: %s", exc)
    BrokerLink(result.job_id).until_done(lambda: publish(RESULT_TASK, [result.to_dict()]))
    return result.to_dict()


@app.task(name=RUN_JOB_TASK, bind=True, acks_late=True)
def run_job(self: Any, spec_dict: Any) -> dict[str, Any]:
    """Crawl one JobSpec on this machine; see the module docstring."""
    hostname = _hostname(self)
    if shutdown.requested(spool_dir()):  # a message taken while this worker stops (another pool process)
        raise Reject("the worker is stopping: the job is handed back", requeue=True)
    if is_job_ref(spec_dict) and isinstance(spec_dict.get("job_id"), int):
        # A reference costs a request to read: a stale copy of a fenced job is dropped before it.
        early = BrokerLink(spec_dict["job_id"])
        try:
            cancelled, _ = fence(early, requeue_others=True)
        finally:
            early.close()
        if cancelled:
            logger.warning(
                "job %s: cancelled by the orchestrator: this stale message is dropped, its spec not read",
                spec_dict["job_id"],
            )
            return {"job_id": spec_dict["job_id"], "status": "CANCELLED"}
    try:
        spec = JobSpec.from_dict(resolve(spec_dict))  # a JobRef's spec is read from the orchestrator first
    except SpecUnreadable as exc:
        if exc.this_harvester:
            # This machine cannot read specs (no or a wrong token, the API out of reach): the job is not at
            # fault. Say so, wait, and hand the message back for a harvester that can.
            logger.error(
                "cannot read the job's spec here, handing the message back in %.0f s: %s", SPEC_HANDBACK_S, exc
            )
            time.sleep(SPEC_HANDBACK_S)
            raise Reject(str(exc), requeue=True) from None
        return _refuse(spec_dict, "jobspec-unreadable", exc)
    except ContractError as exc:
        return _refuse(spec_dict, "invalid-jobspec", exc)
    link = BrokerLink(spec.job_id)
    try:
        cancelled, waiting = fence(link)
        if cancelled:
            logger.warning(
                "job %s: cancelled by the orchestrator (reaped, resubmitted or rejected): this stale "
                "message is dropped, nothing crawled",
                spec.job_id,
            )
            return {"job_id": spec.job_id, "status": "CANCELLED"}
        with running_alone(spool_dir() / str(spec.job_id)) as alone:
            if not alone:  # a duplicate message of a job this spool is crawling right now
                logger.warning(
                    "job %s is already being crawled from this spool: this message is a duplicate, not crawled again",
                    spec.job_id,
                )
                return {"job_id": spec.job_id, "duplicate": True}
            return _run(spec, hostname, link, waiting)
    finally:
        link.close()


def _run(spec: JobSpec, hostname: str, link: BrokerLink, waiting: list[Any]) -> dict[str, Any]:
    job_dir = spool_dir() / str(spec.job_id)
    if delivery.target() is not None:
        delivery.sweep_receipts(spool_dir())  # spool copies the chain has stored since the last job
    result_file = job_dir / RESULT_FILE
    if result_file.exists():
        try:
            previous = JobResult.from_dict(json.loads(result_file.read_text(encoding="utf-8")))
            if previous.status == "DONE":
                logger.info("job %s already done here: sending its result again", spec.job_id)
                outbox = Outbox(job_dir)
                heartbeat = Heartbeat(_ProgressRelay(job_dir, outbox), link, outbox)
                previous = delivery.deliver_result(previous, job_dir, tick=heartbeat)
                outbox.put(RESULT_TASK, [previous.to_dict()])
                _deliver(link, outbox)
                return previous.to_dict()
        except (ValueError, ContractError):
            pass
        result_file.unlink(missing_ok=True)
    try:
        job_dir = prepare_job_dir(spec)
    except TakeoverBusy as exc:
        logger.error("job %s: %s", spec.job_id, exc)
        busy = failed_result(spec.job_id, "takeover-busy", str(exc))
        outbox = Outbox(job_dir)
        outbox.put(RESULT_TASK, [busy.to_dict()])
        _deliver(link, outbox)
        return busy.to_dict()
    outbox = Outbox(job_dir)
    outbox.put(STARTED_TASK, [spec.job_id, hostname])
    logger.info("job %s: crawling in %s", spec.job_id, job_dir)
    try:
        result = supervise(spec, job_dir, link, outbox, waiting)
    except shutdown.WorkerStopping:
        logger.warning(
            "job %s: the worker is stopping: crawl ended with a checkpoint, the job handed back to carry on from it",
            spec.job_id,
        )
        # The progress and files relayed so far, if the broker takes them now; else they wait in the spool's
        # outbox for the job's next run: a shutdown never waits on a broker that may be stopping too.
        link.attempt(lambda: outbox.flush(publish))
        raise Reject(f"job {spec.job_id}: the worker is stopping", requeue=True) from None
    if result is None:
        logger.warning(
            "job %s: cancelled by the orchestrator while crawling; stopped, spool kept for a resubmission", spec.job_id
        )
        _deliver(link, outbox)
        return {"job_id": spec.job_id, "status": "CANCELLED"}
    heartbeat = Heartbeat(_ProgressRelay(job_dir, outbox), link, outbox)
    result = delivery.deliver_result(result, job_dir, tick=heartbeat)  # no delivery target: unchanged
    outbox.put(RESULT_TASK, [result.to_dict()])
    _deliver(link, outbox)
    logger.info("job %s: %s", spec.job_id, result.status)
    return result.to_dict()
