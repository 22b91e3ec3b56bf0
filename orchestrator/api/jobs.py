"""Jobs: the list with filters, one job with its latest progress, control, resubmit, reject, and its files.

Control, resubmit and reject are dispatch's (each a conditional UPDATE; a job in the wrong state → 409
with dispatch's message); a trap regex is checked by the one validator of user patterns (RE2) before
anything is recorded. Files are only ever the job's own rows (ArchiveFile) and the report names the
harvester writes: a path is never built from what the caller sends.
"""

from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path

from django.http import FileResponse, Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.utils.http import content_disposition_header
from ninja import Field, Router, Schema, Status
from ninja.pagination import paginate

from harvester.contracts import ContractError, seed_changes
from harvester.patterns import PatternError, trap
from harvester.reports import REPORT_NAMES
from indexer import objectstore
from orchestrator.api import forms
from orchestrator.api.errors import Invalid
from orchestrator.api.security import role, who
from orchestrator.harvest.jobs import dispatch, jobfiles, specs
from orchestrator.harvest.models import ArchiveFile, HarvestChannel, HarvestDefinition, Job, JobControl
from webui.access import ENGINEER, READ
from webui.views.jobs import JobFilter, progress_of

router = Router(tags=["jobs"])

#: Controls that carry nothing; any other (add_trap, and those added later) passes its argument to dispatch.
NO_ARGUMENT = frozenset({"stop", "pause", "resume"})
#: What ``GET /jobs/{id}/reports/{name}`` serves: the harvester's reports and the crawl log.
JOB_FILES = (*REPORT_NAMES, jobfiles.CRAWL_LOG)


class JobOut(Schema):
    id: int
    harvest: str = Field(alias="harvest.name")
    harvest_id: int
    harvest_run: int
    channel: str = Field(alias="channel.name")
    status: str
    domain_count: int
    expected_objects: int
    expected_bytes: int
    continues: int | None = Field(None, alias="continues_id", description="The failed job this one resubmits.")
    created: datetime
    submitted_at: datetime | None
    started_at: datetime | None
    ended_at: datetime | None
    last_heartbeat: datetime | None
    harvester: str
    error_category: str
    error_detail: str
    rejected_at: datetime | None
    rejected_by: str


class ControlOut(Schema):
    id: int
    action: str
    argument: str
    requested_by: str
    requested_at: datetime
    sent_at: datetime | None
    acknowledged_at: datetime | None


class JobDetail(JobOut):
    progress: dict = Field(
        alias="latest_progress",
        description="The latest Progress heartbeat, with each domain's share of its budget; for a continuous "
        "job, `continuous`: its live figures (fetch rate and budget, visits changed / unchanged / not modified, "
        "validator misses, WARCs closed, estimated freshness, host queue states, the URIs due next).",
    )
    controls: list[ControlOut] = Field(alias="recent_controls")
    continued_by: list[int] = Field(alias="continued_by_ids")


class ControlIn(Schema):
    action: str = Field(description="stop, pause, resume or add_trap (the actions of JobControl.ACTIONS)")
    argument: str = Field("", description="add_trap: an RE2 regex, matched against the whole URI.")


class CopyOut(Schema):
    location: str
    is_replica: bool
    verified_at: datetime | None
    verified_ok: bool


class FileOut(Schema):
    name: str
    kind: str
    size: int
    sha256: str = Field(description="Computed from the bytes at ingest (empty before).")
    harvester_sha256: str = Field(description="As the harvester reported it.")
    index_state: str
    records: int
    error: str
    copies: list[CopyOut]


class ResubmitOut(Schema):
    job: JobOut
    message: str


def _jobs():
    return Job.objects.select_related("harvest", "channel")


def _job(job_id: int) -> Job:
    return get_object_or_404(_jobs(), pk=job_id)


