"""The crawl child process: ``python -m harvester.process JOB_DIR [--control-stdin]``.

Why a separate process (started with ``subprocess``, not ``multiprocessing``): Twisted's reactor
cannot be restarted, so every job needs a fresh interpreter; a Celery prefork worker is a daemonic
process, which ``multiprocessing`` forbids to have children; and a crash in the crawl (memory,
a C extension) must not take the worker down. The parent (the Celery task, or the trial-crawl
CLI) and this child talk through the job directory and a pipe:

``JOB_DIR/jobspec.json``
    The JobSpec (written by the parent before the start).
``JOB_DIR/progress.json``
    The latest :class:`~harvester.contracts.Progress`, replaced atomically every
    ``PROGRESS_INTERVAL_S``.
stdin (``--control-stdin``)
    One JSON :class:`~harvester.contracts.Control` per line: ``stop``, ``pause``, ``resume``,
    ``add_trap``, ``seeds`` (continuous jobs), ``cancel`` (the orchestrator ended the job: checkpoint and exit with
    :data:`EXIT_INTERRUPTED`, the spool kept for a resubmission's take-over). End of input means the
    parent is gone: the child checkpoints and exits with :data:`EXIT_INTERRUPTED` without concluding
    the job, so a redelivered task resumes it.
``JOB_DIR/controls-applied.jsonl``
    One JSON line ``{"id", "action", "at"}`` appended (and fsynced) each time the child has applied a
    Control, so the parent can acknowledge it to the orchestrator (the control history's
    "Acknowledged").
``JOB_DIR/jobresult.json``
    The :class:`~harvester.contracts.JobResult`, written atomically once the crawl is over and every
    file is closed. Its absence after the child exits means the job did not conclude.
``JOB_DIR/state/frontier.sqlite``
    The frontier journal: a re-run on the same directory resumes (SIGTERM also checkpoints and
    exits with :data:`EXIT_INTERRUPTED`).
"""

from __future__ import annotations

import gc

if __name__ == "__main__":  # the crawl child: no collections during start-up, tune_gc enables them (issue 14)
    gc.disable()

import argparse
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harvester.contracts import ContractError, Control, CrawlFigures, JobResult, JobSpec, seed_changes
from harvester.defaults import PROGRESS_INTERVAL_S
from harvester.reports import CrawlStats, mime_figures, status_figures

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 75  # EX_TEMPFAIL: try again later (resume)

JOBSPEC_FILE = "jobspec.json"
PROGRESS_FILE = "progress.json"
#: Touched every ALIVE_INTERVAL_S by a timer in the crawl child's reactor: it still turns.
ALIVE_FILE = "alive"
ALIVE_INTERVAL_S = 1.0
RESULT_FILE = "jobresult.json"
APPLIED_FILE = "controls-applied.jsonl"
ENGINE_LOG = "logs/harvester.log"
#: A progress write (every PROGRESS_INTERVAL_S, in the reactor) taking this long is logged: fetching waits for it.
SLOW_PROGRESS_S = 0.25

logger = logging.getLogger(__name__)


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_json_atomic(path: Path, data: Any) -> None:
    """Write to a temporary name, fsync, rename: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def job_figures(stats: CrawlStats) -> CrawlFigures:
    """The QA figures of the crawl's tallies, sent as data beside the text reports made of the same."""
    return CrawlFigures(mime_types=mime_figures(stats), status_codes=status_figures(stats))


def failed_result(job_id: int, category: str, detail: str, started: str | None = None) -> JobResult:
    return JobResult(
        job_id=job_id,
        status="FAILED",
        started=started,
        ended=now_iso(),
        error_category=category,
        error_detail=detail[-4000:],
        harvester=socket.gethostname(),
    )


