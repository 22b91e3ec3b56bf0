from django.apps import AppConfig


class HarvestConfig(AppConfig):
    """Domains, templates, schedules, harvest definitions, channels, jobs and archive files."""

    name = "orchestrator.harvest"
    label = "harvest"
    verbose_name = "Harvesting"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from orchestrator import security  # noqa: F401 - registers netharvest's deployment checks
