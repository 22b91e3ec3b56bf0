"""Change-rate estimation from a URI's visit history (pure functions over ``UriState``).

Every policy records the history (it costs four numbers per URI) so the archive's freshness can be
estimated for the UI under any policy; the adaptive policy also plans with it
(:mod:`harvester.revisit.adaptive` explains the estimator).
"""

from __future__ import annotations

import math
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harvester.revisit.policy import UriState

from harvester.revisit.periodic import HISTORY


def improved_rate(n: float, x: float, observed: float, prior: float, prior_changes: float) -> float:
    """Changes per second from ``n`` observations of which ``x`` saw a change, over ``observed``
    seconds: Cho & Garcia-Molina's improved estimator ``-ln((n - X + 0.5) / (n + 0.5)) / mean interval``
    shrunk towards ``prior`` as a Gamma prior of ``prior_changes`` changes in ``prior_changes / prior``
    seconds: ``(prior_changes + r T) / (prior_changes / prior + T)``. The prior weighs as much as a
    stretch of observation as long as 1 / prior, so a page that stayed the same for a month is not held
    at the initial wait's rate by its prior."""
    x = min(x, n)
    if n <= 1e-9 or observed <= 0:
        return prior
    r = -math.log((n - x + 0.5) / (n + 0.5)) / (observed / n)
    return (prior_changes + r * observed) / (prior_changes / prior + observed)


def rate_estimate(state: UriState, prior: float, prior_changes: float) -> float:
    """The URI's change rate over its whole (decayed) history."""
    return improved_rate(state.n, state.x, state.isum, prior, prior_changes)


def next_rate(state: UriState, prior: float, prior_changes: float, pooled: float | None = None) -> float:
    """The change rate to plan the next visit with: conditioned on whether the last observation saw a
    change. Observations are split in two by that (a two-state, Markov-modulated view): for a Poisson
    page both halves estimate the same rate; for a bursty one the rate after a change is much higher
    (the next change is near), after a quiet visit much lower. Each half is shrunk towards the pooled
    estimate, so a half with little evidence plans with the pooled rate."""
    if pooled is None:
        pooled = rate_estimate(state, prior, prior_changes)
    n1, x1, t1 = state.after_change
    if state.last_changed:
        return improved_rate(n1, x1, t1, pooled, prior_changes)
    return improved_rate(state.n - n1, state.x - x1, state.isum - t1, pooled, prior_changes)


def observe(state: UriState, changed: bool, now: float, half_life_visits: float) -> None:
    """Add the interval since the previous visit as one observation; older ones count half after
    ``half_life_visits`` more. Decay per observation, not per second: a page visited once a month keeps
    its months of evidence (so a static page's rate keeps falling), a page visited hourly forgets
    within hours (so a burst is followed)."""
    if state.last_visit_at is None:
        return
    interval = now - state.last_visit_at
    if interval <= 0:
        return
    after = state.after_change
    if state.obs_at is not None:
        decay = 0.5 ** (1.0 / half_life_visits)
        state.n *= decay
        state.x *= decay
        state.isum *= decay
        after[:] = [v * decay for v in after]
    state.n += 1.0
    state.x += 1.0 if changed else 0.0
    state.isum += interval
    if state.last_changed:
        after[0] += 1.0
        after[1] += 1.0 if changed else 0.0
        after[2] += interval
    state.obs_at = now
    state.last_changed = changed
    state.history.extend((state.last_visit_at, now, 1.0 if changed else 0.0))
    del state.history[: -3 * HISTORY]


#: How far a Last-Modified date may lie outside the interval it must fall in (clock skew between the
#: server and the crawler, the change made while the previous fetch was under way).
DATE_SKEW_S = 120.0


def http_date(value: str | None) -> float | None:
    """Unix seconds of an HTTP date (RFC 9110 IMF-fixdate and the obsolete forms), None when absent or
    not a date (an opaque token, a malformed value)."""
    if not value:
        return None
    try:
        return parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def observe_dates(
    state: UriState,
    last_modified: float | None,
    changed: bool | None,
    now: float,
    half_life_visits: float,
    age_known: bool = True,
) -> bool | None:
    """Add one visit's Last-Modified to the URI's dated evidence; return whether the date was consistent
    with what the content digest says (None: nothing to check), for the host's date trust.

    Under a Poisson process at rate λ, "the last change before the visit at ``now`` was at τ" has the
    density λ e^(-λ (now - τ)) whatever happened before τ, and "no change in an interval I" the
    probability e^(-λ I); so a visit that found a change dated τ adds one change and ``now - τ`` of
    observed time, an unchanged visit adds its interval, and the maximum-likelihood rate is changes /
    time (Cho & Garcia-Molina 2003, the estimator for when the last-modified date is known). The first
    visit adds the page's age the same way: a page last modified 100 days ago is recognised as slow on
    its first visit. A date is consistent when a changed digest comes with a newer date that falls after
    the previous visit (less :data:`DATE_SKEW_S`) and not after now, and an unchanged one with the same
    date; inconsistent evidence is not added."""
    if last_modified is None or changed is None:
        return None
    consistent: bool | None = None
    if state.lm_at is None or state.last_visit_at is None:
        consistent = False if last_modified > now + DATE_SKEW_S else None  # a date in the future
        if consistent is None and age_known:
            _add_dated(state, 1.0, max(0.0, now - last_modified), half_life_visits)
    elif changed:
        consistent = (
            last_modified > state.lm_at and state.last_visit_at - DATE_SKEW_S <= last_modified <= now + DATE_SKEW_S
        )
        if consistent:
            _add_dated(state, 1.0, max(0.0, now - last_modified), half_life_visits)
    else:
        consistent = last_modified == state.lm_at
        if consistent:
            _add_dated(state, 0.0, max(0.0, now - state.last_visit_at), half_life_visits)
    state.lm_at = last_modified
    return consistent


def _add_dated(state: UriState, changes: float, observed: float, half_life_visits: float) -> None:
    decay = 0.5 ** (1.0 / half_life_visits)
    state.lm_x = state.lm_x * decay + changes
    state.lm_t = state.lm_t * decay + observed


def dated_rate(state: UriState, prior: float, prior_changes: float) -> float:
    """The change rate from the dated evidence, shrunk towards ``prior`` as :func:`improved_rate` does."""
    return (prior_changes + state.lm_x) / (prior_changes / prior + state.lm_t)
