"""The Jinja2 environment of the web UI: Django's static and url helpers, and byte units as the
Heritrix glossary counts them (1 KB = 1024 B)."""

from __future__ import annotations

from django.templatetags.static import static
from django.urls import reverse
from jinja2 import Environment


def filesize(value: int | None) -> str:
    if value is None or value < 0:
        return "unlimited" if value == -1 else "-"
    size = float(value)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1024 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{value} B"


def environment(**options: object) -> Environment:
    env = Environment(**options)
    env.globals.update(static=static, url=lambda name, *args: reverse(name, args=args))
    env.filters["filesize"] = filesize
    return env
