"""How big can one continuous job get? The continuous crawler's own costs as a function of its URIs.

    .venv/bin/python benchmarks/bench_continuous.py --uris 1000,10000,100000 --pure 100000,1000000
    .venv/bin/python benchmarks/bench_continuous.py --tiny

A continuous job (issue 12) holds every URI it ever found, revisits each for ever, and keeps them all in
memory with their revisit-policy state; an operator sizing a news-site crawl of 100,000-1,000,000 URIs
needs to know what that costs before the job is that big. Two parts:

**The real path** (``--uris``): the crawl child (``python -m harvester.process``, the process a job runs
in) crawls bench_harvest's generated loopback site of N pages (page k links pages 10k+1 … 10k+10), first
as a **one-shot** (selective) job, then as a **continuous** job, then one-shot again (interleaved: the
machine is shared). The continuous job has a high fetch budget (``--budget`` fetches/s), no politeness
delay and time constants in seconds (a URI's first wait is about one round, N / budget), so its N URIs
are all found and visited once within minutes. Then:

* **replan**: the adaptive policy replans every ``replan_interval_s``, set just after the first round;
  the crawl child logs each replan's planning seconds, its longest slice and the time it took between the
  fetches, and its rescheduling (harvester.continuous: the replan runs in slices between the fetches), and
  crawl.log's fetch start times give the longest gap between two fetches around it: how long fetching stalled;
* **steady state**: after the replan, CPU seconds of the child (/proc) per crawl.log line (a fetch),
  against the one-shot crawls' CPU per line over the middle 80 % of their lines (start-up and the
  end-of-job reports left out on both sides); the child's RSS per URI; the fetch gaps (p99, max);
  the checkpoints and progress writes slower than 0.25 s (logged by the child);
* **restart**: kill -9 of the child, then a new one on the same job directory: seconds until it fetches
  again (loading the frontier and the policy state from ``state/frontier.sqlite``; the policy goes on
  with its journalled plan, so no replan comes before the first fetch: counted), and whether anything was
  lost: every URI the journal held at the kill is still in the frontier after the restart, with its
  policy state and at least as many visits.

**The pure parts** (``--pure``): the same ARFrontier and RevisitPolicy in this process, without a crawl,
at sizes a loopback crawl cannot reach in minutes (1,000,000): N URIs added and each visited once, then
a replan run a slice at a time as the crawl runs it (its longest slice), its rescheduling, the checkpoints
that journal its moves a few thousand at a time (their number and the longest), the figures a progress
heartbeat computes (due next, freshness), a steady-state checkpoint (``--budget`` URIs written, one second's
visits), reloading the journal as a restart does (with the plan the replan journalled), and the RSS per URI.
Each size runs in its own process so its RSS is its own.
"""

from __future__ import annotations

import argparse
import calendar
import json
import math
import os
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_harvest import jobspec, start_server  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
#: Checkpoints and progress writes slower than this are logged by the crawl child (harvester.continuous,
#: harvester.process).
REPLAN_RE = re.compile(
    r"replan of (\d+) URIs: (\d+) moved; planning ([0-9.]+) s in slices of at most ([0-9.]+) ms over ([0-9.]+) s, "
    r"rescheduling ([0-9.]+) s"
)
SLOW_RE = re.compile(r"slow (checkpoint|progress): ([0-9.]+) s")
LOG_TIME_RE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
BEGAN_RE = re.compile(r"^(\d{17})\+\d+$")


