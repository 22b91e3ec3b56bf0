"""One shared object per crawl, kept beside the crawl instead of stashed as an attribute on Scrapy's Crawler.

A few components of one crawl share an object that only exists once the crawl is built: the http, https
and dns download handlers share a connection pool and the fetch slots; the crawl job and the crawl
process read the archive middleware's tallies and files. Scrapy builds each component through
``from_crawler``; the shared object is found here by its crawler (weakly held: it goes with the crawl),
typed, rather than set as an undeclared attribute on the Crawler (issue 16).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar
from weakref import WeakKeyDictionary

T = TypeVar("T")


class PerCrawl(Generic[T]):
    """A crawler → object table for one kind of shared object."""

    def __init__(self) -> None:
        self._by: WeakKeyDictionary[Any, T] = WeakKeyDictionary()

    def get(self, crawler: Any) -> T | None:
        return self._by.get(crawler)

    def set(self, crawler: Any, value: T) -> None:
        self._by[crawler] = value

    def setdefault(self, crawler: Any, make: Callable[[], T]) -> T:
        """The crawl's object, made by ``make`` the first time it is asked for."""
        if crawler not in self._by:
            self._by[crawler] = make()
        return self._by[crawler]
