"""The Jinja2 environment of the web UI: Django's static and url helpers, role checks, messages, and
times and byte units as the glossary shows them (UTC; 1 KB = 1024 B as Heritrix counts)."""

from __future__ import annotations

from datetime import datetime

from django.contrib.messages import get_messages
from django.templatetags.static import static
from django.urls import reverse
from jinja2 import Environment

from webui import access


def filesize(value: int | None) -> str:
    if value is None or value < 0:
        return "unlimited" if value == -1 else "-"
    size = float(value)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1024 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{value} B"


def utc(value: datetime | None, seconds: bool = False) -> str:
    """A time as ``2026-11-23 14:05 UTC``: the server stores UTC and shows UTC, never local time."""
    if value is None:
        return "-"
    return value.strftime("%Y-%m-%d %H:%M:%S UTC" if seconds else "%Y-%m-%d %H:%M UTC")


def number(value: int | float | None) -> str:
    """Thousands separated by a thin space, so 4 000 000 reads at a glance."""
    if value is None:
        return "-"
    if value == -1:
        return "unlimited"
    return f"{value:,}".replace(",", "\u202f")


def duration(seconds: float | None) -> str:
    """A wait as a person reads it: ``45 s``, ``12 min``, ``3 h 20 min``, ``2 d 4 h``."""
    if seconds is None:
        return "-"
    seconds = max(float(seconds), 0.0)
    if seconds < 60:
        return f"{seconds:.0f} s" if seconds >= 1 or seconds == 0 else f"{seconds * 1000:.0f} ms"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


def environment(**options: object) -> Environment:
    env = Environment(**options)
    env.globals.update(
        static=static,
        url=lambda name, *args, **kwargs: reverse(name, args=args or None, kwargs=kwargs or None),
        can=access.can, READ=access.READ, CURATE=access.CURATE, ENGINEER=access.ENGINEER,
        get_messages=get_messages,
    )
    env.filters.update(filesize=filesize, utc=utc, number=number, duration=duration)
    return env
