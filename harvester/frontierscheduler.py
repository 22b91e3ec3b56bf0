"""A Scrapy ``SCHEDULER`` that hands out what the job's frontier says is ready.

Scrapy's engine asks ``next_request()`` whenever it has a free download slot, and again every
few seconds; when every queue is snoozed for politeness the answer is None, so this scheduler also
wakes the engine itself at the earliest queue's time of next fetch (otherwise a 3 s politeness
delay would become Scrapy's 5 s heartbeat). ``has_pending_requests()`` stays true while URIs are
queued (even if all snoozed) or the job is paused, so the crawl only ends when the frontier is
exhausted or the job is stopped.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from scrapy.core.scheduler import BaseScheduler

from harvester.urimeta import UriMeta

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler


class FrontierScheduler(BaseScheduler):
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.job: Any = None
        self._wakeup: Any = None
        self._wakeup_at = 0.0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FrontierScheduler:
        return cls(crawler)

    def open(self, spider: Spider) -> None:
        self.job = spider.job  # type: ignore[attr-defined]
        self.job.attach(self.crawler, spider)
        return None

    def close(self, reason: str) -> None:
        if self._wakeup is not None and self._wakeup.active():
            self._wakeup.cancel()
        return None

    def has_pending_requests(self) -> bool:
        return bool(self.job and self.job.has_pending())

    def enqueue_request(self, request: Request) -> bool:
        """A request from elsewhere (a middleware, a callback that yields): queue it as a link."""
        nh: UriMeta = request.meta.get("nh") or UriMeta()
        if self.job.frontier.was_seen(self.job.canonical_key(request.url)):
            return False
        self.job.discover(request.url, "L", nh, nh.via or request.url)
        return True

    def next_request(self) -> Request | None:
        now = time.time()
        request = self.job.issue(now)
        if request is None:
            self._arm_wakeup(now)
        return request

    def _arm_wakeup(self, now: float) -> None:
        wake = self.job.frontier.next_wake()
        if wake is None or self.job.paused:
            return
        if self._wakeup is not None and self._wakeup.active():
            if self._wakeup_at <= wake:
                return
            self._wakeup.cancel()
        from twisted.internet import reactor

        self._wakeup_at = wake
        self._wakeup = reactor.callLater(max(wake - now, 0.0) + 0.001, self.nudge)  # type: ignore[attr-defined]

    def nudge(self) -> None:
        """Make the engine ask for requests now (a queue woke up)."""
        self.job.wake_engine()

    def __len__(self) -> int:
        return self.job.frontier.queued if self.job else 0
