"""A resubmitted job carries on from the failed job it continues (``JobSpec.continues_job``).

The orchestrator's resubmit makes a new job whose JobSpec names the old one; when the old job's
spool is on this machine, :func:`take_over` hands its state and files to the new job before the
crawl child starts, and the child then resumes as after a crash.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
from pathlib import Path

from harvester.contracts import JobSpec
from harvester.crawllogsegments import archived_log, metadata_number, save_state
from harvester.warcwriter import recover_open_files

logger = logging.getLogger(__name__)


def handed_over(job_dir: Path, done: bool) -> set[str]:
    """Names of the files a job already handed to the orchestrator: listed in ``files-closed.jsonl``
    (a continuous job, while it ran) or, when the orchestrator recorded it ``done``, in its ``jobresult.json``
    (a result written but never delivered, the harvester killed first, hands nothing over)."""
    names: set[str] = set()
    try:
        for line in (job_dir / "files-closed.jsonl").read_text(encoding="utf-8").splitlines():
            try:
                names.add(str(json.loads(line)["name"]))
            except (ValueError, KeyError, TypeError):
                continue
    except OSError:
        pass
    if done:
        try:
            result = json.loads((job_dir / "jobresult.json").read_text(encoding="utf-8"))
            names.update(str(f.get("name")) for f in result.get("files", []))
        except (OSError, ValueError, AttributeError):
            pass
    return names


#: The frontier's kv entries that are the old job's own tallies, not the state of the URIs: a continuous
#: definition's next job after a DONE one starts them afresh (its statistics are its own), see
#: :func:`take_over`.
TALLIES = ("archive_stats", "crawl_s", "started", "failed", "budgets", "continuous_counts", "ar_done")


#: The old job's record of seeds its ``seeds`` controls added and removed: relative to *its* JobSpec, so
#: dropped when the new job's JobSpec is fresh from the definition (``continues_done``), which holds them.
SEED_EDITS = ("seeds_added", "seeds_removed")
#: Set by a take-over after a DONE job: the new JobSpec's seeds are the whole truth (read once, then cleared).
FRESH_SEEDS = "seeds_from_spec"


def superseded(path: Path, old_job: str, counted: int) -> bool:
    """The old job's last metadata WARC, written as it ended (its crawl.log part is archived again by the job
    taking over, with that job's reports): one of the old job's own beyond the segments it counted. Its
    counted segments, and those it had taken over itself from the job before it, move on."""
    number = metadata_number(path)
    return number is not None and path.name.startswith(f"{old_job}-") and number > counted


def take_over(old_dir: Path, job_dir: Path, spec: JobSpec) -> bool:
    """Make ``job_dir`` carry on where the job in ``old_dir`` stopped (a resubmission of a failed job, or
    a continuous definition's next job).

    The old job ended FAILED, so none of its files reached the archive: its WARCs (an unfinished
    one cut back to its last whole record) move into this job, which lists them in its JobResult
    under their own names; its crawl.log becomes the start of this job's; its frontier, seen-set,
    budgets and report tallies are copied (not its paused flag: the new job has its own control
    history), so nothing it captured before its last checkpoint is fetched again. The frontier
    journal is copied last, under a temporary name: until it is in place this job has not taken
    over, and a re-run takes over again (moved files stay moved).
    Returns False when ``old_dir`` has no state (the job ran on another machine: start over).

    When the orchestrator recorded the old job DONE (``spec.continues_done``: a continuous definition
    deactivated, then activated again) it delivered
    its files, crawl.log and statistics itself: the new job takes over only the state of the URIs (the
    frontier's tables: each URI's waits, visits, versions, digests, validators; hosts; the policy's
    learnt state) and starts its own tallies, crawl.log and start time (:data:`TALLIES` are dropped), so
    its reports do not count the old job's captures again. Its seeds are its JobSpec's: a seed the old
    frontier holds that the definition no longer has (removed while no job could hear it) leaves, with
    the pages only it held in scope (:data:`FRESH_SEEDS`).
    """
    finished = spec.continues_done
    previous = old_dir / "state" / "frontier.sqlite"
    if not previous.exists():
        logger.info(
            "job %s continues job %s, whose state is not on this machine: starting over", spec.job_id, old_dir.name
        )
        return False
    old_warcs, warcs = old_dir / "warcs", job_dir / "warcs"
    warcs.mkdir(parents=True, exist_ok=True)
    old_log = old_dir / "logs" / "crawl.log"
    archived = archived_log(old_log)
    if old_warcs.is_dir():
        recover_open_files(old_warcs)
        handed = set(spec.continues_files) if spec.continues_files is not None else handed_over(old_dir, finished)
        for path in sorted(old_warcs.glob("*.warc.gz")):
            # Files the old job already handed to the orchestrator (a continuous job's WARCs and crawl.log
            # segments while it ran, a DONE job's result) stay where the archive has them. Its last metadata
            # WARC is superseded: this job archives that part of the crawl.log again, with its own reports.
            if path.name not in handed and not superseded(path, old_dir.name, archived[0]):
                os.replace(path, warcs / path.name)
    if old_log.exists() and not finished:
        (job_dir / "logs").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(old_log, job_dir / "logs" / "crawl.log")
        if archived[1]:  # this job's crawl.log segments start after what the old job's hold
            save_state(job_dir / "logs" / "crawl.log", 0, archived[1])
    state = job_dir / "state" / "frontier.sqlite"
    state.parent.mkdir(parents=True, exist_ok=True)
    tmp = state.with_name(".frontier.sqlite.tmp")
    src = sqlite3.connect(str(previous))
    try:
        dst = sqlite3.connect(str(tmp))
        try:
            src.backup(dst)  # consistent even with the old job's WAL file beside it
            # A new job has its own control history: it never starts paused because the old one was.
            dst.execute("UPDATE kv SET v='false' WHERE k='paused'")
            if finished:
                dst.execute(
                    f"DELETE FROM kv WHERE k IN ({','.join('?' * len(TALLIES + SEED_EDITS))})", TALLIES + SEED_EDITS
                )
                # This job's JobSpec was made from the definition as it is now: its seeds are the seeds
                # (harvester.continuous forgets the frontier's seeds that are no longer among them).
                dst.execute(f"INSERT OR REPLACE INTO kv (k, v) VALUES ('{FRESH_SEEDS}', 'true')")
            dst.commit()
        finally:
            dst.close()
    finally:
        src.close()
    os.replace(tmp, state)
    logger.info(
        "job %s takes over job %s's %s",
        spec.job_id,
        old_dir.name,
        "URI states (it ended DONE: fresh tallies)" if finished else "frontier and files",
    )
    return True
