"""A job's frozen JobSpec in its row: written from a typed :class:`~harvester.contracts.JobSpec`, read back typed.

Every maker of a job stores its spec here: generation (:mod:`.jobgen`), a resubmission (:mod:`.dispatch`), a
continuous definition's next job (:mod:`.continuous`) and a patch crawl (:mod:`.patch`). A job made from
another job's spec reads that spec typed (:func:`read`, the contract's whole validation), changes fields with
:func:`dataclasses.replace` and stores the result checked (:meth:`JobSpec.check`): never a dict patched by
hand, so a field renamed in the contract cannot be missed in one of them (docs/DESIGN.md, "Where things are").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

import orjson
from django.db import connection
from django.db.models import Q

from harvester.contracts import DomainRows, JobSpec
from orchestrator.harvest.models import ArchiveFile, Job
from orchestrator.harvest.models.archive import IndexState
from orchestrator.harvest.models.fields import spec_json, spec_param


def _rows(value: Any) -> Any:
    """orjson's hook for what it does not know: a generated spec's domain rows are written as they are."""
    if isinstance(value, DomainRows):
        return value.rows
    raise TypeError(f"{type(value).__name__} is not part of a JobSpec")


def dumps(spec: JobSpec) -> bytes:
    """The spec's JSON (UTF-8), by orjson (dataclasses natively): a broad crawl's 250 MB of specs took seconds
    of generation's Python time in the standard library's encoder. The same document as ``spec.to_dict()``."""
    return orjson.dumps(spec, default=_rows)


#: The one statement that writes a job's spec and its domain count (also run by generation's writer thread,
#: :class:`~orchestrator.harvest.jobs.jobgen.JobWriter`, after its JobDomain rows); parameters :func:`store_params`.
STORE = "UPDATE harvest_job SET spec = %s, domain_count = %s WHERE id = %s"


def store_params(job_id: int, document: bytes, domain_count: int) -> list[Any]:
    """:data:`STORE`'s parameters for a spec's JSON bytes (compressed here: :func:`stored_form`)."""
    return [stored_form(document), domain_count, job_id]


def store(job_id: int, spec: JobSpec) -> None:
    """Write ``spec`` (and its domain count) into job ``job_id``'s row; the job's id must be the spec's."""
    if spec.job_id != job_id:
        raise ValueError(f"the JobSpec of job {spec.job_id} cannot be stored in job {job_id}")
    with connection.cursor() as cur:
        cur.execute(STORE, store_params(job_id, dumps(spec), len(spec.domains)))


def stored_form(document: bytes) -> Any:
    """A spec's JSON bytes as a statement's parameter for the ``spec`` column: compressed by Zstandard
    (:class:`~orchestrator.harvest.models.fields.SpecField`; the compressor releases the GIL)."""
    return spec_param(document, connection)


def json_text(job_id: int) -> bytes | None:
    """Job ``job_id``'s spec as JSON text (UTF-8), without parsing it (a broad-crawl job's is megabytes): what
    the API serves to a harvester reading a job by reference. None: no such job."""
    with connection.cursor() as cur:
        cur.execute("SELECT spec FROM harvest_job WHERE id = %s", [job_id])
        row = cur.fetchone()
    return None if row is None else spec_json(row[0])


def read(job: Job) -> JobSpec:
    """The job's stored spec, typed and validated by the contract."""
    return JobSpec.from_dict(job.spec)


def domain_seeds(job_ids: Iterable[int], domain: str) -> dict[int, list[str]]:
    """Job id → the seeds its stored spec gave ``domain`` (a job whose spec does not name it is left out).

    For harvest history recorded before :attr:`HarvestInfo.seeds` kept them. Read one spec at a time and
    dropped (a snapshot job's lists 10,000 domains): the specs are compressed JSON that the database does
    not look into (:class:`~orchestrator.harvest.models.fields.SpecField`)."""
    found: dict[int, list[str]] = {}
    rows = Job.objects.filter(pk__in=list(job_ids)).values_list("pk", "spec").iterator(chunk_size=1)
    for job_id, document in rows:
        seeds = Stored(document or {}).domain_seeds(domain)
        if seeds is not None:
            found[job_id] = seeds
    return found


@dataclasses.dataclass(frozen=True)
class Stored:
    """What the pages, commands and controls read of a job's stored spec: typed, from the stored document
    without validating it again (:func:`store` wrote it checked). Polling a broad-crawl job's page must not
    re-check its ten thousand domains' seeds and traps each time, as :func:`read` would; and no view knows
    the document's layout but this."""

    document: Mapping[str, Any]

    @property
    def kind(self) -> str:
        return str(self.document.get("kind", ""))

    def _domains(self) -> list[Mapping[str, Any]]:
        return [d for d in self.document.get("domains") or [] if isinstance(d, Mapping)]

    @property
    def seeds(self) -> list[str]:
        """Every domain's seeds, in the spec's order."""
        return [seed for d in self._domains() for seed in d.get("seeds") or []]

    def domain_seeds(self, name: str) -> list[str] | None:
        """The seeds the spec gave domain ``name`` (its first configuration's); None: the spec does not name it."""
        return next((seeds for (domain, _), seeds in self.seeds_by_configuration().items() if domain == name), None)

    def seeds_by_configuration(self) -> dict[tuple[str, str], list[str]]:
        """(domain name, configuration name) → the seeds the spec gave that configuration."""
        return {
            (str(d.get("name")), str(d.get("configuration"))): [str(s) for s in d.get("seeds") or []]
            for d in self._domains()
        }

    @property
    def budgets(self) -> dict[str, tuple[int, int]]:
        """Domain name → (max objects, max bytes); -1: unlimited."""
        return {str(d.get("name")): (d.get("max_objects", -1), d.get("max_bytes", -1)) for d in self._domains()}


def stored(job: Job) -> Stored:
    """The job's stored spec as the pages read it (:class:`Stored`)."""
    return Stored(job.spec or {})


def continuation(previous: Job, **changes: Any) -> dict[str, Any]:
    """The JobSpec fields of a job that carries on from ``previous`` (a resubmission, a continuous definition's
    next job): its id; its files the archive has whose spool copy may still be there, which the harvester's
    take-over leaves in place (:attr:`harvester.contracts.JobSpec.continues_files`): all but those CLEANED from
    the spool (a delivered file's spool copy goes only when the harvester sweeps its receipt: kept); and
    ``continues_done`` said each time, never inherited from the spec it is derived from (a FAILED job that
    had continued a DONE one is resubmitted as FAILED)."""
    gone = Q(index_state=IndexState.CLEANED) & ~Q(spool_path__contains="://")
    names = ArchiveFile.objects.filter(job=previous).exclude(gone).values_list("name", flat=True)
    return {"continues_job": previous.pk, "continues_files": tuple(sorted(names)), "continues_done": False, **changes}


def derive(source: Job | JobSpec, **changes: Any) -> JobSpec:
    """A job's spec (or one read already) with ``changes`` (field → typed value, each checked by the caller:
    a new seed with :func:`~harvester.contracts.validate_seed`), the whole checked; the caller stores it."""
    spec = source if isinstance(source, JobSpec) else read(source)
    return dataclasses.replace(spec, **changes).check()
