"""Link extraction: every element kind with its discovery path letter; hostile input."""

from __future__ import annotations

from harvester.links import (
    css_links,
    extract,
    html_links,
    js_links,
    redirect_link,
    robots_sitemaps,
    sitemap_links,
)

BASE = "http://example.org/dir/page.html"

HTML = b"""<!DOCTYPE html><html><head>
<link rel="stylesheet" href="/s.css"><link rel="icon" href="/fav.ico">
<link rel="preload" href="/font.woff2" as="font"><link rel="alternate" href="/feed.xml">
<link rel="next" href="page2.html">
<meta http-equiv="refresh" content="5; url=/refreshed.html">
<script src="/app.js"></script>
<style>body { background: url('/bg.png') } @import "/more.css";</style>
</head><body background="/body.png">
<a href="a.html#frag">a</a> <a href="mailto:x@y.z">m</a> <a href="javascript:go()">j</a>
<map><area href="/area.html"></map>
<img src="/img.png" srcset="/img-1x.png 1x, /img-2x.png 2x">
<picture><source srcset="/pic.webp"></picture>
<iframe src="/frame.html"></iframe><frameset><frame src="/frame2.html"></frameset>
<embed src="/movie.swf"><object data="/obj.svg"><param name="movie" value="/param.swf"></object>
<video src="/v.mp4" poster="/poster.jpg"><source src="/v.webm"><track src="/subs.vtt"></video>
<audio src="/a.mp3"></audio>
<div style="background-image:url(/inline.png)">x</div>
<table background="/table.png"><tr><td background="/td.png">c</td></tr></table>
<input type="image" src="/button.png">
<script>var u = "/js-path/page.html"; var v = 'http://other.example/x.js';</script>
</body></html>"""


def _by_url(links: list[tuple[str, str]]) -> dict[str, str]:
    return dict(links)


def test_every_html_element_kind() -> None:
    got = _by_url(html_links(HTML, BASE, "utf-8"))
    e = "http://example.org"
    expected = {
        f"{e}/s.css": "E",
        f"{e}/fav.ico": "E",
        f"{e}/font.woff2": "E",
        f"{e}/feed.xml": "L",
        f"{e}/dir/page2.html": "L",
        f"{e}/refreshed.html": "R",
        f"{e}/app.js": "E",
        f"{e}/bg.png": "E",
        f"{e}/more.css": "E",
        f"{e}/body.png": "E",
        f"{e}/dir/a.html": "L",
        f"{e}/area.html": "L",
        f"{e}/img.png": "E",
        f"{e}/img-1x.png": "E",
        f"{e}/img-2x.png": "E",
        f"{e}/pic.webp": "E",
        f"{e}/frame.html": "E",
        f"{e}/frame2.html": "E",
        f"{e}/movie.swf": "E",
        f"{e}/obj.svg": "E",
        f"{e}/param.swf": "E",
        f"{e}/v.mp4": "E",
        f"{e}/poster.jpg": "E",
        f"{e}/v.webm": "E",
        f"{e}/subs.vtt": "E",
        f"{e}/a.mp3": "E",
        f"{e}/inline.png": "E",
        f"{e}/table.png": "E",
        f"{e}/td.png": "E",
        f"{e}/button.png": "E",
    }
    for url, letter in expected.items():
        assert got.get(url) == letter, (url, got.get(url))
    assert not any(u.startswith(("mailto:", "javascript:")) for u in got)
    assert "/js-path/page.html" not in " ".join(got)  # speculative JS only when asked


def test_speculative_javascript() -> None:
    got = _by_url(html_links(HTML, BASE, "utf-8", javascript=True))
    assert got["http://example.org/js-path/page.html"] == "X"
    assert got["http://other.example/x.js"] == "X"
    assert _by_url(js_links('location = "/next.php"; x = "not a url"', BASE)) == {"http://example.org/next.php": "X"}


def test_base_href() -> None:
    got = _by_url(
        html_links(
            b'<html><head><base href="http://cdn.example.net/root/"></head><body><a href="x.html">x</a></body></html>',
            BASE,
        )
    )
    assert got == {"http://cdn.example.net/root/x.html": "L"}


