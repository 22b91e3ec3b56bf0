"""The selection pages: who reads and who edits, the two-stage add, refused combinations, search, saved
searches, bulk edit and move, CSV export, the transfer page."""

import csv
import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.exceptions import ValidationError
from django.urls import reverse

from orchestrator.selection.models import Record, SavedSearch
from tests.selection.conftest import make_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def anne(client, curator, collections):
    client.force_login(curator)
    return client


def test_staff_read_every_collection_and_others_are_refused(client, collections, other_curator):
    make_record(collections["lit"], "http://live.fr/")
    outsider = get_user_model().objects.create_user("eve", password="pw")
    client.force_login(outsider)
    assert client.get(reverse("selection:collections")).status_code == 403
    client.force_login(other_curator)
    page = client.get(reverse("selection:collections")).content.decode()
    assert "Literature" in page and "Sciences" in page
    record = Record.objects.get()
    page = client.get(reverse("selection:record", args=[record.pk])).content.decode()
    assert "only the editors of Literature change it" in page
    response = client.post(reverse("selection:record", args=[record.pk]), {"theme": "x"})
    assert response.status_code == 403


def test_anonymous_users_are_sent_to_login(client):
    response = client.get(reverse("selection:records"))
    assert response.status_code == 302 and "login" in response["Location"]


def test_two_stage_add(anne, web, collections):
    make_record(collections["sciences"], "http://live.fr/")  # a duplicate in another collection
    page = anne.post(reverse("selection:add"), {"url": f"http://live.fr:{web}/"}).content.decode()
    assert "HTTP 200" in page and "same host" in page
    token = re.search(r'token=([^"&]+)', page).group(1)
    from urllib.parse import unquote

    token = unquote(token)
    form = anne.get(reverse("selection:add_details"), {"token": token}).content.decode()
    assert f"http://live.fr:{web}/" in form and "Budget × frequency" in form
    data = {
        "token": token,
        "collection": collections["lit"].pk,
        "seeds": f"http://live.fr:{web}/",
        "budget": "small",
        "frequency": "weekly",
        "depth": "host",
        "theme": "poetry",
        "active": "on",
    }
    response = anne.post(reverse("selection:add_details"), data)
    record = Record.objects.get(collection=collections["lit"])
    assert response.status_code == 302 and record.created_by.username == "anne" and record.host == "live.fr"


def test_stage_two_needs_a_checked_url(anne, collections):
    response = anne.get(reverse("selection:add_details"), {"token": "forged"})
    assert response.status_code == 302 and response["Location"] == reverse("selection:add")
    from django.core import signing

    token = signing.dumps("http://live.fr/", salt="selection.checked-url")
    data = {
        "token": token,
        "collection": collections["lit"].pk,
        "seeds": "http://unchecked.fr/",
        "budget": "small",
        "frequency": "weekly",
        "depth": "host",
        "theme": "poetry",
        "active": "on",
    }
    page = anne.post(reverse("selection:add_details"), data).content.decode()
    assert "the first seed must be the URL checked in stage 1 (http://live.fr/)" in page
    assert not Record.objects.exists()


def test_an_invalid_url_cannot_go_on_and_a_redirect_offers_its_target(anne, web):
    page = anne.post(reverse("selection:add"), {"url": f"http://live.fr:{web}/missing"}).content.decode()
    assert "cannot be selected: the server answered HTTP 404" in page and "token=" not in page
    page = anne.post(reverse("selection:add"), {"url": f"http://live.fr:{web}/moved"}).content.decode()
    assert "Use http://www.target.fr/home instead" in page


def test_incompatible_budget_and_frequency_are_refused(anne, collections):
    record = make_record(collections["lit"], "http://live.fr/")
    data = {
        "collection": collections["lit"].pk,
        "seeds": "http://live.fr/",
        "budget": "large",
        "frequency": "daily",
        "depth": "host",
        "theme": "poetry",
        "active": "on",
    }
    page = anne.post(reverse("selection:record", args=[record.pk]), data).content.decode()
    assert "a large budget cannot be harvested daily" in page
    record.refresh_from_db()
    assert record.budget == "small"


