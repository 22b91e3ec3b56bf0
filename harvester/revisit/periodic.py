"""Recognising pages that change on a clock (an edition page at 06:00, a bulletin every 6 hours).

Seed 000 §5: "the change rate may be heavily dependant on the time of day"; a page published on a
schedule is not a Poisson process, and a policy that knows its period and phase can visit it just
after each change: one visit per version, and the archive fresh for nearly the whole period.

The evidence is the URI's recent observations, each "(previous visit, visit], changed or not". For a
candidate period P (the editorial schedules: 1, 2, 3, 4, 6, 8, 12 hours, 1, 2, 3 days, a week) the
phase circle [0, P) is cut into :data:`BINS` bins, a bitmask of the phases still possible: an
observation shorter than P that saw a change keeps only the phases inside its interval (widened by
:data:`TOLERANCE` of P for a publisher's jitter), one that saw none removes the phases strictly inside
it (narrowed by the same), and one at least P long that saw no change refutes the period. A period is
recognised when some phases survive at least ``min_changes`` informative changes AND the periodic
explanation beats the Poisson one: the history's negative log-likelihood under a Poisson process at
its own improved-estimator rate must exceed the cost of naming the period and the phase
(ln |candidate periods| + ln(BINS / possible phases)) by :data:`EVIDENCE` nats, so a fast page whose every
visit saw a change (which any period "explains") is not taken for a periodic one. Besides the listed
periods, the changes a trusted Last-Modified dates to the second propose periods of their own
(:func:`derived_periods`): a publisher need not keep an editorial clock, and a simulator drawing periods at
random found every such page planned as a Poisson one (BENCHMARKS.md, "Revisit policy: periods on any
clock"). Only the shortest period consistent with enough informative observations is considered:
visiting too often costs one visit that finds nothing and corrects the fit; too rarely would lose every
other version.

Until 2026-11-28 such a page was also accepted when twice ``min_changes`` changed visits pinned a phase
to a quarter of the period ("visiting at that phase costs nothing: the page changes between any two
visits anyway"). A second simulator (benchmarks/bench_revisit_cross.py) showed what that does: a page
without Last-Modified dates that changes every hour or two, visited every 16-20 hours, is taken for a
daily page once its visits' intervals happen to overlap, is then visited exactly a day apart, and no
visit can ever contradict the fit (26 of the 500 pages of one web, all of them Poisson pages). The
policy then values it as a daily page that stays fresh for the day after each visit, and the curator
sees "periodic, 1 day" on a page that changes hourly. Without that rule the captures and the freshness
are the same within noise on both simulators (BENCHMARKS.md, "a second simulator").
"""

from __future__ import annotations

import math

HOUR, DAY = 3600, 86400
PERIODS = (HOUR, 2 * HOUR, 3 * HOUR, 4 * HOUR, 6 * HOUR, 8 * HOUR, 12 * HOUR, DAY, 2 * DAY, 3 * DAY, 7 * DAY)
BINS = 120
FULL = (1 << BINS) - 1
TOLERANCE = 0.03
_SLACK = math.ceil(TOLERANCE * BINS)
#: Observations a URI keeps (each: start, end, changed).
HISTORY = 24
#: How much better (in nats) the periodic explanation must be than the Poisson one.
EVIDENCE = 2.0
#: A dated change is kept as the observation "a change in (τ - DATED_S, τ]" (adaptive.py).
DATED_S = 1.0
#: Derived periods: at most this many divisors of the shortest gap between dated changes, none longer than
#: MAX_PERIOD.
MAX_DIVISOR = 200
MAX_PERIOD = 4 * 7 * DAY


def poisson_nll(history: list[float]) -> float:
    """Negative log-likelihood of the observations under a Poisson process at the improved estimator's
    rate (Cho & Garcia-Molina) computed from these same observations."""
    n = len(history) // 3
    if n == 0:
        return 0.0
    changed = sum(history[i + 2] for i in range(0, len(history), 3))
    mean = sum(history[i + 1] - history[i] for i in range(0, len(history), 3)) / n
    if mean <= 0:
        return 0.0
    rate = -math.log((n - changed + 0.5) / (n + 0.5)) / mean
    nll = 0.0
    for i in range(0, len(history), 3):
        stay = math.exp(-rate * (history[i + 1] - history[i]))
        nll -= math.log(max(1e-12, 1.0 - stay if history[i + 2] else stay))
    return nll


def _arc(first: int, length: int) -> int:
    """Bitmask of ``length`` bins from ``first`` around the circle."""
    if length <= 0:
        return 0
    if length >= BINS:
        return FULL
    first %= BINS
    mask = ((1 << length) - 1) << first
    return (mask | (mask >> BINS)) & FULL


def constrain(allowed: int, start: float, end: float, changed: bool, period: float) -> int | None:
    """The phases still possible after one observation (start, end]; None when it refutes the period."""
    if end - start >= period:
        return None if not changed else allowed
    width = period / BINS
    first = math.floor((start % period) / width)
    last = math.floor((end % period) / width)
    length = (last - first) % BINS + 1
    if changed:
        return allowed & _arc(first - _SLACK, length + 2 * _SLACK)
    return allowed & ~_arc(first + 1 + _SLACK, length - 2 - 2 * _SLACK) & FULL


