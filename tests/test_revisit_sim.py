"""The revisit benchmark's simulated web (benchmarks/revisit_sim.py): webs of sites (``sites=True``)."""

from __future__ import annotations

import hashlib
import statistics
from collections import Counter

import pytest

from benchmarks.revisit_sim import DAY, make_web


def _fingerprint(pages) -> str:
    rows = [
        (p.uri, p.kind, p.content_type, p.size, round(p.born, 3), [round(t, 3) for t in p.changes], p.noise)
        + (p.etag_epoch, p.host.validators)
        for p in pages
    ]
    return hashlib.sha256(repr(rows).encode()).hexdigest()[:16]


def test_the_independent_web_is_the_one_measured_before_sites_existed():
    """The figures in docs/BENCHMARKS.md before "Revisit policy: sites" were measured on these webs: the site
    profiles must take nothing from the web's own random stream (the value is what e61bf05 made)."""
    pages = make_web(200, 10, seed=1, mix="news")
    assert all(not p.host.profile for p in pages)
    assert _fingerprint(pages) == "29c6b614c862aa20"
    sites = make_web(200, 10, seed=1, mix="news", sites=True)
    assert all(p.host.profile for p in sites)
    assert [(p.host.latency_s, p.host.validators) for p in sites] == [
        (p.host.latency_s, p.host.validators) for p in pages
    ]


def test_a_sites_pages_follow_its_profile():
    """Most of a site's text pages follow the site's process; its periodic pages share its period, and
    on a site with a shared phase they change together; its Poisson pages change at a similar pace."""
    pages = make_web(1000, 30, seed=2, mix="news", sites=True)
    text = [p for p in pages if p.content_type.startswith("text/")]
    hosts = {p.host.name: p.host for p in pages}
    shares = []
    for name, host in hosts.items():
        kinds = Counter(p.kind for p in text if p.host.name == name)
        shares.append(kinds[host.profile["kind"]] / sum(kinds.values()))
    assert statistics.mean(shares) > 0.7  # SITE_SHARE 0.8 of the pages, plus those the mix gives anyway
    together = 0
    for name, host in hosts.items():
        periodic = [p for p in text if p.host.name == name and p.kind == "periodic" and len(p.changes) > 2]
        period = host.profile["period"]
        for p in periodic:
            assert statistics.median(b - a for a, b in zip(p.changes, p.changes[1:], strict=False)) == (
                pytest.approx(period, rel=0.1)
            )
        if host.profile["phase"] is not None and len(periodic) > 1:
            firsts = sorted(p.changes[0] % period for p in periodic if p.born == 0)
            assert firsts[-1] - firsts[0] < 0.1 * period  # one publishing run (1 % jitter)
            together += 1
    assert together  # the seed has a site publishing all its pages at once
    spreads = []
    for name in hosts:
        waits = [
            (30 * DAY - p.born) / max(1, len(p.changes)) for p in text if p.host.name == name and p.kind == "poisson"
        ]
        if len(waits) >= 5:
            spreads.append(max(waits) / min(waits))
    assert spreads and statistics.median(spreads) < 30  # independent pages spread over 2 h .. 20 days (240 x)


def test_the_cho_mix_follows_the_measured_histogram_of_change_rates():
    """Mix ``cho``: 30 % static text pages, the rest Poisson at Cho & Garcia-Molina's measured rates (23 % of all
    pages changing at least daily, 16 % once in one to four months); the mixes' log-uniform 2 h-20 d rates would
    give about 0.49 and 0.05 of the Poisson pages in the two counts below."""
    text = [p for p in make_web(4000, 30, seed=3, mix="cho") if p.content_type.startswith("text/")]
    kinds = Counter(p.kind for p in text)
    assert set(kinds) == {"static", "poisson"} and kinds["static"] / len(text) == pytest.approx(0.30, abs=0.03)
    poisson = [p for p in text if p.kind == "poisson" and p.born == 0]
    daily = sum(len(p.changes) >= 25 for p in poisson) / len(poisson)  # 0.23 / 0.70 changing at least daily
    slow = sum(len(p.changes) <= 1 for p in poisson) / len(poisson)  # most of the 1-4 month pages, some 1-4 weeks
    assert 0.30 < daily < 0.40 and 0.22 < slow < 0.36


def test_the_cho_mix_with_sites_draws_each_sites_pace_from_the_histogram():
    """A site's typical time between changes comes from the mix's histogram too: about 0.16 / 0.70 of the
    sites change once in one to four months (the other mixes' 2 h-20 d draw would give none)."""
    hosts = {p.host.name: p.host for p in make_web(10_000, 1, seed=4, mix="cho", sites=True)}
    slow = sum(h.profile["mean_wait"] > 30 * DAY for h in hosts.values()) / len(hosts)
    assert 0.12 < slow < 0.36
    assert max(h.profile["mean_wait"] for h in hosts.values()) <= 120 * DAY


@pytest.mark.parametrize("periods", ["editorial", "any"])
def test_no_page_starts_with_a_last_modified_in_the_future(periods: str):
    """A site's pages all carry its period (its periodic ones publish on it): the first version of its Poisson,
    static and bursty pages was dated one period before their first change, often after the run's start, so the
    policy saw a date in the future and stopped trusting the host's dates (every site with a period)."""
    for sites in (False, True):
        for page in make_web(1000, 30, 1, "news", sites=sites, periods=periods):
            if page.born == 0:
                assert page.epoch_times[0] <= 0, (page.kind, page.epoch_times[0])


def test_periods_on_any_clock_are_drawn_log_uniform_between_2_hours_and_a_week():
    pages = [p for p in make_web(2000, 30, 3, "news", periods="any") if p.kind == "periodic" and len(p.changes) > 2]
    periods = [(p.changes[-1] - p.changes[0]) / (len(p.changes) - 1) for p in pages]
    assert min(periods) >= 2 * 3600 * 0.97 and max(periods) <= 7 * DAY * 1.03
    assert len({round(p / 3600) for p in periods}) > 30  # not a handful of editorial clocks