class _Controller:
    """Applies Control commands inside the reactor thread, and writes progress on a timer."""

    def __init__(self, crawler: Any, job_dir: Path, time_limit_s: int) -> None:
        self.crawler = crawler
        self.job_dir = job_dir
        self.time_limit_s = time_limit_s
        self.job: Any = None
        self.interrupted = False
        self.early: list[dict[str, Any]] = []  # controls that came before the spider opened

    def start(self) -> None:
        from twisted.internet import reactor, task

        self.job = self.crawler.spider.job
        self._progress = task.LoopingCall(self.write_progress)
        self._progress.start(PROGRESS_INTERVAL_S, now=True)
        self._checkpoint = task.LoopingCall(self.job.checkpoint)
        self._checkpoint.start(1.0, now=False)
        self._alive = task.LoopingCall(self.touch_alive)
        self._alive.start(ALIVE_INTERVAL_S, now=True)
        if self.time_limit_s:
            left = max(self.time_limit_s - self.job.crawl_seconds(), 0.0)
            reactor.callLater(left, self.stop, "time_limit")  # type: ignore[attr-defined]
        for data in self.early:
            self.apply(data)
        self.early.clear()

    def stop_timers(self) -> None:
        for loop in (
            getattr(self, "_progress", None),
            getattr(self, "_checkpoint", None),
            getattr(self, "_alive", None),
        ):
            if loop is not None and loop.running:
                loop.stop()

    def touch_alive(self) -> None:
        """The reactor still turns: the parent's StallWatch (harvester.runjob) reads this file's mtime."""
        try:
            (self.job_dir / ALIVE_FILE).touch()
        except OSError:
            logger.exception("could not touch %s", ALIVE_FILE)

    def write_progress(self) -> None:
        t0 = time.monotonic()
        try:
            write_json_atomic(self.job_dir / PROGRESS_FILE, self.job.progress().to_dict())
        except Exception:
            logger.exception("could not write progress")
        took = time.monotonic() - t0
        if took >= SLOW_PROGRESS_S:  # in the reactor: fetching waits for it (a continuous job's O(URIs) figures)
            logger.info("slow progress: %.3f s", took)

    def stop(self, ended_by: str = "stopped") -> None:
        if self.job.ended_by == "finished":
            self.job.ended_by = ended_by
        logger.info("stopping the crawl (%s)", ended_by)
        engine = self.crawler.engine
        if engine is not None and engine.spider is not None:
            engine.close_spider(engine.spider, ended_by)

    def apply(self, data: dict[str, Any]) -> None:
        if self.job is None:  # the parent forwards what waited in the control queue as soon as we start
            self.early.append(data)
            return
        try:
            control = Control.from_dict(data)
        except ContractError as exc:
            logger.warning("ignoring a bad control message %r: %s", data, exc)
            return
        logger.info("control: %s %s", control.action, control.argument)
        if control.action == "cancel":
            self.applied(control)
            self.interrupt("cancelled by the orchestrator")
            return
        if control.action == "stop":
            self.stop("stopped")
        elif control.action == "pause":
            self.job.pause()
        elif control.action == "resume":
            self.job.resume()
            self.job.wake_engine()
        elif control.action == "add_trap":
            self.job.add_trap(control.argument)
        elif control.action == "seeds":
            if hasattr(self.job, "change_seeds"):
                add, remove = seed_changes(control.argument)
                self.job.change_seeds(add, remove)
                self.job.wake_engine()
            else:
                logger.warning("ignoring a seeds control: only a continuous job takes seeds while it runs")
        self.job.checkpoint()
        self.applied(control)

    def applied(self, control: Control) -> None:
        """Say that ``control`` took effect (after its checkpoint, so a resume keeps it too)."""
        line = json.dumps({"id": control.id, "action": control.action, "at": now_iso()}) + "\n"
        with open(self.job_dir / APPLIED_FILE, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def interrupt(self, why: str) -> None:
        """The parent is gone or asked us to go: checkpoint, exit without concluding (resumable)."""
        if self.interrupted:
            return
        self.interrupted = True
        logger.warning("interrupted (%s): checkpointing for a later resume", why)
        try:
            self.job.closing()
            self.job.checkpoint()
        finally:
            logging.shutdown()
            os._exit(EXIT_INTERRUPTED)


#: Young-generation threshold of the crawl's collector (CPython's default: 700 allocations).
GC_GEN0_THRESHOLD = 50_000


def tune_gc() -> None:
    """Make the cyclic collector cheap for the crawl's steady state (the collector was disabled while
    the crawl child started: ~145 young collections, 0.1 s CPU, over objects that are never garbage).

    Why: start-up leaves tens of thousands of long-lived objects (Scrapy, Twisted, lxml, our modules)
    that every older-generation pass would walk again: ``gc.freeze`` puts them out of the collector's
    sight. A page makes no reference cycle (tests/harvester/test_crawl_garbage.py), so its objects are
    freed by reference counting and a higher young threshold only spares passes that would find
    nothing. Peak memory stays flat (docs/BENCHMARKS.md, "Harvester throughput again").
    """
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GC_GEN0_THRESHOLD, gen1, gen2)
    gc.enable()


def _alive_until_exit(job_dir: Path) -> None:
    while True:
        try:
            (job_dir / ALIVE_FILE).touch()
        except OSError:
            pass
        time.sleep(ALIVE_INTERVAL_S)


def _read_stdin(controller: _Controller) -> None:
    from twisted.internet import reactor

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            data = json.loads(line)
        except ValueError:
            logger.warning("ignoring a control line that is not JSON: %r", line[:200])
            continue
        reactor.callFromThread(controller.apply, data)  # type: ignore[attr-defined]
    reactor.callFromThread(controller.interrupt, "parent closed the control pipe")  # type: ignore[attr-defined]


