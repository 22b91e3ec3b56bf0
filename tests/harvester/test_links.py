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
        f"{e}/s.css": "E", f"{e}/fav.ico": "E", f"{e}/font.woff2": "E", f"{e}/feed.xml": "L",
        f"{e}/dir/page2.html": "L", f"{e}/refreshed.html": "R", f"{e}/app.js": "E", f"{e}/bg.png": "E",
        f"{e}/more.css": "E", f"{e}/body.png": "E", f"{e}/dir/a.html": "L", f"{e}/area.html": "L",
        f"{e}/img.png": "E", f"{e}/img-1x.png": "E", f"{e}/img-2x.png": "E", f"{e}/pic.webp": "E",
        f"{e}/frame.html": "E", f"{e}/frame2.html": "E", f"{e}/movie.swf": "E", f"{e}/obj.svg": "E",
        f"{e}/param.swf": "E", f"{e}/v.mp4": "E", f"{e}/poster.jpg": "E", f"{e}/v.webm": "E",
        f"{e}/subs.vtt": "E", f"{e}/a.mp3": "E", f"{e}/inline.png": "E", f"{e}/table.png": "E",
        f"{e}/td.png": "E", f"{e}/button.png": "E",
    }
    for url, letter in expected.items():
        assert got.get(url) == letter, (url, got.get(url))
    assert not any(u.startswith(("mailto:", "javascript:")) for u in got)
    assert "/js-path/page.html" not in " ".join(got)  # speculative JS only when asked


def test_speculative_javascript() -> None:
    got = _by_url(html_links(HTML, BASE, "utf-8", javascript=True))
    assert got["http://example.org/js-path/page.html"] == "X"
    assert got["http://other.example/x.js"] == "X"
    assert _by_url(js_links('location = "/next.php"; x = "not a url"', BASE)) == {
        "http://example.org/next.php": "X"}


def test_base_href() -> None:
    got = _by_url(html_links(b'<html><head><base href="http://cdn.example.net/root/"></head>'
                             b'<body><a href="x.html">x</a></body></html>', BASE))
    assert got == {"http://cdn.example.net/root/x.html": "L"}


def test_css() -> None:
    css = '@import "print.css"; @import url(screen.css); a { background: url( "../i/b.png" ) }'
    assert _by_url(css_links(css, "http://e.org/css/site.css")) == {
        "http://e.org/css/print.css": "E", "http://e.org/css/screen.css": "E", "http://e.org/i/b.png": "E"}


def test_sitemaps() -> None:
    assert robots_sitemaps("User-agent: *\nSitemap: http://e.org/sm.xml\nsitemap: /other.xml\n",
                           "http://e.org/robots.txt") == [("http://e.org/sm.xml", "M"),
                                                           ("http://e.org/other.xml", "M")]
    urlset = (b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
              b"<url><loc>http://e.org/a?x=1&amp;y=2</loc></url>"
              b"<url><loc> http://e.org/b </loc></url></urlset>")
    assert sitemap_links(urlset, "http://e.org/sitemap.xml") == [("http://e.org/a?x=1&y=2", "M"),
                                                                 ("http://e.org/b", "M")]
    index = b"<sitemapindex><sitemap><loc>http://e.org/sm2.xml</loc></sitemap></sitemapindex>"
    assert sitemap_links(index, "http://e.org/sitemap.xml") == [("http://e.org/sm2.xml", "M")]


def test_redirect() -> None:
    assert redirect_link("/new", "http://e.org/old") == [("http://e.org/new", "R")]
    got = extract("http://e.org/old", "L", "text/html", b"", None, None, 301, "/new")
    assert got == [("http://e.org/new", "R")]


def test_extract_dispatches_by_type() -> None:
    assert extract("http://e.org/robots.txt", "P", "text/plain", b"Sitemap: /s.xml", None, None, 200, None) \
        == [("http://e.org/s.xml", "M")]
    assert extract("http://e.org/s.css", "E", "text/css", b"a{background:url(x.png)}", None, "utf-8", 200,
                   None) == [("http://e.org/x.png", "E")]
    assert extract("http://e.org/img.png", "E", "image/png", b"\x89PNG...", None, None, 200, None) == []


def test_hostile_input_never_raises() -> None:
    nasty = [
        b"", b"\x00\x01\x02" * 1000, b"<html><a href='http://[::1'>x</a>",
        b"<a href='http://e.org:99999/'>bad port</a>", b"<" * 100000,
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
    for ctype in ("image/png", "application/pdf", "font/woff2", "video/mp4", "application/zip",
                  "application/octet-stream", "text/plain"):
        assert parser_for(e + "x", "E", ctype) == "", ctype
    assert parser_for(e + "a.js", "E", "application/javascript", javascript=False) == ""
    assert extract(e + "a.png", "E", "image/png", b'<html><a href="/b">b</a></html>', None, None, 200,
                   None) == []
