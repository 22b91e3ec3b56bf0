"""QA statistics after the BnF's NAS_qual (shared/seeds/001…, 3.4): per job, per harvest run, per year.

MIME types, HTTP status codes, TLD distribution, top domains, domain-size buckets and the selective vs
broad share, with run-to-run and year-to-year comparison and CSV export.

Where each figure comes from, and why it scales:

* MIME types and status codes come with the JobResult, as data (``JobResult.figures``, kept in
  ``Job.figures`` by intake); its text reports (mimetype-report.txt, responsecode-report.txt) say the same
  for people and other tools. A job whose harvester did not send them (recorded before issue 16, or by a
  harvester of the previous version during an upgrade) has them parsed from those reports instead, from
  the spool or the metadata WARC (:mod:`orchestrator.harvest.jobs.jobfiles`). Either way they are read
  once per job, at result intake (or by ``netharvest job-stats`` later), and kept in a :class:`JobStats`
  row: parsing on demand would read every metadata WARC of a year for each page view.
* TLDs, size buckets, stop reasons, totals and the job's largest domains (:data:`TOP_KEPT` by bytes and
  by objects) are rolled up from HarvestInfo into the same row, so run and year pages sum a few thousand
  rows instead of grouping millions of HarvestInfo rows (2 s per year shown on 400,000 rows, measured).
* Top domains of a run or year are the per-job lists summed. Exact whenever each job's list is complete
  (jobs of at most TOP_KEPT domains: every selective job in practice) or a domain is harvested by one job
  of the scope (a snapshot run splits its domains between jobs). A domain spread over several large jobs
  counts only the jobs in whose list it is; :attr:`Figures.top_domains_note` says when that can happen.

Counting rules: "objects" and "bytes" are the harvester's per-domain figures (content size, 1 KB =
1024 B). A domain harvested by two jobs counts twice in a run or year's size buckets and TLD domain
counts (per domain harvest, as NAS_qual counts per job). MIME and status counts are per fetched URI.
"""

from __future__ import annotations

import heapq
import io
import ipaddress
import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Max, Sum
from django.utils import timezone

from harvester.contracts import CrawlFigures
from orchestrator.harvest import csvsafe
from orchestrator.harvest.jobs import jobfiles, specs
from orchestrator.harvest.models import HarvestDefinition, HarvestInfo, Job, JobStats

log = logging.getLogger(__name__)

#: Domain-size buckets by objects harvested; the BnF reports "< 10", "10–10,000" and "> 10,000".
SIZE_BUCKETS: tuple[tuple[int, str], ...] = (
    (0, "0"),
    (1, "1–9"),
    (10, "10–99"),
    (100, "100–999"),
    (1000, "1,000–9,999"),
    (10_000, "10,000+"),
)
BUCKET_LABELS = tuple(label for _, label in SIZE_BUCKETS)
#: MIME categories as the BnF groups them (text, image, application, audio, video, other).
MIME_CATEGORIES = ("text", "image", "application", "audio", "video")
TOP_DOMAINS = 20
#: Largest domains kept per job (by bytes and by objects).
TOP_KEPT = 100
#: How long summed figures stay in the cache at most.
FIGURES_CACHE_S = 24 * 3600
#: Sums younger than this are served even if jobs were recorded since (the page says how many).
FIGURES_STALE_S = 600


def size_bucket(objects: int) -> str:
    label = SIZE_BUCKETS[0][1]
    for low, name in SIZE_BUCKETS:
        if objects >= low:
            label = name
    return label


def tld_of(domain: str) -> str:
    """The top-level domain of a domain name; IP addresses are grouped as "(IP address)"."""
    name = domain.strip().rstrip(".").lower()
    try:
        ipaddress.ip_address(name.strip("[]"))
        return "(IP address)"
    except ValueError:
        pass
    return name.rsplit(".", 1)[-1] if "." in name else "(no TLD)"


def mime_category(mime: str) -> str:
    top = mime.split("/", 1)[0].strip().lower()
    return top if top in MIME_CATEGORIES else "other"


