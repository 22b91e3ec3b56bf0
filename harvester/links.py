"""Outlinks of a fetched document, each with its discovery path letter (glossary, "Discovery Path").

``L`` navigation (``<a>``, ``<area>``, ``<link rel=next|alternate…>``, forms' GET actions are left
out as Heritrix's default ignores POST and we cannot know), ``E`` what renders the page (images,
``srcset``, scripts, stylesheets, icons, preloads, frames, iframes, embeds, objects, media sources
and posters, backgrounds, CSS ``url()`` and ``@import``), ``R`` redirects (``Location`` and
``<meta http-equiv=refresh>``, as Heritrix's ExtractorHTML treats a refresh), ``M`` sitemap
entries (robots.txt ``Sitemap:`` lines, sitemap indexes and urlsets), ``X`` speculative URLs found
in JavaScript strings (only when the template's ``extract_javascript`` is on).

Sitemaps are recognised by where they were named (a robots.txt ``Sitemap:`` line, a sitemap index:
the discovery path ends in ``M``) or by name, then by content (gzip magic, a ``<urlset>`` /
``<sitemapindex>`` root), not by type alone: a ``sitemap.xml.gz`` served as ``application/x-gzip``
is gunzipped, within the job's decompression bound. Broken markup that swallows a page's links in the
tree parser (an unclosed ``<title>``, ``<textarea>``, ``<script>``, ``<!--``…) is read again by a
tolerant tag scan; a ``url()`` inside a CSS comment is no link.

Extraction never raises on what a website sends: undecodable bytes, broken markup, a truncated
document or an absurd attribute yield fewer links, not an exception (a hostile site never kills a
job). Results are absolute, fragment-free http(s) URLs, de-duplicated per document in order.
"""

from __future__ import annotations

import html
import logging
import re
import zlib
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from typing import Any
from urllib.parse import SplitResult, urljoin, urlsplit

from harvester.defaults import MAX_DECODED_BYTES

logger = logging.getLogger(__name__)

MAX_URL_LENGTH = 2083  # Heritrix's default maximum URI length
Link = tuple[str, str]  # (absolute url, path letter)

_CSS_URL = re.compile(r"""url\(\s*(?:"([^"]*)"|'([^']*)'|([^)\s]*))\s*\)""", re.IGNORECASE)
_CSS_IMPORT = re.compile(r"""@import\s+(?:"([^"]+)"|'([^']+)')""", re.IGNORECASE)
_META_REFRESH = re.compile(r"""^\s*\d*\s*[;,]?\s*(?:url\s*=\s*)?["']?([^"'\s]+)""", re.IGNORECASE)
_JS_STRING = re.compile(
    r"""(?:"|')((?:https?:)?//[^\s"'<>\\]{3,}|/[^\s"'<>\\]*|"""
    r"""[\w\-./]+\.(?:html?|php|aspx?|jsp|css|js|png|gif|jpe?g|svg|webp|pdf|json|xml))"""
    r"""(?:"|')""",
    re.IGNORECASE,
)
_ROBOTS_SITEMAP = re.compile(r"^\s*sitemap\s*:\s*(\S+)", re.IGNORECASE | re.MULTILINE)
_SITEMAP_LOC = re.compile(rb"<(?:\w+:)?loc>\s*([^<\s]+)\s*</(?:\w+:)?loc>", re.IGNORECASE)

#: rel values of <link> that the page needs to render (E); any other rel is navigation (L).
_EMBED_RELS = frozenset(
    {
        "stylesheet",
        "icon",
        "shortcut",
        "apple-touch-icon",
        "apple-touch-icon-precomposed",
        "preload",
        "prefetch",
        "modulepreload",
        "mask-icon",
        "manifest",
        "image_src",
    }
)

