"""webui.svg.line_chart: values over time with a time axis, a budget line, and nothing unescaped."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from webui.svg import line_chart

T0 = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)


def test_lines_axes_and_limit():
    rate = [(T0 + timedelta(minutes=i), float(i)) for i in range(11)]
    svg = str(line_chart([("fetches/s", rate), ("<b>", [])], title="rate", limit=("budget", 8.0)))
    assert svg.count("<polyline") == 1  # the empty series is not drawn
    assert "<b>" not in svg
    assert "fetches/s: 10" in svg and "budget: 8" in svg  # the latest value and the limit in the legend
    assert ">10:00<" in svg and ">10:05<" in svg and ">10:10 UTC<" in svg  # start, middle, end; no overlap
    ys = [float(v) for v in re.findall(r'<line x1="56" y1="([\d.]+)"', svg)]
    assert len(ys) == 4  # three grid lines and the dashed budget line
    top = max(float(v) for v in re.findall(r'text-anchor="end">([\d.]+)</text>', svg))
    assert top >= 10  # the value axis holds the largest value
    assert "No samples" in str(line_chart([("x", [])]))


def test_a_single_sample_is_drawn_on_a_minute_axis():
    svg = str(line_chart([("rate", [(T0, 2.0)])]))
    assert "<polyline" in svg and "rate: 2" in svg
    assert ">09:59:00<" in svg and ">09:59:30<" in svg and ">10:00:00 UTC<" in svg  # three labels, apart


def test_a_percentage_axis_ends_at_100():
    """The freshness chart's axis went to 200 % (100 rounded up); a share's axis ends at its whole."""
    fresh = [(T0 + timedelta(minutes=i), 90.0 + i) for i in range(10)]
    labels = lambda svg: [float(v) for v in re.findall(r'text-anchor="end">([\d.]+)</text>', svg)]  # noqa: E731
    assert max(labels(str(line_chart([("fresh %", fresh)])))) == 200
    assert max(labels(str(line_chart([("fresh %", fresh)], axis_top=100)))) == 100
