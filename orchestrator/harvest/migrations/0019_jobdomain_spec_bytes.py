"""Job generation's PostgreSQL work (issue 15, docs/BENCHMARKS.md "Job generation without jsonb"):

- ``Job.spec`` is stored as Zstandard-compressed JSON in a ``bytea`` column with STORAGE EXTERNAL
  (:class:`~orchestrator.harvest.models.fields.SpecField`) instead of ``jsonb``: PostgreSQL no longer parses a
  broad crawl's 250 MB of specs nor compresses them again. Existing rows become their JSON text's UTF-8 bytes
  (``jsonb``'s own text form), which the field reads as they are: no row is rewritten in Python. Backwards,
  compressed rows are decompressed in Python first, then the column is ``jsonb`` again (with LZ4, as 0017 made it).
- JobDomain keeps two B-trees instead of three: ``jobdomain_unique`` becomes (configuration, job), which serves
  the lookups by configuration (PROTECT on a DomainConfiguration's delete, and PostgreSQL's foreign-key check)
  that the index on ``configuration_id`` alone served; the lookups by job (a job's page, the foreign-key check
  when a job is deleted) use a BRIN index on ``job_id`` on PostgreSQL (a job's rows are written together, so
  its pages are together: the index is a few kB and nearly free to maintain), a B-tree on other databases.
"""

import django.db.models.deletion
from django.db import migrations, models

import orchestrator.harvest.models.fields

SPEC_HELP = "The frozen JobSpec sent to the harvester (Zstandard-compressed JSON)."
BRIN = "jobdomain_job"  # BRIN on PostgreSQL, a B-tree elsewhere


def _spec_fields(Job):
    old = Job._meta.get_field("spec")
    new = orchestrator.harvest.models.fields.SpecField(help_text=SPEC_HELP)
    new.set_attributes_from_name("spec")
    new.model = Job
    return old, new


def spec_to_bytes(apps, schema_editor) -> None:
    """jsonb → bytea of its JSON text (PostgreSQL); elsewhere the table is rebuilt by Django with the text kept."""
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        Job = apps.get_model("harvest", "Job")
        old, new = _spec_fields(Job)
        schema_editor.alter_field(Job, old, new)
        return
    with connection.cursor() as cur:
        cur.execute("ALTER TABLE harvest_job ALTER COLUMN spec TYPE bytea USING convert_to(spec::text, 'UTF8')")
        cur.execute("ALTER TABLE harvest_job ALTER COLUMN spec SET STORAGE EXTERNAL")


def spec_to_jsonb(apps, schema_editor) -> None:
    """Backwards: every compressed spec decompressed (in Python, one row at a time), then the column is jsonb."""
    from orchestrator.harvest.models.fields import ZSTD_MAGIC, spec_json

    connection = schema_editor.connection
    Job = apps.get_model("harvest", "Job")
    with connection.cursor() as cur:
        cur.execute("SELECT id FROM harvest_job ORDER BY id")
        ids = [row[0] for row in cur.fetchall()]
        for job_id in ids:
            cur.execute("SELECT spec FROM harvest_job WHERE id = %s", [job_id])
            stored = cur.fetchone()[0]
            if stored is not None and not isinstance(stored, str) and bytes(stored[:4]) == ZSTD_MAGIC:
                text = spec_json(stored)
                value = text if connection.vendor == "postgresql" else text.decode()
                cur.execute("UPDATE harvest_job SET spec = %s WHERE id = %s", [value, job_id])
            elif connection.vendor != "postgresql" and isinstance(stored, bytes):
                cur.execute("UPDATE harvest_job SET spec = %s WHERE id = %s", [stored.decode(), job_id])
    if connection.vendor != "postgresql":
        old, new = _spec_fields(Job)  # the state here is the one before this migration (spec a JSONField)
        schema_editor.alter_field(Job, new, old)
        return
    with connection.cursor() as cur:
        cur.execute("ALTER TABLE harvest_job ALTER COLUMN spec SET STORAGE EXTENDED")
        cur.execute("ALTER TABLE harvest_job ALTER COLUMN spec TYPE jsonb USING convert_from(spec, 'UTF8')::jsonb")
        cur.execute("SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)")
        if cur.fetchone():
            cur.execute("ALTER TABLE harvest_job ALTER COLUMN spec SET COMPRESSION lz4")


def job_index(apps, schema_editor) -> None:
    kind = "USING brin (job_id) WITH (autosummarize = on)" if schema_editor.connection.vendor == "postgresql" else "(job_id)"
    schema_editor.execute(f"CREATE INDEX {BRIN} ON harvest_jobdomain {kind}")


def drop_job_index(apps, schema_editor) -> None:
    schema_editor.execute(f"DROP INDEX {BRIN}")


class Migration(migrations.Migration):
    dependencies = [("harvest", "0018_job_figures")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="job",
                    name="spec",
                    field=orchestrator.harvest.models.fields.SpecField(help_text=SPEC_HELP),
                ),
            ],
            database_operations=[migrations.RunPython(spec_to_bytes, spec_to_jsonb)],
        ),
        migrations.RemoveConstraint(model_name="jobdomain", name="jobdomain_unique"),
        migrations.AddConstraint(
            model_name="jobdomain",
            constraint=models.UniqueConstraint(fields=("configuration", "job"), name="jobdomain_unique"),
        ),
        migrations.AlterField(
            model_name="jobdomain",
            name="configuration",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="harvest.domainconfiguration",
            ),
        ),
        migrations.RunPython(job_index, drop_job_index),
    ]