# (tag, attribute, letter): single-URL attributes.
_URL_ATTRS: tuple[tuple[str, str, str], ...] = (
    ("a", "href", "L"),
    ("area", "href", "L"),
    ("img", "src", "E"),
    ("img", "lowsrc", "E"),
    ("img", "data-src", "E"),
    ("script", "src", "E"),
    ("iframe", "src", "E"),
    ("frame", "src", "E"),
    ("embed", "src", "E"),
    ("object", "data", "E"),
    ("source", "src", "E"),
    ("video", "src", "E"),
    ("video", "poster", "E"),
    ("audio", "src", "E"),
    ("track", "src", "E"),
    ("input", "src", "E"),
    ("body", "background", "E"),
    ("table", "background", "E"),
    ("td", "background", "E"),
    ("th", "background", "E"),
    ("applet", "code", "E"),
)
#: tag → its single-URL attributes; every tag :func:`_tag_into` reads is a key.
_TAG_RULES: dict[str, tuple[tuple[str, str], ...]] = {
    tag: tuple((a, letter) for t, a, letter in _URL_ATTRS if t == tag)
    for tag in {t for t, _, _ in _URL_ATTRS} | {"link", "param", "meta", "style", "source", "object"}
}
#: The attributes the plausibility judgement counts (see :func:`html_links`).
_HINTED = frozenset({"href", "src"})


def _clean(raw: str | None) -> str | None:
    if raw is None:
        return None
    url = raw.strip().replace("\n", "").replace("\r", "").replace("\t", "")
    if not url or url.startswith(("#", "javascript:", "mailto:", "data:", "tel:", "about:")):
        return None
    return url


def _http_parts(url: str) -> SplitResult | None:
    """``urlsplit(url)`` of an http(s) URL with a host and a valid port, else None."""
    try:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return None
        parts.port  # noqa: B018 - raises ValueError on a port out of range
    except ValueError:
        return None
    return parts


@lru_cache(maxsize=256)
def _origin(base: str) -> str | None:
    """``scheme://netloc`` of a valid http(s) base URL (what :func:`absolutize` checks), else None."""
    parts = _http_parts(base)
    return None if parts is None else f"{parts.scheme}://{parts.netloc}"


def _rooted(url: str) -> bool:
    """Whether ``urljoin(base, url)`` is exactly the base's origin + ``url`` (fragment already cut):
    a root-relative path (``/p/1.html``, most links of a site) with nothing ``urljoin`` would
    rewrite: no dot segment, no ``;params``, no empty ``?``, no network path (``//host``)."""
    return url[:1] == "/" and url[1:2] != "/" and "/." not in url and ";" not in url and not url.endswith("?")


def _at_origin(base: str, path: str) -> str | None:
    """``urljoin(base, path)`` without ``urljoin`` when its result is known: the base's origin + ``path``
    for a :func:`_rooted` path (fragment already cut) on a valid http(s) base (:func:`_origin`, cached per
    base); None otherwise."""
    if not _rooted(path):
        return None
    origin = _origin(base)
    return None if origin is None else origin + path


def join_rooted(base: str, path: str) -> str:
    """``urljoin(base, path)``, by :func:`_at_origin` when it applies: the crawl's inferred
    ``/favicon.ico`` of every page (issue 14)."""
    plain = "#" not in path and path.isprintable()  # urljoin drops an empty "?#…" and removes tabs, CR, LF
    joined = _at_origin(base, path) if plain else None
    return joined if joined is not None else urljoin(base, path)


def absolutize(base: str, raw: str | None) -> str | None:
    """An absolute, fragment-free http(s) URL, or None for anything else or anything broken.

    A root-relative link on a valid base skips ``urljoin`` + ``urlsplit`` (their result is known:
    the base's origin + the path; tests/harvester/test_links.py holds the two ways equal), which
    was a third of a page's link extraction (issue 14, docs/BENCHMARKS.md "Harvester CPU")."""
    url = _clean(raw)
    if url is None:
        return None
    if url[:1] == "/":
        absolute = _at_origin(base, url.split("#", 1)[0])
        if absolute is not None:
            return absolute if len(absolute) <= MAX_URL_LENGTH else None
    try:
        absolute = urljoin(base, url).split("#", 1)[0]
    except ValueError:
        return None
    if _http_parts(absolute) is None or len(absolute) > MAX_URL_LENGTH:
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
        self.offered = 0  # href/src attribute values offered by an HTML reader (plausibility)

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