@router.get("/jobs", auth=role(READ), response=list[JobOut], summary="Jobs, newest first, filtered")
@paginate
def list_jobs(
    request,
    status: str | None = None,
    harvest: str | None = None,
    channel: str | None = None,
    created_from: date | None = None,
    created_to: date | None = None,
):
    """``status``: a job status, or REJECTED / RESUBMITTABLE (FAILED, rejected or not); ``harvest`` and
    ``channel`` by name or id; ``created_from``/``created_to``: UTC dates, inclusive."""
    data = {
        "status": status or "",
        "created_from": created_from or "",
        "created_to": created_to or "",
        "harvest": forms.reference(HarvestDefinition, harvest, "harvest", "query") or "",
        "channel": forms.reference(HarvestChannel, channel, "channel", "query") or "",
    }
    form = JobFilter(data)
    if not form.is_valid():
        raise Invalid((["query", field], message) for field, errors in form.errors.items() for message in errors)
    return form.apply(_jobs().order_by("-id"))


@router.get("/jobs/{job_id}", auth=role(READ), response=JobDetail, summary="One job: times, latest progress, controls")
def get_job(request, job_id: int):
    job = _job(job_id)
    job.latest_progress = progress_of(job)
    job.recent_controls = list(job.controls.order_by("-requested_at")[:50])
    job.continued_by_ids = list(job.continued_by.values_list("id", flat=True))
    return job


@router.get(
    "/jobs/{job_id}/spec",
    auth=role(READ),
    response={200: dict},
    summary="The job's frozen JobSpec (what a harvester reads for a job message by reference)",
)
def spec(request, job_id: int):
    """The spec's JSON as stored, sent without parsing it (a broad-crawl job's is several megabytes)."""
    text = specs.json_text(job_id)
    if text is None:
        raise Http404(f"no job {job_id}")
    return HttpResponse(text, content_type="application/json")


@router.post(
    "/jobs/{job_id}/control",
    auth=role(ENGINEER),
    response={202: ControlOut},
    summary="Stop, pause, resume a running job, or add a crawler trap to it",
)
def control(request, job_id: int, payload: ControlIn):
    job = _job(job_id)
    if payload.action not in dict(JobControl.ACTIONS):
        raise Invalid([(["body", "action"], f"choose one of {', '.join(dict(JobControl.ACTIONS))}")])
    argument = payload.argument
    if payload.action == "add_trap":
        try:
            argument = trap(argument, "regex").pattern
        except PatternError as exc:
            raise Invalid([(["body", "argument"], str(exc))]) from None
    elif payload.action == "seeds" and specs.stored(job).kind == "continuous":  # else dispatch refuses (409)
        try:
            seed_changes(argument)
        except ContractError as exc:
            raise Invalid([(["body", "argument"], str(exc))]) from None
    elif payload.action in NO_ARGUMENT and argument:
        raise Invalid([(["body", "argument"], f"{payload.action} takes no argument")])
    try:
        sent = dispatch.send_control(job, payload.action, argument, requested_by=who(request))
    except dispatch.DispatchError:
        raise
    except Exception as exc:  # the broker, as the web UI says it: the request is recorded and shows as not sent
        raise dispatch.BrokerUnavailable(
            f"{payload.action} was recorded but could not be sent to the harvester ({dispatch.broker_reason(exc)})"
        ) from None
    return Status(202, sent)


@router.post(
    "/jobs/{job_id}/resubmit",
    auth=role(ENGINEER),
    response={201: ResubmitOut, 202: ResubmitOut},
    summary="Continue a FAILED job as a new job (202: made, waiting for the broker)",
)
def resubmit(request, job_id: int):
    job = _job(job_id)
    try:
        new = dispatch.resubmit(job, requested_by=who(request))
    except dispatch.BrokerUnavailable as exc:  # committed: the new job stays NEW and beat sends it
        new = _jobs().filter(continues=job).order_by("-id").first()
        if new is None:
            raise
        return Status(
            202,
            {
                "job": new,
                "message": f"job {job.pk} resubmitted as job {new.pk}, which waits for the broker ({exc.reason})",
            },
        )
    return Status(201, {"job": _job(new.pk), "message": f"job {job.pk} resubmitted as job {new.pk} ({new.status})"})


