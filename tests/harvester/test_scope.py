"""Scope: SURT forms and implied prefixes with the Heritrix glossary's own examples, the four
scope rules, hops, embeds (transclusion), crawler traps, canonical keys."""

from __future__ import annotations

from dataclasses import replace

import pytest

from harvester.contracts import JobSpec
from harvester.patterns import PatternError
from harvester.scope import (
    OUT_OF_SCOPE,
    S_BLOCKED_BY_TRAP,
    S_TOO_MANY_EMBED_HOPS,
    S_TOO_MANY_HOPS,
    Scope,
    TrapSet,
    canonical_key,
    heritrix_sorted_key,
    host_key,
    legacy_key,
    link_hops,
    registrable_domain,
)
from harvester.surts import SurtPrefixSet, implied_surt_prefix, surt_form


# -- the glossary's examples (seed 004, "SURT", "SURT Prefix") -----------------------------------
def test_surt_form_of_the_glossary() -> None:
    assert surt_form("http://www.archive.org/") == "http://(org,archive,www,)/"
    assert surt_form("http://homepages.www.archive.org/directory") == "http://(org,archive,www,homepages,)/directory"
    assert surt_form("http://www.archive.org/movies") == "http://(org,archive,www,)/movies"


def test_surt_is_lowercase_and_https_is_http() -> None:
    assert surt_form("HTTPS://WWW.Example.ORG/Path?Q=1") == "http://(org,example,www,)/path?q=1"


def test_slash_after_authority_only_if_present() -> None:
    assert surt_form("http://www.example.org") == "http://(org,example,www,)"
    assert surt_form("http://www.example.org/") == "http://(org,example,www,)/"


@pytest.mark.parametrize(
    ("seed", "prefix"),
    [
        # rule 2: at least three slashes → drop everything after the last one
        ("http://www.example.org/main/subsection/", "http://(org,example,www,)/main/subsection/"),
        ("http://www.example.org/main/subsection", "http://(org,example,www,)/main/"),
        ("http://www.example.org/", "http://(org,example,www,)/"),
        # rule 3: a final ")" is dropped, so subdomains are included
        ("http://www.example.org", "http://(org,example,www,"),
        ("http://www.archive.org/", "http://(org,archive,www,)/"),
    ],
)
def test_implied_surt_prefix(seed: str, prefix: str) -> None:
    assert implied_surt_prefix(seed) == prefix


def test_trailing_slash_decides_subdomains() -> None:
    """Glossary: seed http://www.archive.org/ rules out homepages.www.archive.org; without the
    slash the subdomain is in."""
    with_slash = SurtPrefixSet([implied_surt_prefix("http://www.archive.org/")])
    without = SurtPrefixSet([implied_surt_prefix("http://www.archive.org")])
    sub = surt_form("http://homepages.www.archive.org/directory")
    assert not with_slash.matches(sub)
    assert without.matches(sub)
    assert with_slash.matches(surt_form("http://www.archive.org/movies/x"))


def test_ports_and_ips() -> None:
    assert surt_form("http://www.example.org:8080/") == "http://(org,example,www,:8080)/"
    assert surt_form("http://www.example.org:80/") == "http://(org,example,www,)/"
    assert surt_form("http://127.0.0.1:8001/a") == "http://(127.0.0.1:8001)/a"


def test_prefix_set_is_redundancy_free() -> None:
    s = SurtPrefixSet(["http://(org,a,", "http://(org,a,www,)/", "http://(org,b,)/x/"])
    assert s.prefixes == ["http://(org,a,", "http://(org,b,)/x/"]
    assert s.matches("http://(org,a,www,)/anything")
    assert not s.matches("http://(org,b,)/y")


# -- scope rules ---------------------------------------------------------------------------------
def _spec(rule: str, seeds: list[str], **extra: object) -> JobSpec:
    return JobSpec.from_dict(
        {
            "version": 1,
            "job_id": 1,
            "harvest_id": 1,
            "harvest_name": "h",
            "harvest_run": 1,
            "kind": "selective",
            "channel": "c",
            "template": "t",
            "settings": {"scope": rule, "max_hops": 3, "max_embed_hops": 2},
            "domains": [{"name": "ex", "configuration": "c", "seeds": seeds, "traps": extra.get("traps", [])}],
            "global_traps": extra.get("global_traps", []),
        }
    )


