"""QA statistics pages (the BnF's NAS_qual, shared/seeds/001…, 3.4): per job, per harvest run, per
year, each with a comparison (run to run, year to year) and a CSV export. The figures come from
:mod:`orchestrator.harvest.qa.stats`; this module only lays them out as tables and inline SVG charts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from orchestrator.harvest.models import HarvestDefinition, Job, JobStats
from orchestrator.harvest.qa import stats
from webui.access import READ, require
from webui.jinja import filesize
from webui.svg import hbars, paired_hbars

#: Rows per section on the page (the CSV has them all).
SHOWN = 15


def _num(v: float) -> str:
    return f"{v:,.0f}".replace(",", "\u202f")


def _bytes(v: float) -> str:
    return filesize(int(v))


@dataclass(frozen=True)
class _Measure:
    """One NAS_qual measure: its title, what its rows are keyed by, how a Figures gives its values, how a
    value reads, and whether rows are sorted by size (False keeps the figures' own order, as buckets)."""

    title: str
    key_name: str
    get: Callable[[stats.Figures], dict[str, float]]
    fmt: Callable[[float], str]
    by_size: bool


MEASURES: tuple[_Measure, ...] = (
    _Measure(
        "Selective vs broad (objects)",
        "kind",
        lambda f: {k: v[1] for k, v in f.selective_vs_broad.items()},
        _num,
        False,
    ),
    _Measure(
        "Selective vs broad (bytes)",
        "kind",
        lambda f: {k: v[2] for k, v in f.selective_vs_broad.items()},
        _bytes,
        False,
    ),
    _Measure(
        "Selective vs broad (seeds: human selection vs automated lists)",
        "kind",
        lambda f: {k: v[3] for k, v in f.selective_vs_broad.items()},
        _num,
        False,
    ),
    _Measure(
        "MIME categories (URIs)", "category", lambda f: {k: v[0] for k, v in f.mime_categories.items()}, _num, True
    ),
    _Measure("MIME types (URIs)", "MIME type", lambda f: {k: v[0] for k, v in f.mime_types.items()}, _num, True),
    _Measure("MIME types (bytes)", "MIME type", lambda f: {k: v[1] for k, v in f.mime_types.items()}, _bytes, True),
    _Measure("HTTP status codes (URIs)", "code", lambda f: dict(f.status_codes), _num, True),
    _Measure("TLDs (objects)", "TLD", lambda f: {k: v[1] for k, v in f.tlds.items()}, _num, True),
    _Measure("TLDs (domains)", "TLD", lambda f: {k: v[0] for k, v in f.tlds.items()}, _num, True),
    _Measure("Domain size, objects per domain (domains)", "objects", lambda f: dict(f.size_buckets), _num, False),
    _Measure("Stop reasons (domains)", "stop reason", lambda f: dict(f.stop_reasons), _num, True),
    _Measure("Top domains (bytes)", "domain", lambda f: {d: b for d, _, b in f.top_domains}, _bytes, True),
    _Measure("Top domains (objects)", "domain", lambda f: {d: o for d, o, _ in f.top_domains}, _num, True),
)


def _keys(values: list[dict[str, float]], by_size: bool) -> list[str]:
    """Every key of every figure, first seen first; ``by_size``: largest in the figure under review (the
    last) first, then in the earlier one, then by name."""
    keys: dict[str, None] = {}
    for v in values:
        keys.update(dict.fromkeys(v))
    ordered = list(keys)
    if by_size:
        ordered.sort(key=lambda k: (-values[-1].get(k, 0), -values[0].get(k, 0), k))
    return ordered


def _rows(values: list[dict[str, float]], keys: list[str], fmt: Callable[[float], str]) -> list[dict[str, Any]]:
    """A table row per key: each figure's value, its share of that figure's total, and the change."""
    totals = [sum(v.values()) for v in values]
    rows = []
    for k in keys:
        vs = [v.get(k, 0) for v in values]
        change = stats.Row("", k, "", tuple(int(x) for x in vs)).change if len(vs) > 1 else ""
        rows.append(
            {
                "key": k,
                "values": [fmt(x) for x in vs],
                "shares": [f"{x / t * 100:.1f}%" if t else "-" for x, t in zip(vs, totals, strict=True)],
                "change": change,
            }
        )
    return rows


def _chart(
    values: list[dict[str, float]], keys: list[str], m: _Measure, a: stats.Figures, b: stats.Figures | None
) -> str:
    """One figure: bars with their total; two: paired bars named by the figures' labels."""
    if b is None:
        return hbars([(k, values[0].get(k, 0)) for k in keys], fmt=m.fmt, title=m.title, total=sum(values[0].values()))
    return paired_hbars(
        [(k, values[0].get(k, 0), values[1].get(k, 0)) for k in keys],
        names=(b.label, a.label),
        fmt=m.fmt,
        title=m.title,
    )


def sections(a: stats.Figures, b: stats.Figures | None = None) -> list[dict[str, Any]]:
    """Chart + table per NAS_qual measure (:data:`MEASURES`). With ``b``: ``b`` is the figure shown first
    (the earlier run or year) and ``a`` the one under review, so changes read from ``b`` to ``a``. The page
    shows the first :data:`SHOWN` rows of each and says how many more the CSV has."""
    figs = (b, a) if b is not None else (a,)
    out = []
    for m in MEASURES:
        values = [m.get(f) for f in figs]
        every = _keys(values, m.by_size)
        shown = every[:SHOWN]
        out.append(
            {
                "title": m.title,
                "key": m.key_name,
                "chart": _chart(values, shown, m, a, b),
                "rows": _rows(values, shown, m.fmt),
                "more": len(every) - len(shown),
            }
        )
    return out


def _respond(
    request: HttpRequest, a: stats.Figures, b: stats.Figures | None, context: dict[str, Any], filename: str
) -> HttpResponse:
    if request.GET.get("format") == "csv":
        body = stats.to_csv(*((b, a) if b is not None else (a,)))
        response = HttpResponse(body, content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{filename}.csv"'
        return response
    query = request.GET.copy()
    query["format"] = "csv"
    context.update(
        fig=a, other=b, sections=sections(a, b), csv_query=query.urlencode(), stale_minutes=stats.FIGURES_STALE_S // 60
    )
    return render(request, "qa/figures.html", context)


@require(READ)
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    years = stats.years()
    harvest_ids = JobStats.objects.values("harvest").distinct()
    definitions = HarvestDefinition.objects.filter(pk__in=harvest_ids).order_by("name")
    chart = hbars([(str(y["year"]), y["objects"] or 0) for y in years], title="objects per year")
    return render(
        request,
        "qa/index.html",
        {
            "years": years,
            "definitions": definitions,
            "chart": chart,
            "missing": JobStats.objects.exclude(reports_error="").count(),
        },
    )


@require(READ)
@require_GET
def harvest_runs(request: HttpRequest, harvest_id: int) -> HttpResponse:
    harvest = get_object_or_404(HarvestDefinition, pk=harvest_id)
    runs = stats.runs_of(harvest)
    chart = hbars([(f"run {r['harvest_run']}", r["bytes"] or 0) for r in runs], fmt=_bytes, title="bytes per run")
    return render(request, "qa/harvest.html", {"harvest": harvest, "runs": runs, "chart": chart})


def _int(request: HttpRequest, name: str) -> int | None:
    raw = request.GET.get(name, "").strip()
    if not raw:
        return None
    if not raw.isdigit():
        raise Http404(f"{name}: expected a number, got {raw!r}")
    return int(raw)


@require(READ)
@require_GET
def job(request: HttpRequest, job_id: int) -> HttpResponse:
    j = get_object_or_404(Job.objects.select_related("harvest"), pk=job_id)
    fig = stats.job_figures(j)
    row = JobStats.objects.filter(job=j).first()
    other = None
    compare = _int(request, "compare")
    if compare:
        other_job = get_object_or_404(Job, pk=compare)
        other = stats.job_figures(other_job)
    return _respond(
        request,
        fig,
        other,
        {"scope": "job", "job": j, "row": row, "compare": compare},
        f"qa-job-{j.pk}" + (f"-vs-{compare}" if compare else ""),
    )


@require(READ)
@require_GET
def run(request: HttpRequest, harvest_id: int, run: int) -> HttpResponse:
    harvest = get_object_or_404(HarvestDefinition, pk=harvest_id)
    if not JobStats.objects.filter(harvest=harvest, harvest_run=run).exists():
        raise Http404(f"no statistics for run {run} of {harvest.name} (no finished job recorded yet)")
    compare = _int(request, "compare")
    if compare is None and "compare" not in request.GET:
        compare = stats.previous_run(harvest, run)
    fig = stats.run_figures(harvest, run)
    other = stats.run_figures(harvest, compare) if compare else None
    runs = [r["harvest_run"] for r in stats.runs_of(harvest)]
    return _respond(
        request,
        fig,
        other,
        {"scope": "run", "harvest": harvest, "run": run, "compare": compare, "choices": [r for r in runs if r != run]},
        f"qa-{harvest.pk}-run-{run}" + (f"-vs-{compare}" if compare else ""),
    )


@require(READ)
@require_GET
def year(request: HttpRequest, year: int) -> HttpResponse:
    years = [y["year"] for y in stats.years()]
    if year not in years:
        raise Http404(f"no statistics for {year}")
    compare = _int(request, "compare")
    if compare is None and "compare" not in request.GET and year - 1 in years:
        compare = year - 1
    fig = stats.year_figures(year)
    other = stats.year_figures(compare) if compare else None
    return _respond(
        request,
        fig,
        other,
        {"scope": "year", "year": year, "compare": compare, "choices": [y for y in years if y != year]},
        f"qa-{year}" + (f"-vs-{compare}" if compare else ""),
    )
