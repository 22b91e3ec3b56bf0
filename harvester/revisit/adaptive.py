"""The netharvest revisit policy ("adaptive"): spend the fetch budget where it captures most.

Heritrix's WaitEvaluator (seed 002 §6.3.2) reacts to the last visit only: ×1.5 when unchanged, ÷1.5
when changed, and it ignores the fetch budget: with an ample budget it leaves most of it unused, with a
starved one every page asks for more visits than there are and the frontier serves whatever is most
overdue. Seed 000 §5 names the way forward: "Some papers [10] have suggested that (in general) document
changes follow a Poisson process and that this could be used to create a better change prediction
algorithm", "One could take that further and suggest that *all* previous visits be taken into account",
and the 'trust level' for HTTP headers it considered and left out. This module does those four things.

1. **Change rate from the whole history** (Cho & Garcia-Molina, "Estimating frequency of change",
   2003): each visit is an observation "changed / not changed since the previous visit, over an interval
   I". With n observations of which X saw a change, the improved estimator for an incomplete change
   history is ``r = -ln((n - X + 0.5) / (n + 0.5)) / I`` (I: the mean interval), which stays finite
   when every visit saw a change and is nearly unbiased where the naive X / (n I) underestimates by
   up to a factor of ln 2 per visit. Counts decay with a half-life (``history_half_life_s``) so a page
   whose pace changes (the politician's site of seed 000 §2, a bursty news page) is followed, and the
   estimate is blended with a prior of one observation at the content class's initial wait (Heritrix's
   text/image/other defaults), which is all a new page has.
2. **Allocation of the budget** (Cho & Garcia-Molina, "Synchronizing a database to improve
   freshness", 2000, and "Effective page refresh policies", 2003): with Poisson change at rate λ and
   visits every 1/f, a page's expected freshness is (f/λ)(1 - e^(-λ/f)) and the rate of visits that find
   a change (= versions captured) is f(1 - e^(-λ/f)). The policy maximises, under Σ f = budget,
   ``captured versions / all versions + freshness_weight × mean freshness``; both terms are concave in f
   and their derivative is ``g(λ/f) × (1/Λ + w/(N λ))`` with ``g(x) = 1 - (1 + x) e^(-x)``, so the
   Lagrange condition gives every page its own ``x = λ/f = g⁻¹(μ / (1/Λ + w/(N λ)))`` for one multiplier
   μ, found by bisection so that the frequencies (clamped to [1/max_wait, 1/min_wait]) sum to the
   budget. Captures alone would give f ∝ λ; freshness alone gives Cho's result that pages changing
   much faster than they can be visited get *fewer* visits; the sum keeps both.
3. **Periodic pages** (an edition page published at 06:00, a bulletin every 6 hours): the brackets
   (previous visit, visit] in which changes were seen are tested for one period P and phase φ with
   every bracket holding one change time φ + kP; a page that passes is visited just after each
   predicted change, one visit per version, until a visit there finds no change.
4. **Validators trusted per host, as far as they proved reliable** (000 §5: "keeping track of the
   prediction made by the HTTP headers and compare them with the hash comparison ... to build up a
   'trust level'"; 002 §5.1 quotes Clausen's 99.66-99.91 % reliability): on a host, header predictions
   of "unchanged" are checked by full downloads until ``trust_after`` of them were right; then one in
   ``verify_every`` is still checked; a single wrong one (the validators stayed while the content
   changed) and the host's validators are never trusted again: full downloads only.

Replanning (``replan_interval_s``) re-solves for μ as the estimates move; between replans each visited
URI gets its next time from the current μ and its new estimate, so the plan follows every visit.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping
from typing import Any

from harvester.revisit.estimate import rate_estimate
from harvester.revisit.policy import (
    UriState,
    Visit,
    _Strategy,
    content_class,
    headers_predict_unchanged,
    host_of,
)

#: A periodic page is visited this fraction of its period after each predicted change (at least 60 s).
PERIODIC_MARGIN = 0.04


def _g(x: float) -> float:
    return 1.0 - (1.0 + x) * math.exp(-x)


_XS = [10 ** (k / 40) for k in range(-6 * 40, int(1.8 * 40) + 1)]  # 1e-6 .. ~63
_GS = [_g(x) for x in _XS]


def g_inverse(c: float) -> float:
    """x with g(x) = c (0 <= c < 1); math.inf for c >= the table's top (the page is not worth a visit)."""
    if c <= _GS[0]:
        return math.sqrt(2 * max(c, 0.0))  # g(x) ~ x²/2 near 0
    if c >= _GS[-1]:
        return math.inf
    i = bisect.bisect_left(_GS, c)
    g0, g1 = _GS[i - 1], _GS[i]
    return _XS[i - 1] + (_XS[i] - _XS[i - 1]) * (c - g0) / (g1 - g0)