def _phases(history: list[float], period: float) -> tuple[int, int] | None:
    """(bitmask of possible phases, informative changes), or None when the period is refuted. A change
    is informative when its observation is shorter than the period and it falls in a cycle of the period
    no earlier informative change fell in: changes that all fall within one cycle (a fast page watched
    for a day, tested against a weekly period) say nothing of a period."""
    allowed, cycles = FULL, set()
    for i in range(0, len(history) - 2, 3):
        start, end, changed = history[i], history[i + 1], history[i + 2]
        narrowed = constrain(allowed, start, end, bool(changed), period)
        if not narrowed:
            return None
        if changed and end - start < period:
            cycles.add(math.floor(end / period))
        allowed = narrowed
    return allowed, len(cycles)


def dated_changes(history: list[float]) -> list[float]:
    """The change times the history knows to the second (a trusted Last-Modified: the observation
    ``(τ - DATED_S, τ]``), in order."""
    triples = range(0, len(history) - 2, 3)
    return sorted({history[i + 1] for i in triples if history[i + 2] and history[i + 1] - history[i] <= DATED_S})


def derived_periods(changes: list[float], min_period: float, max_period: float) -> list[float]:
    """Periods that every dated change fits, whatever the clock: a publisher's 5 or 10 hours, 36 hours,
    5 days are as periodic as the editorial ones of :data:`PERIODS`. For a page on a period P every gap
    between two changes is a whole number of periods (within the jitter), so P is about the shortest gap
    divided by some k. From each such guess the changes are numbered in order (each gap rounded to whole
    periods of the estimate so far, which is refined by least squares as it goes), and the guess is kept
    when every change lies within :data:`TOLERANCE` of the line. A period within the tolerance of a listed one,
    or of one found before, is that one (23.9 h fitted to a daily page would drift off its phase where the day
    does not). A divisor of the true period fits the changes as well: the history's quiet observations refute
    it (:func:`_phases`), as for listed periods."""
    if len(changes) < 3:
        return []
    shortest = min(b - a for a, b in zip(changes, changes[1:], strict=False))
    lowest = min_period * (1 - TOLERANCE)
    known: list[float] = list(PERIODS)
    found: list[float] = []
    for k in range(1, min(MAX_DIVISOR, int(shortest / lowest)) + 1):
        period = _fitted_period(changes, shortest / k)
        if period is not None and min_period <= period <= max_period:
            if all(abs(period - other) > TOLERANCE * other for other in known):
                known.append(period)
                found.append(period)
    return found


def _fitted_period(changes: list[float], guess: float) -> float | None:
    """The least-squares period of ``changes`` numbered from ``guess``, or None when one strays (a change
    more than twice the tolerance off the line so far: most guesses end at their second or third change)."""
    first, period, cycles = changes[0], guess, [0]
    n, sx, sy, sxx, sxy = 1, 0.0, 0.0, 0.0, 0.0
    for previous, change in zip(changes, changes[1:], strict=False):
        cycle = cycles[-1] + max(1, round((change - previous) / period))
        y = change - first
        if n > 1 and abs(y - (sy - period * sx) / n - cycle * period) > 2 * TOLERANCE * period:
            return None
        cycles.append(cycle)
        n, sx, sy, sxx, sxy = n + 1, sx + cycle, sy + y, sxx + cycle * cycle, sxy + cycle * y
        period = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    intercept = (sy - period * sx) / n
    if any(abs(c - first - intercept - m * period) > TOLERANCE * period for c, m in zip(changes, cycles, strict=True)):
        return None
    return period


def periodic_fit(history: list[float], min_changes: int, min_period: float) -> tuple[float, int] | None:
    """(period, bitmask of possible phases) for the smallest consistent period, or None: the editorial
    periods of :data:`PERIODS` and those the dated changes give (:func:`derived_periods`)."""
    candidates = sorted({*PERIODS, *derived_periods(dated_changes(history), min_period, MAX_PERIOD)})
    nll = None
    for period in candidates:
        if period < min_period:
            continue
        found = _phases(history, period)
        if found is None or found[1] < min_changes:
            continue
        if nll is None:
            nll = poisson_nll(history)
        possible = max(1, found[0].bit_count())
        cost = math.log(len(candidates)) + math.log(BINS / possible)
        if nll > cost + EVIDENCE:
            return float(period), found[0]
        return None  # the shortest period the evidence allows is not established: no longer one is
    return None


def _runs(phases: int) -> list[tuple[int, int]]:
    """(first bin, length) of each run of possible phases around the circle."""
    runs = []
    for b in range(BINS):
        if phases >> b & 1 and not phases >> ((b - 1) % BINS) & 1:
            length = 1
            while length < BINS and phases >> ((b + length) % BINS) & 1:
                length += 1
            runs.append((b, length))
    return runs or ([(0, BINS)] if phases else [])


def next_visit(now: float, period: float, phases: int, bisect: bool) -> float:
    """When to visit a periodic page next: just after the next run of possible change times (by then
    the change has happened), or, with ``bisect`` and a run wider than 4 tolerances, in its middle:
    that visit halves the run whatever it finds (changed: the change came before; not: after)."""
    width = period / BINS
    base = math.floor(now / period) * period
    times = []
    for first, length in _runs(phases):
        offset = length / 2 if bisect and length > 4 * _SLACK else length
        times.extend(base + (first + offset) * width + k * period for k in (-1, 0, 1, 2))
    return min((t for t in times if t > now), default=now + period)
