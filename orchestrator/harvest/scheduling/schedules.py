"""Schedule arithmetic: when a selective harvest runs, in UTC.

A schedule's events are a chain: the first event is the first time at or after the start (or now,
for "as soon as possible") that fits the schedule's "at" fields; each next event is the previous one
plus ``every`` units, moved forward to the next time that fits (as NetarchiveSuite computes its
frequencies). Monthly schedules clamp to the end of short months: "day 31" runs on 28/29 February
and on 31 March again, never drifting, because the day is always taken from the schedule (or from
its start, for "any time" monthly schedules), never from the clamped previous event.

The end conditions: never; no event after ``end_date``; no event once ``max_runs`` runs were made
(runs made, not events passed: events skipped while the system was down are not runs).

Pure functions over a :class:`~orchestrator.harvest.models.Schedule` (or anything with its fields),
no database access, so the scheduler, the CLI and the UI calendar all agree.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

_FIXED = {
    "minute": timedelta(minutes=1),
    "hour": timedelta(hours=1),
    "day": timedelta(days=1),
    "week": timedelta(weeks=1),
}


class ScheduleLike(Protocol):
    every: int
    unit: str
    anytime: bool
    at_minute: int | None
    at_hour: int | None
    at_weekday: int | None  # 1 = Monday … 7 = Sunday
    at_day_of_month: int | None
    start: datetime | None
    end: str  # never | date | runs
    end_date: datetime | None
    max_runs: int | None


def utc(value: datetime) -> datetime:
    """``value`` in UTC; a naive time is refused (every time here is UTC, said explicitly)."""
    if value.tzinfo is None:
        raise ValueError(f"{value.isoformat()} has no time zone; netharvest schedules are in UTC")
    return value.astimezone(UTC)


def _add_months(when: datetime, months: int, day: int) -> datetime:
    """``when`` moved by ``months``, on ``day`` of that month or its last day if the month is shorter."""
    index = when.year * 12 + (when.month - 1) + months
    year, month = divmod(index, 12)
    last = calendar.monthrange(year, month + 1)[1]
    return when.replace(year=year, month=month + 1, day=min(day, last))


def _month_day(schedule: ScheduleLike, fallback: int) -> int:
    if not schedule.anytime and schedule.at_day_of_month:
        return schedule.at_day_of_month
    if schedule.start is not None:
        return utc(schedule.start).day
    return fallback


def align(schedule: ScheduleLike, when: datetime) -> datetime:
    """The first time at or after ``when`` that fits the schedule's "at" fields (``when`` itself for
    an any-time schedule). Seconds are dropped from fitted times: events fall on whole minutes."""
    when = utc(when)
    if schedule.anytime or schedule.unit == "minute":
        return when
    base = when.replace(second=0, microsecond=0)
    minute = schedule.at_minute or 0
    if schedule.unit == "hour":
        candidate = base.replace(minute=minute)
        return candidate if candidate >= when else candidate + timedelta(hours=1)
    hour = schedule.at_hour or 0
    if schedule.unit == "day":
        candidate = base.replace(hour=hour, minute=minute)
        return candidate if candidate >= when else candidate + timedelta(days=1)
    if schedule.unit == "week":
        weekday = (schedule.at_weekday or 1) - 1
        candidate = base.replace(hour=hour, minute=minute) + timedelta(days=(weekday - base.weekday()) % 7)
        return candidate if candidate >= when else candidate + timedelta(weeks=1)
    if schedule.unit == "month":
        day = schedule.at_day_of_month or 1
        candidate = _add_months(base.replace(hour=hour, minute=minute), 0, day)
        return candidate if candidate >= when else _add_months(candidate, 1, day)
    raise ValueError(f"unknown schedule unit {schedule.unit!r}")


def _step(schedule: ScheduleLike, event: datetime) -> datetime:
    """``event`` plus one period (``every`` units), before fitting."""
    if schedule.unit in _FIXED:
        return event + schedule.every * _FIXED[schedule.unit]
    if schedule.unit == "month":
        return _add_months(event, schedule.every, _month_day(schedule, event.day))
    raise ValueError(f"unknown schedule unit {schedule.unit!r}")


def _within_end(schedule: ScheduleLike, event: datetime | None, runs_done: int) -> datetime | None:
    if event is None:
        return None
    if schedule.end == "date" and schedule.end_date is not None and event > utc(schedule.end_date):
        return None
    if schedule.end == "runs" and schedule.max_runs is not None and runs_done >= schedule.max_runs:
        return None
    return event


def first_event(schedule: ScheduleLike, now: datetime, runs_done: int = 0) -> datetime | None:
    """The first event at or after ``now`` and the schedule's start; None if the schedule has ended."""
    now = utc(now)
    start = max(utc(schedule.start), now) if schedule.start is not None else now
    return _within_end(schedule, align(schedule, start), runs_done)


