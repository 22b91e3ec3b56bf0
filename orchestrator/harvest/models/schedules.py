"""Schedules: every N minutes/hours/days/weeks/months, anytime or at a given time; with start and end.

The arithmetic is in ``orchestrator.harvest.scheduling.schedules``; this model holds the curator's choices and
validates that they make sense together.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from orchestrator.harvest.models.fields import free_text


class Schedule(models.Model):
    UNITS = [("minute", "minute"), ("hour", "hour"), ("day", "day"), ("week", "week"), ("month", "month")]
    WEEKDAYS = [
        (1, "Monday"),
        (2, "Tuesday"),
        (3, "Wednesday"),
        (4, "Thursday"),
        (5, "Friday"),
        (6, "Saturday"),
        (7, "Sunday"),
    ]
    ENDS = [("never", "never"), ("date", "at a date"), ("runs", "after a number of runs")]

    name = models.CharField(max_length=100, unique=True)
    comments = free_text()
    every = models.PositiveIntegerField(default=1, validators=[MinValueValidator(1)])
    unit = models.CharField(max_length=6, choices=UNITS, default="day")
    anytime = models.BooleanField(
        default=True,
        help_text="Run any time in the period; otherwise at the minute/hour/weekday/day of month below (UTC).",
    )
    at_minute = models.PositiveSmallIntegerField(null=True, blank=True, validators=[MaxValueValidator(59)])
    at_hour = models.PositiveSmallIntegerField(null=True, blank=True, validators=[MaxValueValidator(23)])
    at_weekday = models.PositiveSmallIntegerField(null=True, blank=True, choices=WEEKDAYS)
    at_day_of_month = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(31)],
        help_text="Days past the end of a short month run on its last day.",
    )
    start = models.DateTimeField(null=True, blank=True, help_text="UTC. Empty = as soon as possible.")
    end = models.CharField(max_length=5, choices=ENDS, default="never")
    end_date = models.DateTimeField(null=True, blank=True)
    max_runs = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        errors: dict[str, str] = {}
        if not self.anytime:
            relevant = {
                "minute": set(),
                "hour": {"at_minute"},
                "day": {"at_minute", "at_hour"},
                "week": {"at_minute", "at_hour", "at_weekday"},
                "month": {"at_minute", "at_hour", "at_day_of_month"},
            }[self.unit]
            for field in ("at_minute", "at_hour", "at_weekday", "at_day_of_month"):
                value = getattr(self, field)
                if field in relevant and value is None:
                    errors[field] = f"needed to run at a given time every {self.unit}"
                elif field not in relevant and value is not None:
                    errors[field] = f"does not apply to a schedule counted in {self.unit}s"
            if self.unit == "minute":
                errors["anytime"] = "a schedule counted in minutes always runs any time"
        if self.end == "date" and not self.end_date:
            errors["end_date"] = "give the date the schedule ends"
        if self.end == "runs" and not self.max_runs:
            errors["max_runs"] = "give the number of runs after which the schedule ends"
        if self.end == "date" and self.end_date and self.start and self.end_date <= self.start:
            errors["end_date"] = "the end must come after the start"
        if errors:
            raise ValidationError(errors)

    def describe(self) -> str:
        """Reads as a curator would say it: 'every 2 weeks on Monday at 03:00 UTC, 10 runs'; a schedule that
        ends after one run is 'once' (with its start), never 'every day, 1 run'. Every page, the CLI and the
        scheduler's messages show a schedule through this one method."""
        if self.end == "runs" and self.max_runs == 1:
            return f"once, at {self.start:%Y-%m-%d %H:%M} UTC" if self.start else "once, as soon as activated"
        unit = self.unit if self.every == 1 else f"{self.unit}s"
        text = f"every {self.every} {unit}" if self.every > 1 else f"every {unit}"
        if not self.anytime:
            if self.unit == "week" and self.at_weekday:
                text += f" on {dict(self.WEEKDAYS)[self.at_weekday]}"
            if self.unit == "month" and self.at_day_of_month:
                text += f" on day {self.at_day_of_month}"
            if self.unit == "hour":
                text += f" at minute {self.at_minute}"
            elif self.unit != "minute":
                text += f" at {self.at_hour:02d}:{self.at_minute:02d} UTC"
        if self.end == "date" and self.end_date:
            text += f", until {self.end_date:%Y-%m-%d %H:%M} UTC"
        elif self.end == "runs":
            text += f", {self.max_runs} run{'' if self.max_runs == 1 else 's'}"
        return text
