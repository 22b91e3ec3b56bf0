"""The rows a new installation needs: the default crawl template and the two default channels
(ARCHITECTURE.md: "focused" → high priority for selective harvests, "snapshot" → low for broad)."""

from django.db import migrations


def create_defaults(apps, schema_editor):
    CrawlTemplate = apps.get_model("harvest", "CrawlTemplate")
    HarvestChannel = apps.get_model("harvest", "HarvestChannel")
    CrawlTemplate.objects.get_or_create(
        name="default", defaults={"description": "Default template: the registrable domain of each seed, "
                                                 "robots.txt obeyed, Heritrix's politeness defaults."})
    HarvestChannel.objects.get_or_create(
        name="focused", defaults={"priority": "high", "default_for": "selective",
                                  "comments": "Selective harvests; served by high-priority harvesters."})
    HarvestChannel.objects.get_or_create(
        name="snapshot", defaults={"priority": "low", "default_for": "snapshot",
                                   "comments": "Broad (snapshot) harvests; served by low-priority harvesters."})


class Migration(migrations.Migration):
    dependencies = [("harvest", "0001_initial")]
    operations = [migrations.RunPython(create_defaults, migrations.RunPython.noop)]