def next_event(schedule: ScheduleLike, previous: datetime, runs_done: int = 0) -> datetime | None:
    """The event after ``previous`` (an event, or a next date a person set by hand); None once ended.

    ``runs_done`` counts the runs already made, including the one of ``previous`` if it ran.
    """
    event = align(schedule, _step(schedule, utc(previous)))
    if schedule.start is not None and event < utc(schedule.start):
        event = align(schedule, utc(schedule.start))
    return _within_end(schedule, event, runs_done)


@dataclass(frozen=True)
class CatchUp:
    """What to do with a definition whose next date has come: run once, then wait for ``next_date``."""

    next_date: datetime | None  # None: the schedule has ended
    skipped: int  # events that passed while nothing ran, beyond the one being run now


def catch_up(schedule: ScheduleLike, due: datetime, now: datetime, runs_done: int) -> CatchUp:
    """The due event ``due`` (≤ ``now``) runs now, once; every later event up to ``now`` is skipped.

    ``runs_done`` counts runs including the one being made now. Fixed-length units jump straight to
    the first future event (a minute schedule down for a year is one division, not 525,600 steps);
    months are stepped, twelve a year.
    """
    due, now = utc(due), utc(now)
    event = align(schedule, _step(schedule, due))
    if schedule.start is not None and event < utc(schedule.start):
        event = align(schedule, utc(schedule.start))
    skipped = 0
    if event <= now and schedule.unit in _FIXED:
        period = schedule.every * _FIXED[schedule.unit]
        jumps = (now - event) // period + 1
        event, skipped = event + jumps * period, jumps
        if schedule.end == "date" and schedule.end_date is not None and utc(schedule.end_date) < now:
            skipped = _count_until(schedule, due, utc(schedule.end_date))
    while event <= now:
        if schedule.end == "date" and schedule.end_date is not None and event > utc(schedule.end_date):
            break
        skipped += 1
        event = align(schedule, _step(schedule, event))
    return CatchUp(next_date=_within_end(schedule, event, runs_done), skipped=skipped)


def _count_until(schedule: ScheduleLike, due: datetime, last: datetime) -> int:
    """Events after ``due`` up to ``last`` (inclusive), for fixed-length units."""
    period = schedule.every * _FIXED[schedule.unit]
    first = align(schedule, _step(schedule, due))
    return 0 if first > last else (last - first) // period + 1


def upcoming_runs(
    schedule: ScheduleLike, n: int, next_date: datetime | None, runs_done: int = 0, now: datetime | None = None
) -> list[datetime]:
    """The next ``n`` run times for the UI calendar, from the definition's next date (or, for a
    definition not yet scheduled, the schedule's first event after ``now``), respecting the end."""
    if next_date is None:
        next_date = first_event(schedule, now or datetime.now(UTC), runs_done)
    runs: list[datetime] = []
    event = _within_end(schedule, utc(next_date), runs_done) if next_date is not None else None
    while event is not None and len(runs) < n:
        runs.append(event)
        event = next_event(schedule, event, runs_done + len(runs))
    return runs