#: A CSS comment (an unclosed one runs to the end, as CSS says), or a string kept as it is (a
#: ``/*`` inside quotes opens no comment).
_CSS_COMMENT_OR_STRING = re.compile(r"""/\*.*?(?:\*/|\Z)|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'""", re.DOTALL)


def _css_uncommented(text: str) -> str:
    """``text`` with its comments blanked: a ``url()`` in ``/* … */`` was taken out of the page."""
    if "/*" not in text:
        return text
    return _CSS_COMMENT_OR_STRING.sub(lambda m: " " if m.group(0).startswith("/*") else m.group(0), text)


def _css_into(out: _Collector, text: str, base: str) -> None:
    text = _css_uncommented(text)
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


def html_links(body: bytes | str, base: str, encoding: str | None = None, javascript: bool = False) -> list[Link]:
    """Every outlink of an HTML document; ``<base href>`` is honoured.

    The tree parser reads it first. When that parse is implausible (the bytes hold many more
    ``href=``/``src=`` attributes than the tree gave: an unclosed ``<title>``, ``<textarea>``,
    ``<script>``, ``<style>`` or ``<!--`` swallowed the rest of the page), a tolerant tag scan
    (:func:`_scan_tags`, Heritrix ExtractorHTML's way) adds what the tree lost. Normal pages pay one
    byte-level regex count for that judgement, never a second extraction."""
    out = _Collector()
    if isinstance(body, str):
        data, encoding = body.encode("utf-8", "replace"), "utf-8"
    else:
        data = body
    if not data.strip():
        return []
    root = _parse_tree(data, encoding)
    if root is not None:
        _tree_into(out, root, base, javascript)
    if out.offered * 2 < _attribute_hints(data):
        _scan_tags(out, data, encoding, base, javascript)
    return out.links


@lru_cache(maxsize=32)
def _html_parser(encoding: str | None) -> Any:
    """libxml2's HTML parser as the tree reader uses it, one per declared encoding, made once.

    ``lxml.etree.HTMLParser``, not ``lxml.html.HTMLParser``: the latter is the same parser with an
    element-class lookup that calls back into Python for every element it builds (to make
    ``HtmlElement`` objects, whose extra methods the walk never uses): a third of a small page's
    parse, more on a big one. The tree (elements, attributes, text) is the same libxml2 builds
    (issue 14, docs/DESIGN.md "Harvester CPU per page, margin"). A parser is reusable: lxml resets
    its context for each document."""
    from lxml import etree

    return etree.HTMLParser(encoding=encoding, recover=True, remove_comments=True, no_network=True, huge_tree=False)


def _parse_tree(data: bytes, encoding: str | None) -> Any:
    """The document's lxml tree (recovering from broken markup), or None when libxml2 gives none."""
    from lxml import etree

    try:
        return etree.fromstring(data, parser=_html_parser(encoding or None))
    except (etree.LxmlError, ValueError, LookupError):
        try:  # an unknown declared encoding: let libxml2 guess
            return etree.fromstring(data, parser=etree.HTMLParser(recover=True))
        except Exception:
            return None


def _tree_into(out: _Collector, root: Any, base: str, javascript: bool) -> None:
    """Every element's links, against ``<base href>`` when there is one. One loop, no call per element
    that has nothing to give: this is the hottest loop of a page's extraction."""
    el = root.find(".//base")
    href = absolutize(base, el.get("href")) if el is not None else None
    tree_base = href or base
    for el in root.iter():
        tag = el.tag
        if not isinstance(tag, str):
            continue
        if tag in _TAG_RULES:
            _tag_into(out, tree_base, tag, el.get, el.text, javascript)
        style = el.get("style")
        if style and "url(" in style.lower():
            _css_into(out, style, tree_base)
        if javascript:
            for name, value in el.attrib.items():
                if name.startswith("on") and value:
                    _js_into(out, value, tree_base)


def _handlers_into(out: _Collector, attrs: Iterable[tuple[str, str]], base: str) -> None:
    """Script in event-handler attributes (``onclick=…``)."""
    for name, value in attrs:
        if name.startswith("on") and value:
            _js_into(out, value, base)


