"""JobStats.seeds: how many seeds each job was given, for the seed-source share (selective vs broad) of
the QA pages; existing rows are filled from their jobs' frozen JobSpecs."""

from django.db import migrations, models


def fill_seeds(apps, schema_editor):
    JobStats = apps.get_model("harvest", "JobStats")
    batch = []
    for job_id, spec in JobStats.objects.values_list("job_id", "job__spec").iterator(chunk_size=200):
        domains = (spec or {}).get("domains", []) if isinstance(spec, dict) else []
        seeds = sum(len(d.get("seeds") or []) for d in domains if isinstance(d, dict))
        batch.append(JobStats(job_id=job_id, seeds=seeds))
        if len(batch) >= 1000:
            JobStats.objects.bulk_update(batch, ["seeds"])
            batch = []
    JobStats.objects.bulk_update(batch, ["seeds"])


class Migration(migrations.Migration):
    dependencies = [("harvest", "0005_merge_chain_jobs_webui")]

    operations = [
        migrations.AddField(
            model_name="jobstats",
            name="seeds",
            field=models.PositiveIntegerField(default=0, help_text="Seeds in the job's frozen JobSpec: the seed-source "
                                                                   "share of seeds 001, 3.4.3 (selective vs broad)."),
        ),
        migrations.RunPython(fill_seeds, migrations.RunPython.noop),
    ]
