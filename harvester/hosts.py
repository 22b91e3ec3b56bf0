"""Hosts and registrable domains: the one place that says what an IP address and a domain are.

Pure Python (no Django), so the harvester's scope and statistics, the SURT writer and the
orchestrator's validators, seeding, selection and preload all share it (issue 16, "one concept,
one place"). Public suffixes come from the snapshot bundled with tldextract, never a network fetch
at run time, so a crawl and a form give the same answer offline and on every machine.

Two questions, two answers:

* :func:`registrable_domain` — the harvester's *politeness and scope unit* of a URL or host: the
  public suffix + 1 (``www.bbc.co.uk`` → ``bbc.co.uk``); an IP address keeps its port, so several
  ports on 127.0.0.1 act as several sites; a name under no known suffix stands for itself.
* :func:`registrable_part` — the orchestrator's *domain record* of an ASCII host: the public
  suffix + 1, an IP as itself, or None when the name has no registrable part (a curator's typo).
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import tldextract

#: The port a scheme implies: dropped from host keys and SURTs.
DEFAULT_PORTS = {"http": 80, "https": 443}


@lru_cache(maxsize=1)
def _extractor() -> tldextract.TLDExtract:
    import tldextract

    # suffix_list_urls=(): the snapshot bundled with tldextract, never a network fetch.
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


def is_ip(host: str) -> bool:
    """An IPv4 or IPv6 address (brackets of a URL's IPv6 literal allowed)."""
    value = host.strip("[]")
    if not value or not (value[-1].isdigit() or ":" in value):
        return False  # cheap test first: a host name ends in a letter (ip_address() raising costs ~10 µs)
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


@lru_cache(maxsize=4096)
def host_key(url: str) -> str:
    """``host`` or ``host:port`` (non-default port): the logical host of politeness and scope.

    Cached: a crawl asks it of the same URL five or six times (discovery, scope, issue, response,
    robots), each a ``urlsplit`` (~2 % of a crawl's CPU before the cache, issue 14)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").rstrip(".")
    try:
        port = parts.port
    except ValueError:
        port = None
    if port and port != DEFAULT_PORTS.get(parts.scheme.lower()):
        return f"{host}:{port}"
    return host


def key_host(key: str) -> str:
    """The host of a :func:`host_key` (its ``:port`` cut off); an IPv6 literal, colons of its own, whole."""
    return key.rsplit(":", 1)[0] if key.count(":") == 1 else key


def registrable_domain(url_or_host: str) -> str:
    """The registrable domain (``www.bbc.co.uk`` → ``bbc.co.uk``); an IP with its port as is; a name
    under no known public suffix (``localhost``) as itself."""
    key = host_key(url_or_host) if "://" in url_or_host else url_or_host.lower()
    host = key_host(key)
    if is_ip(host) or "." not in host:
        return key
    return _extractor()(host).top_domain_under_public_suffix or host


def registrable_part(host: str) -> str | None:
    """The registrable domain (public suffix + 1) of an ASCII host, an IP as itself, or None."""
    if is_ip(host):
        return host.strip("[]")
    parts = _extractor()(host)
    if not parts.suffix or not parts.domain:
        return None
    return f"{parts.domain}.{parts.suffix}"
