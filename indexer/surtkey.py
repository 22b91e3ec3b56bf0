"""SURT keys exactly as the ``surt`` package computes them, without its cost for plain URLs.

Why: the SURT key is the CDX's N field (ARCHITECTURE.md): replay (pywb) and deduplication look captures
up by the keys ``surt.surt()`` computes with its default options, so the key must stay ``surt``'s, byte
for byte. But ``surt`` runs every URL through a URL object, two canonicalisers, a dozen regexes and
repeated unescaping: 14 µs a URL, the largest part of the Python work per CDX line (docs/DESIGN.md,
"Indexer: CDX speed against cdxj-indexer").

How: most URLs a crawl writes are *plain*: ``http``/``https`` in lower case, a host name of letters,
digits, ``-`` and ``_`` whose last label holds a letter (so never an IP address, which ``surt`` would
resolve), no user, port, fragment, ``%`` escape, ``(`` (the ASP.NET path session ids), empty, ``.`` or
``..`` path segment or doubled ``/``, and a query (if any) of plain characters without a session-id
parameter. For such a URL every step of ``surt`` is an identity except these, which :func:`_plain_key`
does directly: host lower-cased, one leading ``www``/``www<digits>.`` label dropped, labels reversed and
joined by ``,``, then ``)``; path lower-cased (``/`` when absent), a trailing ``/`` dropped unless the path
is ``/``; query lower-cased and its ``&``-separated arguments sorted as ``(name, value)`` pairs. The host
part is cached per host (``HOST_CACHE`` entries). Any other URL goes to ``surt`` itself. Checked against
``surt`` on generated URLs built to hit every condition above (tests/indexer/test_surtkey.py).
"""

from __future__ import annotations

import re

from indexer.surtimport import import_surt

_surt = import_surt().surt

#: Host parts kept (a crawl's WARC holds a few thousand hosts; the cache is emptied when full).
HOST_CACHE = 50_000

_PLAIN = re.compile(
    r"(https?)://([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.[A-Za-z0-9_-]*[A-Za-z][A-Za-z0-9_-]*)"
    r"(/[A-Za-z0-9_.~/-]*)?(?:\?([A-Za-z0-9_.~=&+-]+))?"
)
_WWW = re.compile(r"www\d*\.")
_SESSION_QUERY = ("sid=", "sessionid", "cfid=")

_hosts: dict[str, str] = {}


def _host_part(host: str) -> str:
    """``www.Example.fr`` → ``fr,example)``: surt's host massage and reversal, for a plain host name."""
    part = _hosts.get(host)
    if part is None:
        name = host.lower()
        www = _WWW.match(name)
        if www:
            name = name[www.end() :]
        part = ",".join(reversed(name.split("."))) + ")"
        if len(_hosts) >= HOST_CACHE:
            _hosts.clear()
        _hosts[host] = part
    return part


def _plain_query(query: str) -> str | None:
    """surt's query canonicalisation for a plain query, or None when a session id would be stripped."""
    query = query.lower()
    if any(s in query for s in _SESSION_QUERY):
        return None
    if len(query) <= 1:
        return query
    pairs = [tuple(arg.split("=", 1)) for arg in query.split("&")]
    pairs.sort()
    return "&".join("=".join(p) for p in pairs)


def _plain_key(url: str) -> str | None:
    """The SURT key of a plain URL (module docstring), or None when ``url`` is not plain."""
    m = _PLAIN.fullmatch(url)
    if m is None:
        return None
    path = m.group(3)
    if path is None:
        path = "/"
    elif "//" in path or "/./" in path or "/../" in path or path.endswith(("/.", "/..")):
        return None
    else:
        path = path.lower()
        if len(path) > 1 and path.endswith("/"):
            path = path[:-1]
    key = _host_part(m.group(2)) + path
    query = m.group(4)
    if query is not None:
        query = _plain_query(query)
        if query is None:
            return None
        key += "?" + query
    return key


def surt_key(url: str) -> str:
    """SURT key as pywb/cdxj-indexer compute it; an unparseable URL is its own key (as there)."""
    key = _plain_key(url)
    if key is not None:
        return key
    try:
        return _surt(url)
    except Exception:
        return url
