"""How a job's spec and its JobDomain rows are stored (issue 15, migration 0019): the spec compressed by
Zstandard in a byte column (read back as the same document, a row migrated from jsonb too), and the guard
that a domain configuration used by a job cannot be deleted, now held by ``jobdomain_unique`` on
(configuration, job) instead of an index of its own."""

from __future__ import annotations

import orjson
import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import ProtectedError

from orchestrator.harvest.jobs import jobgen, specs
from orchestrator.harvest.models import DomainConfiguration, Job, JobDomain
from orchestrator.harvest.models.fields import ZSTD_MAGIC
from tests.orchestrator import factories

pytestmark = pytest.mark.django_db


def _raw_spec(job_id: int) -> bytes:
    with connection.cursor() as cur:
        cur.execute("SELECT spec FROM harvest_job WHERE id = %s", [job_id])
        return bytes(cur.fetchone()[0])


def test_a_generated_spec_is_stored_compressed_and_read_back_whole():
    factories.domain("example.fr")
    factories.domain("example.se")
    definition = factories.snapshot_definition()
    (job_id,) = jobgen.generate_jobs(definition, 1)
    raw = _raw_spec(job_id)
    assert raw[:4] == ZSTD_MAGIC
    job = Job.objects.get(pk=job_id)
    typed = specs.read(job)
    assert job.spec == typed.to_dict()  # the model's field reads the document
    assert orjson.loads(specs.json_text(job_id)) == typed.to_dict()  # the API's text, not parsed on the way
    assert sorted(d.name for d in typed.domains) == ["example.fr", "example.se"]
    assert len(raw) < len(specs.json_text(job_id))


def test_a_spec_written_through_the_model_and_by_specs_store_reads_the_same(viewer):
    job = factories.job(domains=["example.fr"])
    assert _raw_spec(job.pk)[:4] == ZSTD_MAGIC
    typed = specs.read(job).to_dict()
    specs.store(job.pk, specs.read(job))
    stored = Job.objects.get(pk=job.pk)
    assert _raw_spec(job.pk)[:4] == ZSTD_MAGIC
    assert stored.spec == typed and specs.read(stored).to_dict() == typed
    response = viewer.get(f"/jobs/{job.pk}/spec")
    assert response.status_code == 200 and response.json() == typed


def test_a_spec_migrated_from_jsonb_is_read_as_it_is(viewer):
    """Migration 0019 turns each stored jsonb into its text's UTF-8 bytes, uncompressed: read as they are."""
    job = factories.job(domains=["example.fr"])
    document = Job.objects.get(pk=job.pk).spec
    text = json_text_of_jsonb = orjson.dumps(document)
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":  # what the migration's USING clause makes of a jsonb value
            cur.execute("SELECT convert_to(%s::jsonb::text, 'UTF8')", [text.decode()])
            json_text_of_jsonb = bytes(cur.fetchone()[0])
        cur.execute("UPDATE harvest_job SET spec = %s WHERE id = %s", [json_text_of_jsonb, job.pk])
    assert _raw_spec(job.pk)[:1] == b"{"
    assert Job.objects.get(pk=job.pk).spec == document
    assert specs.read(Job.objects.get(pk=job.pk)).to_dict() == specs.read(job).to_dict()
    assert viewer.get(f"/jobs/{job.pk}/spec").json() == document


def test_a_configuration_used_by_a_job_cannot_be_deleted():
    job = factories.job(domains=["example.fr", "example.se"])
    used = JobDomain.objects.filter(job=job).values_list("configuration_id", flat=True)
    config = DomainConfiguration.objects.get(pk=used[0])
    with pytest.raises(ProtectedError):
        config.delete()
    with pytest.raises(IntegrityError), transaction.atomic():  # the database's foreign key, below the ORM
        with connection.cursor() as cur:
            if connection.vendor == "postgresql":
                cur.execute("SET CONSTRAINTS ALL IMMEDIATE")  # Django's foreign keys are checked at commit
            cur.execute("DELETE FROM harvest_domainconfiguration WHERE id = %s", [config.pk])
        if connection.vendor == "sqlite":  # SQLite checks deferred keys only at commit, or when asked
            connection.check_constraints(table_names=["harvest_jobdomain"])
    assert DomainConfiguration.objects.filter(pk=config.pk).exists()
    with pytest.raises(IntegrityError), transaction.atomic():  # (job, configuration) is still unique
        JobDomain.objects.create(job=job, configuration=config, max_objects=-1, max_bytes=-1)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's catalog")
def test_lookups_of_job_domains_by_configuration_and_by_job_have_an_index():
    """The delete guard's lookup (and PostgreSQL's foreign-key checks) by configuration, and a job's rows by
    job, each have an index led by their column, not a scan of a table that grows by a million rows per broad
    crawl: (configuration, job) unique, and a BRIN index on job."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT a.attname, i.relname, am.amname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
            "JOIN pg_am am ON am.oid = i.relam "
            "JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0] "
            "WHERE x.indrelid = 'harvest_jobdomain'::regclass"
        )
        leading = {(column, name, kind) for column, name, kind in cur.fetchall()}
    assert leading == {
        ("id", "harvest_jobdomain_pkey", "btree"),
        ("configuration_id", "jobdomain_unique", "btree"),
        ("job_id", "jobdomain_job", "brin"),
    }