def _attribute_hints(data: bytes) -> int:
    """About how many ``href=``/``src=`` attributes the bytes hold: what the tree parse is judged
    against. Plain counts of a lower-cased copy (a regex costs eight times more, ~1 % of a page's
    extraction against ~0.1 %); ``data-src=`` is not counted, as the tree's count leaves it out."""
    lowered = data.lower()
    return lowered.count(b"href=") + lowered.count(b"src=") - lowered.count(b"data-src=")


_TAG_OPEN = re.compile(r"<(!--|[a-zA-Z][\w:-]*)([^<>]*)>?")
_TAG_ATTR = re.compile(r"""([^\s"'<>/=]+)\s*=\s*(?:"([^"<>]*)"?|'([^'<>]*)'?|([^\s"'<>`]+))""")
_RAW_TEXT = ("script", "style")


def _scan_tags(out: _Collector, data: bytes, encoding: str | None, base: str, javascript: bool) -> None:
    """The tolerant fallback: every start tag's attributes, whatever element it stands in.

    As in Heritrix's ExtractorHTML, only a *closed* comment is skipped and only a *closed*
    ``<script>``/``<style>`` has its content read as script/CSS; an unclosed one is just a tag, and
    the scan goes on after it. Each closer is searched for at most once per kind (linear time even
    for a page of ten thousand unclosed ``<script>`` tags)."""
    text = _decoded(data, encoding)
    lower = text.lower()
    closer_at: dict[str, int] = {}  # the next closer found from some earlier position (-1: none left)

    def closer(token: str, pos: int) -> int:
        at = closer_at.get(token)
        if at is None or (at != -1 and at < pos):
            at = lower.find(token, pos)
            closer_at[token] = at
        return at

    m = _TAG_BASE.search(text)
    if m:
        base = absolutize(base, _attrs(m.group(1)).get("href")) or base
    pos = 0
    while True:
        m = _TAG_OPEN.search(text, pos)
        if m is None:
            return
        tag = m.group(1).lower()
        pos = m.end()
        if tag == "!--":
            end = closer("-->", m.start() + 4)
            pos = end + 3 if end != -1 else m.start() + 4  # an unclosed one hides nothing
            continue
        content = None
        if tag in _RAW_TEXT:
            end = closer("</" + tag, pos)
            if end != -1:
                content, pos = text[pos:end], end
        if tag in _TAG_RULES or javascript or "style" in m.group(2).lower():
            _scanned_tag_into(out, base, tag, _attrs(m.group(2)), content, javascript)


def _scanned_tag_into(
    out: _Collector, base: str, tag: str, attrs: dict[str, str], content: str | None, javascript: bool
) -> None:
    """One start tag the scan found: the same rules as the tree's elements."""
    if tag in _TAG_RULES:
        _tag_into(out, base, tag, attrs.get, content, javascript)
    style = attrs.get("style")
    if style and "url(" in style.lower():
        _css_into(out, style, base)
    if javascript:
        _handlers_into(out, attrs.items(), base)


_TAG_BASE = re.compile(r"<base\b([^>]*)>", re.IGNORECASE)


def _decoded(data: bytes, encoding: str | None) -> str:
    try:
        return data.decode(encoding or "utf-8", "replace")
    except LookupError:
        return data.decode("utf-8", "replace")


def _attrs(raw: str) -> dict[str, str]:
    """Attribute name → value (entities decoded) of a start tag's text; the first of a name wins."""
    found: dict[str, str] = {}
    for m in _TAG_ATTR.finditer(raw):
        name = m.group(1).lower()
        if name not in found:
            value = m.group(2) if m.group(2) is not None else m.group(3) if m.group(3) is not None else m.group(4)
            found[name] = html.unescape(value) if "&" in value else value
    return found