def periodic_fit(changes: list[float], min_changes: int) -> tuple[float, float] | None:
    """(period, phase) if every change bracket [a_j, b_j] holds one time phase + k_j period, with the
    brackets narrow enough (on average under a third of the period) for that to mean something."""
    m = len(changes) // 2
    if m < min_changes:
        return None
    a = changes[0::2]
    b = changes[1::2]
    mids = [(a[j] + b[j]) / 2 for j in range(m)]
    gaps = sorted(mids[j + 1] - mids[j] for j in range(m - 1))
    base = gaps[len(gaps) // 2]
    if base <= 0:
        return None
    width = sum(b[j] - a[j] for j in range(m)) / m
    best: tuple[float, float, float] | None = None
    for step in range(-20, 21):
        period = base * (1 + step / 200)
        if width > period / 3:
            continue
        lo, hi = -math.inf, math.inf
        for j in range(m):
            k = round((mids[j] - mids[0]) / period)
            lo = max(lo, a[j] - k * period)
            hi = min(hi, b[j] - k * period)
            if lo > hi:
                break
        else:
            if best is None or hi - lo < best[0]:
                best = (hi - lo, period, hi)  # the latest phase consistent with all brackets
    if best is None:
        return None
    return best[1], best[2]


class AdaptiveStrategy(_Strategy):
    """See the module docstring."""

    def __init__(self, policy: Any) -> None:
        super().__init__(policy)
        self.hosts: dict[str, dict[str, int]] = {}
        self.mu: float | None = None
        self.scale = (1.0, 1.0)  # (1/Λ, w/N) of the last replan
        self.next_replan_at = math.inf
        self.periodic: dict[str, tuple[float, float]] = {}

    # ------------------------------------------------------------------ estimates
    def rate(self, state: UriState) -> float:
        s = self.settings
        return rate_estimate(state, 1.0 / s.initial_wait(state.content_class), s.prior_visits)

    def frequency(self, rate: float, mu: float, scale: tuple[float, float]) -> float:
        """Visits per second for a page changing at ``rate`` under multiplier ``mu`` (clamped)."""
        s = self.settings
        f_min, f_max = 1.0 / s.max_wait_s, 1.0 / s.min_wait_s
        if rate <= 0:
            return f_min
        weight = scale[0] + scale[1] / rate
        x = g_inverse(mu / weight)
        if x == math.inf:
            return f_min
        if x <= 0:
            return f_max
        return min(max(rate / x, f_min), f_max)

    def budget(self) -> float:
        if self.policy.budget_per_s is not None:
            return self.policy.budget_per_s
        # No budget: as many visits as Heritrix's initial waits would make.
        return sum(1.0 / self.settings.initial_wait(st.content_class) for st in self.policy.uris.values())

    # ------------------------------------------------------------------ the strategy
    def added(self, uri: str, state: UriState, now: float) -> None:
        if self.mu is None:
            self.next_replan_at = min(self.next_replan_at, now)

    def removed(self, uri: str, state: UriState) -> None:
        self.periodic.pop(uri, None)

    def restored(self, uri: str, state: UriState) -> None:
        fit = periodic_fit(state.changes, self.settings.periodic_min_changes)
        if fit is not None:
            self.periodic[uri] = fit
        if self.mu is None:
            self.next_replan_at = -math.inf  # replan at the first chance after a restart

    def trust_headers(self, uri: str, state: UriState, now: float) -> bool:
        host = self.hosts.get(host_of(uri))
        if host is None or host["lies"] or host["verified"] < self.settings.trust_after:
            return False  # not (yet) trusted: download and compare the digest
        state.checks += 1
        return state.checks % self.settings.verify_every != 0

    def wait_after(self, uri: str, state: UriState, visit: Visit, changed: bool | None, now: float) -> int:
        s = self.settings
        state.content_class = content_class(s, visit.content_type)
        if visit.downloaded and visit.digest is not None:
            self._verify_validators(uri, state, visit, changed)
        if changed is None:
            return s.default_wait_s * 1000
        wait_s = self._periodic_wait(uri, state, changed, now)
        if wait_s is None:
            wait_s = self._planned_wait(state)
        return int(min(max(wait_s, s.min_wait_s), s.max_wait_s) * 1000)

    def _verify_validators(self, uri: str, state: UriState, visit: Visit, changed: bool | None) -> None:
        """A full download is the truth the validators are checked against."""
        if state.dl_etag is not None or state.dl_last_modified is not None:
            if headers_predict_unchanged(state.dl_etag, state.dl_last_modified, visit.etag, visit.last_modified):
                host = self.hosts.setdefault(host_of(uri), {"verified": 0, "lies": 0})
                if changed:
                    host["lies"] += 1
                    state.validator_misses += 1
                    self.policy.counters["validator_misses"] += 1
                else:
                    host["verified"] += 1
        if visit.etag:
            state.dl_etag = visit.etag
        if visit.last_modified:
            state.dl_last_modified = visit.last_modified

    def _periodic_wait(self, uri: str, state: UriState, changed: bool, now: float) -> float | None:
        fit = self.periodic.get(uri)
        if fit is not None and not changed:
            # A visit just after a predicted change found none: not periodic (any more).
            del self.periodic[uri]
            state.changes.clear()
            return None
        fit = periodic_fit(state.changes, self.settings.periodic_min_changes)
        if fit is None:
            self.periodic.pop(uri, None)
            return None
        period, phase = fit
        if period < self.settings.min_wait_s:
            self.periodic.pop(uri, None)
            return None
        self.periodic[uri] = fit
        margin = max(60.0, PERIODIC_MARGIN * period)
        k = math.floor((now - phase) / period) + 1
        return phase + k * period + margin - now

    def _planned_wait(self, state: UriState) -> float:
        if self.mu is None:
            return float(self.settings.initial_wait(state.content_class))
        return 1.0 / self.frequency(self.rate(state), self.mu, self.scale)

    # ------------------------------------------------------------------ replanning
    def replan(self, now: float) -> Mapping[str, float]:
        s = self.settings
        policy = self.policy
        self.next_replan_at = now + s.replan_interval_s
        fixed_rate = 0.0
        free: list[tuple[str, UriState, float]] = []
        for uri, state in policy.uris.items():
            pinned = s.pinned.get(uri)
            if pinned is not None:
                fixed_rate += 1.0 / pinned
            elif uri in self.periodic:
                fixed_rate += 1.0 / self.periodic[uri][0]
            else:
                free.append((uri, state, self.rate(state)))
        if not free:
            return {}
        budget = max(self.budget() - fixed_rate, len(free) / s.max_wait_s)
        total_rate = sum(r for _, _, r in free) or 1.0
        scale = (1.0 / total_rate, s.freshness_weight / len(free))
        rates = [r for _, _, r in free]

        def planned(mu: float) -> float:
            return sum(self.frequency(r, mu, scale) for r in rates)

        lo, hi = (self.mu / 4, self.mu * 4) if self.mu else (1e-12, 1.0)
        while planned(lo) < budget and lo > 1e-30:
            lo /= 8
        while planned(hi) > budget and hi < 1e30:
            hi *= 8
        for _ in range(40):
            mid = math.sqrt(lo * hi)
            if planned(mid) > budget:
                lo = mid
            else:
                hi = mid
            if hi / lo < 1.001:
                break
        self.mu, self.scale = math.sqrt(lo * hi), scale
        moved: dict[str, float] = {}
        for (uri, state, rate) in free:
            if state.last_visit_at is None:
                continue  # not visited yet: its first visit stands
            wait = min(max(1.0 / self.frequency(rate, self.mu, scale), s.min_wait_s), s.max_wait_s)
            new_at = max(now, state.last_visit_at + wait)
            if abs(new_at - state.next_at) > max(1.0, 0.05 * wait):
                state.wait_ms = int(wait * 1000)
                state.next_at = new_at
                moved[uri] = new_at
        return moved

    # ------------------------------------------------------------------ persistence and reporting
    def host_state_of(self, host: str) -> dict[str, Any] | None:
        state = self.hosts.get(host)
        return None if state is None else dict(state)

    def restore_host(self, host: str, state: Mapping[str, Any]) -> None:
        self.hosts[host] = {"verified": int(state.get("verified", 0)), "lies": int(state.get("lies", 0))}

    def dump(self) -> dict[str, Any]:
        return {"hosts": {h: dict(v) for h, v in self.hosts.items()}, "mu": self.mu, "scale": list(self.scale),
                "next_replan_at": self.next_replan_at if math.isfinite(self.next_replan_at) else None}

    def load(self, data: Mapping[str, Any]) -> None:
        for host, state in data.get("hosts", {}).items():
            self.restore_host(host, state)
        self.mu = data.get("mu")
        self.scale = tuple(data.get("scale", (1.0, 1.0)))  # type: ignore[assignment]
        at = data.get("next_replan_at")
        self.next_replan_at = math.inf if at is None else float(at)
        for uri, state in self.policy.uris.items():
            fit = periodic_fit(state.changes, self.settings.periodic_min_changes)
            if fit is not None:
                self.periodic[uri] = fit
