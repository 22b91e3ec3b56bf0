"""The orchestrator: the Django project, the harvest data model, scheduling, dispatch and result intake."""

from harvester.runtime import ConfigError

try:
    from orchestrator.celery import app as celery_app
except ConfigError:
    # Said where the process starts: as one line by the netharvest command (orchestrator.cli), as Celery's
    # "Unable to load celery application" by a worker or beat, which import orchestrator.celery again.
    celery_app = None

__all__ = ["celery_app"]
