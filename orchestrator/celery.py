"""The orchestrator's Celery app: beat, result intake (queue ``events``) and the indexer chain.

Broker settings come from harvester.runtime, which the harvester workers use too, so both sides
meet on the same queues without the harvester ever importing Django.
"""

from __future__ import annotations

import os

from celery import Celery
from celery.schedules import crontab

from harvester import celerylog
from harvester.contracts import EVENTS_QUEUE
from harvester.runtime import BROKER_CONNECT_TIMEOUT_S, celery_config

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "orchestrator.settings")

#: A publish from the orchestrator (dispatch, beat, the chain) gives up within seconds when the broker is down
#: or does not answer, so a command answers and the job stays NEW for the next sweep (docs/DESIGN.md,
#: "Reliability: dispatch and indexer claims"). Connect: 3 s; a command on a connected socket: 5 s; the
#: publish is retried once, after 0.5 s. Worst case ~2 × (3 + 5) + 0.5 s; a refused connection: ~1 s.
PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0.5, "interval_step": 0.5, "interval_max": 0.5}

app = Celery("orchestrator")
app.conf.update(celery_config())  # the Redis socket timeouts (harvester.runtime) included
celerylog.install()  # a broker lost: one line, not a traceback per worker (harvester/celerylog.py)
app.conf.update(broker_connection_timeout=BROKER_CONNECT_TIMEOUT_S, task_publish_retry_policy=PUBLISH_RETRY_POLICY)
app.conf.update(
    beat_scheduler="django_celery_beat.schedulers:DatabaseScheduler",
    task_default_queue=EVENTS_QUEUE,
    task_routes={"orchestrator.index.*": {"queue": "indexer"}, "orchestrator.qa.*": {"queue": "qa"}},
    beat_schedule={
        # NETHARVEST_REAPER_INTERVAL_S (orchestrator.settings), read here before Django is set up
        "reap-jobs": {
            "task": "orchestrator.reap_jobs",
            "schedule": float(os.environ.get("NETHARVEST_REAPER_INTERVAL_S", 15)),
        },
        # Jobs left NEW (the broker was down when their run was made, a dispatcher died): sent within a minute
        # of the broker answering again.
        "submit-new-jobs": {"task": "orchestrator.submit_new_jobs", "schedule": 60.0},
        # NETHARVEST_SCHEDULER_INTERVAL_S (orchestrator.settings), read here before Django is set up
        "schedule-due-harvests": {
            "task": "orchestrator.schedule_due_harvests",
            "schedule": float(os.environ.get("NETHARVEST_SCHEDULER_INTERVAL_S", 30)),
        },
        # The indexer chain: the sweep recovers files left behind; merge + bigmerge once a day (UTC).
        # Every minute: a dead worker's claim (lease NETHARVEST_INDEX_LEASE_S, 2 min) is taken over within 3 min.
        "index-sweep": {"task": "orchestrator.index.sweep", "schedule": 60.0},
        "index-merge": {"task": "orchestrator.index.merge", "schedule": crontab(hour=1, minute=0)},
        # Page QA passes the chain's hook missed, and QA runs whose message was lost
        # (orchestrator/harvest/qa/pageqa.py).
        "qa-sweep": {"task": "orchestrator.qa.sweep", "schedule": 300.0},
    },
)
#: Every package of the harvest app with Celery tasks (each one's ``tasks.py``): jobs' lifecycle (intake of
#: what harvesters report, the reaper, dispatch, the scheduler's beat task), the indexer chain, page QA.
TASK_PACKAGES = ["orchestrator.harvest.jobs", "orchestrator.harvest.chain", "orchestrator.harvest.qa"]
app.autodiscover_tasks(TASK_PACKAGES, related_name="tasks")
