"""Every Celery task is registered under its contract name after the harvest app was cut into packages
(issue 16): the names are messages between machines, the modules only where the code lives."""

from __future__ import annotations

from harvester import contracts

#: The orchestrator's tasks, by the names harvesters, beat and the chain send.
ORCHESTRATOR_TASKS = {
    contracts.STARTED_TASK,
    contracts.PROGRESS_TASK,
    contracts.CONTROL_APPLIED_TASK,
    contracts.RECORD_FILES_TASK,
    contracts.RESULT_TASK,
    "orchestrator.reap_jobs",
    "orchestrator.submit_new_jobs",
    "orchestrator.schedule_due_harvests",
    "orchestrator.index.sweep",
    "orchestrator.index.merge",
    "orchestrator.index.file",
    "orchestrator.qa.sweep",
    "orchestrator.qa.run",
}


def test_orchestrator_worker_registers_every_task_and_every_beat_entry() -> None:
    from orchestrator.celery import app

    app.loader.import_default_modules()  # what `celery -A orchestrator worker` does at start (autodiscovery)
    registered = {name for name in app.tasks if not name.startswith("celery.")}
    assert ORCHESTRATOR_TASKS <= registered
    assert {entry["task"] for entry in app.conf.beat_schedule.values()} <= registered


def test_harvester_worker_registers_run_job() -> None:
    from harvester.worker import app

    assert contracts.RUN_JOB_TASK in app.tasks
