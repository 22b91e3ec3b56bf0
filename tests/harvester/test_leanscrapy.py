"""harvester/leanscrapy.py: the crawl child's stand-ins for Scrapy components do what Scrapy's do."""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Request, signals
from scrapy.downloadermiddlewares.cookies import CookiesMiddleware
from scrapy.http import HtmlResponse
from scrapy.logformatter import LogFormatter
from scrapy.signalmanager import SignalManager

from harvester.leanscrapy import CrawlCookiesMiddleware, CrawlLogFormatter, CrawlSignalManager


class _Sender:
    pass


def test_signals_without_receivers_answer_empty_and_receivers_are_still_called() -> None:
    sender = _Sender()
    lean, scrapys = CrawlSignalManager(sender), SignalManager(sender)
    got: list[tuple[str, Any]] = []
    mine, anyones = object(), object()

    def on_mine(request: Any = None) -> str:
        got.append(("mine", request))
        return "answer"

    def on_any_sender(request: Any = None) -> None:
        got.append(("any", request))

    assert lean.send_catch_log(signals.request_left_downloader, request=1) == []
    lean.connect(on_mine, signal=mine)
    assert lean.send_catch_log(mine, request=2) == scrapys.send_catch_log(mine, request=2) == [(on_mine, "answer")]
    assert lean.send_catch_log(signals.request_left_downloader, request=3) == []
    # a receiver of a signal from any sender (pydispatch's Any) is found too, as by Scrapy
    from pydispatch import dispatcher

    dispatcher.connect(on_any_sender, signal=anyones, sender=dispatcher.Any)
    try:
        assert [r for r, _ in lean.send_catch_log(anyones, request=4)] == [on_any_sender]
    finally:
        dispatcher.disconnect(on_any_sender, signal=anyones, sender=dispatcher.Any)
    lean.disconnect(on_mine, signal=mine)
    assert lean.send_catch_log(mine, request=5) == []
    assert got == [("mine", 2), ("mine", 2), ("any", 4)]


def _pair() -> tuple[CookiesMiddleware, CrawlCookiesMiddleware]:
    return CookiesMiddleware(), CrawlCookiesMiddleware()


def _response(url: str, request: Request, *set_cookies: bytes) -> HtmlResponse:
    headers = [(b"Content-Type", b"text/html")] + [(b"Set-Cookie", c) for c in set_cookies]
    return HtmlResponse(url=url, status=200, headers=headers, body=b"<html></html>", request=request)


def _exchange(mw: CookiesMiddleware, url: str, *set_cookies: bytes, headers: Any = None, **kw: Any) -> list[Any]:
    """One request/response through ``mw``: the request's headers as sent, in order."""
    request = Request(url, headers=headers, **kw)
    mw.process_request(request)
    sent = list(dict.items(request.headers))
    mw.process_response(request, _response(url, request, *set_cookies))
    return sent


def test_cookies_are_sent_and_kept_as_scrapys_middleware_does() -> None:
    """The same exchanges through both: the Cookie headers sent are the same, in every case the short
    cuts take (empty jar, no Set-Cookie) and every case they leave to Scrapy."""
    scrapys, lean = _pair()
    script: list[tuple[str, tuple[bytes, ...], dict[str, Any]]] = [
        ("http://a.example/", (), {}),  # empty jar, no Set-Cookie
        ("http://a.example/x", (), {"headers": {"Cookie": "stale=1"}}),  # a Cookie header is dropped, as Scrapy does
        ("http://a.example/login", (b"sid=1; Path=/", b"lang=en; Path=/x"), {}),
        ("http://a.example/x/y", (), {}),  # both cookies
        ("http://b.example/", (), {}),  # jar not empty, none for this host
        ("http://b.example/", (b"b=2",), {}),
        ("http://a.example/", (), {"cookies": {"extra": "3"}}),  # Request.cookies: Scrapy's path
        ("http://b.example/", (), {"meta": {"dont_merge_cookies": True}, "headers": {"Cookie": "own=1"}}),
        ("http://c.example/", (), {"meta": {"cookiejar": 2}}),  # another jar, empty
        ("http://a.example/x/y", (), {}),
    ]
    for url, set_cookies, kw in script:
        assert _exchange(lean, url, *set_cookies, **kw) == _exchange(scrapys, url, *set_cookies, **kw), url
    assert _exchange(lean, "http://a.example/x/y") == [(b"Cookie", [b"lang=en; sid=1; extra=3"])]


def test_the_crawled_message_is_not_built_when_debug_is_off(caplog: Any) -> None:
    request = Request("http://a.example/")
    response = _response("http://a.example/", request)
    engine = logging.getLogger("scrapy.core.engine")
    old = engine.level
    try:
        engine.setLevel(logging.INFO)
        assert CrawlLogFormatter().crawled(request, response, None) is None  # type: ignore[arg-type]
        engine.setLevel(logging.DEBUG)
        assert CrawlLogFormatter().crawled(request, response, None) == LogFormatter().crawled(request, response, None)  # type: ignore[arg-type]
    finally:
        engine.setLevel(old)
