"""The harvester's Celery task: ``harvester.run_job(spec_dict)`` on a ``harvest.<channel>`` queue.

What it does, in order:

1. Validate the JobSpec. A :class:`ContractError` is answered with a FAILED JobResult
   (``error_category="invalid-jobspec"``, the JSON path and problem as detail); the task does
   not raise, so a bad message is not redelivered forever.
2. Take the job's spool lock (:mod:`harvester.joblock`): a second delivery of a job this spool is crawling
   right now (the orchestrator published it twice) returns without crawling.
   If ``<spool>/<job_id>/jobresult.json`` already says DONE (the message was redelivered after the
   job ended but before the ack), send that result again and stop: the orchestrator records a
   result idempotently.
3. Send ``STARTED_TASK(job_id, hostname)`` and start the crawl child (:mod:`harvester.process`) on
   the job's spool directory; if that directory already holds frontier state (a crash, a
   redelivery, a resubmission), the child resumes it instead of starting over. A job that
   ``continues_job`` an earlier one takes over that job's spool when it has none of its own
   (:func:`take_over`: frontier and seen-set, budgets, report tallies, crawl.log, WARCs).
4. While the child runs: relay its Progress every ``PROGRESS_INTERVAL_S`` to ``PROGRESS_TASK`` and
   forward Control messages from the job's control queue (``control.job-<id>``, a kombu
   SimpleQueue on the same broker; JSON Control dicts) to the child within a second, acknowledging
   each once forwarded.
5. Send the child's JobResult (``RESULT_TASK``). If the child died without one (killed, out of
   memory, a crash before it could write), send a FAILED result saying how it ended, with the tail
   of its log; its spool state stays, so resubmitting the job resumes it.

All messages go to the ``events`` queue by task name only: the harvester never imports the
orchestrator.
"""

from __future__ import annotations

import json
import logging
import signal
import socket
import subprocess
import time
from pathlib import Path
from queue import Empty
from typing import Any