def _tag_into(
    out: _Collector, base: str, tag: str, get: Callable[[str], str | None], text: str | None, javascript: bool
) -> None:
    """The links of one element, whoever read it (the tree or the tolerant scan): one set of rules.
    The attribute rules of :data:`_TAG_RULES`, then the tag's own rule, if it has one."""
    for attr, letter in _TAG_RULES.get(tag, ()):
        value = get(attr)
        if value is not None:
            out.offered += attr in _HINTED
            out.add(base, value, letter)
    special = _TAG_SPECIAL.get(tag)
    if special is not None:
        special(out, base, get, text, javascript)


_Getter = Callable[[str], "str | None"]


def _img_into(out: _Collector, base: str, get: _Getter, text: str | None, javascript: bool) -> None:
    """``<img>``, ``<source>``: every candidate of a ``srcset`` (lazy loaders' ``data-srcset`` too)."""
    srcset = get("srcset") or get("data-srcset")
    if srcset:
        for url in _srcset(srcset):
            out.add(base, url, "E")


def _link_into(out: _Collector, base: str, get: _Getter, text: str | None, javascript: bool) -> None:
    """``<link>``: an embed for the rels a page needs to render (stylesheet, icon…), else a link."""
    rels = set((get("rel") or "").lower().split())
    href = get("href")
    out.offered += href is not None
    out.add(base, href, "E" if rels & _EMBED_RELS else "L")
    for url in _srcset(get("imagesrcset") or ""):
        out.add(base, url, "E")


def _object_into(out: _Collector, base: str, get: _Getter, text: str | None, javascript: bool) -> None:
    codebase = get("codebase")
    if codebase:
        out.add(base, codebase, "E")


def _param_into(out: _Collector, base: str, get: _Getter, text: str | None, javascript: bool) -> None:
    """``<param name=movie|src|url value=…>`` of an ``<object>``: what the plug-in loads."""
    if (get("name") or "").lower() in ("movie", "src", "url"):
        out.add(base, get("value"), "E")


def _meta_into(out: _Collector, base: str, get: _Getter, text: str | None, javascript: bool) -> None:
    """``<meta http-equiv=refresh content="0; url=…">``: a redirect (``R``)."""
    if (get("http-equiv") or "").lower() == "refresh":
        m = _META_REFRESH.match(get("content") or "")
        if m:
            out.add(base, m.group(1), "R")


def _style_into(out: _Collector, base: str, get: _Getter, text: str | None, javascript: bool) -> None:
    if text:
        _css_into(out, text, base)


def _script_into(out: _Collector, base: str, get: _Getter, text: str | None, javascript: bool) -> None:
    """An inline script's string literals, when the job extracts from scripts."""
    if javascript and text and not get("src"):
        _js_into(out, text, base)


#: Tags with a rule beyond their plain link attributes (looked up once per element: most have none).
_TAG_SPECIAL: dict[str, Callable[[_Collector, str, _Getter, str | None, bool], None]] = {
    "img": _img_into,
    "source": _img_into,
    "link": _link_into,
    "object": _object_into,
    "param": _param_into,
    "meta": _meta_into,
    "style": _style_into,
    "script": _script_into,
}


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
    """Treat a document as a sitemap when it was found where sitemaps are named (``M``: a robots.txt
    ``Sitemap:`` line or a sitemap index; a urlset's entries end in ``M`` too, which is why the
    content decides in the end, see :func:`_sitemap_document`) or is named like one."""
    path = urlsplit(url).path.lower()
    return discovered_by.endswith("M") or "sitemap" in path.rsplit("/", 1)[-1]


GZIP_MAGIC = b"\x1f\x8b"
#: How a ``sitemap.xml.gz`` is served (``application/gzip``, ``application/x-gzip``,
#: ``application/octet-stream``): types read as a sitemap only where a sitemap is expected, and
#: only when the content is one.
_GZIP_TYPES = ("gzip", "octet-stream")
#: The root element of a sitemap (a urlset or an index), namespace prefix allowed.
_SITEMAP_ROOT = re.compile(rb"<(?:[\w-]+:)?(?:urlset|sitemapindex)[\s>/]", re.IGNORECASE)
_SNIFF_BYTES = 4096


