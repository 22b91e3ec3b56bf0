"""An index on Job (status, ended_at) for the dashboard's recently finished and failed jobs (issue 13)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("harvest", "0012_progress_samples"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="job",
            index=models.Index(fields=["status", "ended_at"], name="harvest_job_status_ended"),
        ),
    ]