from harvester.contracts import (
    EVENTS_QUEUE,
    PROGRESS_TASK,
    RESULT_TASK,
    RUN_JOB_TASK,
    STARTED_TASK,
    ContractError,
    JobResult,
    JobSpec,
    control_queue,
)
from harvester.defaults import PROGRESS_INTERVAL_S
from harvester.joblock import running_alone
from harvester.process import (
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
from harvester.runtime import spool_dir
from harvester.takeover import take_over
from harvester.worker import app

logger = logging.getLogger(__name__)

#: How often the parent looks at the child, the control queue and the progress file.
POLL_INTERVAL_S = 0.5


def _hostname(task: Any) -> str:
    return str(getattr(task.request, "hostname", None) or socket.gethostname())


def send_result(result: JobResult) -> None:
    app.send_task(RESULT_TASK, args=[result.to_dict()], queue=EVENTS_QUEUE)


def _log_tail(job_dir: Path, lines: int = 20) -> str:
    try:
        text = (job_dir / ENGINE_LOG).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


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


def prepare_job_dir(spec: JobSpec, root: Path | None = None) -> Path:
    """``<spool>/<job_id>`` with the JobSpec in it; seeded from ``continues_job``'s spool if any."""
    root = root or spool_dir()
    job_dir = root / str(spec.job_id)
    state = job_dir / "state" / "frontier.sqlite"
    if spec.continues_job is not None and not state.exists():
        take_over(root / str(spec.continues_job), job_dir, spec)
    write_json_atomic(job_dir / JOBSPEC_FILE, spec.to_dict())
    return job_dir


class _ProgressRelay:
    def __init__(self, job_dir: Path) -> None:
        self.path = job_dir / PROGRESS_FILE
        self.last_sent = 0.0
        self.last_mtime = 0.0

    def poll(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last_sent < PROGRESS_INTERVAL_S:
            return
        try:
            mtime = self.path.stat().st_mtime
            if mtime == self.last_mtime and not force:
                return
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        self.last_mtime = mtime
        self.last_sent = now
        app.send_task(PROGRESS_TASK, args=[data], queue=EVENTS_QUEUE)


def _forward_controls(queue: Any, child: subprocess.Popen[bytes], job_id: int) -> None:
    while child.poll() is None:
        try:
            message = queue.get(block=False)
        except Empty:
            return
        payload = message.payload
        if isinstance(payload, (bytes, str)):
            try:
                payload = json.loads(payload)
            except ValueError:
                payload = None
        if isinstance(payload, dict) and payload.get("job_id") == job_id:
            try:
                assert child.stdin is not None
                child.stdin.write((json.dumps(payload) + "\n").encode())
                child.stdin.flush()
            except (BrokenPipeError, OSError):
                message.requeue()
                return
        else:
            logger.warning("job %s: dropping a control message for someone else: %r", job_id, payload)
        message.ack()


def supervise(spec: JobSpec, job_dir: Path, hostname: str) -> JobResult:
    """Run the child to its end, relaying progress and controls; return the JobResult to send."""
    child = start_child(job_dir)
    relay = _ProgressRelay(job_dir)
    started = now_iso()
    try:
        with app.connection_for_write() as conn:
            queue = conn.SimpleQueue(control_queue(spec.job_id))
            try:
                while child.poll() is None:
                    _forward_controls(queue, child, spec.job_id)
                    relay.poll()
                    time.sleep(POLL_INTERVAL_S)
            finally:
                queue.close()
    except BaseException:
        # The worker itself is going away (warm shutdown, an error here): let the child checkpoint.
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(30)
            except subprocess.TimeoutExpired:
                child.kill()
        raise
    finally:
        if child.stdin is not None:
            try:
                child.stdin.close()
            except OSError:
                pass
    relay.poll(force=True)
    result_file = job_dir / RESULT_FILE
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


@app.task(name=RUN_JOB_TASK, bind=True, acks_late=True)
def run_job(self: Any, spec_dict: Any) -> dict[str, Any]:
    """Crawl one JobSpec on this machine; see the module docstring."""
    hostname = _hostname(self)
    try:
        spec = JobSpec.from_dict(spec_dict)
    except ContractError as exc:
        job_id = spec_dict.get("job_id") if isinstance(spec_dict, dict) else None
        result = failed_result(job_id if isinstance(job_id, int) and not isinstance(job_id, bool) else 0,
                               "invalid-jobspec", str(exc))
        logger.error("rejected an invalid JobSpec: %s", exc)
        send_result(result)
        return result.to_dict()
    with running_alone(spool_dir() / str(spec.job_id)) as alone:
        if not alone:  # a duplicate message of a job this spool is crawling right now
            logger.warning("job %s is already being crawled from this spool: this message is a duplicate, "
                           "not crawled again", spec.job_id)
            return {"job_id": spec.job_id, "duplicate": True}
        return _run(spec, hostname)


def _run(spec: JobSpec, hostname: str) -> dict[str, Any]:
    job_dir = spool_dir() / str(spec.job_id)
    result_file = job_dir / RESULT_FILE
    if result_file.exists():
        try:
            previous = JobResult.from_dict(json.loads(result_file.read_text(encoding="utf-8")))
            if previous.status == "DONE":
                logger.info("job %s already done here: sending its result again", spec.job_id)
                send_result(previous)
                return previous.to_dict()
        except (ValueError, ContractError):
            pass
        result_file.unlink(missing_ok=True)
    job_dir = prepare_job_dir(spec)
    app.send_task(STARTED_TASK, args=[spec.job_id, hostname], queue=EVENTS_QUEUE)
    logger.info("job %s: crawling in %s", spec.job_id, job_dir)
    result = supervise(spec, job_dir, hostname)
    send_result(result)
    logger.info("job %s: %s", spec.job_id, result.status)
    return result.to_dict()
