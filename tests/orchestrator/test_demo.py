"""The README demo: `netharvest up` makes a selective definition of the bundled test site, due at once."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from harvester.contracts import JobSpec
from orchestrator.harvest.curation.demo import DEMO_MAX_OBJECTS, ensure_demo_definition
from orchestrator.harvest.models import Job, SeedList
from orchestrator.harvest.scheduling import scheduler


@pytest.mark.django_db
def test_the_demo_definition_is_due_now_and_its_job_crawls_both_demo_hosts():
    definition, created = ensure_demo_definition(8701, 8702)
    assert created and definition.active and definition.kind == "selective"
    assert definition.channel.priority == "high"

    job_ids = scheduler.schedule_due_harvests()
    assert len(job_ids) == 1
    spec = JobSpec.from_dict(Job.objects.get(pk=job_ids[0]).spec)
    (domain,) = spec.domains
    assert (domain.name, domain.max_objects) == ("127.0.0.1", DEMO_MAX_OBJECTS)
    assert list(domain.seeds) == ["http://127.0.0.1:8701/", "http://127.0.0.1:8702/"]
    assert spec.settings.min_delay_ms == 100  # quick politeness, for this machine's own test site only
    assert scheduler.schedule_due_harvests() == []  # one run: the "Once" schedule ends after it


@pytest.mark.django_db
def test_starting_again_on_other_ports_keeps_the_definition_and_moves_its_seeds():
    first, _ = ensure_demo_definition(8701, 8702)
    again, created = ensure_demo_definition(9001, 9002)
    assert again.pk == first.pk and not created
    assert SeedList.objects.get(name="demo-testsite").active_seeds == [
        "http://127.0.0.1:9001/",
        "http://127.0.0.1:9002/",
    ]


def test_up_refuses_a_busy_demo_port_before_starting_anything(tmp_path: Path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("NETHARVEST_") and k != "DJANGO_SETTINGS_MODULE"}
        env["NETHARVEST_DATA_DIR"] = str(tmp_path / "var")
        exe = Path(sys.executable).parent / "netharvest"
        out = subprocess.run(
            [str(exe), "up", "--demo-port", str(port)],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert out.returncode != 0
    assert f"the demo site needs ports {port} and {port + 1}" in out.stderr
    assert "--no-demo" in out.stderr


@pytest.mark.django_db
def test_the_demo_has_an_inactive_continuous_definition_ready_to_activate(purge_queues):
    from harvester.revisit.policy import RevisitSettings
    from orchestrator.celery import app
    from orchestrator.harvest.curation import seeding
    from orchestrator.harvest.curation.demo import DEMO_CLOCK, DEMO_CONTINUOUS
    from orchestrator.harvest.models import HarvestDefinition

    ensure_demo_definition(8701, 8702)
    ensure_demo_definition(8701, 8702)  # started again: still one
    (definition,) = HarvestDefinition.objects.filter(name=DEMO_CONTINUOUS)
    assert definition.kind == "continuous" and not definition.active and definition.channel.name == "continuous"
    assert scheduler.schedule_due_harvests() != []  # the selective demo only
    assert not Job.objects.filter(harvest=definition).exists()
    scheduler.activate(definition)
    (job,) = Job.objects.filter(harvest=definition)
    spec = JobSpec.from_dict(job.spec)
    assert spec.continuous.budget_per_s == 2.0 and spec.continuous.warc_rotate_s == 120
    assert any("calendar" in t for t in spec.global_traps)
    assert spec.domains[0].max_objects == -1
    # the site and its live pages, whose clock the revisit settings strip (a newcomer saw only "unchanged")
    (domain,) = spec.domains
    assert set(domain.seeds) == {"http://127.0.0.1:8701/", "http://127.0.0.1:8702/", "http://127.0.0.1:8701/live/"}
    assert RevisitSettings.from_dict(spec.continuous.revisit).strip == (DEMO_CLOCK,)
    ensure_demo_definition(8711, 8712)  # started on other ports: the live pages move with the site
    assert "http://127.0.0.1:8711/live/" in seeding.seeds_of(definition.configurations.all())
    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge("harvest.continuous")


@pytest.mark.django_db
def test_a_demo_made_before_the_live_pages_gets_them_at_the_next_start():
    """An install whose continuous demo predates the live pages (the site's own configuration only, no strip
    regex) gets them when `up` starts again, unless the curator changed or activated it."""
    from harvester.revisit.policy import RevisitSettings
    from orchestrator.harvest.curation import seeding
    from orchestrator.harvest.curation.demo import DEMO_CLOCK, DEMO_CONTINUOUS, DEMO_NAME
    from orchestrator.harvest.models import DomainConfiguration, HarvestDefinition

    ensure_demo_definition(8721, 8722)
    old = HarvestDefinition.objects.get(name=DEMO_CONTINUOUS)
    old.configurations.set([DomainConfiguration.objects.get(name=DEMO_NAME)])  # as the demo was made before
    old.revisit_settings = {k: v for k, v in old.revisit_settings.items() if k != "strip"}
    old.save()
    ensure_demo_definition(8721, 8722)
    again = HarvestDefinition.objects.get(name=DEMO_CONTINUOUS)
    assert "http://127.0.0.1:8721/live/" in seeding.seeds_of(again.configurations.all())
    assert again.configurations.count() == 1
    assert RevisitSettings.from_dict(again.revisit_settings).strip == (DEMO_CLOCK,)
