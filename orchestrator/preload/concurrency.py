"""Running one coroutine over millions of items with a bounded number in flight."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


async def unordered_map(
    func: Callable[[T], Awaitable[R]], items: Iterable[T], limit: int
) -> AsyncIterator[tuple[T, R]]:
    """(item, result) in completion order, at most ``limit`` calls at once.

    ``limit`` workers share one iterator over ``items``, so the input is streamed (a file of millions of
    names is never held as tasks) and the queue between workers and consumer keeps memory bounded.
    """
    source = iter(items)
    queue: asyncio.Queue[tuple[T, R] | None] = asyncio.Queue(maxsize=limit * 2)

    async def worker() -> None:
        try:
            for item in source:  # each item is taken by exactly one worker
                await queue.put((item, await func(item)))
        finally:
            await queue.put(None)

    workers = [asyncio.create_task(worker()) for _ in range(max(1, limit))]
    running = len(workers)
    try:
        while running:
            result = await queue.get()
            if result is None:
                running -= 1
                continue
            yield result
    finally:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