def test_css() -> None:
    css = '@import "print.css"; @import url(screen.css); a { background: url( "../i/b.png" ) }'
    assert _by_url(css_links(css, "http://e.org/css/site.css")) == {
        "http://e.org/css/print.css": "E",
        "http://e.org/css/screen.css": "E",
        "http://e.org/i/b.png": "E",
    }


def test_sitemaps() -> None:
    assert robots_sitemaps(
        "User-agent: *\nSitemap: http://e.org/sm.xml\nsitemap: /other.xml\n", "http://e.org/robots.txt"
    ) == [("http://e.org/sm.xml", "M"), ("http://e.org/other.xml", "M")]
    urlset = (
        b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<url><loc>http://e.org/a?x=1&amp;y=2</loc></url>"
        b"<url><loc> http://e.org/b </loc></url></urlset>"
    )
    assert sitemap_links(urlset, "http://e.org/sitemap.xml") == [
        ("http://e.org/a?x=1&y=2", "M"),
        ("http://e.org/b", "M"),
    ]
    index = b"<sitemapindex><sitemap><loc>http://e.org/sm2.xml</loc></sitemap></sitemapindex>"
    assert sitemap_links(index, "http://e.org/sitemap.xml") == [("http://e.org/sm2.xml", "M")]


def test_redirect() -> None:
    assert redirect_link("/new", "http://e.org/old") == [("http://e.org/new", "R")]
    got = extract("http://e.org/old", "L", "text/html", b"", None, None, 301, "/new")
    assert got == [("http://e.org/new", "R")]


def test_extract_dispatches_by_type() -> None:
    assert extract("http://e.org/robots.txt", "P", "text/plain", b"Sitemap: /s.xml", None, None, 200, None) == [
        ("http://e.org/s.xml", "M")
    ]
    assert extract("http://e.org/s.css", "E", "text/css", b"a{background:url(x.png)}", None, "utf-8", 200, None) == [
        ("http://e.org/x.png", "E")
    ]
    assert extract("http://e.org/img.png", "E", "image/png", b"\x89PNG...", None, None, 200, None) == []


def test_hostile_input_never_raises() -> None:
    nasty = [
        b"",
        b"\x00\x01\x02" * 1000,
        b"<html><a href='http://[::1'>x</a>",
        b"<a href='http://e.org:99999/'>bad port</a>",
        b"<" * 100000,
        "<html><a href='caf\u00e9.html'>\u00e9</a></html>".encode("latin-1"),
        b'<?xml version="1.0" encoding="bogus-enc"?><html><a href="/ok.html">ok</a></html>',
        b"<a href='" + b"x" * 5000 + b"'>long</a>",
    ]
    for body in nasty:
        html_links(body, BASE, "no-such-encoding")
        html_links(body, BASE, None)
        extract(BASE, "L", "text/html; charset=klingon", body, None, None, 200, None)
    got = _by_url(html_links("<a href='caf\u00e9.html'>x</a>".encode("latin-1"), BASE, "latin-1"))
    assert "http://example.org/dir/caf\u00e9.html" in got


def test_parser_for_is_what_extract_reads():
    """One definition of "link-bearing": the dedup side asks conditionally only where it says ""."""
    from harvester.links import parser_for

    e = "http://e.org/"
    assert parser_for(e + "robots.txt", "P", "text/plain") == "robots"
    assert parser_for(e + "a", "L", "text/html; charset=utf-8") == "html"
    assert parser_for(e + "a", "L", "application/xhtml+xml") == "html"
    assert parser_for(e + "a", "L", "") == "sniff"  # unknown: sniffed, so never asked conditionally
    assert parser_for(e + "s.css", "E", "text/css") == "css"
    assert parser_for(e + "sitemap.xml", "M", "application/xml") == "sitemap"
    assert parser_for(e + "urls.txt", "LM", "text/plain") == "sitemap"
    assert parser_for(e + "a.js", "E", "application/javascript", javascript=True) == "js"
    for ctype in (
        "image/png",
        "application/pdf",
        "font/woff2",
        "video/mp4",
        "application/zip",
        "application/octet-stream",
        "text/plain",
    ):
        assert parser_for(e + "x", "E", ctype) == "", ctype
    assert parser_for(e + "a.js", "E", "application/javascript", javascript=False) == ""
    assert extract(e + "a.png", "E", "image/png", b'<html><a href="/b">b</a></html>', None, None, 200, None) == []


