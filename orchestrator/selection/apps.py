from django.apps import AppConfig


class SelectionConfig(AppConfig):
    """Collections and records stand apart from the harvest model: they reach it only by the transfer."""

    name = "orchestrator.selection"
    label = "selection"
    verbose_name = "Selection"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from orchestrator.harvest.signals import before_run
        from orchestrator.selection.transfer import transfer_before_run

        before_run.connect(transfer_before_run, dispatch_uid="selection-transfer-before-run")
