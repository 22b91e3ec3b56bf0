"""Stage one of adding a record: the online check (DNS, HTTP status, redirects) and duplicates."""

import pytest

from orchestrator.selection.checks import check, find_duplicates
from tests.selection.conftest import make_record

pytestmark = pytest.mark.django_db


def test_a_live_url_is_valid(web):
    result = check(f"http://live.fr:{web}/")
    assert result.valid and result.status == 200 and not result.redirect


@pytest.mark.parametrize("path, status", [("/missing", 404), ("/broken", 500)])
def test_4xx_and_5xx_make_the_url_invalid_with_the_status(web, path, status):
    result = check(f"http://live.fr:{web}{path}")
    assert not result.valid and result.reason == f"the server answered HTTP {status}"


def test_a_redirect_shows_its_target(web):
    result = check(f"http://live.fr:{web}/moved")
    assert result.valid and result.status == 301 and result.redirect == "http://www.target.fr/home"


def test_no_dns_entry_makes_the_url_invalid(web):
    result = check(f"http://unknown-site.fr:{web}/")
    assert not result.valid and result.reason == "no DNS entry for unknown-site.fr (NXDOMAIN)"


def test_nothing_listening_is_invalid_not_a_hang(web):
    from tests.conftest import free_port

    result = check(f"http://live.fr:{free_port()}/")
    assert not result.valid and result.reason.startswith("no HTTP answer from live.fr")


@pytest.mark.parametrize("url, reason", [("ftp://live.fr/", "only http:// and https://"), ("live fr", "only http")])
def test_only_http_urls(url, reason):
    result = check(url)
    assert not result.valid and reason in result.reason


def test_duplicates_same_url_host_and_domain_in_every_collection(collections):
    same_url = make_record(collections["sciences"], "http://live.fr/")
    same_host = make_record(collections["lit"], "http://live.fr/poems/")
    same_domain = make_record(collections["elections"], "http://other.live.fr/")
    make_record(collections["lit"], "http://target.fr/")
    found = find_duplicates("http://live.fr/")
    assert [(kind, r.pk) for kind, r in found] == [
        ("same URL", same_url.pk),
        ("same host", same_host.pk),
        ("same domain", same_domain.pk),
    ]
    assert find_duplicates("http://live.fr/", exclude=same_url.pk)[0][1] == same_host