# -- issue 14: gzipped sitemaps, broken markup, CSS comments -------------------------------------
GZ_TYPES = ("application/x-gzip", "application/gzip", "application/octet-stream")
URLSET = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    b"<url><loc>http://e.org/only-in-gz.html</loc></url><url><loc>http://e.org/b.html</loc></url>"
    b"</urlset>"
)


def test_gzipped_sitemap_named_in_robots_or_an_index_is_unzipped() -> None:
    import gzip

    from harvester.links import parser_for

    body = gzip.compress(URLSET)
    want = [("http://e.org/only-in-gz.html", "M"), ("http://e.org/b.html", "M")]
    for ctype in GZ_TYPES:
        # PM: named by robots.txt's Sitemap:; PMM: listed in a sitemap index; L: named like one.
        for url, path in (
            ("http://e.org/pages.xml.gz", "PM"),
            ("http://e.org/pages.xml.gz", "PMM"),
            ("http://e.org/sitemap-2.xml.gz", "L"),
        ):
            assert parser_for(url, path, ctype) == "sitemap", (ctype, path)
            assert extract(url, path, ctype, body, None, None, 200, None) == want, (ctype, path)
    # Two gzip members (concatenated files) are one document.
    two = gzip.compress(URLSET[:150]) + gzip.compress(URLSET[150:])
    assert extract("http://e.org/s.gz", "PM", "application/x-gzip", two, None, None, 200, None) == want
    # An XML type with a gzipped body (no Content-Encoding) is unzipped too.
    assert extract("http://e.org/sitemap.xml", "PM", "text/xml", body, None, None, 200, None) == want
    # A download found by a link stays unread, and a gzip that is not a sitemap gives nothing.
    assert parser_for("http://e.org/data.tar.gz", "L", "application/x-gzip") == ""
    tarball = gzip.compress(b"ustar\0 http://e.org/not-a-link.html\n" * 100)
    assert extract("http://e.org/data.tar.gz", "PMM", "application/x-gzip", tarball, None, None, 200, None) == []


def test_sitemap_detected_by_content_whatever_its_type() -> None:
    for ctype in ("text/html", ""):
        assert extract("http://e.org/pages", "PM", ctype, URLSET, None, None, 200, None) == [
            ("http://e.org/only-in-gz.html", "M"),
            ("http://e.org/b.html", "M"),
        ], ctype
    # A page listed in a sitemap (path ...M) is still read as the HTML it is.
    assert extract(
        "http://e.org/p.html", "PMM", "text/html", b'<html><a href="/n.html">n</a></html>', None, None, 200, None
    ) == [("http://e.org/n.html", "L")]


