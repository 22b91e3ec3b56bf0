"""Tokens and roles: no token 401, an unknown/revoked token 401, the wrong role 403, the right role OK, for
every route of the API; tokens are stored as hashes only; the web UI session works with its CSRF token."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from orchestrator.api import tokens
from orchestrator.api.models import ApiToken
from orchestrator.api.urls import api as ninja_api
from orchestrator.harvest.models import Schedule
from tests.api.conftest import BASE, Api, token_for
from webui.access import CURATE, ENGINEER, READ

pytestmark = pytest.mark.django_db

ROLES_WITH = {
    READ: {"viewer", "curator", "crawl engineer", "admin"},
    CURATE: {"curator", "admin"},
    ENGINEER: {"crawl engineer", "admin"},
}


def routes() -> list[tuple[str, str, str]]:
    """(method, URL with dummy arguments, required permission) of every API operation."""
    out = []
    for _, router in ninja_api._routers:
        for path, view in router.path_operations.items():
            url = re.sub(r"\{(\w+)\}", lambda m: "1" if m.group(1).endswith(("_id", "run", "year")) else "x.fr", path)
            for operation in view.operations:
                declared = {getattr(a, "permission", None) for a in operation.auth_callbacks}
                assert operation.auth_param is not ninja_api.auth, f"{path} names no role"
                (permission,) = declared  # one role per operation, the same for token and session
                out.extend((method, url, permission) for method in operation.methods)
    return out


ROUTES = routes()


def send(client: Client, method: str, url: str, headers: dict) -> object:
    if method == "GET":
        return client.get(BASE + url, **headers)
    return getattr(client, method.lower())(BASE + url, content_type="application/json", data="{}", **headers)


def test_every_route_declares_a_role():
    assert len(ROUTES) >= 30
    for method, url, permission in ROUTES:
        assert permission in ROLES_WITH, (method, url)


@pytest.mark.parametrize(("method", "url", "permission"), ROUTES)
def test_without_a_valid_token_every_route_answers_401(method, url, permission, django_user_model):
    row_token = token_for(django_user_model, "admin", "revoked-admin")
    tokens.revoke(ApiToken.objects.get())
    for headers in (
        {},
        {"HTTP_AUTHORIZATION": "Bearer nh_not-a-token"},
        {"HTTP_AUTHORIZATION": f"Bearer {row_token}"},
        {"HTTP_AUTHORIZATION": f"Token {row_token}"},
    ):
        assert send(Client(), method, url, headers).status_code == 401, (method, url, headers)


@pytest.mark.parametrize(("method", "url", "permission"), ROUTES)
def test_each_role_reaches_exactly_its_routes(method, url, permission, api, sample):
    """A role without the permission gets 403 naming the role; one with it gets past the check (to the
    route's own answer: 200, or 404/422 for the dummy arguments)."""
    for role, client in api.items():
        response = send(client.client, method, url, client._headers())
        if role in ROLES_WITH[permission]:
            assert response.status_code != 403, (method, url, role, response.content[:300])
            assert response.status_code != 401
        else:
            assert response.status_code == 403, (method, url, role, response.status_code)
            assert "role" in response.json()["detail"]


def test_a_user_without_a_role_and_a_deactivated_user(django_user_model, sample):
    nobody = Api(token_for(django_user_model, None))
    response = nobody.get("/domains")
    assert response.status_code == 403 and "viewer role" in response.json()["detail"]
    token = token_for(django_user_model, "admin", "gone")
    assert Api(token).get("/domains").status_code == 200
    django_user_model.objects.filter(username="gone").update(is_active=False)
    assert Api(token).get("/domains").status_code == 401


def test_a_token_is_stored_only_as_its_hash_and_records_its_last_use(django_user_model):
    token = token_for(django_user_model, "viewer")
    row = ApiToken.objects.get()
    assert token not in (row.key_hash, row.prefix) and token.startswith(row.prefix)
    assert row.key_hash == tokens.digest(token) and row.last_used is None
    assert Api(token).get("/schedules").status_code == 200
    row.refresh_from_db()
    assert row.last_used is not None


def test_the_web_ui_session_works_and_its_writes_need_the_csrf_token(django_user_model, sample):
    from tests.webui.conftest import login

    client = login(django_user_model, "curator")
    assert client.get(BASE + "/schedules").status_code == 200
    client.handler.enforce_csrf_checks = True
    response = client.post(BASE + "/schedules", '{"name": "weekly", "unit": "week"}', content_type="application/json")
    assert response.status_code == 403 and not Schedule.objects.filter(name="weekly").exists()
    client.get("/schedules/")  # a page of the web UI sets the CSRF cookie
    response = client.post(
        BASE + "/schedules",
        '{"name": "weekly", "unit": "week"}',
        content_type="application/json",
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )
    assert response.status_code == 201, response.content


def test_tokens_command_creates_lists_and_revokes(django_user_model):
    django_user_model.objects.create_user("scripts", password="pw-long-enough")
    out, err = io.StringIO(), io.StringIO()
    call_command("tokens", "create", "scripts", "--name", "nightly report", stdout=out, stderr=err)
    token = out.getvalue().strip()
    assert token.startswith("nh_") and "shown only now" in err.getvalue()
    assert tokens.user_of(token).username == "scripts"
    listing = io.StringIO()
    call_command("tokens", "list", stdout=listing)
    assert "nightly report" in listing.getvalue() and token not in listing.getvalue()
    call_command("tokens", "revoke", token[:10], stdout=io.StringIO())
    assert tokens.user_of(token) is None
    with pytest.raises(CommandError, match="already revoked"):
        call_command("tokens", "revoke", str(ApiToken.objects.get().pk))
    with pytest.raises(CommandError, match="no user 'ghost'"):
        call_command("tokens", "create", "ghost")


def test_the_admin_makes_a_token_shown_once(django_user_model):
    admin = django_user_model.objects.create_superuser("root", password="pw-long-enough")
    client = Client()
    client.force_login(admin)
    response = client.post("/admin/api/apitoken/add/", {"user": admin.pk, "name": "from the admin"}, follow=True)
    assert response.status_code == 200
    shown = re.search(r"nh_[A-Za-z0-9_-]{40,}", response.content.decode()).group()
    assert tokens.user_of(shown) == admin and ApiToken.objects.get().name == "from the admin"


def test_a_user_makes_and_revokes_their_own_tokens_in_the_web_ui(django_user_model):
    from tests.webui.conftest import login

    client = login(django_user_model, "viewer")
    page = client.post("/account/tokens/", {"name": "my script"}, follow=True)
    assert page.status_code == 200
    token = re.search(r"nh_[A-Za-z0-9_-]{40,}", page.content.decode()).group()
    assert Api(token).get("/schedules").status_code == 200
    row = ApiToken.objects.get()
    assert row.name == "my script" and row.user.username == "viewer"
    listing = client.get("/account/tokens/").content.decode()
    assert row.prefix in listing and token not in listing  # shown once, never again
    other = token_for(django_user_model, "admin", "someone-else")
    theirs = ApiToken.objects.get(user__username="someone-else")
    assert client.post(f"/account/tokens/{theirs.pk}/revoke/").status_code == 404  # only one's own
    assert client.post(f"/account/tokens/{row.pk}/revoke/").status_code == 302
    assert Api(token).get("/schedules").status_code == 401 and Api(other).get("/schedules").status_code == 200
