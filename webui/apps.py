from django.apps import AppConfig


class WebuiConfig(AppConfig):
    """Views and Jinja2 templates for curators and crawl engineers; business rules stay in orchestrator."""

    name = "webui"
