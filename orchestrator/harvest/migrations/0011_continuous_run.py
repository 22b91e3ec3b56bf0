"""Continuous harvests run (issue 12): the definition's revisit policy settings, fetch budget and WARC
time rule, a ``continuous`` channel of its own (its workers never block selective/snapshot ones), and the
``seeds`` job control (seeds added to / removed from a running continuous job)."""

import django.core.validators
from django.db import migrations, models


def continuous_channel(apps, schema_editor):
    """The channel continuous definitions run on: the one already marked ``default_for="continuous"`` if there
    is one (the constraint ``channel_one_default_per_kind`` allows no second), else ``continuous`` (made if
    missing). Existing continuous definitions move to it: they must not share a channel with selective or
    snapshot harvests (HarvestDefinition.clean)."""
    HarvestChannel = apps.get_model("harvest", "HarvestChannel")
    HarvestDefinition = apps.get_model("harvest", "HarvestDefinition")
    channel = HarvestChannel.objects.filter(default_for="continuous").first()
    if channel is None:
        channel, _ = HarvestChannel.objects.get_or_create(
            name="continuous", defaults={
                "priority": "high", "default_for": "continuous",
                "comments": "Continuous (adaptive-revisit) harvests: one long-lived job per definition; served by "
                            "workers of their own, so they never hold a selective or snapshot harvester."})
        if channel.default_for != "continuous":
            # A channel named "continuous" made by hand for another kind stays that kind's default.
            if channel.default_for:
                channel, _ = HarvestChannel.objects.get_or_create(
                    name="continuous-harvests", defaults={"priority": "high", "default_for": "continuous"})
            else:
                HarvestChannel.objects.filter(pk=channel.pk).update(default_for="continuous")
    HarvestDefinition.objects.filter(kind="continuous").exclude(channel=channel).update(channel=channel)


class Migration(migrations.Migration):

    dependencies = [
        ("harvest", "0010_canonicalisation_source_tags"),
    ]

    operations = [
        migrations.AddField(
            model_name="harvestdefinition",
            name="revisit_settings",
            field=models.JSONField(blank=True, default=dict,
                                   help_text="RevisitSettings (harvester/revisit/policy.py); empty = defaults."),
        ),
        migrations.AddField(
            model_name="harvestdefinition",
            name="fetch_budget_per_s",
            field=models.FloatField(blank=True, null=True,
                                    help_text="Fetches per second the continuous job never exceeds (empty: "
                                              "politeness alone limits it).",
                                    validators=[django.core.validators.MinValueValidator(0.001)]),
        ),
        migrations.AddField(
            model_name="harvestdefinition",
            name="warc_rotate_s",
            field=models.PositiveIntegerField(default=900,
                                              help_text="A continuous job closes its WARC (and hands it to the "
                                                        "indexer chain) at least this often, in seconds.",
                                              validators=[django.core.validators.MinValueValidator(1)]),
        ),
        migrations.AlterField(
            model_name="jobcontrol",
            name="action",
            field=models.CharField(choices=[("stop", "stop"), ("pause", "pause"), ("resume", "resume"),
                                            ("add_trap", "add crawler trap"), ("seeds", "change seeds")],
                                   max_length=10),
        ),
        migrations.RunPython(continuous_channel, migrations.RunPython.noop),
    ]
