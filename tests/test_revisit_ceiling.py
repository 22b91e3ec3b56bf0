"""The revisit benchmark's ceiling: the captured >= 1 h versions of a Poisson page, derived in
benchmarks/revisit_ceiling.py, checked against the definition integrated numerically."""

from __future__ import annotations

import math

import pytest

from benchmarks.revisit_ceiling import _allocate, captured_rate, ceiling
from benchmarks.revisit_sim import HOUR, make_web, oracle_policy
from harvester.revisit.adaptive import _g as big_g
from harvester.revisit.periodic import FULL
from harvester.revisit.policy import RevisitSettings, Visit


def _by_definition(rate: float, frequency: float, h: float = HOUR, steps: int = 200_000) -> float:
    """λ ∫_h^∞ λe^(-λL) min(1, fL) dL by the midpoint rule (versions per second, lifetime >= h, caught with
    probability min(1, fL))."""
    top = h + 40 / rate
    width = (top - h) / steps
    total = 0.0
    for i in range(steps):
        life = h + (i + 0.5) * width
        total += rate * math.exp(-rate * life) * min(1.0, frequency * life) * width
    return rate * total


@pytest.mark.parametrize(("every_h", "visit_every_h"), [(2, 24), (2, 3), (24, 24), (24, 120), (0.25, 12), (240, 48)])
def test_captured_rate_is_the_definition(every_h: float, visit_every_h: float) -> None:
    rate, frequency = 1 / (every_h * HOUR), 1 / (visit_every_h * HOUR)
    assert captured_rate(rate, frequency) == pytest.approx(_by_definition(rate, frequency), rel=2e-3)


def test_one_more_visit_is_worth_g_of_the_interval_minus_g_of_an_hour() -> None:
    rate, frequency = 1 / (6 * HOUR), 1 / (20 * HOUR)
    step = frequency * 1e-4
    slope = (captured_rate(rate, frequency + step) - captured_rate(rate, frequency - step)) / (2 * step)
    assert slope == pytest.approx(big_g(rate / frequency) - big_g(rate * HOUR), rel=1e-3)
    # a page changing every 10 minutes: most versions die young, a visit is worth little
    fast = 1 / (600.0)
    assert captured_rate(fast, frequency) / frequency < 0.03


def test_the_ceiling_trades_captures_for_freshness_within_the_budget() -> None:
    pages = make_web(60, 4, seed=1)
    loose = ceiling(pages, 4, 60 * 17 * 4 / 30, at_freshness=0.0)
    strict = ceiling(pages, 4, 60 * 17 * 4 / 30, at_freshness=loose[1] + 0.05)
    assert strict[1] >= loose[1] + 0.05
    assert strict[0] < loose[0]


def test_the_allocation_spends_the_budget_where_many_pages_share_one_marginal_value() -> None:
    """100 identical periodic pages (one capture per visit, 30 versions each) and one Poisson page: the
    visits jump from ~0 to 3,000 at one price, so no single price meets a budget of 1,000 visits; the
    allocation mixes both sides of the jump and captures what 1,000 visits can (at most 1,000)."""
    periodic = [(30.0 / m, 30.0 / m, 86400.0 * 30 / m) for m in range(1, 31)]
    poisson = [(f * 30, captured_rate(1 / (6 * HOUR), f / 86400) * 30 * 86400, 0.0) for f in (0.1, 0.5, 1, 2, 4)]
    captures, _ = _allocate([periodic] * 100 + [poisson], 1_000, nu=1e-9)
    assert 990 <= captures <= 1_000 + 4 * 30


def test_the_period_oracle_tells_a_periodic_page_its_period_not_its_phase() -> None:
    """The ``oracle-period`` diagnostic: a periodic page is planned as periodic from its first revisit, with
    its period and every phase still possible (the visits narrow the phase as for a learned fit)."""
    pages = make_web(200, 4, seed=1, mix="news")
    page = next(p for p in pages if p.kind == "periodic" and len(p.changes) > 2)
    mean = (page.changes[-1] - page.changes[0]) / (len(page.changes) - 1)
    policy = oracle_policy(pages, 4, frozenset({"period"}))(RevisitSettings(), 0.01)
    policy.add(page.uri, 0.0)
    for at, body in ((10.0, "a"), (10.0 + 40 * HOUR, "b")):
        policy.visited(page.uri, Visit(200, "text/html", 10, 0.1, None, None, body), at)
    period, phases = policy.state_of(page.uri)["periodic"]
    assert abs(period - mean) < 0.05 * mean
    assert int(phases, 16) == FULL  # (stored in hex) the 40-hour observation says nothing of the phase


def test_the_causal_ceiling_knows_rates_not_the_changes_that_happened() -> None:
    """A web's pages carry their true rates; the causal ceiling plans with those (as a policy told them would)
    where the ceiling plans with the changes the run drew. On static pages it spends visits to keep them fresh
    where the ceiling knew which would never change, and it still counts each page's first version (a review
    found it counted none: 97 captures for 415 static pages that one visit each captures)."""
    pages = make_web(200, 30, seed=2, mix="cho")
    assert all(p.rate > 0 for p in pages if p.kind in ("static", "poisson"))
    for freshness in (0.0, 0.7):
        captured, fresh = ceiling(pages, 30, 200 * 17.0, freshness, causal=True)
        assert fresh >= freshness - 1e-9 and captured > 0
    static = [p for p in pages if p.kind == "static"]
    hindsight, causal = ceiling(static, 30, len(static) * 3.0, 0.0), ceiling(static, 30, len(static) * 3.0, 0.0, True)
    assert hindsight[1] == pytest.approx(1.0)  # every static page fresh after the one visit it needs
    assert causal[1] < 1.0  # a page at one change in 120 days may change the day after its visit
    assert causal[0] >= 0.95 * len(static)  # but each page's first version is still caught
    assert ceiling(static, 30, len(static) * 1.2, 0.0, True)[0] > 0  # a budget of one visit each: no division by 0
