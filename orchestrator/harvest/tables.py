"""Plain-text tables for the command line: aligned columns, UTC times, byte units as the glossary counts."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime


def cell(value: object) -> str:
    if value is None or value == "":
        return "-"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return str(value)


def render(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    text_rows = [[cell(v) for v in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in text_rows)]) for i, h in enumerate(headers)]
    lines = [
        "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip(),
        "  ".join("-" * w for w in widths),
    ]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in text_rows]
    return "\n".join(lines)


def filesize(value: int | None) -> str:
    """A byte count for people, in binary units (``1.5 MB`` is 1.5 × 1024² bytes), for the CLI's tables and the
    web UI's pages alike; a budget's -1 (any negative) reads "unlimited", an unknown size "-"."""
    if value is None:
        return "-"
    if value < 0:
        return "unlimited"
    size = float(value)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1024 or unit == "TB":
            return f"{value} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{value} B"
