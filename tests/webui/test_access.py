"""Who may do what: every URL of the web UI, for every role, anonymous users and CSRF.

The table below is the specification (issue 6); a URL added to webui/urls.py without a line here fails
test_every_url_is_in_the_table, so no page can be added without saying who may use it.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from orchestrator.harvest.models import GlobalCrawlerTrapList
from tests.webui.conftest import ROLES, Sample
from webui import urls
from webui.access import ROLE_OF

EVERYONE = set(ROLES)
CURATORS = {"curator", "admin"}
ENGINEERS = {"crawl engineer", "admin"}

#: URL name → (who may use it, the URL's arguments from the sample, POST only?)
TABLE: dict[str, tuple[set[str], object, bool]] = {
    "home": (EVERYONE, lambda s: [], False),
    "tokens": (EVERYONE, lambda s: [], False),
    "token-revoke": (EVERYONE, lambda s: [1], True),  # 405 on GET before the token is looked up
    "domains": (EVERYONE, lambda s: [], False),
    "domain-create": (CURATORS, lambda s: [], False),
    "domain": (EVERYONE, lambda s: [s.domain.name], False),
    "domain-edit": (CURATORS, lambda s: [s.domain.name], False),
    "seedlist-create": (CURATORS, lambda s: [s.domain.name], False),
    "seedlist-edit": (CURATORS, lambda s: [s.domain.name, s.domain.seedlists.get().pk], False),
    "configuration-create": (CURATORS, lambda s: [s.domain.name], False),
    "configuration-edit": (CURATORS, lambda s: [s.domain.name, s.domain.default_configuration.pk], False),
    "templates": (EVERYONE, lambda s: [], False),
    "template-create": (ENGINEERS, lambda s: [], False),
    "template-edit": (ENGINEERS, lambda s: [s.template.pk], False),
    "schedules": (EVERYONE, lambda s: [], False),
    "schedule-create": (CURATORS, lambda s: [], False),
    "schedule-edit": (CURATORS, lambda s: [s.schedule.pk], False),
    "channels": (EVERYONE, lambda s: [], False),
    "channel-create": (ENGINEERS, lambda s: [], False),
    "channel-edit": (ENGINEERS, lambda s: [s.channel.pk], False),
    "traps": (EVERYONE, lambda s: [], False),
    "trap-create": (ENGINEERS, lambda s: [], False),
    "trap-edit": (ENGINEERS, lambda s: [s.traps.pk], False),
    "trap-toggle": (ENGINEERS, lambda s: [s.traps.pk], True),
    "definitions": (EVERYONE, lambda s: [], False),
    "definition-create": (CURATORS, lambda s: ["selective"], False),
    "definition": (EVERYONE, lambda s: [s.selective.pk], False),
    "definition-edit": (CURATORS, lambda s: [s.selective.pk], False),
    "definition-seeds": (CURATORS, lambda s: [s.selective.pk], False),
    "definition-remove": (CURATORS, lambda s: [s.selective.pk], True),
    "definition-activate": (CURATORS, lambda s: [s.selective.pk], True),
    "definition-deactivate": (CURATORS, lambda s: [s.selective.pk], True),
    "definition-run": (CURATORS, lambda s: [s.selective.pk], True),
}
PUBLIC = {"login", "logout"}
GUARDED = sorted(TABLE)


def test_every_url_is_in_the_table():
    names = {p.name for p in urls.urlpatterns}
    assert names - PUBLIC == set(TABLE), "add the new URL to TABLE with the roles that may use it"


def test_every_view_is_wrapped_in_a_role_check():
    for pattern in urls.urlpatterns:
        if pattern.name not in PUBLIC:
            assert getattr(pattern.callback, "required_permission", None), pattern.name


@pytest.mark.django_db
@pytest.mark.parametrize("name", GUARDED)
def test_anonymous_users_are_sent_to_the_login_page(name, sample: Sample):
    _, args, _ = TABLE[name]
    for method in ("get", "post"):
        response = getattr(Client(), method)(reverse(f"webui:{name}", args=args(sample)))
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("webui:login") + "?next=")


@pytest.mark.django_db
@pytest.mark.parametrize("name", GUARDED)
@pytest.mark.parametrize("role", ROLES)
def test_each_role_gets_exactly_its_pages(name, role, clients, sample: Sample):
    allowed, args, post_only = TABLE[name]
    url = reverse(f"webui:{name}", args=args(sample))
    client = clients[role]
    get = client.get(url)
    if role in allowed:
        assert get.status_code == (405 if post_only else 200), (name, role, get.content[:500])
    else:
        assert get.status_code == 403, (name, role)
        assert "role" in get.content.decode()
        # A refused POST changes nothing: here, the one action every engineer page could have done.
        before = list(GlobalCrawlerTrapList.objects.values_list("active", flat=True))
        assert client.post(url, {"active": "0", "seeds": "http://x.fr/"}).status_code == 403, (name, role)
        assert list(GlobalCrawlerTrapList.objects.values_list("active", flat=True)) == before


@pytest.mark.django_db
def test_posts_need_the_csrf_token(django_user_model, sample: Sample):
    from tests.webui.conftest import login

    client = login(django_user_model, "crawl engineer")
    client.handler.enforce_csrf_checks = True
    response = client.post(reverse("webui:trap-toggle", args=[sample.traps.pk]), {"active": "0"})
    assert response.status_code == 403
    assert GlobalCrawlerTrapList.objects.get().active


@pytest.mark.django_db
def test_login_page_logs_in_and_out(django_user_model):
    django_user_model.objects.create_user("anna", password="pw-long-enough")
    client = Client(enforce_csrf_checks=False)
    page = client.get(reverse("webui:login"))
    assert page.status_code == 200 and "Log in" in page.content.decode()
    bad = client.post(reverse("webui:login"), {"username": "anna", "password": "wrong"})
    assert bad.status_code == 200 and "correct username and password" in bad.content.decode()
    ok = client.post(reverse("webui:login"), {"username": "anna", "password": "pw-long-enough", "next": "/domains/"})
    assert ok.status_code == 302 and ok["Location"] == "/domains/"
    # A user with no role is logged in but sees nothing.
    assert client.get(reverse("webui:home")).status_code == 403
    assert client.post(reverse("webui:logout")).status_code == 302
    assert client.get(reverse("webui:home")).status_code == 302
    # Django's own auth URLs (password change) send to the same page.
    assert "Log in" in client.get("/accounts/login/").content.decode()


@pytest.mark.django_db
def test_every_form_on_a_page_carries_the_csrf_token(django_user_model, sample: Sample):
    """Buttons drawn by the shared macros too (a Jinja import without context would drop the token)."""
    import re

    from tests.webui.conftest import login

    client = login(django_user_model, "admin")
    client.handler.enforce_csrf_checks = True
    for url in (
        reverse("webui:definition", args=[sample.selective.pk]),
        reverse("webui:traps"),
        reverse("webui:domain-edit", args=[sample.domain.name]),
    ):
        page = client.get(url).content.decode()
        forms = re.findall(r'<form method="post".*?</form>', page, re.S)
        assert forms, url
        for form in forms:
            assert 'name="csrfmiddlewaretoken"' in form, (url, form[:200])
    token = re.search(
        r'name="csrfmiddlewaretoken" value="([^"]+)"', client.get(reverse("webui:traps")).content.decode()
    ).group(1)
    response = client.post(
        reverse("webui:trap-toggle", args=[sample.traps.pk]), {"active": "0", "csrfmiddlewaretoken": token}
    )
    assert response.status_code == 302 and not GlobalCrawlerTrapList.objects.get().active


def _site_urls():
    """Every URL of the site outside the Django admin and Django's own auth pages, with dummy arguments."""
    from django.urls import URLPattern, URLResolver, get_resolver

    def walk(patterns, prefix, namespace):
        for p in patterns:
            if isinstance(p, URLResolver):
                # The REST API and /metrics answer 401/403 rather than a login page: tests/api/test_auth.py
                # walks every API route with no token and with each role.
                if str(p.pattern) in ("admin/", "accounts/", "api/v1/"):
                    continue
                yield from walk(p.url_patterns, prefix + str(p.pattern), p.namespace or namespace)
            elif isinstance(p, URLPattern) and p.name != "metrics":
                route = prefix + str(p.pattern)
                for converter, dummy in (("<int:", "1"), ("<str:", "x.fr"), ("<slug:", "x"), ("<path:", "x")):
                    while converter in route:
                        start = route.index(converter)
                        route = route[:start] + dummy + route[route.index(">", start) + 1 :]
                yield f"{namespace}:{p.name}", "/" + route

    return sorted(walk(get_resolver().url_patterns, "", ""))


