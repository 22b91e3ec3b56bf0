"""Transfer to harvesting: mapping, idempotence, reported changes, inactive records, before each run."""

import io

import pytest
from django.core.management import call_command

from orchestrator.harvest.models import DomainConfiguration
from orchestrator.harvest.scheduling import scheduler
from orchestrator.selection.transfer import transfer
from tests.selection.conftest import make_record

pytestmark = pytest.mark.django_db


def configs_of(definition):
    return sorted((c.domain.name, c.name, c.max_objects) for c in definition.configurations.select_related("domain"))


def test_transfer_creates_then_changes_nothing_the_second_time(mapped, collections):
    record = make_record(
        collections["lit"], "http://live.fr/\nhttp://blog.other.fr/", supplementary_urls="http://live.fr/sitemap.xml"
    )
    report = transfer()
    assert len(report.created) == 2 and not report.updated and not report.removed
    assert configs_of(mapped["monthly"]) == [
        ("live.fr", f"selection-{record.pk}", 10000),
        ("other.fr", f"selection-{record.pk}", 10000),
    ]
    config = DomainConfiguration.objects.get(domain__name="live.fr", name=f"selection-{record.pk}")
    assert config.seedlists.get().seeds == "http://live.fr/\nhttp://live.fr/sitemap.xml"
    again = transfer()
    assert not again.changed and again.unchanged == 2


def test_changes_are_reported_and_applied(mapped, collections):
    record = make_record(collections["lit"], "http://live.fr/")
    transfer()
    record.budget, record.frequency = "medium", "weekly"
    record.save()
    report = transfer()
    assert report.updated == [f"live.fr: selection-{record.pk}: max_objects, harvest definition"]
    assert configs_of(mapped["monthly"]) == []
    assert configs_of(mapped["weekly"]) == [("live.fr", f"selection-{record.pk}", 100000)]


def test_inactive_records_are_not_transferred_and_leave_the_definition(mapped, collections):
    record = make_record(collections["lit"], "http://live.fr/")
    transfer()
    record.active = False
    record.save()
    report = transfer()
    assert report.removed == [f"live.fr: selection-{record.pk} from lit-monthly"] and report.inactive == 1
    assert configs_of(mapped["monthly"]) == []
    assert DomainConfiguration.objects.filter(name=f"selection-{record.pk}").exists()  # kept, never deleted


def test_records_without_a_mapping_are_skipped_with_the_reason(mapped, collections):
    make_record(collections["sciences"], "http://target.fr/")
    make_record(collections["lit"], "http://live.fr/", depth="domain")
    report = transfer()
    assert any("no harvest definition is mapped to collection 'Sciences' × monthly" in s for s in report.skipped)
    assert any("no template is mapped to small × domain" in s for s in report.skipped)
    assert not report.created


def test_the_transfer_runs_before_a_run_of_a_mapped_definition(mapped, collections):
    record = make_record(collections["lit"], "http://live.fr/")
    jobs = scheduler.run_now(mapped["monthly"], "test").jobs
    assert jobs and configs_of(mapped["monthly"]) == [("live.fr", f"selection-{record.pk}", 10000)]


def test_command_reports_what_it_changed(mapped, collections):
    make_record(collections["lit"], "http://live.fr/")
    out = io.StringIO()
    call_command("selection_transfer", stdout=out)
    assert "created: live.fr: selection-" in out.getvalue() and "1 created, 0 updated" in out.getvalue()
    out = io.StringIO()
    call_command("selection_transfer", "--definition", "lit-monthly", stdout=out)
    assert "0 created, 0 updated, 0 removed, 1 unchanged" in out.getvalue()


def test_a_failing_transfer_does_not_stop_the_run(mapped, collections, monkeypatch):
    from orchestrator.harvest.curation.domains import create_domains
    from orchestrator.selection import transfer as module

    create_domains(["kept.fr"])
    mapped["monthly"].configurations.add(DomainConfiguration.objects.get(domain__name="kept.fr"))
    make_record(collections["lit"], "http://live.fr/")

    def broken(definition=None):
        raise RuntimeError("mapping table unreadable")

    monkeypatch.setattr(module, "transfer", broken)
    jobs = scheduler.run_now(mapped["monthly"], "test").jobs
    assert jobs and configs_of(mapped["monthly"]) == [("kept.fr", "defaultconfig", -1)]
