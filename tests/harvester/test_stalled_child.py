"""A crawl child that stops making progress (its reactor stuck: here frozen with SIGSTOP, as a hung file
system or a runaway callback would leave it) is noticed by its worker, which keeps heartbeating for itself:
the child is ended and started again from its checkpoint, once; a second stall fails the job in one line
(``crawl-process-stalled``), so a job is never left STARTED with nobody crawling it."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

from crawlhelp import crawl_log, make_spec

from harvester.process import ENGINE_LOG, RESULT_FILE
from harvester.runjob import _log_tail, run_job


def _children(job_dir: Path) -> set[int]:
    """PIDs of the crawl processes running on ``job_dir``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"harvester.process" in args and str(job_dir).encode() in args:
            found.add(int(entry.name))
    return found


def _freeze(job_dir: Path, times: int, after_lines: int, frozen: list[int], how: int = signal.SIGSTOP) -> None:
    """Stop (SIGSTOP, or send ``how``) the first ``times`` crawl children on ``job_dir``, each once it has logged
    ``after_lines`` more lines than its predecessor; PIDs go to ``frozen``."""
    deadline = time.monotonic() + 60
    while len(frozen) < times and time.monotonic() < deadline:
        log = job_dir / "logs" / "crawl.log"
        lines = len(crawl_log(job_dir)) if log.exists() else 0
        for pid in _children(job_dir) - set(frozen):
            if lines >= after_lines * (len(frozen) + 1):
                os.kill(pid, how)
                frozen.append(pid)
        time.sleep(0.05)


def _cancel(job_id: int) -> None:
    """The orchestrator's cancel fence in the job's control queue, as dispatch.send_cancel puts it."""
    from kombu.simple import SimpleQueue

    from harvester.contracts import Control, control_queue
    from harvester.worker import app

    with app.connection_for_write() as conn:
        queue = SimpleQueue(conn, control_queue(job_id))
        queue.put(Control(job_id=job_id, action="cancel", id=0).to_dict())
        queue.close()


def _run(
    tmp_path: Path, monkeypatch: Any, sites: Any, job_id: int, freezes: int, then: Any = None, how: int = signal.SIGSTOP
) -> tuple[dict[str, Any], Path]:
    monkeypatch.setenv("NETHARVEST_SPOOL_DIR", str(tmp_path))
    monkeypatch.setenv("NETHARVEST_CHILD_STALL_S", "3")
    a, _ = sites
    job_dir = tmp_path / str(job_id)
    frozen: list[int] = []

    def freeze_then() -> None:
        _freeze(job_dir, freezes, 5, frozen, how)
        if then is not None:
            then()

    freezer = threading.Thread(target=freeze_then, daemon=True)
    freezer.start()
    spec = make_spec([a.url], job_id=job_id, settings={"min_delay_ms": 40, "max_delay_ms": 40})
    try:
        result = run_job.apply(args=[spec]).get(timeout=180)
    finally:
        for pid in frozen:  # never leave a stopped process behind, whatever happened
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    freezer.join(5)
    assert len(frozen) == freezes, f"froze {len(frozen)} crawl processes, wanted {freezes}"
    assert not _children(job_dir), "a crawl process outlived its job"
    return result, job_dir


def test_a_stalled_crawl_process_is_restarted_from_its_checkpoint_and_the_job_completes(tmp_path, monkeypatch, sites):
    result, job_dir = _run(tmp_path, monkeypatch, sites, job_id=611, freezes=1)
    assert result["status"] == "DONE", result.get("error_detail")
    assert result["domains"][0]["stop_reason"] == "DOWNLOAD_COMPLETE"
    uris = {f[3] for f in crawl_log(job_dir)}
    a, _ = sites
    assert f"{a.url}news/article6.html" in uris and f"{a.url}orphan.html" in uris
    log = (job_dir / "logs" / "harvester.log").read_text(errors="replace")
    assert "resumed job 611" in log, "the second crawl process did not resume the first one's checkpoint"


def test_a_crawl_process_that_stalls_again_fails_the_job_in_one_line(tmp_path, monkeypatch, sites):
    result, _ = _run(tmp_path, monkeypatch, sites, job_id=612, freezes=2)
    assert result["status"] == "FAILED"
    assert result["error_category"] == "crawl-process-stalled"
    assert result["error_detail"].splitlines()[0].startswith("the crawl process made no progress for ")


def test_a_job_cancelled_while_its_crawl_process_is_stuck_is_not_started_again(tmp_path, monkeypatch, sites):
    """Review: a cancel (the job reaped, resubmitted elsewhere) that arrived while the child was stuck was
    followed by a restart that crawled the job to its end: a job run twice. Now the stuck child is ended and
    nothing more runs."""
    result, job_dir = _run(tmp_path, monkeypatch, sites, job_id=613, freezes=1, then=lambda: _cancel(613))
    assert result == {"job_id": 613, "status": "CANCELLED"}
    log = (job_dir / "logs" / "harvester.log").read_text(errors="replace")
    assert "resumed job 613" not in log