def run(job_dir: Path, control_stdin: bool = False, archive: bool = True) -> int:
    """Run (or resume) the crawl of ``job_dir``; write ``jobresult.json``; return an exit code."""
    spec = JobSpec.from_dict(json.loads((job_dir / JOBSPEC_FILE).read_text(encoding="utf-8")))
    (job_dir / "logs").mkdir(parents=True, exist_ok=True)
    from scrapy.crawler import CrawlerProcess

    from harvester.archive import ArchiveMiddleware
    from harvester.crawlsettings import build_settings
    from harvester.leanscrapy import CrawlSignalManager, drop_records_below
    from harvester.spider import HarvestSpider

    settings = build_settings(spec, job_dir, archive=archive, log_file=str(job_dir / ENGINE_LOG))
    process = CrawlerProcess(settings, install_root_handler=True)
    crawler = process.create_crawler(HarvestSpider)
    # Before the engine and the components take crawler.signals: the same signals, no empty sends (issue 14).
    crawler.signals = CrawlSignalManager(crawler)
    drop_records_below(settings["LOG_LEVEL"])
    controller = _Controller(crawler, job_dir, spec.time_limit_s)
    from scrapy import signals

    crawler.signals.connect(controller.start, signal=signals.spider_opened)
    failure: list[str] = []

    def on_closed(spider: Any = None, reason: str = "") -> None:
        controller.stop_timers()
        # Closing (the archive's last records, the reports, the metadata WARC) runs after the reactor's timers
        # stop and may take minutes on a big job: a thread says "alive" for it, so the parent's StallWatch
        # never takes it for a stuck crawl.
        threading.Thread(target=_alive_until_exit, args=(job_dir,), daemon=True, name="alive").start()

    crawler.signals.connect(on_closed, signal=signals.spider_closed)
    d = process.crawl(crawler)
    d.addErrback(lambda f: failure.append(f.getTraceback()))
    from twisted.internet import reactor

    def on_sigterm(signum: int, frame: Any) -> None:
        reactor.callFromThread(controller.interrupt, f"signal {signum}")  # type: ignore[attr-defined]

    signal.signal(signal.SIGTERM, on_sigterm)
    signal.signal(signal.SIGINT, lambda s, f: reactor.callFromThread(controller.stop, "stopped"))  # type: ignore[attr-defined]
    if control_stdin:
        threading.Thread(target=_read_stdin, args=(controller,), daemon=True, name="control").start()
    tune_gc()
    process.start(install_signal_handlers=False)

    job = getattr(crawler.spider, "job", None)
    if failure or job is None:
        detail = failure[0] if failure else "the crawl did not start"
        write_json_atomic(job_dir / RESULT_FILE, failed_result(spec.job_id, "crawl-error", detail).to_dict())
        return EXIT_FAILED
    controller.write_progress()
    archive_mw = ArchiveMiddleware.of(crawler)
    files = archive_mw.finish() if archive_mw is not None else []
    job.checkpoint()
    result = JobResult(
        job_id=spec.job_id,
        status="DONE",
        started=job.started_iso,
        ended=now_iso(),
        domains=tuple(job.domain_results()),
        files=tuple(files),
        harvester=socket.gethostname(),
        stats={
            "uris_done": job.frontier.done,
            "uris_failed": job.failed,
            "ended_by": job.ended_by,
            "crawl_seconds": round(job.crawl_seconds(), 1),
            "queued_left": job.frontier.queued,
        },
        figures=None if archive_mw is None else job_figures(archive_mw.stats),
    )
    job.frontier.close()
    write_json_atomic(job_dir / RESULT_FILE, result.to_dict())
    return EXIT_OK


def start_child(job_dir: Path, control: bool = True) -> subprocess.Popen[bytes]:
    """The crawl child on ``job_dir``; its stdout/stderr go to the job's engine log."""
    (job_dir / "logs").mkdir(parents=True, exist_ok=True)
    out = open(job_dir / "logs" / "process.out", "ab")
    try:
        args = [sys.executable, "-m", "harvester.process", str(job_dir)]
        if control:
            args.append("--control-stdin")
        return subprocess.Popen(
            args,
            stdin=subprocess.PIPE if control else subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            close_fds=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    finally:
        out.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harvester.process", description=__doc__.split("\n")[0])
    parser.add_argument("job_dir", type=Path)
    parser.add_argument(
        "--control-stdin",
        action="store_true",
        help="read Control JSON lines on stdin; end of input interrupts (resumable)",
    )
    parser.add_argument(
        "--no-archive", action="store_true", help="Scrapy's own download handler and no WARC (benchmark baseline)"
    )
    args = parser.parse_args(argv)
    job_dir: Path = args.job_dir.resolve()
    if not (job_dir / JOBSPEC_FILE).is_file():
        print(f"{job_dir / JOBSPEC_FILE}: no such file", file=sys.stderr)
        return EXIT_USAGE
    try:
        return run(job_dir, control_stdin=args.control_stdin, archive=not args.no_archive)
    except ContractError as exc:
        write_json_atomic(job_dir / RESULT_FILE, failed_result(0, "invalid-jobspec", str(exc)).to_dict())
        return EXIT_FAILED
    except Exception:
        detail = traceback.format_exc()
        logger.error("crawl failed: %s", detail)
        try:
            spec = json.loads((job_dir / JOBSPEC_FILE).read_text(encoding="utf-8"))
            job_id = int(spec.get("job_id", 0))
        except Exception:
            job_id = 0
        write_json_atomic(job_dir / RESULT_FILE, failed_result(job_id, "crawl-error", detail).to_dict())
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
