"""Schedule arithmetic: every unit, at-times, month-end clamping, starts, end conditions, catch-up."""

from datetime import UTC, datetime, timedelta

import pytest

from orchestrator.harvest.models import Schedule
from orchestrator.harvest.scheduling.schedules import align, catch_up, first_event, next_event, upcoming_runs


def t(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def sched(**fields: object) -> Schedule:
    return Schedule(name="s", **fields)


NOW = t("2026-01-14 10:17:30")  # a Wednesday


@pytest.mark.parametrize(
    ("every", "unit", "expected"),
    [
        (5, "minute", "2026-01-14 10:22:30"),
        (2, "hour", "2026-01-14 12:17:30"),
        (3, "day", "2026-01-17 10:17:30"),
        (2, "week", "2026-01-28 10:17:30"),
        (1, "month", "2026-02-14 10:17:30"),
    ],
)
def test_anytime_every_unit_adds_the_period(every, unit, expected):
    s = sched(every=every, unit=unit)
    assert first_event(s, NOW) == NOW  # as soon as possible
    assert next_event(s, NOW) == t(expected)


def test_at_minute_of_every_hour():
    s = sched(every=1, unit="hour", anytime=False, at_minute=5)
    assert first_event(s, NOW) == t("2026-01-14 11:05")
    assert next_event(s, t("2026-01-14 11:05")) == t("2026-01-14 12:05")
    assert first_event(s, t("2026-01-14 11:05")) == t("2026-01-14 11:05")  # an exact fit is at, not after


def test_at_time_of_every_day_and_every_other_day():
    s = sched(every=1, unit="day", anytime=False, at_hour=3, at_minute=0)
    assert first_event(s, NOW) == t("2026-01-15 03:00")
    assert first_event(s, t("2026-01-14 02:59")) == t("2026-01-14 03:00")
    s2 = sched(every=2, unit="day", anytime=False, at_hour=3, at_minute=0)
    assert upcoming_runs(s2, 3, None, now=NOW) == [t("2026-01-15 03:00"), t("2026-01-17 03:00"), t("2026-01-19 03:00")]


def test_weekday_and_time_of_every_week():
    monday = sched(every=1, unit="week", anytime=False, at_weekday=1, at_hour=22, at_minute=30)
    assert first_event(monday, NOW) == t("2026-01-19 22:30")
    wednesday = sched(every=2, unit="week", anytime=False, at_weekday=3, at_hour=22, at_minute=30)
    assert first_event(wednesday, NOW) == t("2026-01-14 22:30")  # later the same day
    assert next_event(wednesday, t("2026-01-14 22:30")) == t("2026-01-28 22:30")
    # a next date set by hand off the weekday: the following event is moved onto the weekday again
    assert next_event(monday, t("2026-01-21 12:00")) == t("2026-02-02 22:30")


def test_day_of_month_clamps_to_short_months_without_drifting():
    s = sched(every=1, unit="month", anytime=False, at_day_of_month=31, at_hour=1, at_minute=0)
    runs = upcoming_runs(s, 5, None, now=t("2026-01-01 00:00"))
    assert runs == [
        t("2026-01-31 01:00"),
        t("2026-02-28 01:00"),
        t("2026-03-31 01:00"),
        t("2026-04-30 01:00"),
        t("2026-05-31 01:00"),
    ]
    leap = upcoming_runs(s, 2, t("2028-01-31 01:00"))
    assert leap == [t("2028-01-31 01:00"), t("2028-02-29 01:00")]
    s3 = sched(every=3, unit="month", anytime=False, at_day_of_month=30, at_hour=0, at_minute=0)
    assert next_event(s3, t("2025-11-30 00:00")) == t("2026-02-28 00:00")
    assert next_event(s3, t("2026-02-28 00:00")) == t("2026-05-30 00:00")


def test_anytime_monthly_keeps_the_start_day():
    s = sched(every=1, unit="month", start=t("2026-01-31 08:00"))
    assert upcoming_runs(s, 3, None, now=t("2026-01-01")) == [
        t("2026-01-31 08:00"),
        t("2026-02-28 08:00"),
        t("2026-03-31 08:00"),
    ]


def test_start_at_a_date_and_asap():
    later = sched(every=1, unit="day", start=t("2026-03-01 12:00"))
    assert first_event(later, NOW) == t("2026-03-01 12:00")
    past = sched(every=1, unit="day", start=t("2025-03-01 12:00"))
    assert first_event(past, NOW) == NOW  # a start in the past means: from now
    fitted = sched(every=1, unit="day", anytime=False, at_hour=6, at_minute=15, start=t("2026-03-01 12:00"))
    assert first_event(fitted, NOW) == t("2026-03-02 06:15")
    # an event before the start is moved to the start
    assert next_event(later, t("2026-01-01 12:00")) == t("2026-03-01 12:00")


def test_end_at_a_date():
    s = sched(every=1, unit="day", end="date", end_date=t("2026-01-16 10:17:30"))
    assert upcoming_runs(s, 10, NOW) == [NOW, t("2026-01-15 10:17:30"), t("2026-01-16 10:17:30")]
    assert next_event(s, t("2026-01-16 10:17:30")) is None
    assert first_event(s, t("2026-02-01")) is None


def test_end_after_a_number_of_runs():
    s = sched(every=1, unit="hour", end="runs", max_runs=3)
    assert upcoming_runs(s, 10, NOW) == [NOW, NOW + timedelta(hours=1), NOW + timedelta(hours=2)]
    assert upcoming_runs(s, 10, NOW, runs_done=2) == [NOW]
    assert next_event(s, NOW, runs_done=3) is None
    assert first_event(s, NOW, runs_done=3) is None


def test_catch_up_runs_once_and_counts_the_skipped_events():
    s = sched(every=1, unit="day", anytime=False, at_hour=3, at_minute=0)
    # due Monday 03:00, the system came back on Thursday 10:00: Tue, Wed, Thu 03:00 were skipped
    result = catch_up(s, t("2026-01-12 03:00"), t("2026-01-15 10:00"), runs_done=1)
    assert (result.next_date, result.skipped) == (t("2026-01-16 03:00"), 3)
    on_time = catch_up(s, t("2026-01-12 03:00"), t("2026-01-12 03:00:20"), runs_done=1)
    assert (on_time.next_date, on_time.skipped) == (t("2026-01-13 03:00"), 0)


def test_catch_up_of_minutes_over_a_year_is_arithmetic():
    s = sched(every=10, unit="minute")
    due = t("2025-01-14 10:00")
    result = catch_up(s, due, t("2026-01-14 10:05"), runs_done=1)
    assert result.next_date == t("2026-01-14 10:10")
    assert result.skipped == 365 * 24 * 6  # every 10-minute event of the year after the one run now


def test_catch_up_of_months_and_weeks():
    monthly = sched(every=1, unit="month", anytime=False, at_day_of_month=31, at_hour=0, at_minute=0)
    result = catch_up(monthly, t("2026-01-31 00:00"), t("2026-05-01 00:00"), runs_done=1)
    assert (result.next_date, result.skipped) == (t("2026-05-31 00:00"), 3)  # Feb 28, Mar 31, Apr 30
    weekly = sched(every=2, unit="week", anytime=False, at_weekday=5, at_hour=20, at_minute=0)
    result = catch_up(weekly, t("2026-01-02 20:00"), t("2026-02-13 20:00"), runs_done=1)
    assert (result.next_date, result.skipped) == (t("2026-02-27 20:00"), 3)  # Jan 16, Jan 30, Feb 13


def test_catch_up_respects_the_end_conditions():
    by_date = sched(every=1, unit="day", end="date", end_date=t("2026-01-05 00:00"))
    result = catch_up(by_date, t("2026-01-01 00:00"), t("2026-01-20 00:00"), runs_done=1)
    assert (result.next_date, result.skipped) == (None, 4)  # Jan 2..5 passed; nothing after the end
    by_runs = sched(every=1, unit="day", end="runs", max_runs=2)
    assert catch_up(by_runs, t("2026-01-01"), t("2026-01-01 00:01"), runs_done=1).next_date == t("2026-01-02")
    assert catch_up(by_runs, t("2026-01-02"), t("2026-01-02 00:01"), runs_done=2).next_date is None


def test_times_without_a_zone_are_refused():
    with pytest.raises(ValueError, match="no time zone"):
        first_event(sched(), datetime(2026, 1, 1))


def test_align_drops_seconds_only_for_fitted_times():
    assert align(sched(unit="day"), NOW) == NOW
    assert align(sched(unit="day", anytime=False, at_hour=10, at_minute=18), NOW) == t("2026-01-14 10:18")
