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
   up to a factor of ln 2 per visit. Counts decay per observation (``history_half_life_visits``) so a
   page whose pace changes (the politician's site of seed 000 §2, a bursty news page) is followed, and
   the estimate is shrunk towards the content class's prior rate as a Gamma prior of ``prior_changes``
   changes (:mod:`harvester.revisit.estimate`), which is all a new page has. The class's prior rate is
   learned from the crawl at each replan (empirical Bayes, :meth:`AdaptiveStrategy.class_priors`): the
   class's pooled changes over its pooled observed time, starting from 1 / Heritrix's initial wait.
   The next visit is planned with the rate conditioned on whether the last observation saw a
   change (bursty pages change again soon after a change; Poisson pages do not care).
2. **Allocation of the budget** (Cho & Garcia-Molina, "Synchronizing a database to improve
   freshness", 2000, and "Effective page refresh policies", 2003): with Poisson change at rate λ and
   visits every 1/f, a page's expected freshness is (f/λ)(1 - e^(-λ/f)) and the rate of visits that find
   a change (= versions captured) is f(1 - e^(-λ/f)); counting only versions that lived at least h
   (the minimum wait), a version of life L is caught with probability min(1, fL) and the derivative of
   the captures is ``g(x) - g(λh)`` with x = λ/f and ``g(x) = 1 - (1 + x) e^(-x)``. The policy
   maximises, under Σ f = budget, ``captured versions / all versions + freshness_weight × mean
   freshness``; both terms are concave in f, the freshness derivative is ``g(x) / λ``, so the Lagrange
   condition gives every page its own ``x = g⁻¹((μ + g(λh)/Λ) / (1/Λ + w/(N λ)))`` (Λ = Σ λe^(-λh),
   N pages) for one multiplier μ, found by bisection so that the frequencies (clamped to
   [1/max_wait, 1/min_wait]) sum to the budget. Captures alone would give f ∝ λ; freshness alone
   gives Cho's result that pages changing much faster than they can be visited get *fewer* visits; the
   sum keeps both.
3. **Periodic pages** (an edition page published at 06:00, a bulletin every 6 hours;
   :mod:`harvester.revisit.periodic`): a page whose history fits one period and phase better than a
   Poisson process is visited just after each predicted change (every m-th period when a visit there
   is worth less than μ), one visit per version; each visit narrows the phase, a contradiction drops
   the fit. A page whose every visit found a change is planned as a fast Poisson page: it says nothing
   of its timing, and the timing probes that once asked cost more than they taught (:meth:`wait_after`).
4. **Validators trusted per host, as far as they proved reliable** (000 §5: "keeping track of the
   prediction made by the HTTP headers and compare them with the hash comparison ... to build up a
   'trust level'"; 002 §5.1 quotes Clausen's 99.66-99.91 % reliability): on a host, header predictions
   of "unchanged" are checked by full downloads until ``trust_after`` of them were right; then one in
   ``verify_every`` is still checked; a single wrong one (the validators stayed while the content
   changed) and the host's validators are never trusted again: full downloads only.

5. **Last-Modified dates as change times** (:func:`harvester.revisit.estimate.observe_dates`): on a
   host whose dates never contradicted its digests (:meth:`AdaptiveStrategy.dates_trusted`), a changed
   visit's date is the time of the page's last change: the rate is estimated from change times
   (Cho & Garcia-Molina's estimator for a known last-modified date), the first visit already knows the
   page's age (unless the host's pages share that date: :meth:`_first_date`), and a periodic page's phase
   comes from its dated changes (:meth:`_observations`). A dated page whose every visit found a change is
   planned with its dated rate when that is faster (:meth:`_rate_with`): the digest estimate is capped for it.
   One inconsistent date (a liar, a server stamping the request time, a date in the future) and the
   host's pages go back to the digest-only estimates for good.

Replanning (``replan_interval_s``) re-solves for μ as the estimates move; between replans each visited
URI gets its next time from the current μ and its new estimate, so the plan follows every visit.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Generator, Iterator, Mapping
from typing import Any, TypeVar

from harvester.revisit.estimate import DATE_SKEW_S, dated_rate, http_date, next_rate, observe_dates
from harvester.revisit.periodic import DATED_S, HISTORY, constrain, next_visit, periodic_fit
from harvester.revisit.policy import (
    UriState,
    Visit,
    _Strategy,
    content_class,
    headers_predict_unchanged,
    host_of,
)

#: A periodic page is visited this fraction of its period after the latest possible change time
#: (which already allows for the publisher's jitter), at least 60 s.
PERIODIC_MARGIN = 0.005
#: Site priors (AdaptiveStrategy.host_priors) need this many more observed pages than hosts in a class: the
#: degrees of freedom of the spread within a site, without which no site's mean can be weighed.
SITE_MIN_DF = 5
#: A dated page whose visits all found a change, this many observations at least, is planned with its dated
#: rate when that is faster (AdaptiveStrategy._rate_with).
ALL_CHANGED_OBSERVATIONS = 3
#: A sliced replan (:meth:`AdaptiveStrategy.replan_steps`) yields after this many URIs (or fill slots) of
#: work: about a millisecond, so a crawler that runs it between fetches never holds its reactor for long.
SLICE = 1000

_T = TypeVar("_T")
#: A computation done in slices: each ``next()`` does one slice; the result is StopIteration's value.
Steps = Generator[None, None, _T]


def finish(steps: Steps[_T]) -> _T:
    """Run a sliced computation to its end, at once."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def sorted_in_slices(values: list[_T]) -> Steps[list[_T]]:
    """``sorted(values)`` a slice at a time: runs of :data:`SLICE` sorted, then merged (the same order for
    values that are all distinct; one sort of a million was 0.4 s in one piece)."""
    if len(values) <= SLICE:
        return sorted(values)  # type: ignore[type-var]
    runs = []
    for start in range(0, len(values), SLICE):
        runs.append(sorted(values[start : start + SLICE]))  # type: ignore[type-var]
        yield
    merged: list[_T] = []
    for i, value in enumerate(heapq.merge(*runs)):
        if i % SLICE == 0:
            yield
        merged.append(value)
    return merged


def release(values: list[Any]) -> Steps[None]:
    """Empty a big list a slice at a time (freeing a million tuples at once was 0.3 s)."""
    while values:
        del values[-SLICE:]
        yield


#: First-visit Last-Modified dates a host remembers (AdaptiveStrategy._first_date): this many seen once, and
#: this many seen on several pages; few, as whole seconds, since the host states are journalled together.
FIRST_DATES = 4


def _last_attempt(state: UriState) -> float:
    """When the URI was last tried: its last visit, or a later one that got no answer. A replan counts the
    planned wait from it, as ``visited()`` did after the failure: counted from the last answer, a page of a
    host that is down would be due at once again at every replan."""
    last = state.last_visit_at or 0.0
    return max(last, state.failed_at) if state.failed_at is not None else last


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


class AdaptiveStrategy(_Strategy):
    """See the module docstring."""

    verifies_validators = True  # _verify_validators, against the validators of the last full download

    def __init__(self, policy: Any) -> None:
        super().__init__(policy)
        self.hosts: dict[str, dict[str, Any]] = {}
        self.mu: float | None = None
        self.scale = (1.0, 1.0)  # (1 / Σ λe^(-λh), w / N) of the last replan
        self.next_replan_at = math.inf
        self.planned_rate: float | None = None  # visits per second the last plan makes
        #: per content class, the rate a page with no history is assumed to change at (see class_priors)
        self.class_prior: dict[str, float] = {}
        #: per (host, content class), the prior rate of the host's pages (see host_priors)
        self.host_prior: dict[tuple[str, str], float] = {}
        #: URIs visited while a replan runs in slices (replan_steps): its plan for them is out of date
        self._visited_meanwhile: set[str] | None = None

    # ------------------------------------------------------------------ estimates
    def rate(self, state: UriState, uri: str | None = None) -> float:
        host = None if uri is None else host_of(uri)
        prior = self._class_prior(state.content_class)
        if host is not None and self.host_prior:
            prior = self.host_prior.get((host, state.content_class), prior)
        return self._rate_with(state, host, prior)

    def _class_prior(self, content_class: str) -> float:
        return self.class_prior.get(content_class) or 1.0 / self.settings.initial_wait(content_class)

    def _rate_with(self, state: UriState, host: str | None, prior: float) -> float:
        """The URI's rate shrunk towards ``prior``; on a host whose dates are trusted, from its dated changes.

        A dated page whose every visit found a change (:data:`ALL_CHANGED_OBSERVATIONS` at least) is planned
        with its dated rate, changes / observed time (Cho & Garcia-Molina's estimator for a known last-modified
        date), up to one change per minimum wait, when that is faster. The digest estimate cannot tell such a
        page's pace: with no unchanged visit it tops out near ln(2n + 1) / interval whatever the true rate. A
        page changing every 90 minutes, visited 16 hours apart, looked like a 5-hour page, which the allocation
        values most; such pages got about five times the visits the policy gives them told the true rates. The
        dates know: each says when the last change was. Measured (docs/BENCHMARKS.md, "uncapped dated rates"):
        +0.009 of captured / AR at AR's freshness on the second simulator, neutral on ours.

        The rule only raises a rate: a page dated a year old at its first visit that then changes at every
        visit keeps that year in its dated evidence for many visits. And it leaves out dated changes within
        :data:`DATE_SKEW_S` of the visit on average: a server stamping Last-Modified with the time of the
        request on pages that change at every visit (a nonce) passes the date checks, and its dates would say
        "one change a second", which the allocation drops to the longest wait."""
        s = self.settings
        if host is None or state.lm_t <= 0 or not self.dates_trusted(host):
            return next_rate(state, prior, s.prior_changes)
        rate = next_rate(state, prior, s.prior_changes, dated_rate(state, prior, s.prior_changes))
        if (
            state.visits > ALL_CHANGED_OBSERVATIONS
            and state.n > 0
            and state.x >= state.n - 1e-9
            and state.lm_t > DATE_SKEW_S * state.lm_x
        ):
            rate = max(rate, min(state.lm_x / state.lm_t, 1.0 / s.min_wait_s))
        return rate

    def dates_trusted(self, host: str) -> bool:
        """A host's Last-Modified dates are used as change times once ``date_trust_after`` changes came
        with a consistent date, until one comes with an inconsistent date (a liar keeping the date across
        a change, a server stamping every response with the time of the request, a date in the future);
        then never again. The default 0 trusts dates from the first visit: a lying host is caught at its
        first lie, and waiting for three verified changes per host cost the benchmark 0.01-0.03 of
        captured / AR (the first round of visits alone takes 1.7 days at the starved budget)."""
        state = self.hosts.get(host) or {}
        if state.get("dates_bad"):
            return False
        return state.get("dates_ok", 0) >= self.settings.date_trust_after

    def class_priors(self, uris: list[str]) -> Steps[dict[str, float]]:
        """The prior rate of each content class, learned from the crawl itself (empirical Bayes): all
        the class's observed changes over all its observed time, with Heritrix's initial wait as one
        pseudo-observation (one change per initial wait) so a class seen little keeps Heritrix's prior.
        Heritrix's 2 days for images assumes images change like text does, scaled; on a web where most
        images never change, every new image would be revisited as if they did until its own history
        says otherwise (five visits a month per static image on the benchmark web, as many as AR)."""
        totals: dict[str, list[float]] = {}
        for i, _, state in self._current(uris):
            if i % SLICE == 0:
                yield
            acc = totals.setdefault(state.content_class, [0.0, 0.0])
            acc[0] += state.x
            acc[1] += state.isum
        return {
            cls: (1.0 + changes) / (self.settings.initial_wait(cls) + observed)
            for cls, (changes, observed) in totals.items()
        }

    def host_priors(self, uris: list[str]) -> Steps[dict[tuple[str, str], float]]:
        """Per (host, content class), the prior rate of the host's pages: the site's own pace, as far as
        sites differ (empirical Bayes on log rates, James-Stein shrinkage).

        A site's pages tend to change alike (a news site's articles, a government site's regulations:
        Fetterly et al. 2003 and Adar et al. 2009 found change behaviour strongly tied to the site), so a
        page with little history of its own is better guessed from its siblings than from the whole
        class. How much better is measured, not assumed: from every visited page's own log rate (its
        estimate under the class prior), the spread within hosts (σ²) and the spread of host means beyond
        what σ² alone would give (τ²); each host's mean of n pages is pulled towards the class's by
        τ² / (τ² + σ²/n). Where hosts do not differ (pages drawn independently of their site) τ² is about 0
        and every host's prior is the class's geometric mean of its pages' rates (the benchmark's independent
        webs measure the same as with the class prior, within noise; its webs of sites +0.04 of captured /
        AR at equal freshness: docs/BENCHMARKS.md, "Revisit policy: sites"). Until the class has
        :data:`SITE_MIN_DF` more pages than hosts (one page per host says nothing of the spread within a
        site) no host gets a prior and the class prior stands."""
        by_class: dict[str, dict[str, list[float]]] = {}
        for i, uri, state in self._current(uris):
            if i % SLICE == 0:
                yield
            if state.n <= 0 and state.lm_t <= 0:
                continue  # no observation yet
            host = host_of(uri)
            rate = self._rate_with(state, host, self._class_prior(state.content_class))
            if rate > 0:
                by_class.setdefault(state.content_class, {}).setdefault(host, []).append(math.log(rate))
        priors: dict[tuple[str, str], float] = {}
        for cls, hosts in by_class.items():
            count = sum(len(values) for values in hosts.values())
            if count - len(hosts) < SITE_MIN_DF:
                continue  # too few sites with several pages to measure the spread within a site
            # The sums in the pages' order, a slice at a time (a replan runs between fetches).
            total, within, work = 0.0, 0.0, 0
            means: dict[str, float] = {}
            for host, values in hosts.items():
                for v in values:
                    total += v
                means[host] = sum(values) / len(values)
                work += len(values)
                if work >= SLICE:
                    work = 0
                    yield
            grand = total / count
            for host, values in hosts.items():
                mean = means[host]
                for v in values:
                    within += (v - mean) ** 2
                work += len(values)
                if work >= SLICE:
                    work = 0
                    yield
            within /= max(1, count - len(hosts))
            tau2 = 0.0
            if len(hosts) > 1:
                spread = sum((m - grand) ** 2 for m in means.values()) / (len(hosts) - 1)
                noise = sum(within / len(values) for values in hosts.values()) / len(hosts)
                tau2 = max(0.0, spread - noise)
            for i, (host, values) in enumerate(hosts.items()):
                if i % SLICE == 0:
                    yield
                pull = tau2 / (tau2 + within / len(values)) if tau2 > 0 else 0.0
                priors[(host, cls)] = math.exp(grand + pull * (means[host] - grand))
        return priors

    def frequency(self, rate: float, mu: float, scale: tuple[float, float]) -> float:
        """Visits per second for a page changing at ``rate`` under multiplier ``mu`` (clamped).

        The marginal value of a visit: captured versions that live at least h (= min wait) gain
        ``g(x) - g(λh)`` per unit of frequency (x = λ/f >= λh), freshness ``g(x) / λ``; weighted by
        ``scale`` = (1 / Σ λe^(-λh), freshness_weight / N) and set equal to ``mu``."""
        s = self.settings
        f_min, f_max = 1.0 / s.max_wait_s, 1.0 / s.min_wait_s
        if rate <= 0:
            return f_min
        weight = scale[0] + scale[1] / rate
        x = g_inverse((mu + scale[0] * _g(rate * s.min_wait_s)) / weight)
        if x == math.inf:
            return f_min
        if x <= 0:
            return f_max
        return min(max(rate / x, f_min), f_max)

    def budget(self) -> float:
        if self.policy.budget_per_s is not None:
            return self.policy.budget_per_s  # exactly: _fill gives the slots the plan leaves idle
        # No budget: as many visits as Heritrix's initial waits would make.
        return sum(1.0 / self.settings.initial_wait(st.content_class) for st in self.policy.uris.values())

    # ------------------------------------------------------------------ the strategy
    def added(self, uri: str, state: UriState, now: float) -> None:
        if self.mu is None:
            self.next_replan_at = min(self.next_replan_at, now)

    def visiting(self, uri: str) -> None:
        if self._visited_meanwhile is not None:
            self._visited_meanwhile.add(uri)

    def restored(self, uri: str, state: UriState) -> None:
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
        last_modified = http_date(visit.last_modified)
        age_known = True
        if last_modified is not None and (state.lm_at is None or state.last_visit_at is None):
            age_known = self._first_date(host_of(uri), last_modified)
        consistent = observe_dates(state, last_modified, changed, now, s.history_half_life_visits, age_known)
        if consistent is not None:
            host = self.hosts.setdefault(host_of(uri), {"verified": 0, "lies": 0})
            key = "dates_ok" if consistent else "dates_bad"
            if consistent is False or changed:
                host[key] = host.get(key, 0) + 1
        if visit.downloaded and visit.digest is not None:
            self._verify_validators(uri, state, visit, changed)
        if changed is None:
            return s.default_wait_s * 1000
        observations = self._observations(uri, state, changed, consistent, now)
        wait_s = self._periodic_wait(uri, state, observations, now)
        if wait_s is None:
            # No timing probes for a page whose last three visits found a change (a wait cut to a quarter,
            # one visit in two, until 2026-11-28): a replan put most of them back to the planned wait, the
            # few that stayed rarely made a dateless page periodic, and without them the benchmark's twelve
            # webs capture 0.009 more of AR's versions at equal freshness (docs/BENCHMARKS.md, "Revisit
            # policy: no timing probes").
            wait_s = self._planned_wait(state, uri)
        return int(min(max(wait_s, s.min_wait_s), s.max_wait_s) * 1000)

    def _first_date(self, host: str, last_modified: float) -> bool:
        """Whether a page's Last-Modified on its first visit tells its age: not when another page of the host
        came with the very same date on its first visit. A date shared to the second by several pages is the
        day a site was built, imported or deployed (or the start of a simulation), not when each page last
        changed: taken as each page's age it made every page of a site look as fast, or as slow, as that one
        day says (docs/BENCHMARKS.md, "a second simulator"). The page's later dates count as usual."""
        state = self.hosts.setdefault(host, {"verified": 0, "lies": 0})
        second = int(last_modified)  # HTTP dates are whole seconds
        shared = state.setdefault("shared_dates", [])
        if second in shared:
            return False
        seen = state.setdefault("first_dates", [])
        if second in seen:  # a second page with this date: shared from now on, whatever other dates come
            seen.remove(second)
            shared.append(second)
            del shared[:-FIRST_DATES]
            return False
        seen.append(second)
        del seen[:-FIRST_DATES]
        return True

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

    def _observations(
        self, uri: str, state: UriState, changed: bool, consistent: bool | None, now: float
    ) -> list[tuple[float, float, bool]]:
        """What this visit tells of the page's change times: "changed or not in (previous visit, now]";
        on a host whose dates are trusted a change dated τ is two sharper facts, "a change at τ" and
        "none in (τ, now]", and the history keeps those instead (a periodic page's phase is then known
        from its first changes)."""
        if state.last_visit_at is None:
            return []
        whole = [(state.last_visit_at, now, changed)]
        tau = state.lm_at
        if not (
            changed
            and consistent
            and tau is not None
            and state.last_visit_at < tau < now
            and self.dates_trusted(host_of(uri))
        ):
            return whole
        dated = [(tau - DATED_S, tau, True), (tau, now, False)]
        if len(state.history) >= 3 and state.history[-2] == now:
            del state.history[-3:]
            for start, end, flag in dated:
                state.history.extend((start, end, 1.0 if flag else 0.0))
            del state.history[: -3 * HISTORY]
        return dated

    def _periodic_wait(
        self, uri: str, state: UriState, observations: list[tuple[float, float, bool]], now: float
    ) -> float | None:
        """Just after the next predicted change of a page recognised as periodic; None otherwise.
        Each visit narrows the page's possible phases; one that contradicts them drops the fit, and
        the history is tested afresh."""
        s = self.settings
        changed = any(flag for _, _, flag in observations)
        if state.periodic is not None and observations:
            period = state.periodic[0]
            phases: int | None = int(state.periodic[1])
            for start, end, flag in observations:
                phases = constrain(phases, start, end, flag, period) if phases else phases
            if phases:
                state.periodic = [period, phases]
                return self._periodic_next(state, now)
            state.periodic = None
        elif not changed:
            return None
        fit = periodic_fit(state.history, s.periodic_min_changes, s.min_wait_s)
        if fit is None:
            return None
        state.periodic = [fit[0], fit[1]]
        return self._periodic_next(state, now)

    def _periodic_next(self, state: UriState, now: float) -> float:
        """Wait from ``now`` to just after the change m periods on (m: :meth:`periods_between_visits`);
        when visited every period, a wide phase run is halved first (see periodic.next_visit)."""
        period, phases = state.periodic[0], int(state.periodic[1])
        skip = self.periods_between_visits(period) - 1
        margin = max(60.0, PERIODIC_MARGIN * period)
        return next_visit(now + skip * period, period, phases, bisect=skip == 0) + margin - now

    def periods_between_visits(self, period: float) -> int:
        """A periodic page visited just after a change captures one version per visit and is fresh for
        the period that follows: worth ``1/Λ + w P / N`` per unit of visit rate, against the multiplier
        μ every other visit earns. Visited every period when that is worth μ, else every m-th."""
        if not self.mu:
            return 1
        value = self.scale[0] + self.scale[1] * period
        return max(1, math.ceil(self.mu / value))

    def _planned_wait(self, state: UriState, uri: str | None = None, rate: float | None = None) -> float:
        """The wait the current plan gives a free page (``rate``: its rate, when the caller has it)."""
        if self.mu is None:
            return float(self.settings.initial_wait(state.content_class))
        rate = self.rate(state, uri) if rate is None else rate
        return 1.0 / self.frequency(rate, self.mu, self.scale)

    # ------------------------------------------------------------------ replanning
    def replan(self, now: float) -> Mapping[str, float]:
        return finish(self.replan_steps(now))

    def replan_steps(self, now: float) -> Steps[dict[str, float]]:
        """The replan in slices of :data:`SLICE` URIs; run to its end at once, it is :meth:`replan`.

        A crawler runs the slices between its fetches (a replan of 100,000 URIs held the reactor for 10 s,
        of 1,000,000 for 90 s: docs/BENCHMARKS.md, "Continuous crawl at scale"). Meanwhile URIs come, go and
        are visited: the plan is made over the URIs there were when it began, with the priors and the μ of
        before it until it has its own; a URI removed meanwhile is not moved, nor one visited meanwhile (its
        visit planned it with what was known then), and one added meanwhile keeps its first visit. The next
        replan time is set at the end, so a crawler's checkpoint journals a whole plan."""
        s = self.settings
        policy = self.policy
        horizon = now + s.replan_interval_s
        uris = list(policy.uris)  # the URIs, not (URI, state) pairs: a million tuples took 0.2-1.3 s to make
        self._visited_meanwhile = set()
        try:
            return (yield from self._replan_steps(now, horizon, uris))
        finally:
            self._visited_meanwhile = None

    def _current(self, uris: list[str]) -> Iterator[tuple[int, str, UriState]]:
        """(index, URI, state) of those of ``uris`` the policy still has (a sliced replan's snapshot)."""
        get = self.policy.uris.get
        for i, uri in enumerate(uris):
            state = get(uri)
            if state is not None:
                yield i, uri, state

    def _replan_steps(self, now: float, horizon: float, uris: list[str]) -> Steps[dict[str, float]]:
        s = self.settings
        yield
        self.class_prior = yield from self.class_priors(uris)
        self.host_prior = yield from self.host_priors(uris)
        fixed_rate = 0.0
        free: list[tuple[str, UriState, float]] = []
        rates: dict[str, float] = {}
        periodic: list[tuple[str, UriState]] = []
        for i, uri, state in self._current(uris):
            if i % SLICE == 0:
                yield
            pinned = s.pinned.get(uri)
            if pinned is not None:
                fixed_rate += 1.0 / pinned
            elif state.periodic is not None:
                periodic.append((uri, state))
            else:
                rate = rates[uri] = self.rate(state, uri)
                free.append((uri, state, rate))
        if not free and not periodic:
            self.next_replan_at = horizon
            return {}
        budget = max(self.budget() - fixed_rate, (len(free) + len(periodic)) / s.max_wait_s)
        h = s.min_wait_s
        total_rate: float = 0
        for i, (_, _, r) in enumerate(free):
            if i % SLICE == 0:
                yield
            total_rate += r * math.exp(-r * h)
        total_rate += sum(1 / st.periodic[0] for _, st in periodic)  # type: ignore[index]
        scale = (1.0 / (total_rate or 1.0), s.freshness_weight / (len(free) + len(periodic)))
        f_min, f_max = 1.0 / s.max_wait_s, 1.0 / s.min_wait_s
        # Per page: (λ, weight, capture offset), so that x = g⁻¹((μ + offset) / weight) (see frequency()).
        terms = []
        for i, (_, _, r) in enumerate(free):
            if i % SLICE == 0:
                yield
            if r > 0:
                terms.append((r, scale[0] + scale[1] / r, scale[0] * _g(r * h)))
        floor = (len(free) - len(terms)) * f_min
        # Periodic pages: (period, value of visiting every period), visited every ceil(μ / value) periods.
        cycles = [(st.periodic[0], scale[0] + scale[1] * st.periodic[0]) for _, st in periodic]  # type: ignore[index]

        def planned(mu: float) -> Steps[float]:
            total = floor
            for i, (r, weight, offset) in enumerate(terms):
                if i % SLICE == 0:
                    yield
                x = g_inverse((mu + offset) / weight)
                total += f_min if x == math.inf else f_max if x <= 0 else min(max(r / x, f_min), f_max)
            for period, value in cycles:
                total += max(f_min, 1.0 / (period * max(1, math.ceil(mu / value))))
            return total

        lo, hi = (self.mu / 2, self.mu * 2) if self.mu else (1e-12, 1.0)
        while (yield from planned(lo)) < budget and lo > 1e-30:
            lo /= 8
        while (yield from planned(hi)) > budget and hi < 1e30:
            hi *= 8
        for _ in range(60):
            mid = math.sqrt(lo * hi)
            if (yield from planned(mid)) > budget:
                lo = mid
            else:
                hi = mid
            if hi / lo < 1.01:
                break
        self.mu, self.scale = hi, scale  # the side of the bracket that keeps within the budget
        self.planned_rate = (yield from planned(hi)) + fixed_rate
        moved: dict[str, float] = {}
        for i, (uri, state, rate) in enumerate(free):
            if i % SLICE == 0:
                yield
            if state.last_visit_at is None or not self._as_planned(uri, state):
                continue  # not visited yet (its first visit stands), visited or removed meanwhile
            wait = min(max(1.0 / self.frequency(rate, self.mu, scale), s.min_wait_s), s.max_wait_s)
            self._move(uri, state, _last_attempt(state) + wait, wait, now, moved)
        for i, (uri, state) in enumerate(periodic):
            if i % SLICE == 0:
                yield
            if state.last_visit_at is not None and self._as_planned(uri, state):
                since = _last_attempt(state)
                wait = self._periodic_next(state, since)
                self._move(uri, state, since + wait, wait, now, moved)
        yield from self._fill(now, horizon, uris, free, rates, moved)
        for values in (free, terms, periodic):
            yield from release(values)
        self.next_replan_at = horizon
        return moved

    def _as_planned(self, uri: str, state: UriState) -> bool:
        """Whether a sliced replan's plan for ``uri`` stands: neither removed nor visited since it began."""
        return self.policy.uris.get(uri) is state and not (self._visited_meanwhile and uri in self._visited_meanwhile)

    def _fill(
        self,
        now: float,
        horizon: float,
        uris: list[str],
        free: list[tuple[str, UriState, float]],
        rates: dict[str, float],
        moved: dict[str, float],
    ) -> Steps[None]:
        """Pull visits forward into the fetch slots the plan would leave idle before the next replan.

        The plan spends the budget on average, but its due times bunch: the pages of the first round get
        their second visits after about the same wait, a round of unchanged visits pushes a group of pages
        back together. A frontier that enforces the budget cannot lend a slot to the future, so an hour in
        which few URIs are due is an hour of budget lost: a plan of exactly the budget used 96-98 % of it
        on the benchmark's webs, and planning 5 % over it (what this replaced) made every visit later.
        Walking the slots the budget opens until the next replan (one every 1 / budget seconds, the most
        overdue URI first, as the frontier serves them; each visit due again within the window after its
        planned wait, so the pages visited often are counted as often), each slot that would find nothing
        due takes a free page planned after the window, the most promising first (:meth:`_fill_candidates`).
        Periodic and pinned URIs keep their times; without a budget there are no slots to fill. Measured:
        +0.022 of captured / AR on the benchmark's independent webs (freshness −0.001), +0.029 on its webs
        of sites (−0.003), the ample budget unchanged (docs/BENCHMARKS.md, "Revisit policy: no idle slot")."""
        budget = self.policy.budget_per_s
        if budget is None:
            return
        # (due time, wait after the visit): a page due in the window comes back in it after its wait
        due = []
        for i, uri, st in self._current(uris):
            if i % SLICE == 0:
                yield
            if st.next_at < horizon:
                due.append((st.next_at, self._recurrence(uri, st, rates.get(uri))))
        heapq.heapify(due)
        later = yield from self._fill_candidates(now, horizon, free)
        pulled = 0
        for slot in range(math.ceil((horizon - now) * budget)):
            if slot % SLICE == 0:
                yield
            at = now + slot / budget
            if due and due[0][0] <= at:
                wait = heapq.heappop(due)[1]
            elif pulled < len(later):
                uri = later[pulled]
                pulled += 1
                state = self.policy.uris.get(uri)
                if state is None or not self._as_planned(uri, state):
                    continue  # removed or visited meanwhile: the slot stays free
                wait = self._recurrence(uri, state, rates[uri])
                state.next_at = moved[uri] = at  # wait_ms keeps the wait the plan chose (the wt: annotation)
            else:
                break
            if at + wait < horizon:
                heapq.heappush(due, (at + wait, wait))
        yield from release(due)
        yield from release(later)

    def _fill_candidates(self, now: float, horizon: float, free: list[tuple[str, UriState, float]]) -> Steps[list[str]]:
        """The free pages an idle slot may take, best first: planned after the window, visited at least the
        minimum wait ago and answered then (a host that is down is not tried early), the one with most
        changes expected since its last visit (rate × time since it) first, and one page per host in
        each round, so a host's pages pulled forward do not queue behind its politeness delay."""
        earliest = now - self.settings.min_wait_s
        by_host: dict[str, list[tuple[float, str]]] = {}
        for i, (uri, st, rate) in enumerate(free):
            if i % SLICE == 0:
                yield
            last = st.last_visit_at
            if last is None or last > earliest or st.next_at < horizon or _last_attempt(st) > last:
                continue  # too recent, already in the window, or its last attempt got no answer
            by_host.setdefault(host_of(uri), []).append((-rate * (now - last), uri))
        # Round k holds each host's k-th page; a round sorted by value, the rounds in order (each round its own
        # sort, so that a sliced replan sorts a host's or a round's pages at a time, not all of them at once).
        rounds: list[list[tuple[float, str]]] = []
        work = 0
        for pages in by_host.values():
            pages = yield from sorted_in_slices(pages)
            for rank, page in enumerate(pages):
                if rank == len(rounds):
                    rounds.append([])
                rounds[rank].append(page)
                work += 1
                if work >= SLICE:
                    work = 0
                    yield
        ranked: list[str] = []
        for pages in rounds:
            pages = yield from sorted_in_slices(pages)
            ranked.extend(uri for _, uri in pages)
            work += len(pages)
            if work >= SLICE:
                work = 0
                yield
        return ranked

    def _recurrence(self, uri: str, state: UriState, rate: float | None) -> float:
        """How long after a visit the plan visits a URI again: a periodic page's cycle of visits, a pinned
        URI's interval, a free page's planned wait (at least the minimum wait)."""
        if state.periodic is not None:
            return state.periodic[0] * self.periods_between_visits(state.periodic[0])
        wait = state.wait_ms / 1000 if state.wait_ms else self._planned_wait(state, uri, rate)
        return self.policy._pin(uri, int(max(wait, self.settings.min_wait_s) * 1000)) / 1000

    @staticmethod
    def _move(uri: str, state: UriState, at: float, wait: float, now: float, moved: dict[str, float]) -> None:
        new_at = max(now, at)
        if abs(new_at - state.next_at) > max(1.0, 0.05 * wait):
            state.wait_ms = int(wait * 1000)
            state.next_at = new_at
            moved[uri] = new_at

    # ------------------------------------------------------------------ persistence and reporting
    def host_state_of(self, host: str) -> dict[str, Any] | None:
        state = self.hosts.get(host)
        return None if state is None else {k: list(v) if isinstance(v, list) else v for k, v in state.items()}

    def restore_host(self, host: str, state: Mapping[str, Any]) -> None:
        restored: dict[str, Any] = {
            key: int(state.get(key, 0)) for key in ("verified", "lies", "dates_ok", "dates_bad")
        }
        for key in ("first_dates", "shared_dates"):
            if state.get(key):
                restored[key] = [int(t) for t in state[key]][-FIRST_DATES:]
        self.hosts[host] = restored

    def dump(self) -> dict[str, Any]:
        return {"hosts": {h: self.host_state_of(h) for h in self.hosts}, **self._plan()}

    def load(self, data: Mapping[str, Any]) -> None:
        for host, state in data.get("hosts", {}).items():
            self.restore_host(host, state)
        self.restore_plan(data)

    def plan_state(self) -> dict[str, Any]:
        return {} if self.mu is None else self._plan()  # before the first replan there is no plan to go on with

    def _plan(self) -> dict[str, Any]:
        return {
            "mu": self.mu,
            "scale": list(self.scale),
            "next_replan_at": self.next_replan_at if math.isfinite(self.next_replan_at) else None,
            "class_prior": dict(self.class_prior),
            "host_prior": {f"{host} {cls}": rate for (host, cls), rate in self.host_prior.items()},
            "planned_rate": self.planned_rate,
        }

    def restore_plan(self, data: Mapping[str, Any]) -> None:
        self.mu = data.get("mu")
        self.scale = tuple(data.get("scale", (1.0, 1.0)))  # type: ignore[assignment]
        self.class_prior = {str(k): float(v) for k, v in data.get("class_prior", {}).items()}
        self.host_prior = {
            tuple(key.rsplit(" ", 1)): float(rate)  # type: ignore[misc]
            for key, rate in data.get("host_prior", {}).items()
        }
        at = data.get("next_replan_at")
        self.next_replan_at = math.inf if at is None else float(at)
        self.planned_rate = data.get("planned_rate")
