"""The first model of continuous harvests' revisit settings (six fields, never read by a crawl) gives way to
``revisit_settings`` (migration 0011, harvester/revisit/policy.py's RevisitSettings), the one place they live."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("harvest", "0014_page_qa"),
    ]

    operations = [
        migrations.RemoveField(model_name="harvestdefinition", name=name)
        for name in ("revisit_initial_wait_s", "revisit_min_wait_s", "revisit_max_wait_s", "revisit_changed_factor",
                     "revisit_unchanged_factor", "revisit_strip_regexes")
    ]
