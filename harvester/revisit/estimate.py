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

#: How many change brackets (previous visit, visit] a URI keeps for the periodicity test.
BRACKETS = 12


def rate_estimate(state: UriState, prior: float, prior_visits: float) -> float:
    """Changes per second: Cho & Garcia-Molina's improved estimator over the decayed history, blended
    with ``prior`` (1 / the class's initial wait) weighted as ``prior_visits`` observations."""
    n, x = state.n, min(state.x, state.n)
    if n <= 1e-9 or state.isum <= 0:
        return prior
    mean_interval = state.isum / n
    r = -math.log((n - x + 0.5) / (n + 0.5)) / mean_interval
    return (n * r + prior_visits * prior) / (n + prior_visits)


def observe(state: UriState, changed: bool, now: float, half_life_s: float) -> None:
    """Add the interval since the previous visit as one observation (decaying the older ones)."""
    if state.last_visit_at is None:
        return
    interval = now - state.last_visit_at
    if interval <= 0:
        return
    if state.obs_at is not None:
        decay = 0.5 ** ((now - state.obs_at) / half_life_s)
        state.n *= decay
        state.x *= decay
        state.isum *= decay
    state.n += 1.0
    state.x += 1.0 if changed else 0.0
    state.isum += interval
    state.obs_at = now
    if changed:
        state.changes.extend((state.last_visit_at, now))
        del state.changes[:-2 * BRACKETS]