# -- reading the harvester's reports --------------------------------------------------------------
def parse_mimetype_report(text: str) -> dict[str, list[int]]:
    """mimetype-report.txt (``[#urls] [#bytes] [mime-types]``) → ``{mime: [urls, bytes]}``."""
    out: dict[str, list[int]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("["):
            continue
        parts = line.split(None, 2)
        if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit():
            raise ValueError(f"mimetype-report.txt line {n}: expected '<urls> <bytes> <mime>', got {line!r}")
        slot = out.setdefault(parts[2].strip(), [0, 0])
        slot[0] += int(parts[0])
        slot[1] += int(parts[1])
    return out


def parse_responsecode_report(text: str) -> dict[str, int]:
    """responsecode-report.txt (``[#urls] [rescode]``) → ``{code: urls}``."""
    out: Counter[str] = Counter()
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("["):
            continue
        parts = line.split()
        if len(parts) != 2 or not parts[0].isdigit() or not parts[1].lstrip("-").isdigit():
            raise ValueError(f"responsecode-report.txt line {n}: expected '<urls> <code>', got {line!r}")
        out[parts[1]] += int(parts[0])
    return dict(out)


# -- per job, at intake ----------------------------------------------------------------------------
def record_job_stats(job: Job) -> JobStats:
    """Compute (or recompute) a finished job's JobStats row. Missing reports are not an error: the row
    says why in ``reports_error`` and the MIME/status figures stay empty for that job."""
    job = Job.objects.select_related("harvest").get(pk=job.pk)
    tlds: dict[str, list[int]] = {}
    buckets: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    domains = objects = nbytes = 0
    rows = HarvestInfo.objects.filter(job=job).values_list(
        "domain__name", "objects_count", "bytes_count", "stop_reason"
    )
    by_bytes: list[tuple[int, str, int]] = []  # min-heaps of the largest so far
    by_objects: list[tuple[int, str, int]] = []
    for name, n_objects, n_bytes, reason in rows.iterator(chunk_size=5000):
        for heap, key, other in ((by_bytes, n_bytes, n_objects), (by_objects, n_objects, n_bytes)):
            if len(heap) < TOP_KEPT:
                heapq.heappush(heap, (key, name, other))
            elif (key, name) > heap[0][:2]:
                heapq.heapreplace(heap, (key, name, other))
        domains += 1
        objects += n_objects
        nbytes += n_bytes
        slot = tlds.setdefault(tld_of(name), [0, 0, 0])
        slot[0] += 1
        slot[1] += n_objects
        slot[2] += n_bytes
        buckets[size_bucket(n_objects)] += 1
        reasons[reason] += 1
    mimes, codes, sources, errors = _figures(job)
    top = {name: (b, o) for b, name, o in by_bytes} | {name: (b, o) for o, name, b in by_objects}
    top_domains = sorted(([name, o, b] for name, (b, o) in top.items()), key=lambda r: (-r[2], -r[1], r[0]))
    seeds = len(specs.stored(job).seeds)
    when = job.ended_at or job.created
    stats, _ = JobStats.objects.update_or_create(
        job=job,
        defaults=dict(
            harvest_id=job.harvest_id,
            harvest_run=job.harvest_run,
            kind=job.harvest.kind,
            year=when.year,
            domains=domains,
            seeds=seeds,
            objects_count=objects,
            bytes_count=nbytes,
            mime_types=mimes,
            status_codes=codes,
            tlds=tlds,
            size_buckets=dict(buckets),
            stop_reasons=dict(reasons),
            top_domains=top_domains,
            reports_source="; ".join(sources),
            reports_error="; ".join(errors),
            computed_at=timezone.now(),
        ),
    )
    if errors:
        log.warning("statistics of job %s without some reports: %s", job.pk, "; ".join(errors))
    return stats


def _figures(job: Job) -> tuple[dict[str, list[int]], dict[str, int], list[str], list[str]]:
    """The job's MIME types and status codes, where they come from, and what could not be read.

    From its JobResult's data (``Job.figures``) when its harvester sent them; else (a job recorded before
    issue 16, or by a harvester of the previous version) parsed from its text reports, wherever they are."""
    if job.figures is not None:
        figures = CrawlFigures.from_dict(job.figures)
        return figures.mime_types, figures.status_codes, ["JobResult"], []
    mimes: dict[str, list[int]] = {}
    codes: dict[str, int] = {}
    sources: list[str] = []
    errors: list[str] = []
    for name, parse, target in (
        ("mimetype-report.txt", parse_mimetype_report, "mimes"),
        ("responsecode-report.txt", parse_responsecode_report, "codes"),
    ):
        try:
            source, text, cut = jobfiles.read_text(job, name, limit=64 * 1024 * 1024)
            if cut:
                raise ValueError(f"{name} is larger than 64 MB")
            parsed = parse(text)
        except (jobfiles.NotAvailable, OSError, ValueError) as exc:
            errors.append(jobfiles.reason(exc))
            continue
        sources.append(f"{name}: {source}")
        if target == "mimes":
            mimes = parsed  # type: ignore[assignment]
        else:
            codes = parsed  # type: ignore[assignment]
    return mimes, codes, sources, errors


def record_job_stats_quietly(job: Job) -> JobStats | None:
    """For result intake: statistics must never make a good JobResult fail."""
    try:
        return record_job_stats(job)
    except Exception:
        log.exception("could not compute the statistics of job %s", job.pk)
        return None


# -- aggregation ----------------------------------------------------------------------------------
@dataclass
class Figures:
    """Summed statistics of a set of jobs, and what they are based on."""

    label: str
    jobs: int = 0
    jobs_without_reports: int = 0
    domains: int = 0
    objects: int = 0
    bytes: int = 0
    mime_types: dict[str, list[int]] = field(default_factory=dict)
    status_codes: dict[str, int] = field(default_factory=dict)
    tlds: dict[str, list[int]] = field(default_factory=dict)
    size_buckets: dict[str, int] = field(default_factory=dict)
    stop_reasons: dict[str, int] = field(default_factory=dict)
    seeds: int = 0
    kinds: dict[str, list[int]] = field(default_factory=dict)  # kind -> [jobs, objects, bytes, seeds]
    top_domains: list[tuple[str, int, int]] = field(default_factory=list)  # (domain, objects, bytes)
    #: Set when a top-domain total may be under-counted (see the module docstring), else "".
    top_domains_note: str = ""
    computed_at: datetime = field(default_factory=timezone.now)
    #: Set by :func:`cached` when serving sums that miss some jobs: how many (-1: some were recomputed).
    pending_jobs: int = 0

    @property
    def mime_categories(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for mime, (urls, nbytes) in self.mime_types.items():
            slot = out.setdefault(mime_category(mime), [0, 0])
            slot[0] += urls
            slot[1] += nbytes
        return out

    @property
    def selective_vs_broad(self) -> dict[str, list[int]]:
        """objects and bytes by kind, with snapshot called "broad" as curators say."""
        names = {"snapshot": "broad (snapshot)", "selective": "selective", "continuous": "continuous"}
        return {names.get(k, k): v for k, v in self.kinds.items()}


#: The scopes a page may ask for, and their columns in harvest_jobstats.
SCOPES = {"job": "job_id", "harvest": "harvest_id", "harvest_run": "harvest_run", "year": "year"}


def aggregate(label: str, **scope: Any) -> Figures:
    """Sum the JobStats rows of a scope (``job=``, ``harvest=`` + ``harvest_run=``, ``year=``) in the database.

    The JSON figures are summed by SQL (``jsonb_each`` on PostgreSQL, ``json_each`` on the embedded
    SQLite): decoding each row's JSON in Python cost 0.4 ms per job, i.e. seconds for a year of jobs.
    """
    unknown = set(scope) - set(SCOPES)
    if unknown or not scope:
        raise ValueError(f"scope must be some of {', '.join(SCOPES)}; got {', '.join(sorted(scope)) or 'none'}")
    where = " AND ".join(f"s.{SCOPES[k]} = %s" for k in scope)
    params = [getattr(v, "pk", v) for v in scope.values()]
    fig = Figures(label=label)
    rows = JobStats.objects.filter(**scope)
    for r in (
        rows.values("kind")
        .annotate(
            jobs=Count("job"),
            domains=Sum("domains"),
            objects=Sum("objects_count"),
            bytes=Sum("bytes_count"),
            seeds=Sum("seeds"),
        )
        .order_by("kind")
    ):
        fig.kinds[r["kind"]] = [r["jobs"], r["objects"] or 0, r["bytes"] or 0, r["seeds"] or 0]
        fig.seeds += r["seeds"] or 0
        fig.jobs += r["jobs"]
        fig.domains += r["domains"] or 0
        fig.objects += r["objects"] or 0
        fig.bytes += r["bytes"] or 0
    if not fig.jobs:
        fig.size_buckets = dict.fromkeys(BUCKET_LABELS, 0)
        return fig
    fig.jobs_without_reports = rows.exclude(reports_error="").count()
    mimes = _sum_json(where, params, "mime_types", 2)
    fig.mime_types = dict(sorted(mimes.items(), key=lambda kv: (-kv[1][0], kv[0])))
    codes = _sum_json(where, params, "status_codes", 0)
    fig.status_codes = dict(sorted(codes.items(), key=lambda kv: (-kv[1], kv[0])))
    tlds = _sum_json(where, params, "tlds", 3)
    fig.tlds = dict(sorted(tlds.items(), key=lambda kv: (-kv[1][1], kv[0])))
    buckets = _sum_json(where, params, "size_buckets", 0)
    fig.size_buckets = {label: buckets.get(label, 0) for label in BUCKET_LABELS}
    reasons = _sum_json(where, params, "stop_reasons", 0)
    fig.stop_reasons = dict(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))
    fig.top_domains, cut_jobs = _top_domains(where, params)
    if cut_jobs and fig.jobs > 1:
        fig.top_domains_note = (
            f"{cut_jobs} of these jobs had more than {TOP_KEPT} domains: top domains are summed "
            f"from each job's {TOP_KEPT} largest, so a domain harvested by several jobs may be "
            "under-counted"
        )
    return fig


def _postgres() -> bool:
    return connection.vendor == "postgresql"


def _sum_json(where: str, params: list[Any], column: str, width: int) -> dict[str, Any]:
    """``{key: sum}`` (``width`` 0: the values are numbers) or ``{key: [sum, …]}`` (values are arrays of
    ``width`` numbers) over the JSON objects in ``column`` of the scope's rows."""
    if _postgres():
        each, item = f"CROSS JOIN LATERAL jsonb_each(s.{column}) e", "(e.value->>{i})::bigint"
        scalar = "(e.value #>> '{}')::bigint"
    else:
        each, item, scalar = f", json_each(s.{column}) e", "json_extract(e.value, '$[{i}]')", "e.value"
    sums = ", ".join(f"SUM({item.format(i=i)})" for i in range(width)) if width else f"SUM({scalar})"
    sql = f"SELECT e.key, {sums} FROM harvest_jobstats s {each} WHERE {where} GROUP BY e.key"
    with connection.cursor() as cur:
        cur.execute(sql, params)
        return {
            key: (int(values[0] or 0) if not width else [int(v or 0) for v in values])
            for key, *values in cur.fetchall()
        }


def _top_domains(where: str, params: list[Any]) -> tuple[list[tuple[str, int, int]], int]:
    """The scope's largest domains by bytes and by objects (TOP_DOMAINS each), summed over the jobs' lists;
    and how many jobs' lists were cut (more than TOP_KEPT domains)."""
    if _postgres():
        each = "CROSS JOIN LATERAL jsonb_array_elements(s.top_domains) t"
        name, objects, nbytes = "t->>0", "(t->>1)::bigint", "(t->>2)::bigint"
        length = "jsonb_array_length(s.top_domains)"
    else:
        each = ", json_each(s.top_domains) t"
        name, objects, nbytes = (
            "json_extract(t.value, '$[0]')",
            "json_extract(t.value, '$[1]')",
            "json_extract(t.value, '$[2]')",
        )
        length = "json_array_length(s.top_domains)"
    # one grouping, the largest by each measure taken from it
    sql = (
        f"WITH g AS (SELECT {name} AS d, SUM({objects}) AS o, SUM({nbytes}) AS b FROM harvest_jobstats s "
        f"{each} WHERE {where} GROUP BY d) "
        "SELECT * FROM (SELECT d, o, b FROM g ORDER BY b DESC, d LIMIT %s) x UNION "
        "SELECT * FROM (SELECT d, o, b FROM g ORDER BY o DESC, d LIMIT %s) y"
    )
    with connection.cursor() as cur:
        cur.execute(sql, [*params, TOP_DOMAINS, TOP_DOMAINS])
        found = {d: (int(o or 0), int(b or 0)) for d, o, b in cur.fetchall()}
        cur.execute(f"SELECT COUNT(*) FROM harvest_jobstats s WHERE {where} AND {length} < s.domains", params)
        cut = cur.fetchone()[0]
    return sorted(((d, o, b) for d, (o, b) in found.items()), key=lambda r: (-r[2], -r[1], r[0])), cut


def cached(label: str, **scope: Any) -> Figures:
    """:func:`aggregate`, kept in Django's cache with a fingerprint of the scope's rows (how many, their job
    ids, the latest computation).

    A matching fingerprint serves the cached sums. While the current year's jobs keep ending, the
    fingerprint changes every few minutes and a year's sums cost about a second of SQL (measured: 1.6 s
    for 7,800 jobs on a loaded machine, docs/BENCHMARKS.md); so sums younger than :data:`FIGURES_STALE_S`
    are still served, and say so (``pending_jobs``, ``computed_at``): NAS_qual itself ran once a day.
    """
    fp = JobStats.objects.filter(**scope).aggregate(n=Count("job"), ids=Sum("job_id"), last=Max("computed_at"))
    fingerprint = (fp["n"], fp["ids"], fp["last"].timestamp() if fp["last"] else 0)
    key = "qa:" + ":".join(f"{k}={getattr(v, 'pk', v)}" for k, v in sorted(scope.items()))
    entry = cache.get(key)
    now = timezone.now()
    if entry is not None and (
        entry[0] == fingerprint or (now - entry[1].computed_at).total_seconds() < FIGURES_STALE_S
    ):
        fig = entry[1]
        fig.pending_jobs = 0 if entry[0] == fingerprint else max(fingerprint[0] - entry[0][0], 0) or -1
    else:
        fig = aggregate(label, **scope)
        cache.set(key, (fingerprint, fig), FIGURES_CACHE_S)
    fig.label = label
    return fig


def job_figures(job: Job) -> Figures:
    return aggregate(f"job {job.pk}", job=job)


def run_figures(harvest: HarvestDefinition, run: int) -> Figures:
    return cached(f"{harvest.name} run {run}", harvest=harvest, harvest_run=run)


def year_figures(year: int) -> Figures:
    return cached(str(year), year=year)


def runs_of(harvest: HarvestDefinition) -> list[dict[str, Any]]:
    """The definition's runs that have statistics, newest first, with totals."""
    return list(
        JobStats.objects.filter(harvest=harvest)
        .values("harvest_run")
        .annotate(jobs=Count("job"), objects=Sum("objects_count"), bytes=Sum("bytes_count"))
        .order_by("-harvest_run")
    )


def years() -> list[dict[str, Any]]:
    return list(
        JobStats.objects.values("year")
        .annotate(jobs=Count("job"), objects=Sum("objects_count"), bytes=Sum("bytes_count"))
        .order_by("-year")
    )


def previous_run(harvest: HarvestDefinition, run: int) -> int | None:
    return (
        JobStats.objects.filter(harvest=harvest, harvest_run__lt=run)
        .order_by("-harvest_run")
        .values_list("harvest_run", flat=True)
        .first()
    )


# -- comparison and export -------------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    section: str
    key: str
    measure: str
    values: tuple[int, ...]

    @property
    def change(self) -> str:
        """Relative change from the first value to the last, e.g. "+12.5%", "new", "gone"."""
        if len(self.values) < 2:
            return ""
        a, b = self.values[0], self.values[-1]
        if a == b:
            return "0%"
        if a == 0:
            return "new"
        if b == 0:
            return "gone"
        return f"{(b - a) / a * 100:+.1f}%"


def rows(*figures: Figures) -> list[Row]:
    """Every figure as one row per (section, key, measure), with one value per Figures given: the
    table that the comparison pages show and the CSV export writes."""
    out: list[Row] = []

    def add(section: str, measure: str, getter: Any, keys: Iterable[str]) -> None:
        for key in keys:
            out.append(Row(section, key, measure, tuple(getter(f, key) for f in figures)))

    def keys_of(attr: str) -> list[str]:
        seen: dict[str, None] = {}
        for f in figures:
            seen.update(dict.fromkeys(getattr(f, attr)))
        return list(seen)

    add(
        "totals",
        "count",
        lambda f, k: getattr(f, k),
        ["jobs", "jobs_without_reports", "domains", "seeds", "objects", "bytes"],
    )
    for index, measure in ((1, "objects"), (2, "bytes"), (3, "seeds")):
        add(
            "harvest kind",
            measure,
            lambda f, k, i=index: f.selective_vs_broad.get(k, [0, 0, 0, 0])[i],
            keys_of("selective_vs_broad"),
        )
    add("MIME category", "urls", lambda f, k: f.mime_categories.get(k, [0, 0])[0], keys_of("mime_categories"))
    add("MIME type", "urls", lambda f, k: f.mime_types.get(k, [0, 0])[0], keys_of("mime_types"))
    add("MIME type", "bytes", lambda f, k: f.mime_types.get(k, [0, 0])[1], keys_of("mime_types"))
    add("status code", "urls", lambda f, k: f.status_codes.get(k, 0), keys_of("status_codes"))
    add("TLD", "domains", lambda f, k: f.tlds.get(k, [0, 0, 0])[0], keys_of("tlds"))
    add("TLD", "objects", lambda f, k: f.tlds.get(k, [0, 0, 0])[1], keys_of("tlds"))
    add("TLD", "bytes", lambda f, k: f.tlds.get(k, [0, 0, 0])[2], keys_of("tlds"))
    add("domain size (objects)", "domains", lambda f, k: f.size_buckets.get(k, 0), BUCKET_LABELS)
    add("stop reason", "domains", lambda f, k: f.stop_reasons.get(k, 0), keys_of("stop_reasons"))
    top = {d: (o, b) for f in reversed(figures) for d, o, b in f.top_domains}
    tops = [{d: (o, b) for d, o, b in f.top_domains} for f in figures]
    for domain in top:
        out.append(Row("top domain", domain, "objects", tuple(t.get(domain, (0, 0))[0] for t in tops)))
        out.append(Row("top domain", domain, "bytes", tuple(t.get(domain, (0, 0))[1] for t in tops)))
    return out


def to_csv(*figures: Figures) -> str:
    """CSV (RFC 4180, UTF-8): section, key, measure, one column per Figures, then the change."""
    buf = io.StringIO()
    writer = csvsafe.writer(buf, lineterminator="\r\n")
    writer.writerow(
        ["section", "key", "measure", *(f.label for f in figures), *(["change"] if len(figures) > 1 else [])]
    )
    for row in rows(*figures):
        writer.writerow([row.section, row.key, row.measure, *row.values, *([row.change] if len(figures) > 1 else [])])
    return buf.getvalue()
