"""Outlinks of a fetched document, each with its discovery path letter (glossary, "Discovery Path").

``L`` navigation (``<a>``, ``<area>``, ``<link rel=next|alternate…>``, forms' GET actions are left
out as Heritrix's default ignores POST and we cannot know), ``E`` what renders the page (images,
``srcset``, scripts, stylesheets, icons, preloads, frames, iframes, embeds, objects, media sources
and posters, backgrounds, CSS ``url()`` and ``@import``), ``R`` redirects (``Location`` and
``<meta http-equiv=refresh>``, as Heritrix's ExtractorHTML treats a refresh), ``M`` sitemap
entries (robots.txt ``Sitemap:`` lines, sitemap indexes and urlsets), ``X`` speculative URLs found
in JavaScript strings (only when the template's ``extract_javascript`` is on).

Extraction never raises on what a website sends: undecodable bytes, broken markup, a truncated
document or an absurd attribute yield fewer links, not an exception (a hostile site never kills a
job). Results are absolute, fragment-free http(s) URLs, de-duplicated per document in order.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from urllib.parse import urljoin, urlsplit

logger = logging.getLogger(__name__)

MAX_URL_LENGTH = 2083  # Heritrix's default maximum URI length
Link = tuple[str, str]  # (absolute url, path letter)

_CSS_URL = re.compile(r"""url\(\s*(?:"([^"]*)"|'([^']*)'|([^)\s]*))\s*\)""", re.IGNORECASE)
_CSS_IMPORT = re.compile(r"""@import\s+(?:"([^"]+)"|'([^']+)')""", re.IGNORECASE)
_META_REFRESH = re.compile(r"""^\s*\d*\s*[;,]?\s*(?:url\s*=\s*)?["']?([^"'\s]+)""", re.IGNORECASE)
_JS_STRING = re.compile(r"""(?:"|')((?:https?:)?//[^\s"'<>\\]{3,}|/[^\s"'<>\\]*|"""
                        r"""[\w\-./]+\.(?:html?|php|aspx?|jsp|css|js|png|gif|jpe?g|svg|webp|pdf|json|xml))"""
                        r"""(?:"|')""", re.IGNORECASE)
_ROBOTS_SITEMAP = re.compile(r"^\s*sitemap\s*:\s*(\S+)", re.IGNORECASE | re.MULTILINE)
_SITEMAP_LOC = re.compile(rb"<(?:\w+:)?loc>\s*([^<\s]+)\s*</(?:\w+:)?loc>", re.IGNORECASE)

#: rel values of <link> that the page needs to render (E); any other rel is navigation (L).
_EMBED_RELS = frozenset({
    "stylesheet", "icon", "shortcut", "apple-touch-icon", "apple-touch-icon-precomposed",
    "preload", "prefetch", "modulepreload", "mask-icon", "manifest", "image_src",
})

# (tag, attribute, letter): single-URL attributes.
_URL_ATTRS: tuple[tuple[str, str, str], ...] = (
    ("a", "href", "L"), ("area", "href", "L"),
    ("img", "src", "E"), ("img", "lowsrc", "E"), ("img", "data-src", "E"),
    ("script", "src", "E"), ("iframe", "src", "E"), ("frame", "src", "E"),
    ("embed", "src", "E"), ("object", "data", "E"), ("source", "src", "E"),
    ("video", "src", "E"), ("video", "poster", "E"), ("audio", "src", "E"), ("track", "src", "E"),
    ("input", "src", "E"), ("body", "background", "E"), ("table", "background", "E"),
    ("td", "background", "E"), ("th", "background", "E"), ("applet", "code", "E"),
)


def _clean(raw: str | None) -> str | None:
    if raw is None:
        return None
    url = raw.strip().replace("\n", "").replace("\r", "").replace("\t", "")
    if not url or url.startswith(("#", "javascript:", "mailto:", "data:", "tel:", "about:")):
        return None
    return url


def absolutize(base: str, raw: str | None) -> str | None:
    """An absolute, fragment-free http(s) URL, or None for anything else or anything broken."""
    url = _clean(raw)
    if url is None:
        return None
    try:
        absolute = urljoin(base, url).split("#", 1)[0]
        parts = urlsplit(absolute)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return None
        parts.port  # noqa: B018 - raises ValueError on a port out of range
    except ValueError:
        return None
    if len(absolute) > MAX_URL_LENGTH:
        return None
    return absolute