@router.post(
    "/jobs/{job_id}/reject", auth=role(ENGINEER), response=JobOut, summary="Mark a FAILED job as not to be resubmitted"
)
def reject(request, job_id: int):
    dispatch.reject(_job(job_id), requested_by=who(request))
    return _job(job_id)


# -- files ------------------------------------------------------------------------------------------------
@router.get(
    "/jobs/{job_id}/files", auth=role(READ), response=list[FileOut], summary="The job's WARC and metadata WARC files"
)
def list_files(request, job_id: int):
    return ArchiveFile.objects.filter(job=_job(job_id)).prefetch_related("copies").order_by("kind", "name")


def readable_copy(f: ArchiveFile) -> Path | str | None:
    """Where a file can be read now: a verified primary copy, any copy, then the harvester's spool (a file path,
    or an ``s3://`` URL of an object that exists)."""
    candidates = [c.path for c in sorted(f.copies.all(), key=lambda c: (c.is_replica, not c.verified_ok))]
    if f.spool_path:
        candidates.append(f.spool_path)
    for candidate in candidates:
        if objectstore.is_url(candidate):
            try:
                if objectstore.size(candidate) is not None:
                    return candidate
            except Exception:  # the store does not answer: try the next copy
                continue
        elif Path(candidate).is_file():
            return Path(candidate)
    return None


@router.get(
    "/jobs/{job_id}/files/{name}",
    auth=role(READ),
    response={200: bytes},
    summary="Download one of the job's files",
    openapi_extra={"responses": {200: {"content": {"application/octet-stream": {}}}}},
)
def download_file(request, job_id: int, name: str):
    f = get_object_or_404(ArchiveFile.objects.prefetch_related("copies"), job=_job(job_id), name=name)
    path = readable_copy(f)
    if path is None:
        raise Http404(f"{name}: no readable copy (not stored yet, or its storage is not reachable from here)")
    if isinstance(path, str):  # in an object store (often not reachable by the client): streamed through here
        bucket, key = objectstore.split(path)
        body = objectstore.client().get_object(Bucket=bucket, Key=key)["Body"]
        response = StreamingHttpResponse(body.iter_chunks(1 << 20), content_type="application/warc")
        response["Content-Disposition"] = content_disposition_header(True, f.name)
        response["Content-Length"] = str(f.size)
    else:
        response = FileResponse(open(path, "rb"), as_attachment=True, filename=f.name, content_type="application/warc")
    # check the download against it: computed at ingest, or the harvester's before that
    response["X-Netharvest-Sha256"] = f.sha256 or f.harvester_sha256
    return response


@router.get(
    "/jobs/{job_id}/reports/{name}",
    auth=role(READ),
    response={200: str},
    summary="A report or the crawl log, as text",
    openapi_extra={"responses": {200: {"content": {"text/plain": {}}}}},
)
def report(request, job_id: int, name: str):
    """From the spool while the job's files are there, then from its metadata WARC; ``name`` is one of the
    harvester's reports (crawl-report.txt, hosts-report.txt, …) or crawl.log."""
    job = _job(job_id)
    if name not in JOB_FILES:
        raise Http404(f"no job file called {name!r}; there are: {', '.join(JOB_FILES)}")
    try:
        source = jobfiles.locate(job, name)
    except jobfiles.NotAvailable as exc:
        raise Http404(jobfiles.reason(exc)) from None
    response = StreamingHttpResponse(_stream(job, name), content_type="text/plain; charset=utf-8")
    response["X-Netharvest-Source"] = str(source)
    return response


def _stream(job: Job, name: str) -> Iterator[bytes]:
    with jobfiles.open_binary(job, name) as (_, stream):
        while chunk := stream.read(256 * 1024):
            yield chunk
