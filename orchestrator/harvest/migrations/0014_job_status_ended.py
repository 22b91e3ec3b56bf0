"""An index on Job (status, ended_at) for the dashboard's recently finished and failed jobs (issue 13).

Depends on 0015 only because this branch carries h12ui's 0015 (both were to depend on 0010): the lead
re-chains the numbers at merge."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("harvest", "0015_progress_samples"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="job",
            index=models.Index(fields=["status", "ended_at"], name="harvest_job_status_ended"),
        ),
    ]