def _srcset(value: str) -> Iterator[str]:
    for candidate in value.split(","):
        url = candidate.strip().split(" ", 1)[0]
        if url:
            yield url


class _Collector:
    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.links: list[Link] = []

    def add(self, base: str, raw: str | None, letter: str) -> None:
        url = absolutize(base, raw)
        if url is not None and url not in self.seen:
            self.seen.add(url)
            self.links.append((url, letter))


def css_links(text: str, base: str) -> list[Link]:
    """``url(…)`` and ``@import "…"`` in a stylesheet or a style attribute: all embeds."""
    out = _Collector()
    _css_into(out, text, base)
    return out.links


def _css_into(out: _Collector, text: str, base: str) -> None:
    for m in _CSS_URL.finditer(text):
        out.add(base, m.group(1) or m.group(2) or m.group(3), "E")
    for m in _CSS_IMPORT.finditer(text):
        out.add(base, m.group(1) or m.group(2), "E")


def js_links(text: str, base: str) -> list[Link]:
    """Speculative URLs in JavaScript string literals (Heritrix's ExtractorJS): ``X``."""
    out = _Collector()
    _js_into(out, text, base)
    return out.links


def _js_into(out: _Collector, text: str, base: str) -> None:
    for m in _JS_STRING.finditer(text[:2_000_000]):
        candidate = m.group(1)
        if candidate.startswith("//") and len(candidate) < 5:
            continue
        out.add(base, candidate, "X")


def html_links(body: bytes | str, base: str, encoding: str | None = None,
               javascript: bool = False) -> list[Link]:
    """Every outlink of an HTML document; ``<base href>`` is honoured."""
    import lxml.html
    from lxml import etree

    out = _Collector()
    if isinstance(body, str):
        data = body.encode("utf-8", "replace")
        encoding = "utf-8"
    else:
        data = body
    if not data.strip():
        return []
    try:
        parser = lxml.html.HTMLParser(encoding=encoding or None, recover=True, remove_comments=True,
                                      no_network=True, huge_tree=False)
        root = etree.fromstring(data, parser=parser)
    except (etree.LxmlError, ValueError, LookupError):
        try:  # an unknown declared encoding: let libxml2 guess
            root = etree.fromstring(data, parser=lxml.html.HTMLParser(recover=True))
        except Exception:
            return []
    if root is None:
        return []
    for el in root.iter("base"):
        href = absolutize(base, el.get("href"))
        if href:
            base = href
        break
    for tag, attr, letter in _URL_ATTRS:
        for el in root.iter(tag):
            value = el.get(attr)
            if value is not None:
                out.add(base, value, letter)
    for el in root.iter("img", "source"):
        srcset = el.get("srcset") or el.get("data-srcset")
        if srcset:
            for url in _srcset(srcset):
                out.add(base, url, "E")
    for el in root.iter("link"):
        rels = set((el.get("rel") or "").lower().split())
        letter = "E" if rels & _EMBED_RELS else "L"
        out.add(base, el.get("href"), letter)
        if el.get("imagesrcset"):
            for url in _srcset(el.get("imagesrcset") or ""):
                out.add(base, url, "E")
    for el in root.iter("object"):
        codebase = el.get("codebase")
        if codebase:
            out.add(base, codebase, "E")
        for param in el.iter("param"):
            if (param.get("name") or "").lower() in ("movie", "src", "url"):
                out.add(base, param.get("value"), "E")
    for el in root.iter("meta"):
        if (el.get("http-equiv") or "").lower() == "refresh":
            m = _META_REFRESH.match(el.get("content") or "")
            if m:
                out.add(base, m.group(1), "R")
    for el in root.iter("style"):
        _css_into(out, el.text or "", base)
    for el in root.iter():
        style = el.get("style") if isinstance(el.tag, str) else None
        if style and "url(" in style.lower():
            _css_into(out, style, base)
    if javascript:
        for el in root.iter("script"):
            if el.text and not el.get("src"):
                _js_into(out, el.text, base)
        for el in root.iter():
            if not isinstance(el.tag, str):
                continue
            for name, value in el.attrib.items():
                if name.startswith("on") and value:
                    _js_into(out, value, base)
    return out.links