# -- the crawl child from outside --------------------------------------------------------------------------
def proc_cpu(pid: int) -> float:
    """User + system CPU seconds of a running process (/proc/<pid>/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def proc_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class CrawlLog:
    """crawl.log read as it grows: each line's fetch start (seconds, UTC) and URI."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.lines = 0
        self.starts: list[float] = []  # fetch start of each line with one
        self.pages: set[str] = set()  # .html URIs fetched with 200

    def read(self) -> int:
        if not self.path.exists():
            return self.lines
        with open(self.path, encoding="utf-8") as f:
            f.seek(self.offset)
            chunk = f.read()
        end = chunk.rfind("\n") + 1
        self.offset += len(chunk[:end].encode())
        for line in chunk[:end].splitlines():
            fields = line.split()
            if len(fields) < 9:
                continue
            self.lines += 1
            m = BEGAN_RE.match(fields[8])
            if m:
                self.starts.append(began(m.group(1)))
            if fields[1] == "200" and fields[3].endswith(".html"):
                self.pages.add(fields[3])
        return self.lines


def began(stamp: str) -> float:
    """crawl.log's 17-digit fetch start (UTC) as Unix seconds."""
    return calendar.timegm(time.strptime(stamp[:14], "%Y%m%d%H%M%S")) + int(stamp[14:17]) / 1000


def log_time(line: str) -> float | None:
    """A harvester.log line's time (local time, whole seconds) as Unix seconds."""
    m = LOG_TIME_RE.match(line)
    return time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")) if m else None


def engine_log(job_dir: Path, offset: int = 0) -> list[str]:
    path = job_dir / "logs" / "harvester.log"
    if not path.exists():
        return []
    with open(path, encoding="utf-8", errors="replace") as f:
        f.seek(offset)
        return f.read().splitlines()


def log_size(job_dir: Path) -> int:
    path = job_dir / "logs" / "harvester.log"
    return path.stat().st_size if path.exists() else 0


def wait_until(check: Callable[[], bool], timeout: float, what: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if proc.poll() is not None:
            raise SystemExit(f"the crawl child exited ({proc.returncode}) while waiting for {what}")
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.2)


def gaps(starts: list[float], lo: float = -1.0, hi: float = float("inf")) -> list[tuple[float, float]]:
    """(gap seconds, start of the gap) between consecutive fetch starts within [lo, hi]."""
    xs = sorted(t for t in starts if lo <= t <= hi)
    return [(b - a, a) for a, b in zip(xs, xs[1:], strict=False)]


