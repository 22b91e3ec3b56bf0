"""Each job's Progress over time: intake keeps a thinned sample of the heartbeats, the job pages read
them back as a series for their charts (the fetch rate of a continuous job against its budget, the URI
rate and queue of any job).

Thinning: a harvester sends a heartbeat every few seconds and a continuous job (issue 12) runs for
weeks, so a sample is kept at most every :data:`SAMPLE_EVERY_S` seconds per job and samples older than
:data:`KEEP_S` are dropped as new ones come (one indexed DELETE per kept sample). A chart asks for a
window and gets at most ``points`` values, each the mean of its bucket, so a week fits in a few hundred
points and the latest minutes keep their detail.

Only the figures a chart draws are kept (:data:`FIGURES`, flat numbers; the continuous section's
counters under their own names), not the per-domain or per-host tables: those are the latest
heartbeat's, in ``Job.progress``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from orchestrator.harvest.models import ProgressSample

#: At most one sample per job in this many seconds (heartbeats in between only update Job.progress).
SAMPLE_EVERY_S = 15
#: Samples older than this are pruned: a week of a continuous job at one per 15 s is 40,320 small rows.
KEEP_S = 7 * 24 * 3600
#: The figures of a Progress heartbeat that are kept, all numbers.
FIGURES = ("uris_done", "uris_queued", "uris_failed", "bytes", "uri_rate", "kb_rate")
#: The figures of its ``continuous`` section (issue 12) that are kept, prefixed ``c_`` in a sample.
CONTINUOUS_FIGURES = (
    "fetch_rate",
    "budget_per_s",
    "visits",
    "changed",
    "unchanged",
    "not_modified",
    "header_skipped",
    "errors",
    "validator_misses",
    "warcs_closed",
    "freshness",
)


def figures_of(progress: Mapping[str, Any]) -> dict[str, float]:
    """The charted numbers of one Progress dict (as ``Progress.to_dict`` writes it); absent or
    non-numeric values are left out rather than drawn as 0."""
    out: dict[str, float] = {}
    for key in FIGURES:
        value = progress.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[key] = value
    continuous = progress.get("continuous")
    if isinstance(continuous, Mapping):
        for key in CONTINUOUS_FIGURES:
            value = continuous.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                out[f"c_{key}"] = value
    return out


def record(job_id: int, progress: Mapping[str, Any], now: datetime) -> bool:
    """Keep ``progress`` as a sample of job ``job_id`` unless one was kept in the last
    :data:`SAMPLE_EVERY_S` seconds; returns whether it was kept. Called by intake after the heartbeat
    was accepted (the job is running)."""
    if ProgressSample.objects.filter(job_id=job_id, at__gt=now - timedelta(seconds=SAMPLE_EVERY_S)).exists():
        return False
    ProgressSample.objects.create(job_id=job_id, at=now, figures=figures_of(progress))
    ProgressSample.objects.filter(job_id=job_id, at__lt=now - timedelta(seconds=KEEP_S)).delete()
    return True


@dataclass(frozen=True)
class Series:
    """Bucketed samples: ``times`` (each bucket's latest sample, UTC) and, per figure, one mean per bucket (None where a
    bucket had no sample with that figure)."""

    times: list[datetime]
    values: dict[str, list[float | None]]

    def points(self, figure: str) -> list[tuple[datetime, float]]:
        """The (time, value) pairs of one figure, buckets without it left out."""
        return [(t, v) for t, v in zip(self.times, self.values.get(figure, []), strict=False) if v is not None]


def series(job_id: int, since: datetime, until: datetime, points: int = 240) -> Series:
    """The samples of job ``job_id`` between ``since`` and ``until``, as at most ``points`` buckets of
    equal width; each figure's value in a bucket is the mean of its samples there."""
    rows = list(
        ProgressSample.objects.filter(job_id=job_id, at__gte=since, at__lte=until)
        .order_by("at")
        .values_list("at", "figures")
    )
    if not rows:
        return Series([], {})
    width = max((until - since).total_seconds() / max(points, 1), SAMPLE_EVERY_S)
    buckets: dict[int, list[Mapping[str, float]]] = {}
    last: dict[int, datetime] = {}
    for at, figures in rows:
        index = int((at - since).total_seconds() // width)
        buckets.setdefault(index, []).append(figures)
        last[index] = at
    keys = sorted({k for figures in (f for _, f in rows) for k in figures})
    times, values = [], {k: [] for k in keys}
    for index in sorted(buckets):
        group = buckets[index]
        times.append(last[index])
        for key in keys:
            found = [f[key] for f in group if key in f]
            values[key].append(sum(found) / len(found) if found else None)
    return Series(times, values)


def ending_at(
    points: list[tuple[datetime, float]], latest: datetime | None, value: float | None
) -> list[tuple[datetime, float]]:
    """A series' samples, then the latest heartbeat's value: samples are kept every :data:`SAMPLE_EVERY_S`, and a
    chart must end where the figures beside it are (a job of nine seconds drew its first heartbeat only, "0 done"
    next to 150 done)."""
    if latest is None or value is None:
        return points
    if latest.tzinfo is None:
        latest = latest.replace(tzinfo=UTC)
    if points and latest <= points[-1][0]:
        return points
    return [*points, (latest, value)]
