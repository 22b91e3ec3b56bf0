"""The process manager of ``netharvest up``: honcho's, restarting a process that dies on its own.

honcho runs a Procfile the foreman way: when one process ends, it stops all the others. For a stack that runs
for months (a continuous crawl, the beat that starts the next snapshot) that turns one accident into an
outage: the kernel's OOM killer or an operator's kill -9 of one worker stopped the web UI, the beat and every
other harvester. A supervisor restarts what died (supervisord's ``autorestart``, systemd's ``Restart=always``,
docker-compose's ``restart: unless-stopped``, as deploy's compose file has it), and gives up on a crash loop,
where restarting only hides the cause: here a process that ends while the stack is not stopping (whatever its
exit status: every process of the Procfile is meant to run until stopped) is started again after
:data:`RESTART_DELAY_S`, at most :data:`RESTARTS` times in :data:`RESTART_WINDOW_S`; once more within the
window and the whole stack stops as honcho would, with that process's exit status (128 + n for a signal n).
Ctrl-C and SIGTERM stop everything and restart nothing. The work a killed worker held is not lost by the
restart: its job's heartbeat stops, the reaper fails it and a continuous job is taken over (docs/DESIGN.md).

The signals are sent to each process itself, not its whole group (honcho's default): a Celery or gunicorn
master then shuts its own children down in order, instead of seeing them killed under it and hanging.
SIGKILL, the last resort, still takes the whole group, so nothing is left running.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import signal
import time
from collections.abc import Callable
from typing import Any

import honcho.manager

from harvester.restarts import RestartBudget

#: A process that died is started again this long after.
RESTART_DELAY_S = 2.0
#: At most this many restarts of one process in RESTART_WINDOW_S; the next death there stops the stack.
RESTARTS = 3
RESTART_WINDOW_S = 600.0
#: How long the processes have to stop after SIGTERM (a worker's warm shutdown) before SIGKILL.
KILL_WAIT_S = 30.0


class _PoliteProcessManager:
    """SIGTERM to the process, SIGKILL to its group (see the module docstring)."""

    def terminate(self, pid: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)

    def kill(self, pid: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)


class Supervisor(honcho.manager.Manager):
    """honcho's :class:`~honcho.manager.Manager` with the restarts of the module docstring (its ``loop`` is
    replaced; adding processes, printing and signalling are honcho's)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._procmgr = _PoliteProcessManager()
        self._monotonic = clock
        self._budgets: dict[str, RestartBudget] = {}  # name -> its restarts
        self._due: dict[str, float] = {}  # name -> when to start it again
        self._signalled: int | None = None  # SIGINT / SIGTERM received, not yet acted on

    def loop(self) -> None:
        def _stop(signum: int, frame: Any) -> None:
            self._signalled = signum  # acted on by the loop, never in the middle of its own steps

        signal.signal(signal.SIGTERM, _stop)
        signal.signal(signal.SIGINT, _stop)
        self._start()
        stopping_since: float | None = None
        while True:
            try:
                self._handle(self.events.get(timeout=0.1))
            except queue.Empty:
                self._reap_silent()
            if self._signalled is not None and not self._terminating:
                self._system_print(f"{honcho.manager.SIGNALS[self._signalled]['name']} received\n")
                self.returncode = honcho.manager.SIGNALS[self._signalled]["rc"]
                self.terminate()
            now = self._monotonic()
            for name, at in list(self._due.items()):
                if at <= now:
                    del self._due[name]
                    self._start_one(name)
            if not self._due and self._all_started() and self._all_stopped():
                return
            if self._terminating and stopping_since is None:
                stopping_since = now
            if stopping_since is not None and now - stopping_since > KILL_WAIT_S:
                self.kill()

    def terminate(self) -> None:
        self._due.clear()  # stopping: nothing is started again
        super().terminate()

    def _killall(self, force: bool = False) -> None:
        """Signal every process that runs; one being started again has no pid yet: it is signalled when its
        start is reported (:meth:`_handle`)."""
        for name, entry in self._processes.items():
            if "returncode" in entry or entry.get("pid") is None:
                continue
            self._system_print(f"sending {'SIGKILL' if force else 'SIGTERM'} to {name} (pid {entry['pid']})\n")
            if force:
                self._procmgr.kill(entry["pid"])
            else:
                self._procmgr.terminate(entry["pid"])

    def _all_started(self) -> bool:
        return all(entry.get("pid") is not None or "returncode" in entry for entry in self._processes.values())

    def _handle(self, msg: Any) -> None:
        """One event of a process's wrapper: a line of its output, its start, its end."""
        if msg.type == "line":
            self._printer.write(msg)
        elif msg.type == "start":
            self._processes[msg.name]["pid"] = msg.data["pid"]
            self._system_print(f"{msg.name} started (pid={msg.data['pid']})\n")
            if self._terminating:  # started again just as the stack began to stop
                self._procmgr.terminate(msg.data["pid"])
        elif msg.type == "stop":
            self._ended(msg.name, msg.data["returncode"])

    def _ended(self, name: str, code: int) -> None:
        """A process ended: started again after RESTART_DELAY_S, unless the stack is stopping or it is a crash
        loop (then the stack stops with its exit status: 128 + n for a signal n, 1 for a clean exit)."""
        self._processes[name]["returncode"] = code
        self._system_print(f"{name} stopped (rc={code})\n")
        if self._terminating:
            return
        if self._may_restart(name):
            self._system_print(f"{name} ended on its own: starting it again in {RESTART_DELAY_S:g} s\n")
            self._due[name] = self._monotonic() + RESTART_DELAY_S
            return
        self._system_print(f"{name} ended {RESTARTS + 1} times within {RESTART_WINDOW_S:g} s: stopping everything\n")
        if self.returncode is None:
            self.returncode = code if code > 0 else 128 - code if code < 0 else 1
        self.terminate()

    def _reap_silent(self) -> None:
        """A wrapper that died without reporting its process's start (it could not fork or run the command:
        out of memory, say) will report nothing more: it counts as an end, or the stack would wait for it."""
        for name, entry in self._processes.items():
            wrapper = entry.get("process")
            if entry.get("pid") is None and "returncode" not in entry and wrapper and wrapper.exitcode is not None:
                self._ended(name, wrapper.exitcode or 1)

    def _may_restart(self, name: str) -> bool:
        """Whether the process may be started again now, within RESTARTS in RESTART_WINDOW_S (then counted)."""
        budget = self._budgets.setdefault(name, RestartBudget(RESTART_WINDOW_S, RESTARTS, clock=self._monotonic))
        if not budget.allows():
            return False
        budget.spend()
        return True

    def _start_one(self, name: str) -> None:
        """Start a process again, with a fresh wrapper (honcho's own ``_start`` starts them all)."""
        entry = self._processes[name]
        entry.pop("pid", None)
        entry.pop("returncode", None)
        entry["process"] = multiprocessing.Process(name=name, target=entry["obj"].run, args=(self.events, True))
        try:
            entry["process"].start()
        except OSError as exc:  # no fork: as if it had died at once
            self._system_print(f"{name} could not be started: {exc}\n")
            self._ended(name, 1)