def test_search_save_and_csv(anne, curator, collections):
    mine = make_record(collections["lit"], "http://live.fr/", responsible=curator, keywords="sonnets")
    make_record(collections["lit"], "http://target.fr/", theme="novels")
    page = anne.get(reverse("selection:records"), {"responsible": "me"}).content.decode()
    assert "http://live.fr/" in page and "http://target.fr/" not in page
    anne.post(reverse("selection:save_search"), {"name": "my sites", "responsible": "me", "q": "sonnets"})
    assert SavedSearch.objects.get(user=curator).query == {"q": "sonnets", "responsible": "me"}
    response = anne.get(reverse("selection:records"), {"q": "sonnets", "format": "csv"})
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert response["Content-Type"].startswith("text/csv")
    assert [(r["id"], r["url"], r["responsible"]) for r in rows] == [(str(mine.pk), "http://live.fr/", "anne")]


def test_the_csv_export_neutralises_formula_cells(anne, collections):
    """Curators' text starting with = + - @ TAB would be a formula in a spreadsheet (CSV injection)."""
    make_record(
        collections["lit"],
        "http://live.fr/",
        content_notes="=1+2",
        technical_notes="\t=A1",
        keywords="-2+3",
        theme="@SUM(A1)",
    )
    response = anne.get(reverse("selection:records"), {"format": "csv"})
    (row,) = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert (row["content_notes"], row["technical_notes"], row["keywords"], row["theme"]) == (
        "'=1+2",
        "'\t=A1",
        "'-2+3",
        "'@SUM(A1)",
    )
    assert row["url"] == "http://live.fr/"


def test_bulk_edit_and_move_only_where_the_user_edits(anne, curator, other_curator, collections):
    a = make_record(collections["lit"], "http://live.fr/")
    b = make_record(collections["lit"], "http://target.fr/")
    theirs = make_record(collections["sciences"], "http://news.example.com/")
    anne.post(
        reverse("selection:bulk"),
        {"record": [a.pk, b.pk], "set_responsible": other_curator.pk, "set_collection": collections["elections"].pk},
    )
    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.responsible, a.collection, b.collection) == (
        other_curator,
        collections["elections"],
        collections["elections"],
    )
    assert a.modified_by == curator
    response = anne.post(reverse("selection:bulk"), {"record": [a.pk, theirs.pk], "set_active": "no"}, follow=True)
    assert "nothing was changed: you may not change records of collections you do not edit" in response.content.decode()
    a.refresh_from_db()
    assert a.active
    response = anne.post(
        reverse("selection:bulk"), {"record": [a.pk], "set_budget": "large", "set_frequency": "daily"}, follow=True
    )
    assert "incompatible budget × frequency" in response.content.decode()
    make_record(collections["lit"], "http://live.fr/")
    response = anne.post(
        reverse("selection:bulk"), {"record": [a.pk], "set_collection": collections["lit"].pk}, follow=True
    )
    assert "the target collection already has records for: http://live.fr/" in response.content.decode()


def test_the_same_url_twice_in_one_collection_is_refused(anne, collections):
    make_record(collections["lit"], "http://live.fr/")
    with pytest.raises(ValidationError, match="already a record of this collection"):
        make_record(collections["lit"], "http://live.fr/")
    make_record(collections["sciences"], "http://live.fr/")  # another collection may


def test_transfer_page_needs_the_permission(anne, curator, mapped, collections):
    make_record(collections["lit"], "http://live.fr/")
    assert anne.post(reverse("selection:transfer")).status_code == 403
    curator.user_permissions.add(Permission.objects.get(codename="run_transfer"))
    page = anne.post(reverse("selection:transfer")).content.decode()
    assert "1 created" in page
    assert "Nothing changed" in anne.post(reverse("selection:transfer")).content.decode()
