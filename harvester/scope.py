"""Which discovered URIs a job fetches: scope rules, hops, embeds, crawler traps, canonical keys.

One :class:`Scope` per job, built from the JobSpec. :meth:`Scope.decide` answers with a
:class:`Decision`: accepted with the budget key (the JobSpec domain charged for the URI), or
rejected with the Heritrix status code the crawl.log should show (glossary, "Status codes"):

* ``-5001`` blocked by a crawler trap ("blocked from fetch by user setting");
* ``-4001`` too many link hops (count of ``L`` in the discovery path, glossary "Link Hop Count"); with
  ``max_hops`` and ``max_embed_hops`` both 0, any hop but a redirect or a prerequisite;
* ``-4002`` an out-of-scope embed too many transitive hops from the last in-scope URI;
* ``-7`` (from the crawl engine, after the scope accepted it): a URI no fetcher can take
  (:func:`unfetchable`);
* ``OUT_OF_SCOPE`` (0, never logged): plain out of scope. Heritrix does not log URIs its scope
  rejects at discovery (``-5000`` is for re-examination after a scope change), and logging every
  external link would drown crawl.log.

Scope rules (``CrawlSettings.scope``), per JobSpec domain, from that domain's seeds:
``surt`` — the seeds' implied SURT prefixes (:mod:`harvester.surts`); ``host`` — the seeds' hosts
(with port); ``domain`` — the seeds' registrable domains and every subdomain
(:func:`harvester.hosts.registrable_domain`: an IP address stands for itself with its port, so several
ports on 127.0.0.1 act as several sites); ``path`` — the seeds' host and directory prefix.

Embeds (Heritrix's TransclusionDecideRule): an out-of-scope URI whose discovery path ends in a run
of 1..``max_embed_hops`` non-navigational hops (``E``, ``X``, ``R``, ``P``, ``I``) is fetched anyway,
so a page's off-site images, stylesheets and redirects are archived with it.

Crawler traps are Java-style ``matches()`` regexes (the whole URI must match), as in
NetarchiveSuite's trap lists, matched by RE2 (:mod:`harvester.patterns`: linear time per URI, so no
trap can freeze a crawl). Global, per-domain and live-added traps are each compiled into a few RE2
alternations, so 100,000 traps cost a fraction of a millisecond per URI; a live trap compiles only
itself.

Seen-set keys (:data:`CANONICALIZERS`): Heritrix 3's default canonicalisation, which never reorders a
query; a template's ``canonicalize_query_order`` adds the sort; a frontier records its scheme, so a
job resumed across an upgrade keeps judging with the keys its seen-set holds (``legacy_key``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

from harvester.contracts import JobSpec
from harvester.hosts import DEFAULT_PORTS, host_key, is_ip, registrable_domain
from harvester.patterns import FullMatchSet
from harvester.surts import SurtPrefixSet, implied_surt_prefix, surt_form

OUT_OF_SCOPE = 0
S_UNFETCHABLE_URI = -7
S_ROBOTS_PREREQUISITE_FAILURE = -61
S_TOO_MANY_HOPS = -4001
S_TOO_MANY_EMBED_HOPS = -4002
S_BLOCKED_BY_TRAP = -5001
S_QUOTA = -5003
S_ROBOTS = -9998

#: Letters that are not navigation: what an out-of-scope URI's path may end with to be fetched.
TRANSCLUSION_LETTERS = frozenset("EXRPI")


# A host name the resolver and the HTTP client can take: LDH labels (underscores tolerated, as
# browsers do), after IDNA.
_HOST_OK = re.compile(r"^(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.?)+$", re.IGNORECASE)


def unfetchable(url: str) -> bool:
    """A URI no fetcher can take (glossary -7, "URI recognized as unsupported or illegal"): not
    http(s), no host, a host with characters no DNS name has, or a port outside 1–65535."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return True
    if parts.scheme.lower() not in DEFAULT_PORTS or port == 0:
        return True
    return _unfetchable_host((parts.hostname or "").rstrip("."))


