"""The ceiling of the revisit benchmark's metric: captured versions that lived >= 1 h, at a given freshness,
for a policy that knows every page's change process (issue 12).

No crawler can know it; the figure says how much of the gap between a policy and the goal is the price of
*learning* (visits spent finding out that a page is static, where a periodic page's phase is, how fast a
page changes) and how much could still be gained by allocating better.

**The metric from first principles.** A page whose versions arrive as a Poisson process of rate λ and that
is visited every I = 1/f (at a random phase): a version of lifetime L is captured iff a visit falls in it,
with probability min(1, L/I); versions live Exp(λ), so the share that lives >= h is e^(-λh). The captured
>= h versions per second are::

    C(f) = λ ∫_h^∞ λe^(-λL) min(1, fL) dL = f (G(λI) - G(λh)) + λ e^(-λI)      (I >= h)

with G(y) = 1 - (1 + y)e^(-y) (``∫_0^y u e^(-u) du``); dC/df = G(λI) - G(λh): the marginal captures of one
more visit per second, which tends to (1 + λh)e^(-λh) for a page visited rarely (each visit then finds a new
version, and the version it finds is length-biased: P(L >= h) = (1 + λh)e^(-λh)) and falls to 0 for a page
changing much faster than h (almost all its versions die young). Freshness (Cho & Garcia-Molina) is
(1 - e^(-x))/x with x = λI, and a version found fresh stays fresh for its remaining life, 1/λ on average:
the two goals meet in the same visits, weighed by 1 against 1/λ.

**Known processes.** A static page needs one visit (at birth; fresh for the rest of the run); a periodic
page visited just after each m-th change captures one version per visit and is fresh 1/m of the time
(m = 1, 2, ...); Poisson and bursty pages are visited every 1/f at their mean rate (a bursty page's
hidden state is not used: for those the figure is no upper bound). The allocation maximises
``captures + ν × freshness`` under Σ visits = budget by one multiplier μ per ν (each page takes the
option with the largest ``c + ν F - μ v``); ν is found by bisection so that the freshness is the one asked
for. Where many pages share one marginal value (every periodic page visited after each change earns one
capture per visit) the visits jump at one μ, and the budget is met by mixing the allocations on either
side of the jump (the linear relaxation, :func:`_allocate`; until 2026-11-28 one side was taken, which
on the *news* webs spent up to 14 % more visits than the budget and put their ceiling at 1.59-1.72 x AR
instead of 1.47-1.48 x; *mixed* and *archive* were not affected). The first round (every page's first
visit, 1.6 days at 17 visits per URL per month) and politeness are ignored, so the ceiling is optimistic
by a few per cent; bursty pages are counted as Poisson pages at their mean rate, which overstates what
visits to them capture (their changes come in clusters, and one visit captures one version at most).

**Hindsight.** The ceiling knows more than a page's process: which of the static pages did change in the
run (it visits the others once and counts them fresh throughout) and each Poisson page's rate as the
number of changes that happened over its life. The *causal* ceiling (``causal=True``) takes static and
Poisson pages at their true rates instead (:attr:`benchmarks.revisit_sim.Page.rate`), as a policy told the
true rates would (what the changes of a Poisson page were cannot be known before they happen, only how
often they come); bursty pages stay at the changes that happened, periodic pages known with their phase.
The ``oracle`` rows of the benchmark are told the changes that happened (hindsight), not these rates. A
Poisson page's captures count the version it has when the run starts as well as those born in it.
"""

from __future__ import annotations

import math

from benchmarks.revisit_sim import DAY, HOUR, Page
from harvester.revisit.adaptive import _g as big_g

#: Visit frequencies tried for a Poisson page: 1 per 28 days up to 1 per hour, 20 steps per decade.
_FREQUENCIES = [f for k in range(100) if (f := 10 ** (k / 20) / (28 * DAY)) <= 1 / HOUR]
#: A periodic page is visited after at most every this many changes.
_MAX_SKIP = 64


