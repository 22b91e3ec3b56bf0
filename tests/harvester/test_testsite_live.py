"""The demo site's live pages (harvester.testsite): what a continuous harvest of the demo sees change, on the
wall clock, with validators and conditional requests as real servers answer them."""

from __future__ import annotations

import urllib.error
import urllib.request
from email.utils import formatdate

import pytest

from harvester.testsite import BULLETIN_S, TICKER_SLOT_S, live_page, serve_in_thread

T = 1_795_000_080.0  # the start of a bulletin edition


def test_each_live_page_changes_as_it_says():
    bulletin = [live_page("/live/bulletin.html", T + s) for s in (0, BULLETIN_S - 1, BULLETIN_S)]
    assert bulletin[0] == bulletin[1] != bulletin[2]  # a new edition every period, and only then
    assert bulletin[2][1] == T + BULLETIN_S and bulletin[2][2] != bulletin[0][2]  # Last-Modified, ETag
    ticker = [live_page("/live/ticker.html", T + k * TICKER_SLOT_S) for k in range(120)]
    changes = sum(a[2] != b[2] for a, b in zip(ticker, ticker[1:], strict=False))
    assert 20 <= changes <= 60  # about one minute in three, at irregular minutes
    gaps = {b[1] - a[1] for a, b in zip(ticker, ticker[1:], strict=False) if a[2] != b[2]}
    assert len(gaps) > 2
    clock = [live_page("/live/clock.html", T + s) for s in (0, 1)]
    assert clock[0][0] != clock[1][0] and clock[0][1:] == (None, None)  # a dynamic page: no validators
    still = [live_page("/live/about.html", T + s) for s in (0, 10**6)]
    assert still[0] == still[1]
    assert live_page("/live/nothing.html", T) is None


@pytest.fixture(scope="module")
def site():
    server = serve_in_thread()
    yield server
    server.shutdown()


def _get(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_conditional_requests_are_answered_304_until_the_page_changes(site):
    status, headers, body = _get(site.url + "live/about.html")
    assert status == 200 and headers["ETag"] == '"about-1"' and b"Unchanged" in body
    assert _get(site.url + "live/about.html", **{"If-None-Match": headers["ETag"]})[0] == 304
    assert _get(site.url + "live/about.html", **{"If-Modified-Since": headers["Last-Modified"]})[0] == 304
    assert _get(site.url + "live/about.html", **{"If-None-Match": '"about-0"'})[0] == 200
    for match in ("*", 'W/"about-1"', '"x", "about-1"'):  # RFC 9110 §13.1.2
        assert _get(site.url + "live/about.html", **{"If-None-Match": match})[0] == 304, match
    # If-None-Match decides when present: a stale tag with a fresh date is a change
    assert (
        _get(site.url + "live/about.html", **{"If-None-Match": '"x"', "If-Modified-Since": headers["Last-Modified"]})[0]
        == 200
    )
    old = formatdate(1_700_000_000, usegmt=True)
    assert _get(site.url + "live/bulletin.html", **{"If-Modified-Since": old})[0] == 200
    status, headers, _ = _get(site.url + "live/clock.html", **{"If-Modified-Since": old})
    assert status == 200 and "ETag" not in headers and "Last-Modified" not in headers
    status, _, body = _get(site.url + "live/")
    assert status == 200 and b'href="bulletin.html"' in body


def test_a_client_that_goes_away_is_no_error(site, capfd):
    """A continuous crawl stops a download after the headers (the mid-fetch filter): the demo site printed a
    traceback for each reset connection in `netharvest up`'s output."""
    import socket
    import struct
    import time

    for _ in range(3):
        conn = socket.create_connection(("127.0.0.1", site.port))
        conn.sendall(b"GET /live/about.html HTTP/1.1\r\nHost: x\r\n\r\n")
        conn.recv(64)  # the status line and some headers, then away with a reset
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()
    time.sleep(0.5)
    assert "Traceback" not in capfd.readouterr().err
    assert _get(site.url + "live/about.html")[0] == 200  # and it serves on