def robots_sitemaps(text: str, base: str) -> list[Link]:
    """``Sitemap:`` lines of a robots.txt: manifests (``M``)."""
    out = _Collector()
    for m in _ROBOTS_SITEMAP.finditer(text):
        out.add(base, m.group(1), "M")
    return out.links


def sitemap_links(body: bytes, base: str) -> list[Link]:
    """``<loc>`` entries of a sitemap index or urlset (``M``); plain-text sitemaps too."""
    out = _Collector()
    head = body[:2048].lstrip()
    if head.startswith(b"<"):
        for m in _SITEMAP_LOC.finditer(body):
            loc = m.group(1).decode("utf-8", "replace").replace("&amp;", "&")
            out.add(base, loc, "M")
    else:
        for line in body.decode("utf-8", "replace").splitlines():
            if line.strip().startswith(("http://", "https://")):
                out.add(base, line.strip(), "M")
    return out.links


def redirect_link(location: str | None, base: str) -> list[Link]:
    """A 3xx ``Location``: one ``R`` link (a new URI, archived in its own right)."""
    out = _Collector()
    out.add(base, location, "R")
    return out.links


def is_sitemap_url(url: str, discovered_by: str) -> bool:
    """Treat a document as a sitemap when it was found as one (``M``) or is named like one."""
    path = urlsplit(url).path.lower()
    return discovered_by.endswith("M") or "sitemap" in path.rsplit("/", 1)[-1]


def extract(url: str, path: str, content_type: str, body: bytes, text: str | None,
            encoding: str | None, status: int, location: str | None,
            javascript: bool = False) -> list[Link]:
    """All outlinks of one fetched URI, whatever its kind (the spider's one entry point)."""
    try:
        return list(_extract(url, path, content_type.lower(), body, text, encoding, status, location,
                             javascript))
    except Exception:  # never let a hostile document kill the crawl
        logger.warning("link extraction failed for %s", url, exc_info=True)
        return []


#: What :func:`parser_for` answers: which reader gets a document's body ("" = none: no links in it).
ROBOTS, HTML, SNIFF, CSS, SITEMAP, JS = "robots", "html", "sniff", "css", "sitemap", "js"


def parser_for(url: str, path: str, content_type: str, javascript: bool = False) -> str:
    """Which extractor reads the body of ``url`` (found by discovery ``path``) served as
    ``content_type``: :data:`ROBOTS`, :data:`HTML`, :data:`CSS`, :data:`SITEMAP`, :data:`JS`,
    :data:`SNIFF` (no type: the body is sniffed for HTML), or "" when the extractor never looks
    at such a body (images, audio, video, fonts, PDFs, archives, octet-stream…).

    The one definition of "link-bearing": :func:`extract` dispatches on it, and the dedup side
    (harvester/revisit.py) sends a conditional request only for a type answered "", because a
    bodyless 304 for anything else would hide that document's links from the crawl."""
    if urlsplit(url).path == "/robots.txt":
        return ROBOTS
    ctype = content_type.lower()
    if not ctype.strip():
        return SNIFF
    if "html" in ctype:
        return HTML
    if "css" in ctype:
        return CSS
    if ("xml" in ctype or "text/plain" in ctype) and is_sitemap_url(url, path):
        return SITEMAP
    if javascript and ("javascript" in ctype or ctype.endswith("/json")):
        return JS
    return ""


def _extract(url: str, path: str, ctype: str, body: bytes, text: str | None, encoding: str | None,
             status: int, location: str | None, javascript: bool) -> Iterable[Link]:
    if 300 <= status < 400 and location:
        yield from redirect_link(location, url)
    reader = parser_for(url, path, ctype, javascript)
    if reader == ROBOTS:
        if 200 <= status < 300:
            yield from robots_sitemaps(body.decode("utf-8", "replace"), url)
        return
    if not body:
        return
    sniffed_html = body[:512].lstrip().lower().startswith((b"<!doctype html", b"<html"))
    if reader == HTML or (reader == SNIFF and sniffed_html):
        yield from html_links(body, url, encoding, javascript)
    elif reader == CSS:
        yield from css_links(text if text is not None else body.decode(encoding or "utf-8", "replace"), url)
    elif reader == SITEMAP:
        yield from sitemap_links(body, url)
    elif reader == JS:
        yield from js_links(text if text is not None else body.decode(encoding or "utf-8", "replace"), url)