def captured_rate(rate: float, frequency: float, h: float = HOUR) -> float:
    """Captured versions that lived >= h per second, Poisson(rate) visited every 1/frequency (see above)."""
    interval = 1 / frequency
    if interval <= h:
        return rate * math.exp(-rate * h)
    return frequency * (big_g(rate * interval) - big_g(rate * h)) + rate * math.exp(-rate * interval)


def freshness(rate: float, frequency: float) -> float:
    x = rate / frequency
    return 1.0 if x < 1e-12 else (1 - math.exp(-x)) / x


def _options(page: Page, end: float, causal: bool = False) -> list[tuple[float, float, float]]:
    """(visits, captured versions >= 1 h, fresh seconds) of each way to visit the page over the run."""
    life = end - page.born
    if page.kind == "static" and not causal:
        return [(1.0, 1.0, life)]
    if page.kind == "periodic":
        versions = len(page.changes) + 1
        return [(versions / m, versions / m, life / m) for m in range(1, min(versions, _MAX_SKIP) + 1)]
    if causal and page.kind in ("static", "poisson") and page.rate > 0:
        rate = page.rate
    else:
        rate = max(len(page.changes), 0.2) / life
    # The versions born in the run (rate x life of them), and the one the page has when the run starts, caught
    # with the same probability as any version: captured_rate / rate (its life is Exp(rate) from then on too).
    return [(f * life, captured_rate(rate, f) * (life + 1 / rate), freshness(rate, f) * life) for f in _FREQUENCIES]


def _allocate(options: list[list[tuple[float, float, float]]], budget: float, nu: float) -> tuple[float, float]:
    """(captures, fresh seconds) of the best allocation of ``budget`` visits for weight ``nu``: the
    Lagrangian solution, bisecting the price μ of a visit. Visits as a function of μ jump where many
    pages share one marginal value (every periodic page visited after each change earns one capture per
    visit): the bracket [lo, hi] ends with more visits than the budget at lo and fewer at hi, and the
    budget is met exactly by mixing the two allocations (the linear relaxation's optimum, an upper bound
    of any integer allocation). Taking either side alone overstated the ceiling by up to 14 % (the side
    over the budget) or understated it."""

    def at(mu: float) -> tuple[float, float, float]:
        visits = captures = fresh = 0.0
        for page in options:
            v, c, f = max(page, key=lambda o: o[1] + nu * o[2] - mu * o[0])
            visits, captures, fresh = visits + v, captures + c, fresh + f
        return visits, captures, fresh

    lo, hi = 1e-9, 1e6
    over, under = at(lo), at(hi)
    for _ in range(48):
        mid = math.sqrt(lo * hi)
        got = at(mid)
        if got[0] > budget:
            lo, over = mid, got
        else:
            hi, under = mid, got
    if over[0] <= budget or over[0] <= under[0]:
        return under[1], under[2]
    share = (budget - under[0]) / (over[0] - under[0])  # of the way from the under- to the over-budget plan
    return under[1] + share * (over[1] - under[1]), under[2] + share * (over[2] - under[2])


def ceiling(
    pages: list[Page], days: float, visits: float, at_freshness: float, causal: bool = False
) -> tuple[float, float]:
    """(captured versions >= 1 h, freshness) of the known-process allocation of ``visits`` visits whose
    freshness is at least ``at_freshness`` (or the most it can reach); ``causal``: with true rates, not
    the changes that happened (see "Hindsight" above). Captures and freshness are expectations."""
    end = days * DAY
    options = [_options(p, end, causal) for p in pages]
    life = sum(end - p.born for p in pages)
    lo, hi = 1e-10, 1e-2  # ν: captures per fresh second; 1e-2 buys freshness at any price
    captures, fresh = _allocate(options, visits, hi)
    best = (captures, fresh / life)
    for _ in range(16):
        nu = math.sqrt(lo * hi)
        captures, fresh = _allocate(options, visits, nu)
        if fresh / life >= at_freshness:
            hi, best = nu, (captures, fresh / life)
        else:
            lo = nu
    return best
