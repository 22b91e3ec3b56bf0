"""harvester.hosts: the one answer to "is this an IP?" and "what is this host's registrable domain?"."""

from __future__ import annotations

import pytest

from harvester.hosts import host_key, is_ip, registrable_domain, registrable_part


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "[::1]", "fe80::a", "10.0.0.255"])
def test_addresses_are_ips(host: str) -> None:
    assert is_ip(host)


@pytest.mark.parametrize("host", ["", "example.com", "1.2.3.4.example", "localhost", "1.2.3", "[]"])
def test_names_are_not_ips(host: str) -> None:
    assert not is_ip(host)


def test_the_crawl_unit_keeps_an_ips_port_and_a_bare_name() -> None:
    assert registrable_domain("http://www.bbc.co.uk:8080/x") == "bbc.co.uk"
    assert registrable_domain("http://127.0.0.1:8001/") == "127.0.0.1:8001"
    assert registrable_domain("localhost") == "localhost"
    assert registrable_domain("a.b.unknown-suffix-zz") == "a.b.unknown-suffix-zz"
    assert host_key("https://Example.org:443/") == "example.org"


def test_the_domain_record_is_none_without_a_registrable_part() -> None:
    assert registrable_part("www.bbc.co.uk") == "bbc.co.uk"
    assert registrable_part("[::1]") == "::1"
    assert registrable_part("co.uk") is None
    assert registrable_part("localhost") is None


def test_host_key_is_the_same_asked_twice() -> None:
    """Cached (a crawl asks it of one URL several times): the answer does not depend on the cache."""
    urls = ["http://Example.com.:80/a", "https://h:8443/", "http://h:99999/", "http://[::1]:8080/x"]
    first = [host_key(u) for u in urls]
    host_key.cache_clear()
    assert [host_key(u) for u in urls] == first == ["example.com", "h:8443", "h", "::1:8080"]
