"""Change-rate estimation from a URI's visit history (pure functions over ``UriState``).

Every policy records the history (it costs four numbers per URI) so the archive's freshness can be
estimated for the UI under any policy; the adaptive policy also plans with it
(:mod:`harvester.revisit.adaptive` explains the estimator).
"""

from __future__ import annotations

import math
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


def next_rate(state: UriState, prior: float, prior_changes: float) -> float:
    """The change rate to plan the next visit with: conditioned on whether the last observation saw a
    change. Observations are split in two by that (a two-state, Markov-modulated view): for a Poisson
    page both halves estimate the same rate; for a bursty one the rate after a change is much higher
    (the next change is near), after a quiet visit much lower. Each half is shrunk towards the pooled
    estimate, so a half with little evidence plans with the pooled rate."""
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
