"""What runs next: the coming runs of active scheduled harvests, per channel, with their expected load.

Times come from the schedule arithmetic (orchestrator.harvest.scheduling.schedules.upcoming_runs), the same the
scheduler uses, so the calendar shows what will actually happen. The expected load of a run is what
the definition's last run harvested (HarvestInfo), or only its number of domains if it never ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from django.db.models import Count, F, OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce

from orchestrator.harvest.models import HarvestDefinition, HarvestInfo, Job
from orchestrator.harvest.scheduling import schedules

#: Never more than this many events per definition in the window (a minute schedule over a week).
MAX_EVENTS_PER_DEFINITION = 200


@dataclass(frozen=True)
class ComingRun:
    definition: HarvestDefinition
    when: datetime
    domains: int
    #: What the last run harvested; None when the definition never ran.
    expected_objects: int | None
    expected_bytes: int | None


@dataclass
class ChannelDay:
    runs: list[ComingRun]

    @property
    def expected_bytes(self) -> int:
        return sum(r.expected_bytes or 0 for r in self.runs)

    @property
    def domains(self) -> int:
        return sum(r.domains for r in self.runs)


def coming_runs(days: int = 7, now: datetime | None = None) -> list[ComingRun]:
    """Every run of an active scheduled definition between ``now`` and ``now + days``, by time."""
    now = now or datetime.now(UTC)
    until = now + timedelta(days=days)
    through = HarvestDefinition.configurations.through
    harvested = (
        through.objects.filter(harvestdefinition=OuterRef("pk"))
        .order_by()
        .values("harvestdefinition")
        .annotate(n=Count("id"))
    )
    definitions = list(
        HarvestDefinition.objects.filter(active=True, schedule__isnull=False)
        .select_related("schedule", "channel")
        .annotate(n_domains=Coalesce(Subquery(harvested.values("n")), 0))
    )
    # The jobs of each definition's last run (index on harvest, harvest_run), then their history.
    last_jobs = Job.objects.filter(harvest__in=[d.pk for d in definitions], harvest_run=F("harvest__runs"))
    last = {
        row["harvest"]: row
        for row in HarvestInfo.objects.filter(job__in=last_jobs.values("id"))
        .order_by()
        .values("harvest")
        .annotate(objects=Sum("objects_count"), bytes=Sum("bytes_count"))
    }
    runs: list[ComingRun] = []
    for definition in definitions:
        previous = last.get(definition.pk)
        for when in _events(definition, now, until):
            runs.append(
                ComingRun(
                    definition,
                    when,
                    definition.n_domains,
                    previous["objects"] if previous else None,
                    previous["bytes"] if previous else None,
                )
            )
    return sorted(runs, key=lambda r: (r.when, r.definition.name))


def _events(definition: HarvestDefinition, now: datetime, until: datetime) -> list[datetime]:
    """The definition's runs up to ``until``, stepped one event at a time (never more than the window
    needs). A due or overdue next date shows once, now: the scheduler runs it once and skips the rest."""
    first = schedules.upcoming_runs(definition.schedule, 1, definition.next_date, definition.runs, now=now)
    events: list[datetime] = []
    event = first[0] if first else None
    overdue_seen = False
    while event is not None and event <= until and len(events) < MAX_EVENTS_PER_DEFINITION:
        if event > now:
            events.append(event)
        elif not overdue_seen:
            overdue_seen = True
            events.append(now)
        event = schedules.next_event(definition.schedule, event, definition.runs + len(events))
    return events


def calendar(days: int = 7, now: datetime | None = None) -> tuple[list[date], dict[str, dict[date, ChannelDay]]]:
    """The coming runs as a grid: channel name → day → the runs that day (overdue runs count today)."""
    now = now or datetime.now(UTC)
    dates = [(now + timedelta(days=i)).date() for i in range(days + 1)]
    grid: dict[str, dict[date, ChannelDay]] = {}
    for run in coming_runs(days, now):
        grid.setdefault(run.definition.channel.name, {d: ChannelDay([]) for d in dates})[run.when.date()].runs.append(
            run
        )
    return dates, grid
