"""The Jinja2 environment of the web UI: Django's static and url helpers, role checks, messages, and
times and byte units as the glossary shows them (UTC; 1 KB = 1024 B as Heritrix counts)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.contrib.messages import get_messages
from django.templatetags.static import static
from django.urls import reverse
from jinja2 import Environment

from harvester.crawllog import LINE_RE
from orchestrator.harvest.archive.replay import collection_of, replay_url
from orchestrator.harvest.tables import filesize
from webui import access


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


def duration(value: timedelta | float | None) -> str:
    """``45 s``, ``3 min 05 s``, ``2 h 04 min``, ``3 d 4 h``, whole units without a zero tail (``12 h``, ``30 min``,
    ``7 d``): how long a job ran (a timedelta) or a revisit wait (seconds), at a glance."""
    if value is None:
        return "-"
    seconds = max(round(value.total_seconds() if isinstance(value, timedelta) else float(value)), 0)
    minutes, s = divmod(seconds, 60)
    hours, m = divmod(minutes, 60)
    days, h = divmod(hours, 24)
    if days:
        return f"{days} d {h} h" if h else f"{days} d"
    if hours:
        return f"{hours} h {m:02d} min" if m else f"{hours} h"
    if minutes:
        return f"{minutes} min {s:02d} s" if s else f"{minutes} min"
    return f"{s} s"


def plural(count: int | None, singular: str, many: str | None = None) -> str:
    """``1 domain``, ``2 domains``, ``4\u202f000 domains``: a count with its noun in the right number (the
    curator read "About 1 domains"). ``many`` for irregular nouns (``plural(n, "copy", "copies")``)."""
    noun = singular if count == 1 else (many or f"{singular}s")
    return f"{number(count)} {noun}"


def crawl_line_replay(line: str) -> str:
    """The replay link of a crawl.log line's capture ("" for a line that stored nothing: a negative status, a
    retried attempt), at the line's fetch time (pywb opens the capture nearest it)."""
    m = LINE_RE.match(line)
    if m is None or int(m["status"]) <= 0 or "willRetry" in m["annotations"].split(","):
        return ""
    return replay_url(m["uri"], m["fetch"][:14] if m["fetch"] != "-" else "")


def environment(**options: object) -> Environment:
    env = Environment(**options)
    env.globals.update(
        static=static,
        url=lambda name, *args, **kwargs: reverse(name, args=args or None, kwargs=kwargs or None),
        can=access.can,
        READ=access.READ,
        CURATE=access.CURATE,
        ENGINEER=access.ENGINEER,
        get_messages=get_messages,
        duration=duration,
        replay_url=replay_url,
        crawl_line_replay=crawl_line_replay,
        replay_collection=collection_of,
    )
    env.filters.update(filesize=filesize, utc=utc, number=number, plural=plural, duration=duration)
    return env