@lru_cache(maxsize=4096)
def _unfetchable_host(host: str) -> bool:
    """No host, or one with characters no DNS name has. Cached: asked for every new link, and the
    answer for a name costs an IDNA encoding (a pure-Python codec) and a regex (issue 14)."""
    if not host:
        return True
    if is_ip(host):
        return False
    try:
        host = host.encode("idna").decode("ascii")  # a Unicode name is fetched by its IDNA form
    except UnicodeError:
        return True
    return not _HOST_OK.match(host)


#: The hops a seeds-only job follows: a seed's redirects and prerequisites (robots.txt, DNS).
SEED_ONLY_HOPS = "RP"


def link_hops(path: str) -> int:
    """Link hop count: the number of ``L`` in the discovery path (glossary)."""
    return path.count("L")


def trailing_transclusions(path: str) -> int:
    """How many non-navigational hops end the path (0 if it ends with a link or is a seed)."""
    n = 0
    for letter in reversed(path):
        if letter not in TRANSCLUSION_LETTERS:
            break
        n += 1
    return n


class TrapSet(FullMatchSet):
    """Crawler-trap regexes matched Java-style (whole URI) by RE2, as few compiled programs
    (:class:`harvester.patterns.FullMatchSet`): linear time per URI whatever the patterns."""


@dataclass(frozen=True, slots=True)
class Decision:
    accepted: bool
    status: int = 0  # the negative crawl.log code when rejected (0: out of scope, not logged)
    domain: str = ""  # the budget key (JobSpec domain name) charged for the URI


class DomainScope:
    """One JobSpec domain's scope, built from its seeds under the template's rule."""

    def __init__(self, name: str, seeds: Iterable[str], rule: str) -> None:
        self.name = name
        self.rule = rule
        seeds = list(seeds)
        self.hosts = {host_key(s) for s in seeds}
        self.domains = {registrable_domain(s) for s in seeds}
        self.surts = SurtPrefixSet([implied_surt_prefix(s) for s in seeds])
        paths = []
        for s in seeds:
            parts = urlsplit(s)
            directory = parts.path[: parts.path.rfind("/") + 1] or "/"
            paths.append((host_key(s), directory))
        self.paths = paths

    def add_seed(self, seed: str) -> None:
        """A seed added while the job runs (a continuous job's Control ``seeds``): its scope joins."""
        self.hosts.add(host_key(seed))
        self.domains.add(registrable_domain(seed))
        self.surts = SurtPrefixSet([*self.surts.prefixes, implied_surt_prefix(seed)])
        parts = urlsplit(seed)
        self.paths.append((host_key(seed), parts.path[: parts.path.rfind("/") + 1] or "/"))

    def contains(self, url: str, host: str) -> bool:
        if self.rule == "surt":
            return self.surts.matches(surt_form(url))
        if self.rule == "host":
            return host in self.hosts
        if self.rule == "domain":
            if host in self.hosts:
                return True
            return registrable_domain(host) in self.domains
        # path
        path = urlsplit(url).path or "/"
        return any(host == h and path.startswith(d) for h, d in self.paths)


