"""Bad requests get the site's own pages (layout, navigation, a sentence saying what was wrong), never a
500, a bare "Bad Request (400)" or a server path; free text has a size the forms say."""

from __future__ import annotations

import logging

import pytest
from django.test import Client
from django.urls import reverse

from orchestrator.harvest.models import Domain
from orchestrator.harvest.models.fields import FREE_TEXT_MAX_CHARS
from tests.orchestrator import factories

pytestmark = pytest.mark.django_db

NAV = ">Harvest definitions</a>"  # the site's navigation, shown to a logged-in user


def text(response) -> str:
    return response.content.decode()


def test_settings_are_those_of_production(settings):
    assert not settings.DEBUG  # the custom handlers apply only then, as in production


@pytest.mark.parametrize(
    "path, params",
    [
        ("/domains/", {"q": "\x00"}),
        ("/domains/", {"q": "ex\x00ample", "in": "comments"}),
        ("/domains/", {"in": "crawler_traps", "q": "a\x1bb"}),
        ("/selection/", {"q": "\x00"}),
        ("/jobs/", {"status": "\x00"}),
    ],
)
def test_a_control_character_in_any_query_parameter_is_a_clear_400(admin_client_of_site, path, params):
    """``/domains/?q=%00`` was an HTTP 500 (PostgreSQL cannot hold NUL)."""
    response = admin_client_of_site.get(path, params)
    assert response.status_code == 400
    page = text(response)
    key = next(k for k, v in params.items() if any(ord(c) < 32 for c in v))
    assert f"The parameter &#39;{key}&#39; holds a control character (U+00" in page
    assert NAV in page and "<title>Bad request · netharvest</title>" in page


def test_unknown_pages_have_the_sites_layout(viewer):
    response = viewer.get("/no/such/page/")
    assert response.status_code == 404
    assert NAV in text(response) and "There is no page at this address." in text(response)
    response = viewer.get(reverse("webui:domain", args=["nowhere.fr"]))
    assert response.status_code == 404 and NAV in text(response)


def test_a_forbidden_action_says_which_role_it_needs(viewer):
    response = viewer.get(reverse("webui:domain-create"))
    assert response.status_code == 403
    assert NAV in text(response) and "role" in text(response) and "<h1>Not allowed</h1>" in text(response)


def test_a_server_error_has_the_sites_layout_and_no_traceback(viewer, monkeypatch):
    from orchestrator.harvest.curation import domainsearch

    def broken(*args, **kwargs):
        raise RuntimeError("/srv/secret/path exploded")

    monkeypatch.setattr(domainsearch, "search", broken)
    client = viewer
    client.raise_request_exception = False
    response = client.get(reverse("webui:domains"), {"q": "a"})
    assert response.status_code == 500
    page = text(response)
    assert NAV in page and "<h1>Server error</h1>" in page
    assert "/srv/secret" not in page and "Traceback" not in page


def test_free_text_is_limited_and_the_form_says_so(curator):
    factories.domain("example.fr")
    url = reverse("webui:domain-edit", args=["example.fr"])
    form = text(curator.get(url))
    assert f'maxlength="{FREE_TEXT_MAX_CHARS}"' in form and f"At most {FREE_TEXT_MAX_CHARS:,} characters." in form
    # A 1 MB comment used to save (and made the domain page 128,000 px tall).
    too_long = curator.post(url, {"comments": "x" * (FREE_TEXT_MAX_CHARS + 1)})
    assert too_long.status_code == 200
    assert f"Ensure this value has at most {FREE_TEXT_MAX_CHARS} characters" in text(too_long)
    assert Domain.objects.get(name="example.fr").comments == ""
    ok = curator.post(url, {"comments": "y" * FREE_TEXT_MAX_CHARS})
    assert ok.status_code == 302 and len(Domain.objects.get(name="example.fr").comments) == FREE_TEXT_MAX_CHARS


def test_a_request_too_large_gets_the_sites_page_saying_what_was_too_large(curator):
    """A 3 MB comment got Django's bare "Bad Request (400)"."""
    factories.domain("example.fr")
    response = curator.post(reverse("webui:domain-edit", args=["example.fr"]), {"comments": "x" * (3 << 20)})
    assert response.status_code == 413
    page = text(response)
    assert NAV in page and "<h1>Too much data sent</h1>" in page
    assert "The form sent more than 2.5 MB" in page and "nothing was saved" in page
    assert Domain.objects.get(name="example.fr").comments == ""


@pytest.fixture
def admin_client_of_site(clients) -> Client:
    return clients["admin"]


def test_a_host_the_site_does_not_serve_gets_the_sites_400_without_a_traceback(caplog):
    """A scanner's ``Host: evil.example`` was answered by the page of last resort, with the layout's failure
    logged as an ERROR with its traceback at every such request."""
    with caplog.at_level(logging.ERROR, logger="webui.views.errors"):
        response = Client(HTTP_HOST="evil.example").get("/domains/")
    assert response.status_code == 400
    assert "<header>" in text(response)  # the layout, not the page of last resort
    assert not [r for r in caplog.records if r.name == "webui.views.errors"]
