"""A budget of restarts in a sliding window: a crash loop gives up, accidents far apart are each survived.

Shared by the harvester worker, which restarts a crawl child that stalled or was killed
(:func:`harvester.runjob.restart_budget`), and ``netharvest up``, which restarts a process of the stack that
died (:mod:`orchestrator.supervisor`).
"""

from __future__ import annotations

import time
from collections.abc import Callable


class RestartBudget:
    """At most ``limit`` restarts in any window of ``window_s`` seconds; after a stall (``allows(stalled=True)``)
    the window is ``stall_window_s`` (default: the same)."""

    def __init__(
        self,
        window_s: float,
        limit: int,
        clock: Callable[[], float] = time.monotonic,
        stall_window_s: float | None = None,
    ) -> None:
        self.window_s = window_s
        self.limit = limit
        self.stall_window_s = max(window_s, stall_window_s or 0.0)
        self.clock = clock
        self.spent: list[float] = []

    def allows(self, stalled: bool = False) -> bool:
        """Whether one more restart (after a stall, or after a death) is within the budget now."""
        now = self.clock()
        self.spent = [t for t in self.spent if now - t < self.stall_window_s]
        window = self.stall_window_s if stalled else self.window_s
        return sum(1 for t in self.spent if now - t < window) < self.limit

    def spend(self) -> None:
        self.spent.append(self.clock())