@pytest.mark.django_db
@pytest.mark.parametrize(("name", "url"), _site_urls())
def test_no_page_of_the_site_is_reachable_without_login(name, url):
    """Jobs, QA and selection pages included: anonymous GET and POST end at the login page."""
    if name in {"webui:login", "webui:logout"}:
        return
    for method in ("get", "post"):
        response = getattr(Client(), method)(url)
        assert response.status_code == 302, (name, url, method, response.status_code)
        assert response["Location"].startswith(reverse("webui:login")), (name, url)


def _site_patterns():
    """(URL name, pattern) of every view of the site outside the Django admin, Django's auth pages,
    the REST API and /metrics (tests/api/test_auth.py walks those), login and logout."""
    from django.urls import URLPattern, URLResolver, get_resolver

    def walk(patterns, namespace):
        for p in patterns:
            if isinstance(p, URLResolver):
                if str(p.pattern) not in ("admin/", "accounts/", "api/v1/"):
                    yield from walk(p.url_patterns, p.namespace or namespace)
            elif isinstance(p, URLPattern) and p.name != "metrics" and p.name not in PUBLIC:
                yield f"{namespace}:{p.name}", p

    return sorted(walk(get_resolver().url_patterns, ""), key=lambda item: item[0])


@pytest.fixture
def rows(sample: Sample, django_user_model):
    """One real row behind every argument of every URL: a detail view that forgot its check would
    answer 200 here (a dummy id answers 404 and hides it)."""
    from django.utils import timezone

    from orchestrator.api.models import ApiToken
    from orchestrator.harvest.models import QAPage, QARun
    from orchestrator.selection.models import Collection, SavedSearch
    from tests.orchestrator import factories
    from tests.selection.conftest import make_record

    owner = django_user_model.objects.create_user("owner", password="pw-long-enough")
    job = factories.job(sample.selective, domains=[sample.domain.name])
    page = QAPage.objects.create(
        run=QARun.objects.create(job=job, trigger=QARun.REQUESTED), url="http://example.fr/", timestamp="20260101000000"
    )
    pk = {
        "webui:token-revoke": ApiToken.objects.create(user=owner, prefix="nh_x", key_hash="0" * 64).pk,
        "webui:seedlist-edit": sample.domain.seedlists.get().pk,
        "webui:configuration-edit": sample.domain.default_configuration.pk,
        "webui:template-edit": sample.template.pk,
        "webui:schedule-edit": sample.schedule.pk,
        "webui:channel-edit": sample.channel.pk,
        "selection:record": make_record(Collection.objects.create(name="lit"), "http://example.fr/").pk,
        "selection:delete_search": SavedSearch.objects.create(user=owner, name="mine").pk,
    }
    by_kwarg = {
        "job_id": job.pk,
        "page_id": page.pk,
        "which": "replay",
        "harvest_id": sample.selective.pk,
        "run": job.harvest_run,
        "year": timezone.now().year,
        "kind": "selective",
        "rest": "x",
    }

    def kwargs(name: str, pattern) -> dict[str, object]:
        names = list(getattr(pattern.pattern, "converters", {})) or list(pattern.pattern.regex.groupindex)
        out = {}
        for kwarg in names:
            if kwarg == "pk":
                out[kwarg] = pk.get(name, sample.traps.pk if ":trap" in name else sample.selective.pk)
            elif kwarg == "name":
                out[kwarg] = "crawl-report.txt" if name.startswith("jobs:") else sample.domain.name
            else:
                out[kwarg] = by_kwarg[kwarg]
        return out

    return kwargs


SITE = _site_patterns()


def test_every_view_of_the_site_is_wrapped_in_the_access_table():
    """Jobs, QA, replay and selection views too: each goes through webui/access.py's ``require``."""
    for name, pattern in SITE:
        assert getattr(pattern.callback, "required_permission", None) in ROLE_OF, name


@pytest.mark.django_db
@pytest.mark.parametrize(("name", "pattern"), SITE, ids=[name for name, _ in SITE])
def test_a_user_without_a_role_is_refused_every_view_on_real_rows(name, pattern, rows, django_user_model):
    """Logged in but in no group: every page and action answers 403 before it looks anything up."""
    url = reverse(name, kwargs=rows(name, pattern))
    client = Client()
    client.force_login(django_user_model.objects.create_user("nobody", password="pw-long-enough"))
    for method in ("get", "post"):
        response = getattr(client, method)(url)
        assert response.status_code == 403, (name, url, method, response.status_code)
        assert "role" in response.content.decode(), (name, method)
