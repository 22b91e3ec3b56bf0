"""Indexes for the web UI's domain search (orchestrator.harvest.domainsearch), PostgreSQL only.

Ordered prefix scans (``LIKE 'abc%' ORDER BY name LIMIT 51``) need nothing new: Django already made
``harvest_domain_name_…_like`` (varchar_pattern_ops) for the unique name.

- pg_trgm GIN on the name: infix patterns (``*shop*``).
- partial pg_trgm GIN on crawler traps and comments, only over the rows where they are not empty
  (a few thousand of millions), so they cost almost nothing.

Without the rights to create the pg_trgm extension the trigram indexes are skipped with a notice:
searches still work, infix ones by scan. SQLite gets none of these and scans.
"""

from django.db import migrations

TRIGRAM = [
    "CREATE INDEX IF NOT EXISTS domain_name_trgm ON harvest_domain USING gin (name gin_trgm_ops)",
    "CREATE INDEX IF NOT EXISTS domain_traps_trgm ON harvest_domain USING gin (crawler_traps gin_trgm_ops) "
    "WHERE crawler_traps <> ''",
    "CREATE INDEX IF NOT EXISTS domain_comments_trgm ON harvest_domain USING gin (comments gin_trgm_ops) "
    "WHERE comments <> ''",
]
BACKWARD = ["DROP INDEX IF EXISTS domain_name_trgm",
            "DROP INDEX IF EXISTS domain_traps_trgm", "DROP INDEX IF EXISTS domain_comments_trgm"]


def forward(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")
        if not cur.fetchone():
            cur.execute("SAVEPOINT trgm")
            try:
                cur.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
            except Exception as exc:  # noqa: BLE001 - any refusal means: no trigram indexes
                cur.execute("ROLLBACK TO SAVEPOINT trgm")
                print(f"\n  pg_trgm not available ({exc}); infix domain searches will scan")
                return
        for sql in TRIGRAM:
            cur.execute(sql)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cur:
        for sql in BACKWARD:
            cur.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("harvest", "0002_defaults")]
    operations = [migrations.RunPython(forward, backward)]