def gunzip(data: bytes, limit: int) -> bytes:
    """``data`` decompressed (every gzip member), to at most ``limit`` bytes: a gzip bomb stops at
    the limit, and a truncated or corrupt stream gives what came before the damage."""
    out: list[bytes] = []
    size = 0
    while data[:2] == GZIP_MAGIC and size < limit:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            chunk = inflater.decompress(data, limit - size)
        except zlib.error:
            break
        out.append(chunk)
        size += len(chunk)
        if not inflater.eof:  # the limit reached, or the stream cut short
            break
        data = inflater.unused_data
    return b"".join(out)


def _looks_like_sitemap(head: bytes, text_lines: bool) -> bool:
    """A sitemap's first bytes: its XML root, or (``text_lines``) a plain-text sitemap's first URL."""
    if _SITEMAP_ROOT.search(head):
        return True
    return text_lines and head.lstrip()[:8].lower().startswith((b"http://", b"https://"))


def _sitemap_document(body: bytes, check: str, limit: int) -> bytes | None:
    """The sitemap in ``body`` (gunzipped to ``limit`` when it is gzip, whatever its type said), or
    None when ``check`` asks for sitemap content and the body has none: ``"xml"`` (an HTML or
    untyped body: only a sitemap's XML root counts), ``"any"`` (a gzip or octet-stream type: XML or
    plain-text lines), ``""`` (an XML or text type at a sitemap place: read as it is)."""
    gzipped = body[:2] == GZIP_MAGIC
    head = gunzip(body, _SNIFF_BYTES) if gzipped else body[:_SNIFF_BYTES]
    if check and not _looks_like_sitemap(head, check == "any"):
        return None
    return gunzip(body, limit) if gzipped else body


def extract(
    url: str,
    path: str,
    content_type: str,
    body: bytes,
    text: str | None,
    encoding: str | None,
    status: int,
    location: str | None,
    javascript: bool = False,
    max_decoded: int = MAX_DECODED_BYTES,
) -> list[Link]:
    """All outlinks of one fetched URI, whatever its kind (the spider's one entry point).
    ``max_decoded``: the most a gzipped sitemap is decompressed to (the job's ``DOWNLOAD_MAXSIZE``)."""
    try:
        return list(
            _extract(url, path, content_type.lower(), body, text, encoding, status, location, javascript, max_decoded)
        )
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
    (harvester/revisit/__init__.py) sends a conditional request only for a type answered "", because a
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
    if ("xml" in ctype or "text/plain" in ctype or any(t in ctype for t in _GZIP_TYPES)) and is_sitemap_url(url, path):
        return SITEMAP  # a gzip at a sitemap place: never asked for conditionally, always opened
    if javascript and ("javascript" in ctype or ctype.endswith("/json")):
        return JS
    return ""


def _extract(
    url: str,
    path: str,
    ctype: str,
    body: bytes,
    text: str | None,
    encoding: str | None,
    status: int,
    location: str | None,
    javascript: bool,
    max_decoded: int,
) -> Iterable[Link]:
    if 300 <= status < 400 and location:
        yield from redirect_link(location, url)
    reader = parser_for(url, path, ctype, javascript)
    if reader == ROBOTS:
        if 200 <= status < 300:
            yield from robots_sitemaps(body.decode("utf-8", "replace"), url)
        return
    if not body:
        return
    if reader in (SITEMAP, HTML, SNIFF) and is_sitemap_url(url, path):
        # Found where sitemaps are named, or named like one: the content decides.
        check = "xml" if reader != SITEMAP else "any" if any(t in ctype for t in _GZIP_TYPES) else ""
        sitemap = _sitemap_document(body, check, max_decoded)
        if sitemap is not None:
            yield from sitemap_links(sitemap, url)
            return
        if reader == SITEMAP:
            return
    sniffed_html = body[:512].lstrip().lower().startswith((b"<!doctype html", b"<html"))
    if reader == HTML or (reader == SNIFF and sniffed_html):
        yield from html_links(body, url, encoding, javascript)
    elif reader == CSS:
        yield from css_links(text if text is not None else body.decode(encoding or "utf-8", "replace"), url)
    elif reader == JS:
        yield from js_links(text if text is not None else body.decode(encoding or "utf-8", "replace"), url)