def test_gzip_bomb_sitemap_is_bounded() -> None:
    import tracemalloc
    import zlib

    from harvester.links import gunzip

    limit = 1024 * 1024
    squeezer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    head = b"<urlset><url><loc>http://e.org/first.html</loc></url>"
    zeros = b" " * (1024 * 1024)
    bomb = squeezer.compress(head) + b"".join(squeezer.compress(zeros) for _ in range(256))  # 256 MiB
    bomb += squeezer.compress(b"<url><loc>http://e.org/past-the-limit.html</loc></url></urlset>")
    bomb += squeezer.flush()
    assert len(bomb) < 1024 * 1024
    assert len(gunzip(bomb, limit)) == limit
    tracemalloc.start()
    try:
        got = extract(
            "http://e.org/sitemap.xml.gz", "PM", "application/x-gzip", bomb, None, None, 200, None, max_decoded=limit
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got == [("http://e.org/first.html", "M")]
    assert peak < 8 * limit, peak  # never inflated to 256 MiB
    assert gunzip(bomb[: len(bomb) // 2], 10 * limit)[: len(head)] == head  # cut short: what came before


def test_a_gzipped_sitemap_is_never_fetched_conditionally(tmp_path) -> None:
    """harvester.revisit asks parser_for with the earlier capture's type: a 304 would hide the sitemap's URLs."""
    from harvester.revisit import Deduplicator
    from indexer.dedup import Capture, DedupIndex

    index = tmp_path / "dedup.sqlite"
    with DedupIndex(index) as idx:
        idx.add(
            [
                Capture(
                    "sha1:AAAA",
                    "http://e.org/pages.xml.gz",
                    "20261101000000",
                    "a.warc.gz",
                    0,
                    "application/x-gzip",
                    '"e1"',
                    "",
                ),
                Capture(
                    "sha1:BBBB",
                    "http://e.org/data.tar.gz",
                    "20261101000000",
                    "a.warc.gz",
                    9,
                    "application/x-gzip",
                    '"e2"',
                    "",
                ),
            ]
        )
    dedup = Deduplicator(True, index)
    try:
        assert dedup.conditional_headers("http://e.org/pages.xml.gz", "PM") == ({}, None)
        headers, capture = dedup.conditional_headers("http://e.org/data.tar.gz", "L")
        assert headers == {b"If-None-Match": b'"e1"'.replace(b"1", b"2")} and capture is not None
    finally:
        dedup.close()


BROKEN = {
    "unclosed title": b"<html><head><title>Broken</head><body>",
    "unclosed textarea": b"<html><body><form><textarea>Write here",
    "unclosed script": b"<html><head><script>var a = 1;</head><body>",
    "unclosed style": b"<html><head><style>p { color: red }</head><body>",
    "unclosed comment": b"<html><body><!-- just a note",
    "unclosed xmp": b"<html><body><xmp>code",
}
AFTER = (
    b'<p><a href="/after.html">after</a> <img src="/after.png" srcset="/after-2x.png 2x">'
    b'<iframe src="/frame.html"></iframe><link rel="stylesheet" href="/late.css">'
    b'<div style="background: url(/inline.png)">x</div>'
    b'<embed src="/late.swf"><a href="/second.html">second</a></body></html>'
)


def test_broken_markup_falls_back_to_a_tolerant_scan() -> None:
    want = {
        "http://example.org/after.html": "L",
        "http://example.org/after.png": "E",
        "http://example.org/after-2x.png": "E",
        "http://example.org/frame.html": "E",
        "http://example.org/late.css": "E",
        "http://example.org/inline.png": "E",
        "http://example.org/late.swf": "E",
        "http://example.org/second.html": "L",
    }
    for name, start in BROKEN.items():
        got = _by_url(html_links(start + AFTER, BASE, "utf-8"))
        assert got == want, name
        assert _by_url(extract(BASE, "L", "text/html", start + AFTER, None, "utf-8", 200, None)) == want, name


def test_the_tolerant_scan_keeps_base_href_entities_and_letters() -> None:
    page = (
        b'<html><head><base href="http://cdn.example.net/root/"><title>Broken</head><body>'
        b'<a href=\'x.html?a=1&amp;b=2\'>x</a> <A HREF=Y.HTML>y</A> <img src="pic.png" alt="a > b">'
        b'<meta http-equiv="refresh" content="0; url=/moved.html">'
        b'<a href="mailto:x@y.z">m</a> <a href="/cut>cut short</a> <a href="/next.html">n</a>'
    )
    assert _by_url(html_links(page, BASE, "utf-8")) == {
        "http://cdn.example.net/root/x.html?a=1&b=2": "L",
        "http://cdn.example.net/root/Y.HTML": "L",
        "http://cdn.example.net/root/pic.png": "E",
        "http://cdn.example.net/moved.html": "R",
        "http://cdn.example.net/cut": "L",
        "http://cdn.example.net/next.html": "L",
    }


def test_the_tolerant_scan_skips_what_a_browser_would_not_show() -> None:
    """A closed comment and a closed script's text are no links; an unclosed one hides nothing."""
    page = (
        b"<html><head><title>Broken</head><body><!-- <a href='/commented-out.html'>x</a> -->"
        b"<script>document.write('<a href=\"/in-script.html\">');</script><a href='/shown.html'>s</a>"
        b"<!-- <a href='/after-open-comment.html'>y</a>"
    )
    assert _by_url(html_links(page, BASE, "utf-8")) == {
        "http://example.org/shown.html": "L",
        "http://example.org/after-open-comment.html": "L",
    }


def test_hostile_broken_markup_stays_linear() -> None:
    """Ten thousand unclosed scripts and comments: each closer is looked for once, not once per tag."""
    page = b"<title>x" + b"<script><!--<a href='/a.html'>" * 10_000
    assert _by_url(html_links(page, BASE, "utf-8")) == {"http://example.org/a.html": "L"}


def test_links_in_css_comments_are_not_followed() -> None:
    css = (
        "/* background: url(old.png) */ a { background: url(new.png) }\n"
        '/* @import "old.css"; */ @import "new.css";\n'
        'b { content: "/* not a comment */"; background: url(kept.png) }\n'
        "/* never closed: url(gone.png)"
    )
    assert _by_url(css_links(css, "http://e.org/")) == {
        "http://e.org/new.png": "E",
        "http://e.org/new.css": "E",
        "http://e.org/kept.png": "E",
    }
    page = (
        b"<html><head><style>/* .x { background: url(/old-block.png) } */ .y { background: url(/new-block.png) }"
        b"</style></head><body><div style='/* background: url(/old-attr.png) */ color: red'>x</div>"
        b"<div style='background: url(/new-attr.png) /* url(/old-attr2.png) */'>y</div></body></html>"
    )
    assert _by_url(html_links(page, BASE, "utf-8")) == {
        "http://example.org/new-block.png": "E",
        "http://example.org/new-attr.png": "E",
    }
    broken = b"<title>x</head><body><style>/* url(/old-b.png) */ p { background: url(/new-b.png) }</style>" + AFTER
    got = _by_url(html_links(broken, BASE, "utf-8"))
    assert "http://example.org/new-b.png" in got and "http://example.org/old-b.png" not in got


def _absolutize_by_urljoin(base: str, raw: str) -> str | None:
    """What absolutize did before its root-relative shortcut (urljoin + urlsplit), the reference."""
    from urllib.parse import urljoin, urlsplit

    url = raw.strip().replace("\n", "").replace("\r", "").replace("\t", "")
    if not url or url.startswith(("#", "javascript:", "mailto:", "data:", "tel:", "about:")):
        return None
    try:
        absolute = urljoin(base, url).split("#", 1)[0]
        parts = urlsplit(absolute)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return None
        parts.port  # noqa: B018
    except ValueError:
        return None
    return absolute if len(absolute) <= 2083 else None


def test_root_relative_shortcut_equals_urljoin() -> None:
    from harvester.links import absolutize

    bases = [
        "http://example.com/a/b.html",
        "HTTP://Ex.COM:8080/a/?q#f",
        "https://u:p@h.org/",
        "http://h:80/x",
        "http://[::1]:8080/d/",
        "ftp://h/x",
        "http://h:99999/",
        "http:///nohost",
        "http://h/a;p?q",
    ]
    links = [
        "/",
        "/p/1.html",
        "/a/../b",
        "/./x",
        "/x/.",
        "/x/..",
        "/x;p",
        "/x;",
        "/x?",
        "/x?#f",
        "/x#f",
        "/x?a=/./",
        "//other.org/x",
        "///x",
        "/ü/é?ß",
        "/x y",
        "/%2e%2e/x",
        "/x\\y",
        "/?",
        "/x?q=1&b=2",
        " /pad ",
        "/x\x01y",
        "/" + "a" * 2070,
        "/" + "a" * 2100,
        "/a//b",
        "/x?#",
        "/.hidden",
        "/x?y?",
    ]
    for base in bases:
        for link in links:
            assert absolutize(base, link) == _absolutize_by_urljoin(base, link), (base, link)
    # join_rooted (the inferred /favicon.ico of every page) is urljoin itself, shortcut or not
    from urllib.parse import urljoin

    from harvester.links import join_rooted

    for base in bases:
        for link in [*links, "/favicon.ico", "/x\ty", "/a\r\nb", "/x?#"]:
            assert join_rooted(base, link) == urljoin(base, link), (base, link)