def test_a_crawl_process_killed_by_a_signal_is_restarted_from_its_checkpoint_and_the_job_completes(
    tmp_path, monkeypatch, sites
):
    """The kernel's OOM killer or an operator's kill -9 ends the crawl process, not its worker: the worker starts
    it again from its checkpoint (once, as after a stall) instead of failing the job."""
    result, job_dir = _run(tmp_path, monkeypatch, sites, job_id=614, freezes=1, how=signal.SIGKILL)
    assert result["status"] == "DONE", result.get("error_detail")
    uris = [f[3] for f in crawl_log(job_dir)]
    a, _ = sites
    assert f"{a.url}news/article6.html" in uris and f"{a.url}orphan.html" in uris
    assert "resumed job 614" in (job_dir / "logs" / "harvester.log").read_text(errors="replace")


def test_a_crawl_process_killed_again_after_its_restart_fails_the_job_in_one_line(tmp_path, monkeypatch, sites):
    result, _ = _run(tmp_path, monkeypatch, sites, job_id=615, freezes=2, how=signal.SIGKILL)
    assert (result["status"], result["error_category"]) == ("FAILED", "crawl-process-died")
    first, *tail = result["error_detail"].splitlines()
    assert first == "the crawl process was killed by SIGKILL"
    assert tail and tail[0][:4].isdigit(), tail  # the log's tail from a whole record (its time), not mid-record


def test_a_failed_jobs_log_tail_begins_with_a_whole_record(tmp_path):
    log = tmp_path / ENGINE_LOG
    log.parent.mkdir(parents=True)
    log.write_text(
        "2026-11-29 09:55:34 [scrapy.crawler] INFO: Overridden settings:\n{'BOT_NAME': 'netharvest',\n"
        + "".join(f" 'SETTING_{i}': {i},\n" for i in range(30))
        + "2026-11-29 09:55:34 [scrapy.core.engine] INFO: Spider opened\nTraceback (most recent call last):\n"
        + '  File "x.py", line 1\nValueError: bad\n'
    )
    assert _log_tail(tmp_path, lines=6).splitlines() == [
        "2026-11-29 09:55:34 [scrapy.core.engine] INFO: Spider opened",
        "Traceback (most recent call last):",
        '  File "x.py", line 1',
        "ValueError: bad",
    ]
    assert _log_tail(tmp_path, lines=3).splitlines()[0] == "Traceback (most recent call last):"
    assert _log_tail(tmp_path, lines=2).splitlines() == [  # inside a traceback: from its start
        "Traceback (most recent call last):",
        '  File "x.py", line 1',
        "ValueError: bad",
    ]


def test_a_failed_jobs_log_tail_keeps_the_traceback_the_cut_falls_in(tmp_path):
    """A long traceback, then one more record: the tail keeps the traceback's reason (its last line)."""
    log = tmp_path / ENGINE_LOG
    log.parent.mkdir(parents=True)
    frames = "".join(f'  File "m{i}.py", line {i}, in f{i}\n    f{i + 1}()\n' for i in range(15))
    log.write_text(
        "2026-11-29 09:55:34 [scrapy.core.scraper] ERROR: Spider error\nTraceback (most recent call last):\n"
        + frames
        + "MemoryError: out of frontier space\n2026-11-29 09:55:35 [scrapy.core.engine] INFO: Closing spider\n"
    )
    tail = _log_tail(tmp_path).splitlines()
    assert tail[0] == "Traceback (most recent call last):" and "MemoryError: out of frontier space" in tail
    assert tail[-1].endswith("Closing spider")


def test_kills_further_apart_than_the_restart_window_are_each_survived(tmp_path, monkeypatch, sites):
    """A continuous crawl runs for months: an OOM kill a week after the last one is a new accident, not a crash
    loop. With the window shortened to half a second, the second kill (after the restarted process has started
    and crawled five more URIs) is outside it: the crawl is restarted again and the job completes."""
    monkeypatch.setenv("NETHARVEST_CHILD_RESTART_WINDOW_S", "0.5")
    result, job_dir = _run(tmp_path, monkeypatch, sites, job_id=616, freezes=2, how=signal.SIGKILL)
    assert result["status"] == "DONE", result.get("error_detail")
    log = (job_dir / "logs" / "harvester.log").read_text(errors="replace")
    assert log.count("resumed job 616") == 2


def test_restarts_are_counted_within_their_window():
    from harvester.restarts import RestartBudget
    from harvester.runjob import CHILD_RESTARTS

    now = [0.0]
    budget = RestartBudget(3600.0, CHILD_RESTARTS, clock=lambda: now[0])
    for _ in range(CHILD_RESTARTS):
        assert budget.allows()
        budget.spend()
    now[0] = 3599.0
    assert not budget.allows()  # a crash loop: the job fails
    now[0] = 3600.0
    assert budget.allows()  # an hour on: a new accident