def child(job_dir: Path) -> subprocess.Popen[bytes]:
    """The crawl child with its controls on stdin, as the worker runs it."""
    return subprocess.Popen(
        [sys.executable, "-m", "harvester.process", str(job_dir), "--control-stdin"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def stop(proc: subprocess.Popen[bytes], job_id: int, timeout: float) -> float:
    """Control ``stop``; seconds until the child exited (the end-of-job reports included)."""
    assert proc.stdin is not None
    t0 = time.monotonic()
    proc.stdin.write((json.dumps({"job_id": job_id, "action": "stop", "argument": "", "id": 1}) + "\n").encode())
    proc.stdin.flush()
    proc.wait(timeout)
    return time.monotonic() - t0


# -- one-shot ------------------------------------------------------------------------------------------------
def run_oneshot(seed: str, work: Path, n: int, valence: int, name: str) -> dict[str, Any]:
    """A selective crawl of the same site by the same crawl child: CPU per crawl.log line over the middle
    80 % of its lines (sampled from /proc every 0.1 s), its peak RSS."""
    job_dir = work / name
    job_dir.mkdir(parents=True)
    (job_dir / "jobspec.json").write_text(json.dumps(jobspec(seed, 1, valence)))
    proc = subprocess.Popen(
        [sys.executable, "-m", "harvester.process", str(job_dir)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    log = CrawlLog(job_dir / "logs" / "crawl.log")
    samples: list[tuple[int, float]] = []
    rss = 0.0
    t0 = time.monotonic()
    while proc.poll() is None:
        try:
            cpu, rss = proc_cpu(proc.pid), max(rss, proc_rss_mb(proc.pid))
        except (OSError, IndexError):
            break
        samples.append((log.read(), cpu))
        time.sleep(0.1)
    wall = time.monotonic() - t0
    assert proc.wait() == 0, (job_dir / "logs" / "harvester.log").read_text()[-3000:]
    total = log.read()
    mid = [(lines, cpu) for lines, cpu in samples if 0.1 * total <= lines <= 0.9 * total]
    if len(mid) >= 2 and mid[-1][0] > mid[0][0]:
        per_line = (mid[-1][1] - mid[0][1]) / (mid[-1][0] - mid[0][0])
    else:  # too small to sample mid-crawl: the whole run
        per_line = (samples[-1][1] if samples else 0.0) / max(total, 1)
    return {"lines": total, "pages": len(log.pages), "wall": wall, "cpu_ms": 1000 * per_line, "rss_mb": rss}


# -- continuous ----------------------------------------------------------------------------------------------
def continuous_jobspec(seed: str, job_id: int, valence: int, budget: float, wait_s: int, replan_s: int) -> dict:
    """bench_harvest's JobSpec as a continuous job: the adaptive policy, time constants in seconds."""
    spec = jobspec(seed, job_id, valence)
    spec["kind"] = "continuous"
    spec["continuous"] = {
        "budget_per_s": budget,
        "max_uris_per_host": 10_000_000,  # one loopback host holds the whole site
        "revisit": {
            "policy": "adaptive",
            "initial_wait_s": dict.fromkeys(("text", "image", "audio_video", "other"), wait_s),
            "min_wait_s": 1,
            "max_wait_s": max(10 * wait_s, 60),
            "default_wait_s": wait_s,
            "replan_interval_s": replan_s,
        },
    }
    return spec


def replans(lines: list[str]) -> list[dict[str, Any]]:
    out = []
    for line in lines:
        m = REPLAN_RE.search(line)
        if m:
            uris, moved, plan, longest, over, resched = m.groups()
            out.append(
                {
                    "at": log_time(line),
                    "uris": int(uris),
                    "moved": int(moved),
                    "plan_s": float(plan),
                    "slice_max_s": float(longest) / 1000,
                    "plan_wall_s": float(over),
                    "reschedule_s": float(resched),
                }
            )
    return out


def slow_lines(lines: list[str]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"checkpoint": [], "progress": []}
    for line in lines:
        m = SLOW_RE.search(line)
        if m:
            out[m.group(1)].append(float(m.group(2)))
    return out


def stall_around(starts: list[float], at: float, blocked_s: float) -> float:
    """The longest gap between fetch starts that began while the replan logged at ``at`` ran (whole seconds;
    it ran for ``blocked_s`` before the line). A gap that began before it is the crawl's own idleness (all
    URIs waiting for their next time), which a replan ends when it moves URIs forward."""
    lo = at - blocked_s - 30
    around = [g for g, a in gaps(starts, lo, at + 30) if at - blocked_s - 1 <= a <= at + 1.5]
    return max(around, default=0.0)


def journal(job_dir: Path) -> dict[str, int]:
    """URI -> visits, for every URI the journal holds in the frontier (state QUEUED) with a policy state."""
    db = sqlite3.connect(f"file:{job_dir / 'state' / 'frontier.sqlite'}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT u.url, a.policy FROM uris u JOIN ar a ON a.id = u.id WHERE u.state = 0")
        return {url: json.loads(policy)["visits"] for url, policy in rows if policy}
    finally:
        db.close()


def run_continuous(seed: str, work: Path, n: int, args: argparse.Namespace) -> dict[str, Any]:
    budget = args.budget
    round_s = n / budget
    wait_s = max(2, round(round_s))
    replan_s = max(args.min_replan_s, round(1.3 * round_s) + 10)
    job_dir = work / "continuous"
    job_dir.mkdir(parents=True)
    spec = continuous_jobspec(seed, 2, args.valence, budget, wait_s, replan_s)
    (job_dir / "jobspec.json").write_text(json.dumps(spec))
    log = CrawlLog(job_dir / "logs" / "crawl.log")
    r: dict[str, Any] = {"uris": n, "budget": budget, "replan_interval_s": replan_s}
    t0 = time.time()
    proc = child(job_dir)
    try:
        # 1. the first round: every page found and fetched once
        limit = 3 * round_s + 120
        wait_until(lambda: log.read() >= 0 and len(log.pages) >= n, limit, f"the first round of {n} pages", proc)
        r["first_round_s"] = time.time() - t0
        first_done = time.time()

        # 2. a replan after the first round (the whole job planned)
        def replanned() -> bool:
            return any(p["at"] and p["at"] >= first_done - 1 for p in replans(engine_log(job_dir)))

        wait_until(replanned, replan_s + limit, "a replan after the first round", proc)
        plan = [p for p in replans(engine_log(job_dir)) if p["at"] and p["at"] >= first_done - 1][0]
        r["replan"] = plan
        # 3. steady state, after the replan: CPU per fetch, RSS, gaps
        time.sleep(2.0)
        window = max(3.0, min(args.window, replan_s - 6))
        log.read()
        lines0, cpu0, w0 = log.lines, proc_cpu(proc.pid), time.time()
        time.sleep(window)
        log.read()
        lines1, cpu1, w1 = log.lines, proc_cpu(proc.pid), time.time()
        r["steady_fetches_per_s"] = (lines1 - lines0) / (w1 - w0)
        r["steady_cpu_ms"] = 1000 * (cpu1 - cpu0) / max(lines1 - lines0, 1)
        r["rss_mb"] = proc_rss_mb(proc.pid)
        steady = [g for g, _ in gaps(log.starts, w0, w1)]
        r["gap_p99_s"] = statistics.quantiles(steady, n=100)[98] if len(steady) >= 100 else max(steady, default=0.0)
        r["gap_max_s"] = max(steady, default=0.0)
        log.read()
        blocked = plan["plan_wall_s"] + plan["reschedule_s"]
        r["replan_stall_s"] = stall_around(log.starts, plan["at"], blocked)
        slow = slow_lines(engine_log(job_dir))
        r["slow_checkpoints"] = slow["checkpoint"]
        r["slow_progress"] = slow["progress"]
        # 4. kill -9, restart
        time.sleep(1.2)  # a checkpoint since the last visits
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(30)
    before = journal(job_dir)
    r["journalled"] = len(before)
    log.read()
    seen_lines = log.lines
    offset = log_size(job_dir)
    t_restart = time.time()
    proc = child(job_dir)
    try:
        wait_until(lambda: log.read() > seen_lines, 600, "the first fetch after the restart", proc)
        first_fetch = min(log.starts[-(log.lines - seen_lines) :], default=time.time())
        r["restart_first_fetch_s"] = first_fetch - t_restart
        time.sleep(3.0)
        # The journalled plan goes on: a replan before the first fetch would be the one a restart used to force.
        r["restart_replans_before_fetching"] = sum(
            1 for plan in replans(engine_log(job_dir, offset)) if plan["at"] is not None and plan["at"] < first_fetch
        )
        loaded = [line for line in engine_log(job_dir, offset) if "resumed job" in line]
        r["restart_resumed_at"] = (log_time(loaded[0]) or t_restart) - t_restart if loaded else None
        r["stop_s"] = stop(proc, 2, 600)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(30)
    after = journal(job_dir)
    r["lost"] = sum(1 for url in before if url not in after)
    r["fewer_visits"] = sum(1 for url, visits in before.items() if after.get(url, 0) < visits)
    return r


# -- the pure parts ------------------------------------------------------------------------------------------
def pure(n: int, budget: float) -> dict[str, Any]:
    """ARFrontier + RevisitPolicy of ``n`` visited URIs in this process, no crawl (see the module docstring)."""
    from harvester.arfrontier import ARFrontier
    from harvester.continuous import cyclic_gc_paused, timed
    from harvester.frontier import Politeness
    from harvester.hosts import host_key
    from harvester.revisit.adaptive import finish
    from harvester.revisit.policy import RevisitPolicy, RevisitSettings, Visit
    from harvester.urimeta import UriMeta

    def rss() -> float:
        return proc_rss_mb(os.getpid())

    # A first wait of four rounds: the replan, which spreads the budget over the URIs (a round each), moves them
    # all, as the first replan of a job whose first waits were the content class's guesses does.
    wait_s = max(2, round(4 * n / budget))
    settings = RevisitSettings(
        initial_wait_s=dict.fromkeys(("text", "image", "audio_video", "other"), wait_s),
        min_wait_s=1,
        max_wait_s=max(10 * wait_s, 60),
        replan_interval_s=max(60, round(1.3 * n / budget)),
    )
    r: dict[str, Any] = {"uris": n}
    rss0 = rss()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "frontier.sqlite"
        policy = RevisitPolicy(settings, budget)
        f = ARFrontier(path, Politeness(), host_key, policy=policy, budget_per_s=budget)
        now = time.time()
        parent = "http://127.0.0.1:8000/p/0.html"
        for i in range(n):
            url = f"http://127.0.0.1:8000/p/{i}.html"
            f.add(url, url, UriMeta.found("L", parent, "127.0.0.1"))
        f.checkpoint()
        for i, entry in enumerate(list(f.entries.values())):  # each visited once, at the budget's pace
            at = policy.visited(entry.url, Visit(200, "text/html", 5000, 0.01, None, None, f"d{i}"), now + i / budget)
            f._requeue(entry, at)
            f.queued -= 1
        for q in f.arq.values():
            f._consider_q(q)  # as the crawl's issue does: the heap's stale first items dropped
        f.checkpoint()
        r["rss_mb"] = rss() - rss0
        later = now + n / budget + 1
        # as the crawl runs it, a slice at a time, the cyclic collector paused (harvester.continuous._replan_slices)
        with cyclic_gc_paused():
            moved, r["plan_s"], r["slice_max_s"] = finish(timed(policy.replan_steps(later)))
        r["moved"] = len(moved)
        t = time.perf_counter()
        for url, at in moved.items():
            f.reschedule(url, at)
        r["reschedule_s"] = time.perf_counter() - t
        checkpoints, longest, total = 0, 0.0, 0.0
        while f._moved or checkpoints == 0:  # the moves, MOVED_PER_CHECKPOINT at a time, then the plan
            t = time.perf_counter()
            f.checkpoint()
            spent = time.perf_counter() - t
            checkpoints, longest, total = checkpoints + 1, max(longest, spent), total + spent
        r["checkpoint_s"], r["checkpoints"], r["checkpoint_max_s"] = total, checkpoints, longest
        t = time.perf_counter()
        f.due_next()
        f.hosts(later)
        f.ar_queue_states(later)
        r["progress_s"] = time.perf_counter() - t
        t = time.perf_counter()
        policy.freshness(later)
        r["freshness_s"] = time.perf_counter() - t
        # One second of the steady state: ``budget`` URIs visited again, then the checkpoint that writes them.
        entries = list(f.entries.values())[: int(budget)]
        for entry in entries:
            at = policy.visited(entry.url, Visit(200, "text/html", 5000, 0.01, None, None, "same"), later + 1)
            f._requeue(entry, at)
            f.queued -= 1
        for q in f.arq.values():
            f._consider_q(q)
        t = time.perf_counter()
        f.checkpoint()
        r["steady_checkpoint_s"] = time.perf_counter() - t
        assert f.db is not None
        f.db.close()
        t = time.perf_counter()
        policy2 = RevisitPolicy(settings, budget)
        f2 = ARFrontier(path, Politeness(), host_key, policy=policy2, budget_per_s=budget)
        r["reload_s"] = time.perf_counter() - t
        r["reloaded"] = sum(1 for url in policy.uris if url in f2.by_url and url in policy2.uris)
        r["plan_restored"] = policy2.next_replan_at == policy.next_replan_at and math.isfinite(policy2.next_replan_at)
    return r


def run_pure(n: int, budget: float) -> dict[str, Any]:
    """:func:`pure` in a process of its own (its RSS its own)."""
    out = subprocess.run(
        [sys.executable, __file__, "--pure-one", str(n), "--budget", str(budget)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- output --------------------------------------------------------------------------------------------------
def fmt(x: float | None, digits: int = 2) -> str:
    if x is None:
        return "-"
    return f"{x:,.{digits}f}"


def print_real(rows: list[dict[str, Any]]) -> None:
    print("\n## Continuous crawl on the real path (crawl child vs loopback site)\n")
    print("| URIs | " + " | ".join(f"{r['uris']:,}" for r in rows) + " |")
    print("|---|" + "---|" * len(rows))

    def row(label: str, value: Callable[[dict[str, Any]], str]) -> None:
        print(f"| {label} | " + " | ".join(value(r) for r in rows) + " |")

    row("first round (all pages fetched once) s", lambda r: fmt(r["first_round_s"], 1))
    row("replan: planning s (in slices)", lambda r: fmt(r["replan"]["plan_s"], 3))
    row("replan: longest slice s", lambda r: fmt(r["replan"]["slice_max_s"], 4))
    row("replan: planning over s (fetching meanwhile)", lambda r: fmt(r["replan"]["plan_wall_s"], 3))
    row("replan: URIs moved", lambda r: f"{r['replan']['moved']:,}")
    row("replan: rescheduling s", lambda r: fmt(r["replan"]["reschedule_s"], 3))
    row("replan: longest fetch gap s", lambda r: fmt(r["replan_stall_s"], 3))
    row("steady: fetches/s", lambda r: fmt(r["steady_fetches_per_s"], 1))
    row("steady: fetch gap p99 s", lambda r: fmt(r["gap_p99_s"], 3))
    row("steady: fetch gap max s", lambda r: fmt(r["gap_max_s"], 3))
    row("steady: CPU per fetch ms, continuous", lambda r: fmt(r["steady_cpu_ms"]))
    row("CPU per fetch ms, one-shot (before / after)", lambda r: f"{fmt(r['oneshot'][0])} / {fmt(r['oneshot'][1])}")
    row("continuous / one-shot CPU per fetch", lambda r: fmt(r["steady_cpu_ms"] / statistics.mean(r["oneshot"])))
    row("slow checkpoints (>= 0.25 s): count, max s", lambda r: slow_cell(r["slow_checkpoints"]))
    row("slow progress writes (>= 0.25 s): count, max s", lambda r: slow_cell(r["slow_progress"]))
    row("RSS MB, continuous (one-shot peak)", lambda r: f"{fmt(r['rss_mb'], 0)} ({fmt(r['oneshot_rss_mb'], 0)})")
    row("RSS KB per URI (above the one-shot's)", lambda r: fmt(1024 * (r["rss_mb"] - r["oneshot_rss_mb"]) / r["uris"]))
    row("restart: to the first fetch s", lambda r: fmt(r["restart_first_fetch_s"], 2))
    row("restart: journal reloaded (log 'resumed') s", lambda r: fmt(r["restart_resumed_at"], 2))
    row("restart: replans before the first fetch", lambda r: str(r["restart_replans_before_fetching"]))
    row("restart: URIs journalled at the kill", lambda r: f"{r['journalled']:,}")
    row("restart: URIs lost, with fewer visits", lambda r: f"{r['lost']}, {r['fewer_visits']}")
    row("stop (end-of-job) s", lambda r: fmt(r["stop_s"], 1))


def slow_cell(values: list[float]) -> str:
    return f"{len(values)}, {fmt(max(values), 2)}" if values else "0, -"


def print_pure(rows: list[dict[str, Any]]) -> None:
    print("\n## Continuous crawl, the pure parts (ARFrontier + RevisitPolicy in one process, no crawl)\n")
    print("| URIs | " + " | ".join(f"{r['uris']:,}" for r in rows) + " |")
    print("|---|" + "---|" * len(rows))
    labels = [
        ("replan: planning s (in slices)", "plan_s", 3),
        ("replan: longest slice s", "slice_max_s", 4),
        ("replan: rescheduling s", "reschedule_s", 3),
        ("replan: journalling the moves s (all checkpoints)", "checkpoint_s", 3),
        ("replan: checkpoints journalling the moves", "checkpoints", 0),
        ("replan: longest of those checkpoints s", "checkpoint_max_s", 3),
        ("progress heartbeat: due next, hosts, queues s", "progress_s", 3),
        ("progress heartbeat: freshness s", "freshness_s", 3),
        ("steady checkpoint s (budget URIs)", "steady_checkpoint_s", 3),
        ("restart: reload journal s", "reload_s", 2),
        ("RSS MB", "rss_mb", 0),
    ]
    for label, key, digits in labels:
        print(f"| {label} | " + " | ".join(fmt(r[key], digits) for r in rows) + " |")
    print("| RSS KB per URI | " + " | ".join(fmt(1024 * r["rss_mb"] / r["uris"], 1) for r in rows) + " |")
    print("| URIs reloaded with their state | " + " | ".join(f"{r['reloaded']:,}" for r in rows) + " |")
    print(
        "| restart: plan restored (no replan) | "
        + " | ".join("yes" if r["plan_restored"] else "no" for r in rows)
        + " |"
    )


def loadavg() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--uris", default="1000,10000", help="real-path sizes, comma-separated")
    parser.add_argument("--pure", default="", help="pure-part sizes, comma-separated")
    parser.add_argument("--budget", type=float, default=300.0, help="fetch budget, fetches/s")
    parser.add_argument("--valence", type=int, default=8, help="parallel connections per host")
    parser.add_argument("--window", type=float, default=30.0, help="steady-state window, seconds")
    parser.add_argument("--min-replan-s", type=int, default=20, help="shortest replan interval")
    parser.add_argument("--tiny", action="store_true", help="seconds: the test suite's size")
    parser.add_argument("--pure-one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.pure_one:
        print(json.dumps(pure(args.pure_one, args.budget)))
        return 0
    if args.tiny:
        args.uris, args.pure, args.budget, args.window, args.min_replan_s = "300", "2000", 150.0, 3.0, 6
    sizes = [int(x) for x in args.uris.split(",") if x]
    pure_sizes = [int(x) for x in args.pure.split(",") if x]
    print(f"load average at start: {loadavg()}; budget {args.budget:g}/s, valence {args.valence}", flush=True)
    rows = []
    for n in sizes:
        server, port = start_server(n)
        seed = f"http://127.0.0.1:{port}/p/0.html"
        try:
            with tempfile.TemporaryDirectory() as tmp:
                work = Path(tmp)
                before = run_oneshot(seed, work, n, args.valence, "oneshot-before")
                r = run_continuous(seed, work, n, args)
                after = run_oneshot(seed, work, n, args.valence, "oneshot-after")
        finally:
            server.terminate()
            server.wait()
        r["oneshot"] = [before["cpu_ms"], after["cpu_ms"]]
        r["oneshot_rss_mb"] = max(before["rss_mb"], after["rss_mb"])
        print(f"{n:,} URIs done (load average {loadavg()}): {json.dumps(r)}", flush=True)
        rows.append(r)
    pure_rows = []
    for n in pure_sizes:
        p = run_pure(n, args.budget)
        print(f"pure {n:,} URIs done (load average {loadavg()}): {json.dumps(p)}", flush=True)
        pure_rows.append(p)
    if rows:
        print_real(rows)
    if pure_rows:
        print_pure(pure_rows)
    print(f"\nload average at end: {loadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
