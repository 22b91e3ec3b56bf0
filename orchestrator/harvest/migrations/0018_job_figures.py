"""``Job.figures``: the QA figures a JobResult sends as data (issue 16, "Progress and QA figures").

Null for every job recorded before (and for a result from a harvester of the previous version): the QA
statistics of those are read from the harvester's text reports, as before.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("harvest", "0001_squashed_0017")]

    operations = [
        migrations.AddField(
            model_name="job",
            name="figures",
            field=models.JSONField(
                blank=True,
                help_text="The QA figures its JobResult sent as data (MIME types, status codes); empty for a job "
                "whose harvester did not send them (before issue 16): its statistics are read from its text "
                "reports.",
                null=True,
            ),
        ),
    ]
