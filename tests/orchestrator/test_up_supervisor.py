"""``netharvest up``'s process manager (orchestrator/supervisor.py): a process killed on its own is started
again and the others run on; a crash loop stops the stack with its exit status; SIGTERM stops everything.
Real processes and signals, run in a child Python (the manager installs signal handlers and so needs a main
thread of its own)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = """
import sys
from orchestrator import supervisor
supervisor.RESTART_DELAY_S = float(sys.argv[1])
supervisor.RESTARTS = 2
m = supervisor.Supervisor()
sleeper = f"exec {sys.executable} -c 'import time; time.sleep(120)'"
m.add_process("steady", sleeper)
for spec in sys.argv[2:] or ["victim="]:
    name, _, command = spec.partition("=")
    m.add_process(name, command or sleeper)
m.loop()
sys.exit(m.returncode)
"""


def _start(*processes: str, delay: float = 0.2) -> subprocess.Popen[str]:
    """The supervisor in a child Python: ``steady`` (a sleeper) and ``processes`` (``name=command``; a sleeper
    named victim when none), restarted ``delay`` s after they end, twice at most."""
    return subprocess.Popen(
        [sys.executable, "-c", _SCRIPT, str(delay), *processes],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _read_until(proc: subprocess.Popen[str], pattern: str, lines: list[str], timeout: float = 30) -> re.Match[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        if not line:
            break
        lines.append(line)
        if found := re.search(pattern, line):
            return found
    raise AssertionError(f"no line matching {pattern!r} in:\n{''.join(lines)}")


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_process_killed_on_its_own_is_started_again_and_the_others_run_on():
    """kill -9 of one process (as the OOM killer would): it is started again, twice, and nothing else stops;
    SIGTERM then stops everything and starts nothing again."""
    proc = _start()
    lines: list[str] = []
    try:
        started = {}
        while len(started) < 2:  # in either order
            found = _read_until(proc, r"(steady|victim) started \(pid=(\d+)\)", lines)
            started[found[1]] = int(found[2])
        steady, victim = started["steady"], started["victim"]
        os.kill(victim, signal.SIGKILL)  # as the OOM killer would
        _read_until(proc, r"victim ended on its own: starting it again", lines)
        again = int(_read_until(proc, r"victim started \(pid=(\d+)\)", lines)[1])
        assert again != victim
        os.kill(again, signal.SIGKILL)  # a second accident is restarted too
        third = int(_read_until(proc, r"victim started \(pid=(\d+)\)", lines)[1])
        os.kill(steady, 0)  # still the same process: nothing else was stopped
        assert not any("steady stopped" in line for line in lines)
        proc.send_signal(signal.SIGTERM)  # the operator stops the stack: nothing is started again
        rest, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 143, rest
    assert "steady stopped" in rest and "victim stopped" in rest and "starting it again" not in rest
    assert _gone(steady) and _gone(third), "a process outlived the stack"


def test_a_crash_loop_stops_the_stack_with_its_exit_status():
    """A process that ends at every start is restarted twice (RESTARTS), then the stack stops with its status."""
    proc = _start(f"victim=exec {sys.executable} -c 'raise SystemExit(3)'")
    try:
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 3, out
    assert out.count("victim ended on its own: starting it again") == 2  # RESTARTS
    assert "victim ended 3 times within 600 s: stopping everything" in out
    assert "steady stopped" in out


def test_two_crash_loops_at_once_stop_the_stack_and_leave_nothing_running():
    """Every process failing at start (a bad setting): while one is being started again the other's crash loop
    stops the stack; the one without a pid yet is signalled when it reports its start, and nothing survives
    (a stop during a restart used to raise KeyError: 'pid' and leave processes running)."""
    for _ in range(5):
        proc = _start(
            f"a=exec {sys.executable} -c 'raise SystemExit(3)'",
            f"b=exec {sys.executable} -c 'raise SystemExit(4)'",
            delay=0.0,
        )
        try:
            out, _ = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        assert proc.returncode in (3, 4), out
        assert "Traceback" not in out and "stopping everything" in out
        steady = int(re.search(r"steady started \(pid=(\d+)\)", out)[1])
        assert _gone(steady)


def test_sigterm_while_a_restart_is_due_stops_everything():
    """The operator stops the stack just after a process died: it is not started again, the stack exits 143."""
    proc = _start(delay=5.0)
    lines: list[str] = []
    try:
        victim = int(_read_until(proc, r"victim started \(pid=(\d+)\)", lines)[1])
        os.kill(victim, signal.SIGKILL)
        _read_until(proc, r"victim ended on its own: starting it again in 5 s", lines)
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 143, rest
    assert "victim started" not in rest and "steady stopped" in rest
