"""Control of the crawl child through its pipe (what the Celery task forwards): pause holds every
queue, a live-added trap rejects what is queued, and a lost parent leaves a resumable job that
remembers both."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

from crawlhelp import controlled_crawl, crawl_log, make_spec, write_spec

from harvester.process import EXIT_INTERRUPTED

TRAP = r".*/news/.*"


def _send(proc: subprocess.Popen[bytes], job_id: int, action: str, argument: str = "") -> None:
    assert proc.stdin is not None
    proc.stdin.write((json.dumps({"job_id": job_id, "action": action, "argument": argument}) + "\n").encode())
    proc.stdin.flush()


def _journalled(job_dir: Path, key: str, timeout: float = 30) -> Any:
    """Wait until the frontier journal holds ``key`` (the child checkpoints after every control)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            db = sqlite3.connect(str(job_dir / "state" / "frontier.sqlite"))
            try:
                row = db.execute("SELECT v FROM kv WHERE k=?", (key,)).fetchone()
            finally:
                db.close()
        except sqlite3.Error:
            row = None
        value = json.loads(row[0]) if row else None
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"{key} never journalled")


def test_pause_live_trap_parent_loss_then_resume(tmp_path: Path, sites: Any) -> None:
    a, _ = sites
    job_dir = tmp_path / "job"
    spec = make_spec([a.url], job_id=501, settings={"min_delay_ms": 100, "max_delay_ms": 100})
    write_spec(job_dir, spec)
    first = controlled_crawl(job_dir)
    _send(first, 501, "pause")
    assert _journalled(job_dir, "paused") is True
    _send(first, 501, "add_trap", TRAP)
    assert _journalled(job_dir, "live_traps") == [TRAP]
    log = job_dir / "logs" / "crawl.log"
    paused_at = len(log.read_text().splitlines()) if log.exists() else 0
    assert first.stdin is not None
    first.stdin.close()  # the parent is gone: checkpoint and exit, resumable
    assert first.wait(30) == EXIT_INTERRUPTED
    assert not (job_dir / "jobresult.json").exists()
    ended_at = len(crawl_log(job_dir)) if log.exists() else 0
    assert ended_at <= paused_at + 2  # paused: at most what was in flight finished

    second = controlled_crawl(job_dir)  # resumes paused, with the trap: waits for "resume"
    _send(second, 501, "resume")
    assert second.wait(90) == 0
    result = json.loads((job_dir / "jobresult.json").read_text())
    assert result["status"] == "DONE" and result["domains"][0]["stop_reason"] == "DOWNLOAD_COMPLETE"
    after = crawl_log(job_dir)[ended_at:]
    assert after
    news = [f for f in after if "/news/" in f[3]]
    assert news and all(f[1] == "-5001" for f in news)