def test_domain_rule_uses_the_registrable_domain() -> None:
    scope = Scope(_spec("domain", ["http://www.bbc.co.uk/news/"]))
    assert scope.decide("http://sport.bbc.co.uk/x", "L", "ex").accepted
    assert not scope.decide("http://www.itv.co.uk/", "L", "ex").accepted
    assert registrable_domain("http://a.b.example.co.uk/") == "example.co.uk"


@pytest.mark.parametrize(
    ("rule", "seed", "inside", "outside"),
    [
        ("host", "http://www.example.org/", "http://www.example.org/a", "http://img.example.org/a"),
        (
            "path",
            "http://www.example.org/blog/index.html",
            "http://www.example.org/blog/2020/post",
            "http://www.example.org/shop/",
        ),
        (
            "surt",
            "http://www.example.org/main/subsection",
            "http://www.example.org/main/other",
            "http://www.example.org/elsewhere",
        ),
    ],
)
def test_rule(rule: str, seed: str, inside: str, outside: str) -> None:
    scope = Scope(_spec(rule, [seed]))
    assert scope.decide(inside, "L", "ex").accepted
    assert not scope.decide(outside, "L", "ex").accepted


def test_ports_on_one_ip_are_different_sites() -> None:
    scope = Scope(_spec("domain", ["http://127.0.0.1:8001/"]))
    assert scope.decide("http://127.0.0.1:8001/a", "L", "ex").accepted
    assert scope.decide("http://127.0.0.1:8002/a", "L", "ex").status == OUT_OF_SCOPE
    assert host_key("http://127.0.0.1:8002/a") == "127.0.0.1:8002"
    assert host_key("https://Example.org:443/") == "example.org"


# -- hops and embeds -----------------------------------------------------------------------------
def test_link_hops_count_only_L() -> None:
    assert link_hops("") == 0
    assert link_hops("LLRE") == 2
    assert link_hops("PMM") == 0


def test_too_many_hops() -> None:
    scope = Scope(_spec("domain", ["http://example.org/"]))
    assert scope.decide("http://example.org/x", "LLL", "ex").accepted
    assert scope.decide("http://example.org/x", "LLLE", "ex").accepted  # embeds are not link hops
    d = scope.decide("http://example.org/x", "LLLL", "ex")
    assert (d.accepted, d.status) == (False, S_TOO_MANY_HOPS)


def test_out_of_scope_embeds_within_max_embed_hops() -> None:
    scope = Scope(_spec("domain", ["http://example.org/"]))
    assert scope.decide("http://cdn.other.net/a.png", "LE", "ex").accepted
    assert scope.decide("http://cdn.other.net/a.css", "LEE", "ex").accepted
    assert scope.decide("http://cdn.other.net/r", "R", "ex").accepted  # a seed's redirect
    d = scope.decide("http://cdn.other.net/b.png", "LEEE", "ex")
    assert (d.accepted, d.status) == (False, S_TOO_MANY_EMBED_HOPS)
    d = scope.decide("http://other.net/", "LEL", "ex")
    assert (d.accepted, d.status) == (False, OUT_OF_SCOPE)
    assert d.domain == "ex"  # charged to the referring domain


# -- traps ---------------------------------------------------------------------------------------
def test_traps_are_whole_uri_matches() -> None:
    traps = TrapSet([r".*/calendar/.*", r".*\?sid=\d+"])
    assert traps.matches("http://e.org/calendar/2020/01")
    assert traps.matches("http://e.org/p?sid=12")
    assert not traps.matches("http://e.org/p?sid=12&x")  # matches() semantics, as in Java
    assert not traps.matches("http://e.org/calendars")


def test_traps_global_domain_and_live() -> None:
    scope = Scope(_spec("domain", ["http://example.org/"], traps=[r".*/cal/.*"], global_traps=[r".*\.iso"]))
    assert scope.decide("http://example.org/cal/1", "L", "ex").status == S_BLOCKED_BY_TRAP
    assert scope.decide("http://example.org/big.iso", "L", "ex").status == S_BLOCKED_BY_TRAP
    assert scope.decide("http://example.org/shop/1", "L", "ex").accepted
    scope.add_trap(r".*/shop/.*")
    assert scope.decide("http://example.org/shop/1", "L", "ex").status == S_BLOCKED_BY_TRAP


