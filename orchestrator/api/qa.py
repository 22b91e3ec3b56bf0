"""QA figures (the BnF's NAS_qual, orchestrator/harvest/qa/stats.py): per job, per harvest run, per year.

The same sums the /qa/ pages show: MIME types and status codes from the harvester's reports, TLDs,
domain-size buckets, stop reasons and top domains rolled up from HarvestInfo, with what they are based on.
"""

from datetime import datetime

from django.shortcuts import get_object_or_404
from ninja import Field, Router, Schema

from orchestrator.api.security import role
from orchestrator.harvest.models import HarvestDefinition, Job
from orchestrator.harvest.qa import stats
from webui.access import READ

router = Router(tags=["qa"])


class FiguresOut(Schema):
    label: str
    jobs: int
    jobs_without_reports: int = Field(description="Jobs whose MIME and status reports could not be read.")
    domains: int
    seeds: int
    objects: int
    bytes: int = Field(description="Content bytes (1 KB = 1024 B).")
    mime_types: dict[str, list[int]] = Field(description="MIME type → [URLs, bytes].")
    mime_categories: dict[str, list[int]] = Field(description="text, image, application, audio, video, other.")
    status_codes: dict[str, int] = Field(description="Status code (crawl.log's, negative ones included) → URLs.")
    tlds: dict[str, list[int]] = Field(description="TLD → [domains, objects, bytes].")
    size_buckets: dict[str, int] = Field(description="Domains by objects harvested.")
    stop_reasons: dict[str, int]
    kinds: dict[str, list[int]] = Field(
        description="selective / broad (snapshot) / continuous → [jobs, objects, bytes, seeds].",
        alias="selective_vs_broad",
    )
    top_domains: list[tuple[str, int, int]] = Field(description="[domain, objects, bytes], largest first.")
    top_domains_note: str
    computed_at: datetime
    pending_jobs: int = Field(description="Jobs recorded since these sums were made (served from the cache).")


class RunsOut(Schema):
    run: int = Field(alias="harvest_run")
    jobs: int
    objects: int | None
    bytes: int | None


@router.get("/jobs/{job_id}/stats", auth=role(READ), response=FiguresOut, summary="QA figures of one job")
def job_stats(request, job_id: int):
    return stats.job_figures(get_object_or_404(Job, pk=job_id))


@router.get(
    "/definitions/{definition_id}/runs",
    auth=role(READ),
    response=list[RunsOut],
    summary="A definition's runs with figures",
)
def runs(request, definition_id: int):
    return stats.runs_of(get_object_or_404(HarvestDefinition, pk=definition_id))


@router.get(
    "/definitions/{definition_id}/runs/{run}/stats",
    auth=role(READ),
    response=FiguresOut,
    summary="QA figures of one harvest run",
)
def run_stats(request, definition_id: int, run: int):
    return stats.run_figures(get_object_or_404(HarvestDefinition, pk=definition_id), run)


@router.get(
    "/qa/years/{year}",
    auth=role(READ),
    response=FiguresOut,
    summary="QA figures of one year (jobs that ended in it, UTC)",
)
def year_stats(request, year: int):
    return stats.year_figures(year)