class Scope:
    """The job's scope: see the module docstring."""

    def __init__(self, spec: JobSpec) -> None:
        s = spec.settings
        self.max_hops = s.max_hops
        self.max_embed_hops = s.max_embed_hops
        #: No hop of any kind (a patch job: exactly the URLs QA found missing): the seeds, their redirects and
        #: prerequisites only. Counted as Heritrix counts, 0 link hops and 0 off-site embeds still let a seed's
        #: own embeds and robots.txt's sitemaps in, and a patch of two banners fetched 38 URLs.
        self.seeds_only = s.max_hops == 0 and s.max_embed_hops == 0
        self.domains = [DomainScope(d.name, d.seeds, s.scope) for d in spec.domains]
        # A JobSpec's traps were checked when it was parsed (JobSpec.from_dict): not compiled twice.
        self.global_traps = TrapSet(spec.global_traps, checked=True)
        #: Traps added while the job runs (not in the JobSpec), in the order they came.
        self.live_traps: list[str] = []
        self.domain_traps = {d.name: TrapSet(d.traps, checked=True) for d in spec.domains}

    def add_trap(self, pattern: str) -> bool:
        """A live-added trap (Control ``add_trap``): applies to every domain from now on.

        False if it was already a trap. Costs O(1) comparisons (a set) and compiles only the new
        pattern; :attr:`live_traps` keeps the added ones in order for the checkpoint."""
        if not self.global_traps.extend([pattern]):
            return False
        self.live_traps.append(pattern)
        return True

    def domain_of(self, url: str, host: str | None = None) -> str | None:
        """The JobSpec domain whose scope holds ``url`` (first match), or None."""
        host = host if host is not None else host_key(url)
        for d in self.domains:
            if d.contains(url, host):
                return d.name
        return None

    def blocked_by_trap(self, url: str, domain: str) -> bool:
        if self.global_traps.matches(url):
            return True
        traps = self.domain_traps.get(domain)
        return bool(traps and traps.matches(url))

    def decide(self, url: str, path: str, parent_domain: str | None) -> Decision:
        """Judge a discovered URI reached by discovery path ``path`` from a URI of
        ``parent_domain``."""
        host = host_key(url)
        in_scope = self.domain_of(url, host)
        domain = in_scope or parent_domain or ""
        if self.blocked_by_trap(url, domain):
            return Decision(False, S_BLOCKED_BY_TRAP, domain)
        if in_scope is None:
            n = trailing_transclusions(path)
            if n == 0:
                return Decision(False, OUT_OF_SCOPE, domain)
            if n > self.max_embed_hops:
                return Decision(False, S_TOO_MANY_EMBED_HOPS, domain)
        if link_hops(path) > self.max_hops or (self.seeds_only and path.strip(SEED_ONLY_HOPS)):
            return Decision(False, S_TOO_MANY_HOPS, domain)
        return Decision(True, 0, domain)


# -- canonical keys for the seen-set -------------------------------------------------------------
# Heritrix 3's default ``RulesCanonicalizationPolicy`` applies, in this order: LowercaseRule,
# StripUserinfoRule, StripWWWNRule, StripSessionIDs, StripSessionCFIDs, FixupQueryString, to a URI
# its UURI parser already freed of its fragment and default port. None of them reorders the query:
# ``?b=2&a=1`` and ``?a=1&b=2`` are two URIs, because a server may answer them differently.
#: Canonicalisation schemes a frontier's seen-set can be keyed by (stored in the frontier's state,
#: so a resumed job keeps the keys its seen-set was made with).
CANON_HERITRIX = "heritrix"
CANON_HERITRIX_SORTED = "heritrix+query-order"
CANON_LEGACY = "w3lib-sorted"  # netharvest before issue 14: w3lib canonical form, names-only session ids

_USERINFO = re.compile(r"^(https?://)[^/?#@]*@(.*)$", re.S)
# www, www1, www0001… only when something follows the slash after the authority: a bare top page is
# kept on both names, as Heritrix prefers a redundant top page to a site missed on one of them.
_WWWN = re.compile(r"^(https?://)www[0-9]*\.([^/]*/.+)$")
# Session ids (StripSessionIDs, StripSessionCFIDs), judged parameter by parameter on the lowercased
# key. Heritrix also requires a value's shape (32 characters for jsessionid / phpsessid); netharvest
# strips those names whatever the value, as it always has, because a server that renews a short id
# on every page (the test site's /hostile/session) is a crawler trap with that rule. ``sid`` is the
# exception: as in Heritrix only a 32-character value is a session (``sid=5`` is a story id as often).
_SESSION_PARAM = re.compile(
    r"^(?:jsessionid|phpsessid|aspsessionid[a-z]{8}|sessionid|cfid|cftoken)=|"
    r"^sid=[0-9a-z]{32}$"
)
_PATH_SESSION = re.compile(r";jsessionid=[^/?#]*")


def _strip(url: str, rule: re.Pattern[str]) -> str:
    m = rule.match(url)
    return url if m is None else (m.group(1) or "") + (m.group(2) or "")


