"""Loading one page in headless Chromium for page QA: what it asked for, what failed, what it looks and reads like.

Playwright drives Debian's Chromium (``executable_path``, as the browser tests do: no browser download). Each
page gets a fresh browser context (no cache or cookies carried from one page, or from replay to live), a fixed
1280×800 viewport (so the replay and live screenshots compare pixel for pixel) and a time limit: a page that
never fires ``load`` (a script in an endless loop, a resource that never finishes) is cut at
``timeout_s``, reported as timed out, and photographed as far as it got.

In replay, a resource the page needs and the archive lacks comes back from pywb as an error status without a
``Memento-Datetime`` header; an archived error (a site's own 404, captured) carries that header and is the
archive being faithful, not a gap. Requests that leave the replay service (a script building a live URL that
pywb's client-side rewriting missed) are blocked and reported: QA must judge the archive, not the live web.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from indexer.replaylayout import URL_PREFIX

log = logging.getLogger(__name__)

CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1280, "height": 800}
#: After ``load``: how long to wait for the network to go quiet (late script-loaded resources).
SETTLE_S = 3.0
#: Screenshot and text of a page that did not load are taken within this (its renderer may be stuck).
AFTERMATH_S = 5.0
TEXT_LIMIT = 100_000
_REPLAYED = re.compile(rf"^{re.escape(URL_PREFIX)}/[^/]+/(?:\d{{0,14}}(?:[a-z]{{2}}_)?/)?(.+)$")


def archived_url(replay_address: str) -> str | None:
    """The archived URL a replay request stands for (pywb's ``/replay/<coll>/<ts><mode>/<url>``), or None."""
    parts = urlsplit(replay_address)
    match = _REPLAYED.match(parts.path)
    if not match:
        return None
    url = match.group(1)
    if url.startswith("//"):
        url = "http:" + url
    return url + (f"?{parts.query}" if parts.query else "")


class BrowserUnavailable(RuntimeError):
    """Chromium cannot be started (missing, not executable, or failing to launch): one clear line for the QA run,
    instead of a Playwright traceback the curator cannot act on."""


def chromium_problem(executable: str | Path) -> str | None:
    """Why ``executable`` cannot serve as page QA's browser, or None if it looks usable. ``netharvest up`` asks
    before starting the qa worker, and :class:`PageLoader` before launching it."""
    path = Path(executable)
    if not path.is_file():
        return (
            f"Chromium not found at {path} (NETHARVEST_QA_CHROMIUM): install it (apt-get install chromium) "
            "or point NETHARVEST_QA_CHROMIUM at a Chromium binary"
        )
    if not os.access(path, os.X_OK):
        return f"Chromium at {path} (NETHARVEST_QA_CHROMIUM) is not executable"
    return None


@dataclass
class Failed:
    url: str  # the address the browser asked for
    resource_type: str
    status: int | None  # None: the request failed without an answer
    archived: bool  # the answer came from the archive (a captured error), not from a gap in it


@dataclass
class PageLoad:
    url: str
    status: int | None = None
    title: str = ""
    text: str = ""
    screenshot: bytes | None = None
    timed_out: bool = False
    errors: list[str] = field(default_factory=list)
    requests: int = 0
    failed: list[Failed] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    load_ms: int = 0

    @property
    def loaded(self) -> bool:
        return self.status is not None and self.status < 400 and not self.timed_out


class PageLoader:
    """One Chromium for a series of pages; use as a context manager.

    Playwright's sync API runs an asyncio loop in the thread that uses it, and Django refuses database calls
    from a thread with a running loop; so the browser lives in a thread of its own and :meth:`load` hands pages
    to it, leaving the caller's thread free to record results."""

    def __init__(self, timeout_s: float = 30.0, executable: str | Path = CHROMIUM) -> None:
        self.timeout_s = timeout_s
        self.executable = str(executable)
        self._pw: Any = None
        self._browser: Any = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="qa-browser")

    def __enter__(self) -> PageLoader:
        try:
            self._thread.submit(self._start).result()
        except BaseException:
            self._thread.shutdown(wait=True)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._thread.submit(self._stop).result()
        finally:
            self._thread.shutdown(wait=True)

    def _start(self) -> None:
        from playwright.sync_api import sync_playwright

        problem = chromium_problem(self.executable)
        if problem:
            raise BrowserUnavailable(problem)
        self._pw = sync_playwright().start()
        try:
            self._browser = self._pw.chromium.launch(
                executable_path=self.executable, headless=True, args=["--no-sandbox", "--disable-gpu"]
            )
        except Exception as exc:
            self._pw.stop()
            first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
            raise BrowserUnavailable(f"Chromium at {self.executable} failed to start: {first[:300]}") from exc

    def _stop(self) -> None:
        try:
            self._browser.close()
        finally:
            self._pw.stop()

    def load(
        self, url: str, allowed: Callable[[str], bool] | None = None, inner: Callable[[str], bool] | None = None
    ) -> PageLoad:
        """Load ``url``; requests for which ``allowed`` is false are blocked and listed in ``blocked``. With
        ``inner``, the page judged is the frame whose address ``inner`` accepts (replay's framed view: pywb's
        banner in the top frame, the archived page in an iframe): its status, screenshot, title and text."""
        return self._thread.submit(self._load, url, allowed, inner).result()

    def _load(
        self, url: str, allowed: Callable[[str], bool] | None, inner: Callable[[str], bool] | None = None
    ) -> PageLoad:
        result = PageLoad(url)
        statuses: dict[Any, int] = {}  # frame → the status of its first document
        with self._context() as page:
            if allowed is not None:

                def route(r: Any) -> None:
                    if allowed(r.request.url):
                        r.continue_()
                    else:
                        result.blocked.append(r.request.url)
                        r.abort("blockedbyclient")

                page.route("**/*", route)
            page.on("request", lambda r: setattr(result, "requests", result.requests + 1))
            page.on("response", lambda r: self._response(r, result, statuses))
            page.on("requestfailed", lambda r: self._request_failed(r, result))
            page.on("pageerror", lambda e: result.errors.append(f"script error: {e}"[:500]))
            started = time.monotonic()
            try:
                response = page.goto(url, wait_until="load", timeout=self.timeout_s * 1000)
                if response is not None and inner is None:
                    result.status = response.status
            except Exception as exc:  # Playwright's TimeoutError and navigation errors
                name = type(exc).__name__
                if "Timeout" in name:
                    result.timed_out = True
                    result.errors.append(f"did not finish loading within {self.timeout_s:g} s")
                else:
                    result.errors.append(f"navigation failed: {str(exc).splitlines()[0][:300]}")
            if not result.timed_out and result.status is not None:
                try:
                    page.wait_for_load_state("networkidle", timeout=SETTLE_S * 1000)
                except Exception:
                    pass
            result.load_ms = int((time.monotonic() - started) * 1000)
            target = page
            if inner is not None:
                target = next((f for f in page.frames if f.parent_frame is not None and inner(f.url)), None)
                result.status = statuses.get(target) if target is not None else None
                if target is None and not result.timed_out:
                    result.errors.append("the replayed page's frame never appeared")
            if target is not None:
                self._aftermath(page, target, result)
        return result

    @contextmanager
    def _context(self) -> Iterator[Any]:
        context = self._browser.new_context(viewport=VIEWPORT, ignore_https_errors=True, service_workers="block")
        try:
            page = context.new_page()
            page.set_default_timeout(AFTERMATH_S * 1000)
            yield page
        finally:
            try:
                context.close()
            except Exception as exc:  # a wedged renderer: the browser itself goes at the end of the pass
                log.warning("QA: a browser context did not close: %s", exc)

    @staticmethod
    def _response(response: Any, result: PageLoad, statuses: dict[Any, int]) -> None:
        request = response.request
        if request.is_navigation_request():
            statuses.setdefault(request.frame, response.status)
            if result.status is None and request.frame.parent_frame is None:
                result.status = response.status  # the page's own answer, also when goto raises (an empty 404)
        if response.status < 400:
            return
        try:
            archived = response.header_value("memento-datetime") is not None
        except Exception:
            archived = False
        result.failed.append(Failed(response.url, response.request.resource_type, response.status, archived))

    @staticmethod
    def _request_failed(request: Any, result: PageLoad) -> None:
        failure = request.failure or ""
        if "BLOCKED_BY_CLIENT" in failure.upper() or request.url in result.blocked:
            return  # ours: listed in ``blocked``
        result.failed.append(Failed(request.url, request.resource_type, None, False))

    @staticmethod
    def _aftermath(page: Any, frame: Any, result: PageLoad) -> None:
        """Screenshot, title and text of ``frame`` (the page itself, or replay's inner frame), each bounded: a
        stuck renderer costs seconds, not the pass."""
        shooter = page if frame is page else frame.frame_element()
        try:
            result.screenshot = shooter.screenshot(type="png", timeout=AFTERMATH_S * 1000, animations="disabled")
        except Exception as exc:
            result.errors.append(f"no screenshot: {str(exc).splitlines()[0][:200]}")
            if result.timed_out:
                return  # its renderer is stuck (a script that never yields): asking for the text would wait too
        try:  # the text first: it has a time limit, and only a responsive renderer is asked anything more
            result.text = frame.inner_text("body", timeout=AFTERMATH_S * 1000)[:TEXT_LIMIT]
            if frame.locator("title").count():  # a locator, unlike page.title(), waits with a time limit
                result.title = (frame.locator("title").first.text_content(timeout=AFTERMATH_S * 1000) or "")[:500]
        except Exception as exc:
            result.errors.append(f"no text: {str(exc).splitlines()[0][:200]}")
