"""indexer.surtkey: the plain-URL path gives exactly the key ``surt.surt()`` gives (the N field of every
CDX line, which replay looks captures up by), and every URL it does not recognise goes to ``surt``."""

from __future__ import annotations

import random

from indexer import surtkey
from indexer.surtimport import import_surt

_surt = import_surt().surt

#: Pieces chosen to hit each condition of the plain path: case, www/wwwN prefixes, digits-only and
#: IP-like hosts, ports, users, dot segments, doubled slashes, escapes, ASP.NET path session ids,
#: query session ids, empty query arguments, fragments, non-ASCII.
_SCHEMES = ["http://", "https://", "http://", "https://", "http://", "https://", "HTTP://", "ftp://", "", "http:///"]
_SCHEMES += ["http://http://"]
_LABELS = ["www", "WWW", "www2", "example", "Exa-mple", "fr", "a_b", "wwwx", "1", "10", "0x1", "07", "www.", "co"]
_LABELS += ["com", "xn--caf-dma", "café", "-", ""]
_SEGMENTS = [
    "a",
    "A.HTML",
    "index.html",
    "~u",
    "",
    "...",
    ".",
    "..",
    "%7E",
    "%2F",
    "a%20b",
    "(S(abcdefghijklmnopqrstuvwx))",
]
_SEGMENTS += ["x.aspx", "a-b_c", "é", "a b", "a;b", "a:b", "1"]
_ARGS = ["a=1", "B=2", "a", "a=", "b=1", "x+y=z", "=", "", "a=2", "sid=0123456789abcdef0123456789abcdef", "q=%41"]
_ARGS += ["JSESSIONID=0123456789abcdef0123456789ABCDEF", "cfid=1&cftoken=2", "c.d~e=f-g", "k=v=w"]


def _pick(rng: random.Random, pieces: list[str]) -> str:
    """Mostly the first, plain pieces (so the plain path runs often), sometimes any piece."""
    return rng.choice(pieces[:6] if rng.random() < 0.8 else pieces)


def _random_url(rng: random.Random) -> str:
    host = ".".join(_pick(rng, _LABELS) for _ in range(rng.randrange(1, 5)))
    url = _pick(rng, _SCHEMES) + (rng.choice(["", "user@", "u:p@"]) if rng.random() < 0.05 else "") + host
    if rng.random() < 0.05:
        url += rng.choice([":80", ":443", ":8080", ":"])
    if rng.random() < 0.85:
        url += "/" + "/".join(_pick(rng, _SEGMENTS) for _ in range(rng.randrange(0, 5)))
    if rng.random() < 0.4:
        url += "?" + "&".join(_pick(rng, _ARGS) for _ in range(rng.randrange(0, 4)))
    if rng.random() < 0.03:
        url += "#" + rng.choice(["", "top", "a=b"])
    return url


def _reference(url: str) -> str:
    try:
        return _surt(url)
    except Exception:
        return url


def test_surt_key_is_surt_on_generated_urls():
    rng = random.Random(14)
    urls = [_random_url(rng) for _ in range(40_000)]
    urls += ["http://www.example.com", "http://www.example.com/", "https://WWW.Example.COM/A/B/?b=2&a=1", ""]
    plain = sum(surtkey._plain_key(u) is not None for u in urls)
    mismatches = [(u, surtkey.surt_key(u), _reference(u)) for u in urls if surtkey.surt_key(u) != _reference(u)]
    assert mismatches == []
    assert plain > 5_000  # the plain path is really exercised, not only the fallback


def test_plain_path_is_taken_for_a_crawls_usual_urls_and_not_for_the_rest():
    assert (
        surtkey._plain_key("https://www3.Example.fr/News/Index.html?b=2&a=1") == "fr,example)/news/index.html?a=1&b=2"
    )
    assert surtkey._plain_key("http://example.fr") == "fr,example)/"
    for url in (
        "http://192.168.1.1/",  # an IP address: surt reverses or resolves it
        "http://example.fr:8080/",
        "http://example.fr/a/../b",
        "http://example.fr/a%20b",
        "http://example.fr/?jsessionid=0123456789abcdef0123456789abcdef",
        "http://example.fr/#top",
    ):
        assert surtkey._plain_key(url) is None, url
        assert surtkey.surt_key(url) == _reference(url)


def test_host_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(surtkey, "HOST_CACHE", 10)
    monkeypatch.setattr(surtkey, "_hosts", {})
    for i in range(25):
        assert surtkey.surt_key(f"http://h{i}.example.fr/") == _surt(f"http://h{i}.example.fr/")
    assert len(surtkey._hosts) <= 10
