"""SURT form and implied SURT prefixes, exactly as the Heritrix glossary defines them (seed 004).

``scheme://domain.tld/path?query`` becomes ``scheme://(tld,domain,)/path?query``: lowercase,
``https`` folded into ``http``, host labels reversed and comma-terminated, and — the subtle part —
the ``/`` after the authority only if the plain URI has it. A seed's *implied SURT prefix* keeps
everything up to the last slash (when there are at least three) and drops a final ``)``, so
``http://www.example.org`` (no slash) admits ``www.example.org``'s subdomains while
``http://www.example.org/`` does not.

Ports and user-info go inside the parentheses after the reversed host, as Heritrix writes them
(``http://(org,example,www,:8080)/``); a default port is dropped. IP addresses are not reversed
(``http://(127.0.0.1:8001)/``): reversing a dotted quad would group unrelated networks.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from harvester.hosts import DEFAULT_PORTS, is_ip


def surt_form(url: str) -> str:
    """The SURT form of ``url`` (raises ValueError for a URL without a scheme and host)."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if not scheme or not parts.netloc:
        raise ValueError(f"not an absolute URL: {url!r}")
    netloc = parts.netloc.lower()
    userinfo = ""
    if "@" in netloc:
        userinfo, netloc = netloc.rsplit("@", 1)
    host, port = netloc, ""
    if netloc.startswith("["):  # IPv6 literal
        end = netloc.find("]")
        host, rest = netloc[: end + 1], netloc[end + 1 :]
        port = rest[1:] if rest.startswith(":") else ""
    elif ":" in netloc:
        host, port = netloc.rsplit(":", 1)
    host = host.rstrip(".")
    if port and port.isdigit() and int(port) == DEFAULT_PORTS.get(scheme, -1):
        port = ""
    if scheme == "https":
        scheme = "http"
    if is_ip(host):
        authority = host
    else:
        authority = ",".join(reversed(host.split("."))) + ","
    if port:
        authority += f":{port}"
    if userinfo:
        authority += f"@{userinfo}"
    # Everything after the authority, exactly as given (so a missing "/" stays missing).
    raw = url.strip()
    after = raw[raw.find("://") + 3 + len(parts.netloc) :].split("#", 1)[0]
    return f"{scheme}://({authority}){after}".lower()


def implied_surt_prefix(url: str) -> str:
    """The SURT prefix a seed implies (glossary: "implied SURT prefix", rules 1–3)."""
    form = surt_form(url)
    if form.count("/") >= 3:
        form = form[: form.rfind("/") + 1]
    if form.endswith(")"):
        form = form[:-1]
    return form


class SurtPrefixSet:
    """A set of SURT prefixes answering "does this SURT start with one of them?" quickly.

    Prefixes are kept sorted with redundant ones (those extending another) removed; a lookup
    bisects to the one candidate that could be a prefix of the key, so it costs O(log n) whatever
    the number of seeds.
    """

    def __init__(self, prefixes: list[str] | tuple[str, ...] = ()) -> None:
        ordered = sorted(set(prefixes))
        kept: list[str] = []
        for p in ordered:
            if kept and p.startswith(kept[-1]):
                continue
            kept.append(p)
        self.prefixes = kept

    def __len__(self) -> int:
        return len(self.prefixes)

    def matches(self, surt: str) -> bool:
        from bisect import bisect_right

        i = bisect_right(self.prefixes, surt)
        return i > 0 and surt.startswith(self.prefixes[i - 1])