def test_traps_with_backreferences_are_refused() -> None:
    """RE2 (linear time) has no backreferences: such a trap is refused saying why, never half-applied."""
    with pytest.raises(PatternError, match=r"backreference \\1 is not supported: crawler traps use RE2"):
        TrapSet([r".*/(\w+)/\1/.*", r".*/x/.*"])


def test_many_traps_are_all_applied() -> None:
    traps = TrapSet([rf".*/section{i}/trap/.*" for i in range(2000)])
    assert not any(traps.matches(f"http://example.org/section{i}/page{i}.html") for i in range(2000))
    assert all(traps.matches(f"http://example.org/section{i}/trap/x") for i in range(2000))


# -- canonical keys ------------------------------------------------------------------------------
def test_canonical_key() -> None:
    """Heritrix 3's default rules: lowercase, no userinfo, no www[N] (except on a top page), no
    session ids, query fixed up but never reordered; fragment and default port gone."""
    assert canonical_key("http://Example.com:80/A?b=2&a=1#frag") == "http://example.com/a?b=2&a=1"
    assert canonical_key("http://e.com/x?b=2&a=1") != canonical_key("http://e.com/x?a=1&b=2")
    assert canonical_key("http://user:pw@www3.e.com/a") == "http://e.com/a"
    assert canonical_key("http://www.e.com/") == "http://www.e.com/"  # a top page keeps its www
    assert canonical_key("http://e.com/a;jsessionid=ABC?x=1") == "http://e.com/a?x=1"
    assert canonical_key("http://e.com/a?PHPSESSID=1&x=1") == "http://e.com/a?x=1"
    assert canonical_key("http://e.com/a?CFID=1&CFTOKEN=2&x=3") == "http://e.com/a?x=3"
    assert canonical_key("http://e.com/a?sid=" + "a" * 32) == "http://e.com/a"
    assert canonical_key("http://e.com/a?sid=5") == "http://e.com/a?sid=5"  # a story id, not a session
    assert canonical_key("http://e.com/a?") == "http://e.com/a"
    assert canonical_key("http://e.com/a?&x=1") == "http://e.com/a?x=1"


def test_query_order_is_a_template_opt_in() -> None:
    assert heritrix_sorted_key("http://e.com/x?b=2&a=1") == heritrix_sorted_key("http://e.com/x?a=1&b=2")
    assert heritrix_sorted_key("http://e.com/x?&b=2&a=1&") == "http://e.com/x?a=1&b=2"
    # The keys a frontier made before issue 14 (sorted by w3lib) stay available for its resumption.
    assert legacy_key("http://e.com/x?b=2&a=1") == "http://e.com/x?a=1&b=2"


def test_no_hop_of_any_kind_leaves_the_seeds_their_redirects_and_prerequisites() -> None:
    """A patch job (max_hops and max_embed_hops 0) fetches exactly the URLs QA found missing: counted as
    Heritrix counts, 0 link hops still let in a seed's own embeds and the sitemaps robots.txt names, and a
    patch of two banners fetched 38 URLs (a newcomer's run of the README)."""
    spec = _spec("domain", ["http://example.org/hidden/banner.png"])
    patch = Scope(replace(spec, settings=replace(spec.settings, max_hops=0, max_embed_hops=0)))
    for path in ("R", "P", "RR", "RP"):
        assert patch.decide("http://example.org/x", path, "ex").accepted, path
    for path in ("E", "M", "PM", "PMM", "L", "X", "RE"):
        decision = patch.decide("http://example.org/x", path, "ex")
        assert not decision.accepted and decision.status == S_TOO_MANY_HOPS, path
    usual = Scope(replace(spec, settings=replace(spec.settings, max_hops=0, max_embed_hops=1)))
    assert usual.decide("http://example.org/style.css", "E", "ex").accepted  # Heritrix's count otherwise
