"""The admin is usable: every page renders, a domain added there gets its defaults, nothing is deleted."""

import pytest
from django.contrib import admin
from django.urls import reverse

from orchestrator.harvest.admin import ReadOnlyAdmin
from orchestrator.harvest.models import Domain
from tests.orchestrator import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client, django_user_model):
    user = django_user_model.objects.create_superuser("boss", "", "pw-long-enough")
    client.force_login(user)
    return client


def test_every_harvest_admin_page_renders(staff):
    factories.job()
    for model, model_admin in admin.site._registry.items():
        if model._meta.app_label != "harvest":
            continue
        name = f"admin:harvest_{model._meta.model_name}"
        assert staff.get(reverse(f"{name}_changelist")).status_code == 200, name
        expected = 403 if isinstance(model_admin, ReadOnlyAdmin) else 200
        assert staff.get(reverse(f"{name}_add")).status_code == expected, name


def test_domain_added_in_admin_gets_default_seeds_and_configuration(staff):
    response = staff.post(
        reverse("admin:harvest_domain_add"),
        {
            "name": "Bücher.de",
            "comments": "",
            "crawler_traps": "",
            "extended": "{}",
            "alias_expires_0": "",
            "alias_expires_1": "",
            "seedlists-TOTAL_FORMS": "0",
            "seedlists-INITIAL_FORMS": "0",
            "configurations-TOTAL_FORMS": "0",
            "configurations-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    domain = Domain.objects.get(name="xn--bcher-kva.de")
    assert domain.default_configuration.seedlists.count() == 1


def test_invalid_domain_in_admin_is_explained_and_not_saved(staff):
    response = staff.post(
        reverse("admin:harvest_domain_add"),
        {
            "name": "www.example.fr",
            "extended": "{}",
            "seedlists-TOTAL_FORMS": "0",
            "seedlists-INITIAL_FORMS": "0",
            "configurations-TOTAL_FORMS": "0",
            "configurations-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 200
    assert "the domain is example.fr" in response.content.decode()
    assert not Domain.objects.exists()


def test_domains_have_no_delete_in_admin(staff):
    domain = factories.domain()
    assert staff.get(reverse("admin:harvest_domain_delete", args=[domain.pk])).status_code == 403


def test_a_jobs_admin_page_shows_its_spec_as_json(staff):
    job = factories.job(domains=["a.dk"])
    page = staff.get(reverse("admin:harvest_job_change", args=[job.pk])).content.decode()
    assert "JobSpec" in page and f"&quot;job_id&quot;: {job.pk}," in page and "&quot;a.dk&quot;" in page
