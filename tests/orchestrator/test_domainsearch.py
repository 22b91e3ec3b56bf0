"""Domain search: prefix, wildcards, traps and comments, keyset pages."""

from __future__ import annotations

import pytest

from orchestrator.harvest.curation import domainsearch
from orchestrator.harvest.curation.domains import create_domains
from orchestrator.harvest.models import Domain

pytestmark = pytest.mark.django_db


@pytest.fixture
def domains():
    create_domains(
        ["archive.fr", "archives.fr", "bibliotheque.fr", "my_archive.org", "arc.de", "shop100.fr", "shop_1.fr"]
    )
    Domain.objects.filter(name="bibliotheque.fr").update(crawler_traps=r".*/calendar/\d+", comments="Site of the BnF")


def names(page):
    return [d.name for d in page.domains]


def test_prefix_without_wildcards(domains):
    assert names(domainsearch.search("arc")) == ["arc.de", "archive.fr", "archives.fr"]
    assert names(domainsearch.search("ARCH")) == ["archive.fr", "archives.fr"]


def test_wildcards(domains):
    assert names(domainsearch.search("*archive*")) == ["archive.fr", "archives.fr", "my_archive.org"]
    assert names(domainsearch.search("archive?.fr")) == ["archives.fr"]
    assert names(domainsearch.search("*.de")) == ["arc.de"]


def test_like_metacharacters_are_literal(domains):
    assert names(domainsearch.search("shop_*")) == ["shop_1.fr"]
    assert domainsearch.like_pattern("50%_off*") == "50\\%\\_off%"


def test_traps_and_comments(domains):
    assert names(domainsearch.search("calendar", "crawler_traps")) == ["bibliotheque.fr"]
    assert names(domainsearch.search("bnf", "comments")) == ["bibliotheque.fr"]
    assert names(domainsearch.search("nothing", "comments")) == []
    with pytest.raises(ValueError, match="cannot search"):
        domainsearch.search("x", "seeds")


def test_keyset_pages_cover_everything_once(domains):
    seen, after = [], ""
    while True:
        page = domainsearch.search("", after=after, limit=3)
        seen += names(page)
        if page.next_after is None:
            break
        after = page.next_after
    assert seen == sorted(Domain.objects.values_list("name", flat=True))
    assert domainsearch.estimated_count() >= 0


@pytest.mark.parametrize("window", [2, 3, 10_000])
def test_window_and_index_paths_give_the_same_pages(domains, monkeypatch, window):
    """A small window forces the fallback to the indexed query: every path must page identically."""
    import fnmatch

    monkeypatch.setattr(domainsearch, "WINDOW", window)
    everything = sorted(Domain.objects.values_list("name", flat=True))
    for query in ("a", "arch", "*archive*", "?r*", "*.fr", "shop_*", "zz*", "*"):
        pattern = query if "*" in query or "?" in query else query + "*"
        expected = [n for n in everything if fnmatch.fnmatchcase(n, pattern)]
        seen, after = [], ""
        while True:
            page = domainsearch.search(query, after=after, limit=2)
            seen += names(page)
            if page.next_after is None:
                break
            after = page.next_after
        assert seen == expected, query