def _strip_session_ids(url: str) -> str:
    base, sep, query = url.partition("?")
    base = _PATH_SESSION.sub("", base)
    if not sep:
        return base
    kept = [p for p in query.split("&") if not _SESSION_PARAM.match(p)]
    return base + "?" + "&".join(kept)


def _fixup_query(url: str) -> str:
    """FixupQueryString: no empty ``?``, no ``&`` right after the ``?`` or at the end."""
    q = url.rfind("?")
    if q <= 0:
        return url
    if q == len(url) - 1:
        return url[:-1]
    if url[q + 1] == "&":
        return url[:q] if q + 2 == len(url) else url[: q + 1] + url[q + 2 :]
    return url[:-1] if url.endswith("&") else url


def _without_fragment_and_default_port(url: str) -> str:
    url = url.split("#", 1)[0]
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url
    if port is not None and port == DEFAULT_PORTS.get(parts.scheme.lower()):
        netloc = parts.netloc.rsplit(":", 1)[0]
        url = parts._replace(netloc=netloc).geturl()
    return url


def _sort_query(url: str) -> str:
    """The query's ``&``-separated parameters in (name, value) order: a template's opt-in."""
    base, sep, query = url.partition("?")
    if not sep:
        return url
    params = sorted((p for p in query.split("&") if p), key=lambda p: tuple(p.partition("=")[::2]))
    return base + "?" + "&".join(params) if params else base


@lru_cache(maxsize=4096)
def heritrix_key(url: str) -> str:
    """The seen-set key of a URL under Heritrix 3's default canonicalisation rules (see above).
    The URL itself is fetched as found; only duplicates are judged on this key. Cached: a site's
    menus and home/parent links are met on every page (each a ``urlsplit``, issue 14)."""
    key = _without_fragment_and_default_port(url).lower()
    key = _strip(key, _USERINFO)
    key = _strip(key, _WWWN)
    return _fixup_query(_strip_session_ids(key))


def heritrix_sorted_key(url: str) -> str:
    """:func:`heritrix_key` with the query parameters sorted (``canonicalize_query_order``)."""
    return _sort_query(heritrix_key(url))


_LEGACY_SESSION_PARAMS = re.compile(
    r"^(?:jsessionid|phpsessid|aspsessionid[a-z]{8}|sid|sessionid|cfid|cftoken)$", re.IGNORECASE
)
_LEGACY_PATH_SESSION = re.compile(r";jsessionid=[^/?#]*", re.IGNORECASE)


def legacy_key(url: str) -> str:
    """The key netharvest used before issue 14 (w3lib canonical form: sorted query, normalised
    escapes; session parameters stripped by name). Kept only for a frontier whose seen-set was
    made with it, so a job resumed across the upgrade does not fetch everything again."""
    from w3lib.url import canonicalize_url

    try:
        canon = canonicalize_url(_LEGACY_PATH_SESSION.sub("", url), keep_fragments=False)
    except Exception:  # a hostile URL must not crash the crawl: fall back to the text itself
        return url.split("#", 1)[0]
    if "?" in canon:
        base, query = canon.split("?", 1)
        kept = [p for p in query.split("&") if not _LEGACY_SESSION_PARAMS.match(p.split("=", 1)[0])]
        canon = base + ("?" + "&".join(kept) if kept else "")
    parts = urlsplit(canon)
    if parts.port and parts.port == DEFAULT_PORTS.get(parts.scheme):
        canon = canon.replace(f":{parts.port}", "", 1)
    return canon


CANONICALIZERS: dict[str, Callable[[str], str]] = {
    CANON_HERITRIX: heritrix_key,
    CANON_HERITRIX_SORTED: heritrix_sorted_key,
    CANON_LEGACY: legacy_key,
}


def canon_scheme(query_order: bool) -> str:
    """The scheme a new frontier uses for a template's ``canonicalize_query_order``."""
    return CANON_HERITRIX_SORTED if query_order else CANON_HERITRIX


#: The default key (a template that asks for nothing more).
canonical_key = heritrix_key
