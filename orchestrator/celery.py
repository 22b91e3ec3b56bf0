"""The orchestrator's Celery app: beat, result intake (queue ``events``) and the indexer chain.

Broker settings come from harvester.runtime, which the harvester workers use too, so both sides
meet on the same queues without the harvester ever importing Django.
"""

from __future__ import annotations

import os

from celery import Celery
from celery.schedules import crontab

from harvester.contracts import EVENTS_QUEUE
from harvester.runtime import celery_config

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "orchestrator.settings")

app = Celery("orchestrator")
app.conf.update(celery_config())
app.conf.update(
    beat_scheduler="django_celery_beat.schedulers:DatabaseScheduler",
    task_default_queue=EVENTS_QUEUE,
    task_routes={"orchestrator.index.*": {"queue": "indexer"}},
    beat_schedule={
        # NETHARVEST_REAPER_INTERVAL_S (orchestrator.settings), read here before Django is set up
        "reap-jobs": {"task": "orchestrator.reap_jobs",
                      "schedule": float(os.environ.get("NETHARVEST_REAPER_INTERVAL_S", 15))},
        "submit-new-jobs": {"task": "orchestrator.submit_new_jobs", "schedule": 60.0},
        # NETHARVEST_SCHEDULER_INTERVAL_S (orchestrator.settings), read here before Django is set up
        "schedule-due-harvests": {"task": "orchestrator.schedule_due_harvests",
                                  "schedule": float(os.environ.get("NETHARVEST_SCHEDULER_INTERVAL_S", 30))},
        # The indexer chain: the sweep recovers files left behind; merge + bigmerge once a day (UTC).
        "index-sweep": {"task": "orchestrator.index.sweep", "schedule": 300.0},
        "index-merge": {"task": "orchestrator.index.merge", "schedule": crontab(hour=1, minute=0)},
    },
)
app.autodiscover_tasks(["orchestrator.harvest"], related_name="tasks")