def test_after_a_stall_the_restart_window_is_at_least_two_stall_limits(monkeypatch):
    """A stall limit of 900 s with a window of 600 s: a child stuck at every start would be ended 900 s after
    each restart, outside the window, and restarted for ever; after a stall the window is two stall limits.
    A kill (not a stall) keeps the window as set."""
    from harvester.runjob import restart_budget

    monkeypatch.setenv("NETHARVEST_CHILD_STALL_S", "900")
    monkeypatch.setenv("NETHARVEST_CHILD_RESTART_WINDOW_S", "600")
    now = [0.0]
    budget = restart_budget()
    budget.clock = lambda: now[0]
    budget.spend()
    now[0] = 905.0  # stuck again right after the restart: ended one stall limit later
    assert not budget.allows(stalled=True)
    assert budget.allows()  # a kill this long after the last restart is a new accident
    now[0] = 1800.0
    assert budget.allows(stalled=True)
    # A child stuck from its start is ended after the start-up allowance (120 s), not a 30 s stall limit.
    monkeypatch.setenv("NETHARVEST_CHILD_STALL_S", "30")
    monkeypatch.setenv("NETHARVEST_CHILD_RESTART_WINDOW_S", "100")
    budget = restart_budget()
    budget.clock = lambda: now[0]
    budget.spend()
    now[0] += 121.0
    assert not budget.allows(stalled=True)


def test_a_warm_shutdown_ends_the_crawl_with_a_checkpoint_and_hands_the_job_back(tmp_path, monkeypatch, sites):
    """The worker's warm shutdown (harvester/shutdown.py) used to wait for the crawl to end, which a continuous
    job never does: the crawl went on for the whole grace period, then the worker was killed. Now the crawl is
    ended at once with a checkpoint, the job's message handed back (Reject, requeue), and the next run of the
    same message carries on from the checkpoint to the end."""
    from celery.exceptions import Reject

    from harvester import shutdown

    monkeypatch.setenv("NETHARVEST_SPOOL_DIR", str(tmp_path))
    monkeypatch.setenv(shutdown.TOKEN, "")
    shutdown.begin()  # this test is the worker: its run's token
    a, _ = sites
    job_dir = tmp_path / "614"
    spec = make_spec([a.url], job_id=614, settings={"min_delay_ms": 60, "max_delay_ms": 60})

    def stop_after_some_lines() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if (job_dir / "logs" / "crawl.log").exists() and len(crawl_log(job_dir)) >= 5:
                shutdown.announce(tmp_path)  # as the worker's main process does (this test is both)
                return
            time.sleep(0.05)

    stopper = threading.Thread(target=stop_after_some_lines, daemon=True)
    stopper.start()
    outcome = run_job.apply(args=[spec])
    stopper.join(5)
    assert isinstance(outcome.result, Reject) and outcome.result.requeue, outcome.result
    assert not _children(job_dir), "the crawl process outlived the worker's shutdown"
    assert not (job_dir / RESULT_FILE).exists()
    done_before = {f[3] for f in crawl_log(job_dir)}
    assert 5 <= len(done_before) < 30, "the crawl was not ended when the worker started stopping"

    shutdown.end(tmp_path)
    shutdown.begin()  # the worker starts again
    result = run_job.apply(args=[spec]).get(timeout=180)
    assert result["status"] == "DONE", result.get("error_detail")
    log = (job_dir / "logs" / "harvester.log").read_text(errors="replace")
    assert "resumed job 614" in log, "the next run did not carry on from the checkpoint"
    uris = [f[3] for f in crawl_log(job_dir)]
    assert f"{a.url}orphan.html" in uris


def test_another_workers_shutdown_does_not_stop_this_ones_crawls(tmp_path, monkeypatch):
    """Workers share the spool (one machine, or a compose stack where every worker is PID 1): the flag of one
    worker's shutdown, or one left by an earlier run, concerns no other worker."""
    from harvester import shutdown

    monkeypatch.setenv(shutdown.TOKEN, "")
    shutdown.begin()
    shutdown.announce(tmp_path)  # worker A stops
    assert shutdown.requested(tmp_path)
    shutdown.begin()  # worker B, another run in the same spool (same PID, same parent PID or not)
    assert not shutdown.requested(tmp_path)
    shutdown.announce(tmp_path)
    assert shutdown.requested(tmp_path)
    shutdown.end(tmp_path)
    assert not shutdown.requested(tmp_path)
    monkeypatch.delenv(shutdown.TOKEN)  # outside a worker (a task run in process): never stopping
    assert not shutdown.requested(tmp_path)
