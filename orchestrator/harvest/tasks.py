"""Celery tasks of the orchestrator (queue ``events``): result intake and scheduling land here."""
