"""Charts as inline SVG, drawn on the server: no JavaScript library, no CDN (the machines have no
internet), and a chart still shows in a saved page or a screenshot.

Every label is escaped; the numbers are also in a ``<title>`` per bar (a hover tooltip) and, on the
pages, in the table next to the chart, so nothing is only readable from the drawing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from markupsafe import Markup, escape

BAR_HEIGHT = 16
GAP = 6
LABEL_WIDTH = 190
BAR_WIDTH = 360
VALUE_WIDTH = 150
COLOURS = ("#2f6db3", "#e08a1e", "#4a9a4a", "#b3402f", "#7a5bb3", "#888")


def _fmt(value: float) -> str:
    return f"{value:,.0f}".replace(",", "\u202f")


def hbars(
    items: Sequence[tuple[str, float]], fmt: Callable[[float], str] = _fmt, title: str = "", total: float | None = None
) -> Markup:
    """Horizontal bars, one per ``(label, value)``, longest first as given; values with their share of
    ``total`` (default: the sum) written at the end of each bar."""
    if not items:
        return Markup('<p class="muted">No data.</p>')
    biggest = max((v for _, v in items), default=0) or 1
    total = total if total is not None else sum(v for _, v in items)
    height = len(items) * (BAR_HEIGHT + GAP) + GAP
    width = LABEL_WIDTH + BAR_WIDTH + VALUE_WIDTH
    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(title)}" font-size="12" font-family="sans-serif">'
    ]
    for i, (label, value) in enumerate(items):
        y = GAP + i * (BAR_HEIGHT + GAP)
        w = max(1.0, BAR_WIDTH * value / biggest) if value else 0
        share = f" ({value / total * 100:.1f}%)" if total else ""
        text = f"{fmt(value)}{share}"
        parts.append(
            f"<g><title>{escape(label)}: {escape(text)}</title>"
            f'<text x="{LABEL_WIDTH - 6}" y="{y + BAR_HEIGHT - 4}" text-anchor="end">{escape(_cut(label))}</text>'
            f'<rect x="{LABEL_WIDTH}" y="{y}" width="{w:.1f}" height="{BAR_HEIGHT}" fill="{COLOURS[0]}"/>'
            f'<text x="{LABEL_WIDTH + w + 4:.1f}" y="{y + BAR_HEIGHT - 4}">{escape(text)}</text></g>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def paired_hbars(
    items: Sequence[tuple[str, float, float]],
    names: tuple[str, str],
    fmt: Callable[[float], str] = _fmt,
    title: str = "",
) -> Markup:
    """Two bars per label (a comparison: run vs run, year vs year), with a legend."""
    if not items:
        return Markup('<p class="muted">No data.</p>')
    biggest = max((max(a, b) for _, a, b in items), default=0) or 1
    row = 2 * BAR_HEIGHT + GAP
    height = 24 + len(items) * (row + GAP)
    width = LABEL_WIDTH + BAR_WIDTH + VALUE_WIDTH
    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(title)}" font-size="12" font-family="sans-serif">'
    ]
    for j, name in enumerate(names):
        x = LABEL_WIDTH + j * 170
        parts.append(
            f'<rect x="{x}" y="4" width="12" height="12" fill="{COLOURS[j]}"/>'
            f'<text x="{x + 16}" y="14">{escape(_cut(name, 24))}</text>'
        )
    for i, (label, a, b) in enumerate(items):
        y = 24 + i * (row + GAP)
        parts.append(
            f'<text x="{LABEL_WIDTH - 6}" y="{y + BAR_HEIGHT + 2}" text-anchor="end">{escape(_cut(label))}</text>'
        )
        for j, value in enumerate((a, b)):
            yy = y + j * BAR_HEIGHT
            w = max(1.0, BAR_WIDTH * value / biggest) if value else 0
            parts.append(
                f"<g><title>{escape(label)}, {escape(names[j])}: {escape(fmt(value))}</title>"
                f'<rect x="{LABEL_WIDTH}" y="{yy}" width="{w:.1f}" height="{BAR_HEIGHT - 2}" fill="{COLOURS[j]}"/>'
                f'<text x="{LABEL_WIDTH + w + 4:.1f}" y="{yy + BAR_HEIGHT - 5}">{escape(fmt(value))}</text></g>'
            )
    parts.append("</svg>")
    return Markup("".join(parts))


def _cut(label: str, n: int = 30) -> str:
    return label if len(label) <= n else label[: n - 1] + "…"


def _nice(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 × 10^k at or above ``value``: an axis top a reader can take in."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * power:
            return step * power
    return 10 * power


def _short_number(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value < 10 else _fmt(value)


def line_chart(
    lines: Sequence[tuple[str, Sequence[tuple[datetime, float]]]],
    title: str = "",
    limit: tuple[str, float] | None = None,
    width: int = 720,
    height: int = 170,
    fmt: Callable[[float], str] = _short_number,
    axis_top: float | None = None,
) -> Markup:
    """Values over time, one line per ``(name, [(time, value), …])``, with a time axis (UTC) and a value
    axis from 0 (to ``axis_top`` when given: a percentage's 100, where the rounded-up axis of 100 went to 200);
    ``limit`` (name, value) is drawn as a dashed line (a budget the values should stay under).

    Three time labels (start, middle, end) at most, so dates never overlap; the latest value of each line
    is written in its legend and every point carries a hover title.
    """
    drawn = [(name, list(points)) for name, points in lines if points]
    if not drawn:
        return Markup('<p class="muted">No samples yet: the chart starts with the first heartbeats.</p>')
    left, right, top, bottom = 56, 12, 24, 22
    plot_w, plot_h = width - left - right, height - top - bottom
    times = [t for _, points in drawn for t, _ in points]
    start, end = min(times), max(times)
    if (end - start).total_seconds() < 60:  # the first samples of a job: a minute's axis, labels apart
        start = end - timedelta(seconds=60)
    span = (end - start).total_seconds()
    biggest = max([v for _, points in drawn for _, v in points] + [limit[1] if limit else 0])
    y_top = axis_top if axis_top is not None else _nice(biggest * 1.05)

    def x(t: datetime) -> float:
        return left + (t - start).total_seconds() / span * plot_w

    def y(v: float) -> float:
        return top + plot_h - max(v, 0) / y_top * plot_h

    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(title)}" font-size="11" font-family="sans-serif">'
    ]
    for frac in (0, 0.5, 1):  # value axis: 0, half, top, with faint grid lines
        yy = top + plot_h - frac * plot_h
        parts.append(
            f'<line x1="{left}" y1="{yy:.1f}" x2="{left + plot_w}" y2="{yy:.1f}" stroke="#ddd"/>'
            f'<text x="{left - 4}" y="{yy + 4:.1f}" text-anchor="end">{escape(fmt(y_top * frac))}</text>'
        )
    stamp = "%m-%d %H:%M" if span > 86400 else "%H:%M:%S" if span < 600 else "%H:%M"
    # Labels at the axis' ends and middle, not the data's: a first sample alone (end == start) put all
    # three on one spot, one over the other.
    axis_end = start + timedelta(seconds=span)
    for t, anchor in ((start, "start"), (start + (axis_end - start) / 2, "middle"), (axis_end, "end")):
        parts.append(
            f'<text x="{x(t):.1f}" y="{height - 6}" text-anchor="{anchor}">'
            f"{escape(t.strftime(stamp))}{' UTC' if anchor == 'end' else ''}</text>"
        )
    if limit:
        ly = y(limit[1])
        parts.append(
            f"<g><title>{escape(limit[0])}: {escape(fmt(limit[1]))}</title>"
            f'<line x1="{left}" y1="{ly:.1f}" x2="{left + plot_w}" y2="{ly:.1f}" stroke="{COLOURS[3]}" '
            f'stroke-dasharray="6 4"/></g>'
        )
    legend_x = left
    for i, (name, points) in enumerate(drawn):
        colour = COLOURS[i % len(COLOURS)]
        path = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in points)
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.8" points="{path}"/>')
        step = max(1, len(points) // 60)  # hover targets: at most ~60 per line, and always the latest
        for t, v in points[::step] + ([points[-1]] if (len(points) - 1) % step else []):
            parts.append(
                f'<circle cx="{x(t):.1f}" cy="{y(v):.1f}" r="2.2" fill="{colour}">'
                f"<title>{escape(name)} {escape(t.strftime('%Y-%m-%d %H:%M:%S'))} UTC: "
                f"{escape(fmt(v))}</title></circle>"
            )
        label = f"{name}: {fmt(points[-1][1])}"
        parts.append(
            f'<rect x="{legend_x}" y="5" width="10" height="10" fill="{colour}"/>'
            f'<text x="{legend_x + 14}" y="14">{escape(_cut(label, 40))}</text>'
        )
        legend_x += 24 + 6.2 * len(_cut(label, 40))
    if limit:
        label = f"{limit[0]}: {fmt(limit[1])}"
        parts.append(
            f'<line x1="{legend_x}" y1="10" x2="{legend_x + 14}" y2="10" stroke="{COLOURS[3]}" '
            f'stroke-dasharray="4 2"/><text x="{legend_x + 18}" y="14">{escape(_cut(label, 40))}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def columns(
    values: Sequence[float],
    labels: Sequence[str],
    titles: Sequence[str] | None = None,
    fmt: Callable[[float], str] = _short_number,
    title: str = "",
    width: int = 720,
    height: int = 190,
) -> Markup:
    """Vertical bars in order (oldest left: a domain's harvests, a definition's runs) with a value axis
    from 0 (its top a round number, labelled with ``fmt``) and as many x labels (dates) as fit without
    overlapping: every k-th label, k chosen from the labels' width. Each bar's hover title says its
    figures (``titles``, default "label: value")."""
    if not values:
        return Markup('<p class="muted">No data.</p>')
    left, right, top, bottom = 64, 12, 14, 26
    plot_w, plot_h = width - left - right, height - top - bottom
    y_top = _nice(max(values) * 1.05)
    slot = plot_w / len(values)
    bar = max(min(slot * 0.7, 48), 1.5)
    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(title)}" font-size="11" font-family="sans-serif">'
    ]
    for frac in (0, 0.25, 0.5, 0.75, 1):
        yy = top + plot_h - frac * plot_h
        parts.append(
            f'<line x1="{left}" y1="{yy:.1f}" x2="{left + plot_w}" y2="{yy:.1f}" '
            f'stroke="{"#999" if frac == 0 else "#e4e7ec"}"/>'
            f'<text x="{left - 5}" y="{yy + 4:.1f}" text-anchor="end">{escape(fmt(y_top * frac))}</text>'
        )
    label_w = 6.4 * max(len(label) for label in labels) + 10  # px a label needs at font-size 11
    every = max(1, math.ceil(label_w / slot))
    for i, value in enumerate(values):
        h = value / y_top * plot_h
        x = left + i * slot + (slot - bar) / 2
        tip = escape(titles[i] if titles else f"{labels[i]}: {fmt(value)}")
        parts.append(
            f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{bar:.1f}" height="{h:.1f}" '
            f'fill="{COLOURS[0]}" rx="1.5"><title>{tip}</title></rect>'
        )
        # every k-th label, counted from the latest so the newest run is always named
        if (len(values) - 1 - i) % every == 0:
            cx = left + i * slot + slot / 2
            anchor = "end" if cx + label_w / 2 > width else "start" if cx - label_w / 2 < 0 else "middle"
            parts.append(f'<text x="{cx:.1f}" y="{height - 8}" text-anchor="{anchor}">{escape(labels[i])}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))
