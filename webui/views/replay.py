"""``/replay/…``: the replay service, behind the web UI's login.

Legal-deposit archives are not public (issue 13): replay is a right of logged-in users with a role, so pywb
(deploy/replay_server.py) listens on loopback or an internal network only and this view is the one way in.
It checks the login and the role, then forwards the request to pywb unchanged (pywb is mounted at the same
``/replay`` prefix, so every link it writes comes back here) and streams pywb's answer back in blocks: a
large archived video is never held in memory, and ``Range`` requests (media seeking) pass through both ways.

What is not passed on: the user's cookies (pywb has no use for the web UI's session), hop-by-hop headers, and
the archived sites' ``Set-Cookie`` (they would land on the web UI's origin).

Archived pages run their own scripts, and here they run on the web UI's origin, where a curator is logged in.
So every replay response carries a Content-Security-Policy (:func:`replay_policy`) that lets a replayed
document load, fetch, frame and post only under ``/replay/`` (pywb rewrites every archived link there; a live
"leak" is blocked as well, which is what QA wants), and ``Cross-Origin-Opener-Policy: unsafe-none`` where the
web UI's own pages have ``same-origin``: a window a replayed page opens on a web UI page is cut from it. The
web UI's pages refuse to be framed (X-Frame-Options DENY), and the page that frames replay
(webui/views/pages.py) allows no script, fetch or form of its own but logging out (docs/DESIGN.md, "Replay").
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import urllib3
from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, StreamingHttpResponse
from django.views.decorators.clickjacking import xframe_options_sameorigin

from indexer.replaylayout import URL_PREFIX
from webui.access import READ, require
from webui.views.errors import error_page

log = logging.getLogger(__name__)

#: Request headers forwarded to pywb (Referer: pywb resolves a replayed page's relative requests with it).
FORWARD = (
    "Accept",
    "Accept-Encoding",
    "Accept-Language",
    "Range",
    "If-Range",
    "If-None-Match",
    "If-Modified-Since",
    "Referer",
    "User-Agent",
)
#: Response headers never passed back (hop-by-hop, and archived cookies).
DROP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "set-cookie",
    }
)
BLOCK = 64 * 1024

_pool: urllib3.PoolManager | None = None


def _http() -> urllib3.PoolManager:
    global _pool
    if _pool is None:
        _pool = urllib3.PoolManager(
            num_pools=4,
            maxsize=16,
            retries=False,
            timeout=urllib3.Timeout(connect=5, read=settings.NETHARVEST_REPLAY_TIMEOUT_S),
        )
    return _pool


def _raw_path(request: HttpRequest) -> str:
    """The request's path and query as the browser sent them (Django's ``request.path`` is decoded, and an
    archived URL's escapes must reach pywb as they were)."""
    raw = request.META.get("RAW_URI") or request.META.get("REQUEST_URI")
    if raw and raw.startswith("/"):
        return raw
    return request.get_full_path()


def _stream(upstream: urllib3.BaseHTTPResponse) -> Iterator[bytes]:
    try:
        yield from upstream.stream(BLOCK, decode_content=False)
    finally:
        upstream.release_conn()


def replay_base(request: HttpRequest) -> str:
    """``http(s)://host/replay/``: the one place replayed documents may reach (a CSP source with a path)."""
    return f"{request.scheme}://{request.get_host()}{URL_PREFIX}/"


def replay_policy(request: HttpRequest) -> str:
    """The CSP of every replay response: pywb's own (archived pages need inline and eval'd scripts, data: and
    blob: URLs, websockets), with ``'self'`` narrowed to ``/replay/``."""
    base = replay_base(request)
    return (
        f"default-src {base} 'unsafe-inline' 'unsafe-eval' data: blob: mediastream: ws: wss:; "
        f"form-action {base}; base-uri {base}; frame-ancestors 'self'"
    )


@require(READ)
@xframe_options_sameorigin
def proxy(request: HttpRequest, rest: str = "") -> HttpResponse:
    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD"])
    headers = {name: request.headers[name] for name in FORWARD if name in request.headers}
    headers["Host"] = request.get_host()
    headers["X-Forwarded-Proto"] = request.scheme
    target = settings.NETHARVEST_REPLAY_URL.rstrip("/") + _raw_path(request)
    try:
        upstream = _http().request(request.method, target, headers=headers, redirect=False, preload_content=False)
    except urllib3.exceptions.HTTPError as exc:
        log.warning("replay service unreachable at %s: %s", settings.NETHARVEST_REPLAY_URL, exc)
        return error_page(
            request,
            502,
            "Replay is not available",
            'The replay service does not answer. It runs with `netharvest up` (process "replay") '
            "or as the replay service of docker compose; ask an administrator to start it.",
        )
    response = StreamingHttpResponse(_stream(upstream), status=upstream.status)
    for name in upstream.headers:  # the bytes pass undecoded, so Content-Length and -Encoding stay true
        if name.lower() not in DROP:
            response[name] = ", ".join(upstream.headers.getlist(name))
    response["Content-Security-Policy"] = replay_policy(request)
    response["Cross-Origin-Opener-Policy"] = "unsafe-none"
    return response
