"""The harvest spider: no logic of its own, it passes every outcome to the job's :class:`CrawlJob`.

It exists because Scrapy wants a spider; the seeds come from the frontier (so a resumed job does
not start over), the links go straight back into the frontier, and nothing is yielded as items.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import scrapy
from scrapy import signals
from scrapy.exceptions import DontCloseSpider

from harvester.continuous import crawl_job_for
from harvester.contracts import JobSpec
from harvester.crawljob import CrawlJob
from harvester.crawlsignals import uri_archived


class HarvestSpider(scrapy.Spider):
    name = "netharvest"
    custom_settings: dict[str, Any] = {}

    def __init__(self, job: CrawlJob, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.job = job

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> HarvestSpider:
        job = kwargs.pop("job", None)
        if job is None:
            spec: JobSpec = crawler.settings["NH_JOBSPEC"]  # typed, validated when it arrived (crawlsettings)
            job = crawl_job_for(spec, crawler.settings.get("NH_OUT_DIR"), crawler)
        spider = cls(job, *args, **kwargs)
        spider._set_crawler(crawler)
        job.crawler = crawler
        crawler.signals.connect(job.on_archived, signal=uri_archived)
        crawler.signals.connect(spider._closed, signal=signals.spider_closed)
        crawler.signals.connect(spider._idle, signal=signals.spider_idle)
        return spider

    def _idle(self, spider: Any = None) -> None:
        """A continuous job never closes on idle (nothing due now is not the end): only a stop ends it."""
        if self.job.spec.continuous is not None:
            raise DontCloseSpider

    async def start(self) -> AsyncIterator[Any]:
        """No start requests: the seeds are already in the frontier."""
        return
        yield  # pragma: no cover - makes this an async generator

    def parse(self, response: Any, **kwargs: Any) -> list[Any]:
        self.job.on_response(response)
        return []

    def errback(self, failure: Any) -> list[Any]:
        self.job.on_failure(failure)
        return []

    def _closed(self, spider: Any = None, reason: str = "") -> None:
        self.job.closing()
        self.job.checkpoint()
