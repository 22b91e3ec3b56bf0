from functools import partial

import pytest
from django.core.management import CommandError

from orchestrator.harvest.curation.domains import create_domains
from orchestrator.harvest.models import DomainConfiguration, HarvestDefinition, Job, Schedule
from tests.orchestrator import factories
from tests.orchestrator.commands import command_output

pytestmark = pytest.mark.django_db


run = partial(command_output, "harvests")


def news() -> HarvestDefinition:
    create_domains(["a.dk", "b.dk"])
    schedule = Schedule.objects.create(name="nightly", unit="day", anytime=False, at_hour=3, at_minute=0)
    definition = factories.selective_definition("news", schedule=schedule)
    definition.configurations.set(DomainConfiguration.objects.filter(is_default=True))
    return definition


def test_list_reads_as_a_table():
    news()
    factories.snapshot_definition("broad-2026")
    header, rule, *rows = run("list").splitlines()
    assert header.split()[:6] == ["id", "name", "kind", "channel", "active", "schedule"]
    assert set(rule) == {"-", " "}
    assert [r.split()[1] for r in rows] == ["broad-2026", "news"]
    assert "every day at 03:00 UTC" in rows[1]
    assert [r.split()[1] for r in run("list", "--kind", "snapshot").splitlines()[2:]] == ["broad-2026"]
    assert run("list", "--active").splitlines()[2:] == []


def test_activate_show_set_next_deactivate():
    news()
    assert "news activated; next run" in run("activate", "news")
    assert "next run 2030-05-01 03:00 UTC" in run("set-next", "news", "2030-05-01T03:00")
    text = run("show", "news")
    assert "harvest" in text and "active" in text and "every day at 03:00 UTC" in text
    assert "upcoming: 2030-05-01 03:00, 2030-05-02 03:00, 2030-05-03 03:00" in text
    assert "news deactivated" in run("deactivate", "news")
    assert "inactive: activate it to run" in run("set-next", "news", "2030-06-01")


def test_run_now_makes_and_dispatches_jobs_and_show_lists_the_run(purge_queues):
    definition = news()
    text = run("run-now", str(definition.pk))
    assert "news run 1: 1 job(s), 2 domain configuration(s)" in text
    job = Job.objects.get(harvest=definition)
    assert job.status == "SUBMITTED" and str(job.pk) in text
    shown = run("show", "news")
    assert "SUBMITTED:1" in shown and "1 run(s) made" in shown


def test_unknown_names_and_wrong_states_are_clear_errors():
    with pytest.raises(CommandError, match="no harvest definition named or numbered 'nope'"):
        run("show", "nope")
    news()
    with pytest.raises(CommandError, match="already inactive"):
        run("deactivate", "news")
    with pytest.raises(CommandError, match="is not a time"):
        run("set-next", "news", "tomorrow-ish")
    snapshot = factories.snapshot_definition("broad")
    with pytest.raises(CommandError, match="only selective harvests run on a schedule"):
        run("set-next", "broad", "2030-01-01")
    with pytest.raises(CommandError, match="no domain configuration to harvest"):
        HarvestDefinition.objects.filter(pk=snapshot.pk).update(max_objects=0)
        run("run-now", "broad")
    plain = factories.selective_definition("plain")
    with pytest.raises(CommandError, match="has no schedule"):
        run("activate", "plain")
    assert plain.runs == 0 and not Job.objects.exists()
