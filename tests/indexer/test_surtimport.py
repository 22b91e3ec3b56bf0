"""indexer.surtimport: surt without tldextract's import cost, and escapeOnce's fast path giving the
very bytes surt's own escapeOnce gives (the SURT key is the first field of every CDX line)."""

from __future__ import annotations

import random
import subprocess
import sys

from indexer.surtimport import fast_escape_once, import_surt


def test_indexer_does_not_import_tldextract_but_surt_still_can_use_it():
    code = (
        "import sys\nimport indexer.cdx as c\n"
        "assert 'tldextract' not in sys.modules, 'imported'\n"
        "print(c.surt_key('http://www.Example.com/a b?b=1&a=2'))\n"
        "h = sys.modules['surt.handyurl']\n"
        "print(h.tldextract.TLDExtract(suffix_list_urls=())('www.bbc.co.uk').suffix)\n"
        "import tldextract\nprint(type(tldextract).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:3] == ["com,example)/a%20b?a=2&b=1", "co.uk", "module"]


def test_fast_escape_once_is_surt_escape_once():
    import_surt()
    google = sys.modules["surt.GoogleURLCanonicalizer"]
    fast, original = google.escapeOnce, google.escapeOnce.original
    assert fast_escape_once(original)(b"") == original(b"")
    rng = random.Random(4)
    samples = [b"www.example.com", b"/a/b.html", b"/%7Ea", b"/caf\xc3\xa9", b"a b", b"a#b", b"\x7f", b"\\"]
    for _ in range(5_000):
        samples.append(
            bytes(rng.choice((rng.randrange(256), rng.randrange(32, 127), 37)) for _ in range(rng.randrange(12)))
        )
    assert [fast(s) for s in samples] == [original(s) for s in samples]
    import_surt()  # a second call does not wrap it twice
    assert google.escapeOnce is fast
