"""Job generation at national scale (issue 15, docs/BENCHMARKS.md "Job generation"):

- ``harvest_jobdomain`` loses its index on ``job_id`` alone: the unique (job, configuration) index starts with
  it and serves the same lookups, and a million-domain snapshot wrote a million entries into both;
- on PostgreSQL, ``harvest_job.spec`` is compressed with LZ4 instead of pglz: a broad-crawl job's spec is 2–7 MB
  of JSON, and compressing it was half the cost of storing it (a server built without LZ4 keeps pglz).
"""

from django.db import migrations, models
import django.db.models.deletion


def spec_lz4(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)")
        if cur.fetchone():
            cur.execute("ALTER TABLE harvest_job ALTER COLUMN spec SET COMPRESSION lz4")


def spec_pglz(apps, schema_editor) -> None:
    # SET COMPRESSION exists from PostgreSQL 14 on (where the forward step found nothing to do, neither here).
    if schema_editor.connection.vendor == "postgresql" and schema_editor.connection.pg_version >= 140000:
        with schema_editor.connection.cursor() as cur:
            cur.execute("ALTER TABLE harvest_job ALTER COLUMN spec SET COMPRESSION DEFAULT")


class Migration(migrations.Migration):

    dependencies = [
        ("harvest", "0015_remove_legacy_revisit_fields"),
    ]

    operations = [
        migrations.AlterField(
            model_name="jobdomain",
            name="job",
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT,
                                    related_name="domains", to="harvest.job"),
        ),
        migrations.RunPython(spec_lz4, spec_pglz),
    ]
