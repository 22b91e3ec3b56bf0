from django.apps import AppConfig


class HarvestConfig(AppConfig):
    """Domains, templates, schedules, harvest definitions, channels, jobs and archive files."""

    name = "orchestrator.harvest"
    label = "harvest"
    verbose_name = "Harvesting"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_save, pre_save

        from orchestrator import security  # noqa: F401 - registers netharvest's deployment checks
        from orchestrator.harvest.archive.replay import on_definition_saved
        from orchestrator.harvest.jobs import continuous
        from orchestrator.harvest.models import HarvestDefinition, SeedList

        post_save.connect(on_definition_saved, sender=HarvestDefinition, dispatch_uid="replay-collection")
        # A domain's seed list edited while a continuous harvest of it runs: the crawl hears of it at once.
        pre_save.connect(continuous.seed_list_before_save, sender=SeedList, dispatch_uid="continuous-seeds-before")
        post_save.connect(continuous.seed_list_saved, sender=SeedList, dispatch_uid="continuous-seeds")
