"""The orchestrator: the Django project, the harvest data model, scheduling, dispatch and result intake."""

from orchestrator.celery import app as celery_app

__all__ = ["celery_app"]
