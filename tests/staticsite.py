"""A static site on disk served by the standard library's ``http.server`` (as ``python -m http.server``
serves it): files with ``Last-Modified``, ``If-Modified-Since`` answered ``304 Not Modified``. The
site a re-harvest must capture whole (issue 11): pages reachable only through other pages, a
stylesheet that embeds an image, images and a PDF. Shared by the harvester-level and whole-stack
re-harvest tests."""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

#: A 1x1 PNG; each image file gets a distinct tail so every payload digest differs.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


def write_site(root: Path, pages: int = 60) -> set[str]:
    """Write the site under ``root``; return every path a complete crawl reaches (``/`` included).

    Pages come in chains of ten (within the default 20 hops): the index links to the first page of
    each chain, each page to the next one of its chain (losing one page's links loses every page
    after it) and embeds its own image; the first page of a chain also links a PDF."""
    root.mkdir(parents=True, exist_ok=True)
    # /favicon.ico is linked from nowhere: a crawl reaches it by inference (discovery path I).
    reached = {"/", "/robots.txt", "/favicon.ico", "/site.css", "/img/bg.png"}
    (root / "robots.txt").write_text("User-agent: *\nDisallow:\n")
    (root / "favicon.ico").write_bytes(PNG + b"favicon")
    (root / "img").mkdir(exist_ok=True)
    (root / "img" / "bg.png").write_bytes(PNG + b"bg")
    (root / "site.css").write_text("body { background: url(img/bg.png) }\n")
    heads = "".join(f'<a href="/p{i}.html">part {i // 10}</a>' for i in range(0, pages, 10))
    (root / "index.html").write_text(
        f'<!doctype html><html><head><link rel="stylesheet" href="/site.css"></head><body>{heads}</body></html>\n'
    )
    for i in range(pages):
        nxt = f'<a href="/p{i + 1}.html">next</a>' if (i + 1) % 10 and i + 1 < pages else ""
        pdf = f'<a href="/doc{i}.pdf">report</a>' if i % 10 == 0 else ""
        (root / f"p{i}.html").write_text(
            f'<!doctype html><html><head><title>page {i}</title><link rel="stylesheet" href="/site.css">'
            f'</head><body><h1>Page {i}</h1><img src="/img/i{i}.png">{nxt}{pdf}</body></html>\n'
        )
        (root / "img" / f"i{i}.png").write_bytes(PNG + str(i).encode())
        reached |= {f"/p{i}.html", f"/img/i{i}.png"}
        if pdf:
            (root / f"doc{i}.pdf").write_bytes(b"%PDF-1.4\n% page " + str(i).encode() + b"\n%%EOF\n")
            reached.add(f"/doc{i}.pdf")
    return reached


class _QuietHandler(SimpleHTTPRequestHandler):
    #: Paths answered ``304`` whatever the request (a misbehaving server or cache).
    always_304: frozenset[str] = frozenset()

    def send_head(self):  # type: ignore[no-untyped-def]
        if self.path in self.always_304:
            self.send_response(304)
            self.end_headers()
            return None
        return super().send_head()

    def log_message(self, format: str, *args: object) -> None:
        pass


class StaticServer:
    """``http.server`` over a directory on 127.0.0.1, in a thread; ``url`` ends with ``/``."""

    def __init__(self, root: Path, port: int = 0, always_304: frozenset[str] = frozenset()) -> None:
        quirks = type("Handler", (_QuietHandler,), {"always_304": always_304})
        handler = functools.partial(quirks, directory=str(root))
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def shutdown(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
