"""Small inline SVG charts: no JavaScript and no chart library, so a page shows its history as served."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup, escape


def bar_chart(values: Sequence[float], labels: Sequence[str], titles: Sequence[str] | None = None,
              width: int = 600, height: int = 120, color: str = "#3b6ea5") -> Markup:
    """Bars scaled to the largest value, each with a hover title (e.g. the run and its figures)."""
    if not values:
        return Markup("")
    top = max(values) or 1
    step = min(width / len(values), 30)  # a few runs stay slim bars, not one block
    bar = max(step * 0.8, 1)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 16}" '
             f'role="img" aria-label="chart" class="chart">']
    for i, value in enumerate(values):
        h = value / top * height
        x = i * step
        title = escape(titles[i] if titles else f"{labels[i]}: {value}")
        parts.append(f'<rect x="{x:.1f}" y="{height - h:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="{color}">'
                     f"<title>{title}</title></rect>")
    for i in (0, len(values) - 1) if len(values) > 1 else (0,):
        anchor = "start" if i == 0 else "end"
        x = 0 if i == 0 else max(step * len(values), 80)
        parts.append(f'<text x="{x}" y="{height + 13}" font-size="11" text-anchor="{anchor}">'
                     f"{escape(labels[i])}</text>")
    parts.append("</svg>")
    return Markup("".join(parts))
