"""A running continuous crawl's captures replay (issues 12 and 13): while the job is still STARTED, a capture
from a WARC it handed over (closed every 3 s, indexed by the chain) opens through the web UI's ``/replay/``
proxy, after login, in real pywb, with the archived bytes the site served.

The stack is tests/orchestrator/test_continuous_stack.py's (``netharvest up``'s continuous worker and the
indexer, Redis and PostgreSQL, a changing site over HTTP), plus pywb over the same index directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.harvest.archive.captures import captures_of
from orchestrator.harvest.models import ArchiveFile, Job
from orchestrator.harvest.scheduling import scheduler
from tests.changingsite import ChangingSite
from tests.conftest import wait_for
from tests.orchestrator.test_continuous_stack import activate_live_definition, wait_while_running
from tests.webui.conftest import login

pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def test_a_running_continuous_crawl_s_captures_replay_through_the_web_ui(
    continuous_workers: Path, replay_service, django_user_model
) -> None:
    viewer = login(django_user_model, "viewer")
    site = ChangingSite().start()
    static = f"{site.url}static"  # the page that never changes: its archived bytes are known
    try:
        definition, job = activate_live_definition(site)

        def captured_while_running() -> bool:
            stored = ArchiveFile.objects.filter(job=job, kind="warc", index_state="CLEANED").exists()
            return stored and any(c.job_id == job.pk and c.status == "200" for c in captures_of(static))

        wait_while_running(
            job, captured_while_running, "a handed-over WARC's capture of /static in the index", continuous_workers
        )
        capture = next(c for c in captures_of(static) if c.job_id == job.pk and c.status == "200")
        assert Job.objects.get(pk=job.pk).status == "STARTED"  # still crawling
        assert ArchiveFile.objects.get(name=capture.filename).job_id == job.pk

        # The capture's own replay address, as the captures calendar and the pages view link it.
        response = viewer.get(capture.replay_url(mode="id_"))
        body = b"".join(response.streaming_content)
        assert response.status_code == 200, (body[:500], replay_service.log.read_text()[-3000:])
        assert body == site.body("/static")
        framed = viewer.get(capture.replay_url())  # pywb's framed page, as a curator opens it
        assert framed.status_code == 200 and b"".join(framed.streaming_content)
        assert Job.objects.get(pk=job.pk).status == "STARTED"

        scheduler.deactivate(definition)
        wait_for(lambda: Job.objects.get(pk=job.pk).status in ("DONE", "FAILED"), 120, "the job to stop")
    finally:
        site.shutdown()
