"""A job's message delivered twice (the orchestrator published it, then died before marking it SUBMITTED, and
published it again) is crawled once: the second delivery finds the job's spool lock held by the live crawl and
returns without crawling; a killed holder leaves no lock behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from crawlhelp import REPO, make_spec

from harvester.joblock import running_alone

HOLDER = """
import sys, time
from pathlib import Path
from harvester.joblock import running_alone
with running_alone(Path(sys.argv[1])) as alone:
    print("held" if alone else "busy", flush=True)
    time.sleep(600)
"""


def _hold(job_dir: Path) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(job_dir)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_a_duplicate_message_of_a_job_being_crawled_is_not_crawled_again(tmp_path, monkeypatch):
    monkeypatch.setenv("NETHARVEST_SPOOL_DIR", str(tmp_path))
    from harvester.runjob import run_job

    job_dir = tmp_path / "41"
    holder = _hold(job_dir)  # the first delivery's worker, crawling job 41
    try:
        answer = run_job.apply(args=[make_spec(["http://127.0.0.1:9/"], job_id=41)]).get()
        assert answer == {"job_id": 41, "duplicate": True}
        assert sorted(p.name for p in job_dir.iterdir()) == [".running"]  # no JobSpec written, no crawl child
    finally:
        holder.kill()
        holder.wait()


def test_a_killed_holder_leaves_no_lock(tmp_path):
    job_dir = tmp_path / "42"
    holder = _hold(job_dir)
    with running_alone(job_dir) as alone:
        assert not alone
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    with running_alone(job_dir) as alone:
        assert alone


def test_a_takeover_waits_for_the_old_jobs_crawl_to_stop_and_gives_up_in_one_line(tmp_path, monkeypatch):
    """A reaped job may still be crawled here by a worker that was only cut off from the broker: its
    resubmission must not move the spool from under it (harvester.runjob._old_job_stopped)."""
    import harvester.runjob as tasks
    from harvester.contracts import JobSpec

    old_dir = tmp_path / "43"
    (old_dir / "state").mkdir(parents=True)
    (old_dir / "state" / "frontier.sqlite").write_bytes(b"")
    spec = JobSpec.from_dict({**make_spec(["http://127.0.0.1:9/"], job_id=44), "continues_job": 43})
    moved: list[str] = []
    monkeypatch.setattr(tasks, "take_over", lambda old, new, spec: moved.append(old.name))
    monkeypatch.setattr(tasks, "TAKEOVER_WAIT_S", 1.5)

    holder = _hold(old_dir)
    try:
        with pytest.raises(tasks.TakeoverBusy, match=r"^job 43, which job 44 continues, is still being crawled"):
            tasks.prepare_job_dir(spec, root=tmp_path)
        assert moved == []
        monkeypatch.setattr(tasks, "TAKEOVER_WAIT_S", 30.0)
        threading.Timer(1.0, holder.kill).start()  # the old crawl stops while the new job waits
        tasks.prepare_job_dir(spec, root=tmp_path)
        assert moved == ["43"] and holder.poll() is not None
    finally:
        holder.kill()
        holder.wait()
