"""Charts as inline SVG, drawn on the server: no JavaScript library, no CDN (the machines have no
internet), and a chart still shows in a saved page or a screenshot.

Every label is escaped; the numbers are also in a ``<title>`` per bar (a hover tooltip) and, on the
pages, in the table next to the chart, so nothing is only readable from the drawing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from markupsafe import Markup, escape

BAR_HEIGHT = 16
GAP = 6
LABEL_WIDTH = 190
BAR_WIDTH = 360
VALUE_WIDTH = 150
COLOURS = ("#2f6db3", "#e08a1e", "#4a9a4a", "#b3402f", "#7a5bb3", "#888")


def _fmt(value: float) -> str:
    return f"{value:,.0f}".replace(",", "\u202f")


def hbars(items: Sequence[tuple[str, float]], fmt: Callable[[float], str] = _fmt, title: str = "",
          total: float | None = None) -> Markup:
    """Horizontal bars, one per ``(label, value)``, longest first as given; values with their share of
    ``total`` (default: the sum) written at the end of each bar."""
    if not items:
        return Markup('<p class="muted">No data.</p>')
    biggest = max((v for _, v in items), default=0) or 1
    total = total if total is not None else sum(v for _, v in items)
    height = len(items) * (BAR_HEIGHT + GAP) + GAP
    width = LABEL_WIDTH + BAR_WIDTH + VALUE_WIDTH
    parts = [f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'role="img" aria-label="{escape(title)}" font-size="12" font-family="sans-serif">']
    for i, (label, value) in enumerate(items):
        y = GAP + i * (BAR_HEIGHT + GAP)
        w = max(1.0, BAR_WIDTH * value / biggest) if value else 0
        share = f" ({value / total * 100:.1f}%)" if total else ""
        text = f"{fmt(value)}{share}"
        parts.append(
            f'<g><title>{escape(label)}: {escape(text)}</title>'
            f'<text x="{LABEL_WIDTH - 6}" y="{y + BAR_HEIGHT - 4}" text-anchor="end">{escape(_cut(label))}</text>'
            f'<rect x="{LABEL_WIDTH}" y="{y}" width="{w:.1f}" height="{BAR_HEIGHT}" fill="{COLOURS[0]}"/>'
            f'<text x="{LABEL_WIDTH + w + 4:.1f}" y="{y + BAR_HEIGHT - 4}">{escape(text)}</text></g>')
    parts.append("</svg>")
    return Markup("".join(parts))


def paired_hbars(items: Sequence[tuple[str, float, float]], names: tuple[str, str],
                 fmt: Callable[[float], str] = _fmt, title: str = "") -> Markup:
    """Two bars per label (a comparison: run vs run, year vs year), with a legend."""
    if not items:
        return Markup('<p class="muted">No data.</p>')
    biggest = max((max(a, b) for _, a, b in items), default=0) or 1
    row = 2 * BAR_HEIGHT + GAP
    height = 24 + len(items) * (row + GAP)
    width = LABEL_WIDTH + BAR_WIDTH + VALUE_WIDTH
    parts = [f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'role="img" aria-label="{escape(title)}" font-size="12" font-family="sans-serif">']
    for j, name in enumerate(names):
        x = LABEL_WIDTH + j * 170
        parts.append(f'<rect x="{x}" y="4" width="12" height="12" fill="{COLOURS[j]}"/>'
                     f'<text x="{x + 16}" y="14">{escape(_cut(name, 24))}</text>')
    for i, (label, a, b) in enumerate(items):
        y = 24 + i * (row + GAP)
        parts.append(f'<text x="{LABEL_WIDTH - 6}" y="{y + BAR_HEIGHT + 2}" text-anchor="end">'
                     f'{escape(_cut(label))}</text>')
        for j, value in enumerate((a, b)):
            yy = y + j * BAR_HEIGHT
            w = max(1.0, BAR_WIDTH * value / biggest) if value else 0
            parts.append(
                f'<g><title>{escape(label)}, {escape(names[j])}: {escape(fmt(value))}</title>'
                f'<rect x="{LABEL_WIDTH}" y="{yy}" width="{w:.1f}" height="{BAR_HEIGHT - 2}" fill="{COLOURS[j]}"/>'
                f'<text x="{LABEL_WIDTH + w + 4:.1f}" y="{yy + BAR_HEIGHT - 5}">{escape(fmt(value))}</text></g>')
    parts.append("</svg>")
    return Markup("".join(parts))


def _cut(label: str, n: int = 30) -> str:
    return label if len(label) <= n else label[: n - 1] + "…"
