"""The revisit policy of continuous harvesting: *when* to visit a URI next, and whether its headers suffice.

A pure component: no I/O, no clock of its own (every call is given ``now``, in seconds), no randomness,
so the same code runs in the crawler (h12run's frontier) and in a discrete-event simulator
(benchmarks/revisit_sim.py), and an independent simulator can drive it through this interface alone::

    policy = RevisitPolicy(settings, budget_per_s)       # budget: fetches/s for the whole job, or None
    policy.add(uri, now) -> float                        # when to visit a new URI first
    policy.unchanged_by_headers(uri, etag, last_modified, now) -> bool   # True: stop after the headers
    policy.visited(uri, visit, now) -> float             # record a visit; when to visit next
    policy.next_replan_at                                # math.inf if the policy never replans
    policy.replan(now) -> Mapping[str, float]            # URIs whose next time changed
    policy.replan_steps(now)                             # the same in slices (a generator), for a crawler
    policy.remove(uri)                                   # a seed taken out of the definition

Three policies, chosen by ``RevisitSettings.policy``:

``heritrix``
    Heritrix's adaptive revisiting exactly (seed 002 §6.3, seed 000 §3), as the baseline. The
    *WaitEvaluator* chain: the first evaluator whose content-type regex matches the document's type
    handles it (text ``^text/.*$`` 12 h initial wait, images ``^image/.*$`` 2 days, the generic one
    1 day; 002: "stacking up the WaitEvaluators, starting with the specialized ones and ending with the
    generic WaitEvaluator"). On the first visit the wait is the initial wait; afterwards the previous
    wait (plus the time the URI was overdue when *use-overdue-time* is on, "added to its wait interval
    before the factor is applied") is multiplied by the unchanged factor when the content did not
    change and divided by the changed factor when it did, in integer milliseconds as Java's
    ``(long)(waitInterval / factor)``, then clamped to [min, max] ("Without a maximum wait interval the
    wait interval of a document that was never observed to have changed would grow exponentially").
    The *ChangeEvaluator* compares the content digest (after the strip regexes,
    :func:`harvester.revisit.change.stripped_digest`) with the previous one; the first visit is a change
    ("By definition, content has changed if there has only been one successful fetch made"); no digest
    now and none before means "unknown", which gets the fixed *default wait* (3 days) and is not counted
    as a visit (ChangeEvaluator returns before its counters). The *HTTPMidFetchUnchangedFilter*
    (002 §6.4, 000 §3): "If only one is present, the filter will determine that the document is
    unchanged if that value has not changed. If both indicators are found, then they must agree that the
    document has not changed"; a header that is missing keeps the value stored before. The next visit
    is at ``now + wait`` (the ARFrontier's "time of next processing"); a visit that failed (status <= 0,
    Heritrix's ``isSuccess()``) is not re-evaluated ("we can not make any assumptions about it") and
    keeps its wait. Heritrix's filter source reads the response header ``last-etag`` where it means
    ``ETag`` (so in Heritrix 1.x the ETag never took part); we follow the documented semantics.
``fixed``
    Every URI every ``fixed_interval_s`` seconds: the "dumb loop" of the issue, and the operator's
    choice for pages known to be noisy ("visit these pages only at fixed, infrequent intervals", 002 §7).
``adaptive``
    The netharvest default, described in :mod:`harvester.revisit.adaptive`.

Pinned URIs ("scheduling directives", ``RevisitSettings.pinned``) are visited every fixed interval
under every policy.

Recovery (002 §6.2.4: "it is absolutely vital that an incremental crawl can be stopped and started with
an acceptable overhead"): everything the policy knows about a URI is a small JSON-able dict,
:meth:`RevisitPolicy.state_of`; the per-host validator trust is :meth:`RevisitPolicy.host_state_of`;
:meth:`RevisitPolicy.dump` / :meth:`RevisitPolicy.load` carry the whole policy. A crawler persists the
URI's state after each :meth:`visited` (and :meth:`add`) and, after a kill -9, calls :meth:`restore` /
:meth:`restore_host` (or :meth:`load`) before anything else: the schedule continues where it was.
"""

from __future__ import annotations

import math
import re
from array import array
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any
from urllib.parse import urlsplit

from harvester.contracts import ContractError
from harvester.patterns import STRIP, PatternError, check, compile_pattern
from harvester.revisit.estimate import observe, rate_estimate

POLICIES = ("heritrix", "fixed", "adaptive")
#: Content classes, each with its own initial wait (Heritrix's Text/Image WaitEvaluators, the generic
#: one for "other"; audio/video added as seed 000 §2 suggests: "even higher initial wait times").
CLASSES = ("text", "image", "audio_video", "other")
#: Heritrix's ContentBasedWaitEvaluator regexes, matched against the whole Content-Type (Java matches()).
CONTENT_TYPE_REGEXES = {"text": "^text/.*$", "image": "^image/.*$", "audio_video": "^(audio|video)/.*$"}
HOUR, DAY = 3600, 86400


@dataclass(frozen=True, slots=True)
class Visit:
    """One visit to a URI as the fetcher saw it.

    ``status``: the HTTP status (<= 0: no answer, Heritrix's negative fetch codes); ``digest``: the
    content digest after the strip regexes, None when the body was not downloaded (mid-fetch filter)
    or could not be read; ``downloaded``: False when the fetch stopped after the headers because
    :meth:`RevisitPolicy.unchanged_by_headers` said so (or the server answered 304 to a conditional
    request).
    """

    status: int
    content_type: str | None
    size: int
    duration_s: float
    etag: str | None
    last_modified: str | None
    digest: str | None
    downloaded: bool = True


@dataclass(frozen=True)
class RevisitSettings:
    """Every constant of the revisit policy: Heritrix's WaitEvaluator/filter settings plus the adaptive
    policy's. ``from_dict``/``to_dict`` are the JSON form (JobSpec ``continuous.revisit``, the
    definition's ``revisit_settings``); an omitted key takes the default below."""

    policy: str = "adaptive"
    #: Initial wait per content class (seconds): Heritrix's TextWaitEvaluator 43200, ImageWaitEvaluator
    #: 172800, WaitEvaluator 86400; audio/video one week (not in Heritrix).
    initial_wait_s: Mapping[str, int] = field(
        default_factory=lambda: {"text": 12 * HOUR, "image": 2 * DAY, "audio_video": 7 * DAY, "other": DAY}
    )
    content_types: Mapping[str, str] = field(default_factory=lambda: dict(CONTENT_TYPE_REGEXES))
    min_wait_s: int = HOUR  # WaitEvaluator min-wait-interval-seconds
    max_wait_s: int = 28 * DAY  # max-wait-interval-seconds (4 weeks)
    default_wait_s: int = 3 * DAY  # default-wait-interval-seconds: content state unknown
    unchanged_factor: float = 1.5
    changed_factor: float = 1.5
    use_overdue_time: bool = False
    strip: tuple[str, ...] = ()  # HTTPContentDigest strip regexes (RE2)
    pinned: Mapping[str, int] = field(default_factory=dict)  # scheduling directives: uri -> interval_s
    mid_fetch_filter: bool = True  # HTTPMidFetchUnchangedFilter on the fetcher
    fixed_interval_s: int = DAY  # the "fixed" policy's interval
    # --- the adaptive policy (harvester/revisit/adaptive.py) ---
    replan_interval_s: int = 6 * HOUR  # how often the budget is re-allocated over all URIs
    freshness_weight: float = 3.0  # weight of archive freshness against captured versions
    history_half_life_visits: int = 8  # an observation counts half after this many newer ones
    prior_changes: float = 0.25  # weight of the content-class prior (1 / initial wait), in changes
    trust_after: int = 3  # verified header predictions before a host's validators are trusted
    verify_every: int = 8  # on a trusted host, one header prediction in N is still checked by download
    periodic_min_changes: int = 4  # observed changes before a page can be recognised as periodic
    date_trust_after: int = 0  # consistent Last-Modified dates on a host before its dates are used (0: at once)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def heritrix(cls, **overrides: Any) -> RevisitSettings:
        """Heritrix 1.x adaptive revisiting with its defaults (the baseline): text/image/generic
        WaitEvaluators (audio and video fall to the generic one, 1 day), mid-fetch filter on."""
        base = dict(
            policy="heritrix", initial_wait_s={"text": 12 * HOUR, "image": 2 * DAY, "audio_video": DAY, "other": DAY}
        )
        base.update(overrides)
        return cls(**base)

    @classmethod
    def fixed(cls, interval_s: int, **overrides: Any) -> RevisitSettings:
        """Every URI every ``interval_s`` seconds, whatever it does (mid-fetch filter off: a loop that
        always downloads)."""
        base: dict[str, Any] = dict(policy="fixed", fixed_interval_s=int(interval_s), mid_fetch_filter=False)
        base.update(overrides)
        return cls(**base)

    # ------------------------------------------------------------------ JSON form
    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Mapping):
                value = dict(value)
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, path: str = "revisit") -> RevisitSettings:
        """Settings from their JSON form; an empty dict is the defaults. Raises
        :class:`harvester.contracts.ContractError` ``"<path>.<key>: <problem>"`` for a bad value."""
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise ContractError(f"{path}: expected an object, got {type(data).__name__}")
        defaults = cls()
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ContractError(f"{path}: unknown setting(s): {', '.join(map(str, unknown))}")
        values: dict[str, Any] = {}
        for name in known:
            if name not in data:
                continue
            values[name] = _parse(name, data[name], getattr(defaults, name), f"{path}.{name}")
        # Initial waits given for some content classes only: the others keep their defaults (Heritrix's for
        # its policy), as every setting left out does; a class left out would otherwise wait as "other".
        base = cls.heritrix() if values.get("policy", defaults.policy) == "heritrix" else defaults
        values["initial_wait_s"] = {**base.initial_wait_s, **values.get("initial_wait_s", {})}
        settings = cls(**values)
        settings.validate(path)
        return settings

    def validate(self, path: str = "revisit") -> None:
        """Cross-field checks (ContractError naming the path)."""
        if self.policy not in POLICIES:
            raise ContractError(f"{path}.policy: one of {', '.join(POLICIES)}, not {self.policy!r}")
        if self.min_wait_s > self.max_wait_s:
            raise ContractError(f"{path}.min_wait_s: must not exceed max_wait_s ({self.max_wait_s} s)")
        for key in self.initial_wait_s:
            if key not in CLASSES:
                raise ContractError(f"{path}.initial_wait_s.{key}: not a content class ({', '.join(CLASSES)})")
        for key in self.content_types:
            if key not in CLASSES or key == "other":
                raise ContractError(
                    f"{path}.content_types.{key}: not a content class with a regex ({', '.join(CLASSES[:-1])})"
                )

    # ------------------------------------------------------------------ helpers for the policies
    def initial_wait(self, content_class: str) -> int:
        return int(self.initial_wait_s.get(content_class, self.initial_wait_s.get("other", DAY)))


_POSITIVE_INTS = {
    "min_wait_s",
    "max_wait_s",
    "default_wait_s",
    "fixed_interval_s",
    "replan_interval_s",
    "history_half_life_visits",
    "trust_after",
    "verify_every",
    "periodic_min_changes",
}
_FACTORS = {"unchanged_factor", "changed_factor"}
_COUNTS = {"date_trust_after"}  # whole numbers >= 0


def _parse(name: str, value: Any, default: Any, path: str) -> Any:
    """One setting from JSON, checked: the type of its default, positive numbers, RE2 regexes."""
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ContractError(f"{path}: expected true or false, got {type(value).__name__}")
        return value
    if isinstance(value, bool):
        raise ContractError(f"{path}: expected a number, got a boolean")
    if name == "policy":
        if not isinstance(value, str) or value not in POLICIES:
            raise ContractError(f"{path}: one of {', '.join(POLICIES)}, not {value!r}")
        return value
    if name in _POSITIVE_INTS:
        if not isinstance(value, int | float) or value != int(value) or value < 1:
            raise ContractError(f"{path}: expected a whole number >= 1, got {value!r}")
        return int(value)
    if name in _COUNTS:
        if not isinstance(value, int | float) or value != int(value) or value < 0:
            raise ContractError(f"{path}: expected a whole number >= 0, got {value!r}")
        return int(value)
    if name in _FACTORS or name in ("freshness_weight", "prior_changes"):
        if not isinstance(value, int | float) or not math.isfinite(value):
            raise ContractError(f"{path}: expected a number, got {value!r}")
        if name in _FACTORS and value < 1:
            raise ContractError(f"{path}: a factor of at least 1 (Heritrix divides or multiplies by it), got {value!r}")
        if value < 0:
            raise ContractError(f"{path}: must not be negative, got {value!r}")
        return float(value)
    if name in ("initial_wait_s", "pinned"):
        if not isinstance(value, Mapping):
            raise ContractError(f"{path}: expected an object, got {type(value).__name__}")
        out: dict[str, int] = {}
        for key, seconds in value.items():
            if (
                isinstance(seconds, bool)
                or not isinstance(seconds, int | float)
                or seconds != int(seconds)
                or seconds < 1
            ):
                raise ContractError(f"{path}.{key}: expected a whole number of seconds >= 1, got {seconds!r}")
            if name == "pinned" and not str(key).lower().startswith(("http://", "https://")):
                raise ContractError(f"{path}.{key}: not an http(s) URL")
            out[str(key)] = int(seconds)
        return out
    if name == "content_types":
        if not isinstance(value, Mapping):
            raise ContractError(f"{path}: expected an object, got {type(value).__name__}")
        regexes: dict[str, str] = {}
        for key, pattern in value.items():
            regexes[str(key)] = _regex(pattern, f"{path}.{key}")
        return regexes
    if name == "strip":
        if not isinstance(value, list | tuple):
            raise ContractError(f"{path}: expected a list of regular expressions, got {type(value).__name__}")
        return tuple(_regex(pattern, f"{path}[{i}]") for i, pattern in enumerate(value))
    raise ContractError(f"{path}: unsupported setting")  # pragma: no cover - every field is handled above


def _regex(pattern: Any, path: str) -> str:
    if not isinstance(pattern, str):
        raise ContractError(f"{path}: expected a regular expression (text), got {type(pattern).__name__}")
    try:
        return check(pattern, path, STRIP)
    except PatternError as exc:
        raise ContractError(str(exc)) from None


def content_class(settings: RevisitSettings, content_type: str | None) -> str:
    """The WaitEvaluator that handles a document: the first class whose regex matches the whole
    Content-Type (text, image, audio/video in that order), else "other" (the generic evaluator)."""
    if content_type:
        for name in CLASSES[:-1]:
            pattern = settings.content_types.get(name)
            if pattern and _compiled(pattern).fullmatch(content_type.strip()) is not None:
                return name
    return "other"


_PROGRAMS: dict[str, Any] = {}


def _compiled(pattern: str) -> Any:
    program = _PROGRAMS.get(pattern)
    if program is None:
        program = _PROGRAMS[pattern] = compile_pattern(pattern, "content_types", STRIP)
    return program


#: The ``scheme://authority`` a URI begins with: all ``urlsplit`` reads its host from (the authority ends at the
#: first ``/``, ``?`` or ``#``), so URIs with the same one have the same host.
_AUTHORITY = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*")
#: ``scheme://authority`` -> host, emptied when it reaches :data:`HOSTS_CACHED` (a crawl of that many hosts).
_HOSTS: dict[str, str] = {}
HOSTS_CACHED = 100_000


def host_of(uri: str) -> str:
    """The politeness and validator-trust unit: the URI's host (lower case, without port).

    A replan (in the reactor) asks it twice for every URI: the host is kept per ``scheme://authority``, the
    same answer as ``urlsplit`` each time, a tenth of the replan's time fewer (4.43 s -> 3.99 s at 100,000
    URIs, docs/BENCHMARKS.md, "Continuous crawl at scale")."""
    m = _AUTHORITY.match(uri)
    if m is None:
        return _host_of(uri)
    authority = m.group()
    host = _HOSTS.get(authority)
    if host is None:
        if len(_HOSTS) >= HOSTS_CACHED:
            _HOSTS.clear()
        host = _HOSTS[authority] = _host_of(authority)
    return host


def _host_of(uri: str) -> str:
    try:
        return (urlsplit(uri).hostname or "").lower()
    except ValueError:
        return ""


def headers_predict_unchanged(
    old_etag: str | None, old_last_modified: str | None, etag: str | None, last_modified: str | None
) -> bool:
    """HTTPMidFetchUnchangedFilter's prediction: each present indicator predicts "unchanged" when it
    equals the stored one and "changed" otherwise; a missing one does not vote; both present must agree;
    none present predicts a change."""
    votes = []
    if last_modified:
        votes.append(old_last_modified is not None and last_modified == old_last_modified)
    if etag:
        votes.append(old_etag is not None and etag == old_etag)
    return bool(votes) and all(votes)


def format_ms(ms: int) -> str:
    """Heritrix's ArchiveUtils.formatMillisecondsToConventional: ``45s0ms``, ``1h0m0s0ms``, ``3ms``."""
    ms = int(ms)
    parts = []
    started = False
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        count, ms = divmod(ms, size)
        if count or started:
            parts.append(f"{count}{unit}")
            started = True
    parts.append(f"{ms}ms")
    return "".join(parts)


@dataclass(slots=True)
class UriState:
    """Everything known about one URI; :meth:`to_dict` is its persistent form (JSON types only)."""

    content_class: str = "text"
    wait_ms: int | None = None  # Heritrix's A_WAIT_INTERVAL (None before the first evaluation)
    next_at: float = 0.0  # time of next processing
    visits: int = 0  # A_NUMBER_OF_VISITS
    versions: int = 0  # A_NUMBER_OF_VERSIONS
    digest: str | None = None  # A_LAST_CONTENT_DIGEST
    etag: str | None = None  # A_LAST_ETAG (the filter's memory)
    last_modified: str | None = None  # A_LAST_DATESTAMP
    overdue_ms: int = 0  # A_FETCH_OVERDUE of the last visit
    changed: bool | None = None  # content state of the last visit (None: unknown)
    last_visit_at: float | None = None
    # adaptive policy: decayed observation counts and the validators at the last full download
    n: float = 0.0  # observed intervals (decayed)
    x: float = 0.0  # of which with a change (decayed)
    isum: float = 0.0  # total length of the observed intervals (decayed)
    obs_at: float | None = None  # time of the last observation (decay reference)
    last_changed: bool = False  # the last observation saw a change
    after_change: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])  # n, x, isum after a change
    dl_etag: str | None = None
    dl_last_modified: str | None = None
    checks: int = 0  # header predictions made for this URI (verification sampling)
    #: recent observations: [start, end, changed, ...]; an array of doubles, a third of the memory of a list of
    #: floats (a continuous crawl keeps every URI's state in memory: docs/DESIGN.md)
    history: array[float] = field(default_factory=lambda: array("d"))
    periodic: list[Any] | None = None  # [period s, phase bitmask int] of a page recognised as periodic
    validator_misses: int = 0
    # adaptive policy, Last-Modified as change times (estimate.observe_dates): decayed changes with a known
    # time, decayed time observed without a change after them, the Last-Modified of the last visit (Unix s)
    lm_x: float = 0.0
    lm_t: float = 0.0
    lm_at: float | None = None
    failed_at: float | None = None  # the last visit that got no answer (status <= 0)

    def to_dict(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in _URI_STATE_FIELDS}
        out["history"] = list(self.history)
        out["after_change"] = list(self.after_change)
        if self.periodic is not None:  # the phase bitmask as hex: 120 bits do not fit a JSON double
            out["periodic"] = [self.periodic[0], format(int(self.periodic[1]), "x")]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UriState:
        values = {k: v for k, v in data.items() if k in _URI_STATE_NAMES}
        values["history"] = array("d", values.get("history", ()))
        values["after_change"] = list(values.get("after_change", (0.0, 0.0, 0.0)))
        if values.get("periodic") is not None:
            period, phases = values["periodic"]
            values["periodic"] = [float(period), int(phases, 16) if isinstance(phases, str) else int(phases)]
        return cls(**values)


#: UriState's fields, once: ``dataclasses.fields()`` on every to_dict cost a tenth of the checkpoint that
#: follows a replan (it writes the state of every URI moved: 4.1 s -> 3.8 s for 100,000 URIs).
_URI_STATE_FIELDS = tuple(f.name for f in fields(UriState))
_URI_STATE_NAMES = frozenset(_URI_STATE_FIELDS)


class RevisitPolicy:
    """See the module docstring. Not thread-safe: the frontier calls it under its own lock."""

    def __init__(self, settings: RevisitSettings, budget_per_s: float | None = None) -> None:
        settings.validate()
        if budget_per_s is not None and not (budget_per_s > 0 and math.isfinite(budget_per_s)):
            raise ContractError(f"budget_per_s: expected a positive number or null, got {budget_per_s!r}")
        self.settings = settings
        self.budget_per_s = budget_per_s
        self.uris: dict[str, UriState] = {}
        self.counters = {
            "visits": 0,
            "changed": 0,
            "unchanged": 0,
            "unknown": 0,
            "failed": 0,
            "header_checks": 0,
            "header_skipped": 0,
            "validator_misses": 0,
        }
        if settings.policy == "adaptive":
            from harvester.revisit.adaptive import AdaptiveStrategy  # it builds on this module

            self._strategy: _Strategy = AdaptiveStrategy(self)
        else:
            self._strategy = _STRATEGIES[settings.policy](self)

    # ------------------------------------------------------------------ the interface
    @property
    def next_replan_at(self) -> float:
        return self._strategy.next_replan_at

    def add(self, uri: str, now: float) -> float:
        """A new URI (a seed, or discovered in scope): visit it now (the ARFrontier stamps a new
        CrawlURI's time of next processing with the current time). A URI already known keeps its time."""
        state = self.uris.get(uri)
        if state is not None:
            return state.next_at
        state = UriState(next_at=now)
        self.uris[uri] = state
        self._strategy.added(uri, state, now)
        return state.next_at

    def remove(self, uri: str) -> None:
        """Forget a URI (a seed removed from the definition): it is never planned again."""
        state = self.uris.pop(uri, None)
        if state is not None:
            self._strategy.removed(uri, state)

    def unchanged_by_headers(self, uri: str, etag: str | None, last_modified: str | None, now: float) -> bool:
        """True: the headers say the document did not change, stop after them (mid-fetch filter)."""
        state = self.uris.get(uri)
        if state is None or not self.settings.mid_fetch_filter or state.visits == 0:
            return False
        if not headers_predict_unchanged(state.etag, state.last_modified, etag, last_modified):
            return False
        self.counters["header_checks"] += 1
        skip = self._strategy.trust_headers(uri, state, now)
        if skip:
            self.counters["header_skipped"] += 1
        return skip

    def visited(self, uri: str, visit: Visit, now: float) -> float:
        """Record a visit that ended at ``now``; returns when to visit next."""
        self._strategy.visiting(uri)
        state = self.uris.get(uri)
        if state is None:
            state = self.uris[uri] = UriState(next_at=now)
            self._strategy.added(uri, state, now)
        # The ARFrontier's A_FETCH_OVERDUE: how late the URI was issued.
        started = now - max(0.0, visit.duration_s)
        state.overdue_ms = max(0, int(round((started - state.next_at) * 1000)))
        if visit.status <= 0:
            self.counters["failed"] += 1
            state.failed_at = now
            wait_ms = (
                state.wait_ms
                if state.wait_ms is not None
                else self._strategy.first_wait_ms(content_class(self.settings, visit.content_type))
            )
            state.next_at = now + self._pin(uri, wait_ms) / 1000
            return state.next_at
        changed = self._change(state, visit)
        if changed is None:
            self.counters["unknown"] += 1
        else:
            self.counters["visits"] += 1
            self.counters["changed" if changed else "unchanged"] += 1
        if changed is not None:
            observe(state, changed, now, self.settings.history_half_life_visits)
        if (
            changed
            and visit.downloaded
            and not self._strategy.verifies_validators
            and headers_predict_unchanged(state.etag, state.last_modified, visit.etag, visit.last_modified)
        ):
            # The previous visit's validators said "unchanged" but the content had changed: a mid-fetch filter
            # would have missed this version (counted for every policy; 002 §6.3.1's filter trusts them).
            state.validator_misses += 1
            self.counters["validator_misses"] += 1
        wait_ms = self._strategy.wait_after(uri, state, visit, changed, now)
        if visit.etag:
            state.etag = visit.etag
        if visit.last_modified:
            state.last_modified = visit.last_modified
        state.changed = changed
        state.last_visit_at = now
        state.wait_ms = wait_ms
        state.next_at = now + self._pin(uri, wait_ms) / 1000
        return state.next_at

    def replan(self, now: float) -> Mapping[str, float]:
        """Re-allocate the budget (the adaptive policy); the URIs whose next time changed."""
        return self._strategy.replan(now)

    def replan_steps(self, now: float) -> Generator[None, None, Mapping[str, float]]:
        """:meth:`replan` in slices, for a crawler to run between its fetches: each ``next()`` does about a
        millisecond of it; the URIs whose next time changed are the value of its StopIteration. URIs may be
        added, removed and visited between two slices (see ``AdaptiveStrategy.replan_steps``)."""
        return self._strategy.replan_steps(now)

    @property
    def planned_rate(self) -> float | None:
        """Visits per second the last plan makes (adaptive; None for policies that do not plan)."""
        return getattr(self._strategy, "planned_rate", None)

    # ------------------------------------------------------------------ persistence
    def state_of(self, uri: str) -> dict[str, Any] | None:
        """The URI's persistent state (JSON types), or None for a URI the policy does not know."""
        state = self.uris.get(uri)
        return None if state is None else state.to_dict()

    def restore(self, uri: str, state: Mapping[str, Any]) -> None:
        """Put back a URI's state saved by :meth:`state_of` (after a crash): its schedule continues."""
        self.uris[uri] = UriState.from_dict(state)
        self._strategy.restored(uri, self.uris[uri])

    def host_state_of(self, host: str) -> dict[str, Any] | None:
        return self._strategy.host_state_of(host)

    def restore_host(self, host: str, state: Mapping[str, Any]) -> None:
        self._strategy.restore_host(host, state)

    def plan_state(self) -> dict[str, Any]:
        """The plan of the last replan (the adaptive policy's multiplier, priors and next replan time; empty for
        the others), with the settings and budget it was made for: journalled after each replan, so a restart
        goes on with it instead of replanning every URI before its first fetch (5.9 s at 100,000 URIs, 40 s at
        1,000,000: docs/BENCHMARKS.md, "Continuous crawl at scale")."""
        plan = self._strategy.plan_state()
        if plan:
            plan["made_for"] = [self.settings.to_dict(), self.budget_per_s]
        return plan

    def restore_plan(self, plan: Mapping[str, Any]) -> bool:
        """Go on with a plan saved by :meth:`plan_state` (after :meth:`restore`); False, and the policy replans at
        its first chance as before, when it was made for other settings or another budget (a definition
        changed between two jobs of one crawl)."""
        if not plan or plan.get("made_for") != [self.settings.to_dict(), self.budget_per_s]:
            return False
        self._strategy.restore_plan(plan)
        return True

    def dump(self) -> dict[str, Any]:
        """The whole policy state (URIs, hosts, plan) as one JSON-able dict."""
        return {
            "uris": {uri: s.to_dict() for uri, s in self.uris.items()},
            "strategy": self._strategy.dump(),
            "counters": dict(self.counters),
        }

    def load(self, data: Mapping[str, Any]) -> None:
        for uri, state in data.get("uris", {}).items():
            self.uris[uri] = UriState.from_dict(state)
        self.counters.update(data.get("counters", {}))
        self._strategy.load(data.get("strategy", {}))

    # ------------------------------------------------------------------ reporting
    def annotation(self, uri: str, retry_at: float | None = None) -> str:
        """The ARFrontier's crawl.log annotation for the URI's last visit: ``wt:45s0ms,3vis,1ver,ov:3ms``, the
        wait being the one applied (a pinned URI's interval). After a visit that got no answer it is the wait
        until the URI is tried again: the policy's, or ``retry_at`` when the caller plans the retry otherwise
        (when a failed DNS lookup or robots.txt may be asked for again); a URI whose first visit failed has
        no wait of its own yet, and showed ``wt:0ms``, as if due at once."""
        state = self.uris[uri]
        wait_ms = self._pin(uri, state.wait_ms or 0)
        if state.failed_at is not None and (state.last_visit_at is None or state.failed_at >= state.last_visit_at):
            retry = state.next_at if retry_at is None else retry_at
            wait_ms = max(0, int(round((retry - state.failed_at) * 1000)))
        return f"wt:{format_ms(wait_ms)},{state.visits}vis,{state.versions}ver,ov:{format_ms(state.overdue_ms)}"

    def freshness(self, now: float) -> float | None:
        """The policy's estimate of the share of URIs whose latest capture is still current."""
        return self._strategy.freshness(now)

    # ------------------------------------------------------------------ shared steps
    def _change(self, state: UriState, visit: Visit) -> bool | None:
        """ChangeEvaluator: True changed, False unchanged, None unknown (no digest now or before)."""
        if not visit.downloaded:
            changed: bool | None = False  # the mid-fetch filter already set the content state
        elif visit.digest is None and state.digest is None:
            return None  # "Both are null, can't do a thing": no counters updated
        elif visit.digest is not None and visit.digest == state.digest:
            changed = False
        else:
            changed = True
            state.digest = visit.digest
        state.visits += 1
        if changed:
            state.versions += 1
        return changed

    def _pin(self, uri: str, wait_ms: int) -> int:
        pinned = self.settings.pinned.get(uri)
        return wait_ms if pinned is None else pinned * 1000


class _Strategy:
    """The part that differs between policies."""

    next_replan_at = math.inf
    #: The strategy checks the validators against full downloads itself (the adaptive one, which also learns
    #: which hosts to trust from it); for the others :meth:`RevisitPolicy.visited` counts the misses.
    verifies_validators = False

    def __init__(self, policy: RevisitPolicy) -> None:
        self.policy = policy
        self.settings = policy.settings

    def added(self, uri: str, state: UriState, now: float) -> None:
        pass

    def removed(self, uri: str, state: UriState) -> None:
        pass

    def restored(self, uri: str, state: UriState) -> None:
        pass

    def visiting(self, uri: str) -> None:
        """A visit of ``uri`` is being recorded."""

    def trust_headers(self, uri: str, state: UriState, now: float) -> bool:
        return True

    def wait_after(self, uri: str, state: UriState, visit: Visit, changed: bool | None, now: float) -> int:
        raise NotImplementedError

    def first_wait_ms(self, content_class: str) -> int:
        """The wait after a first visit that got no answer (there is no wait of the URI's own to keep)."""
        return self.settings.initial_wait(content_class) * 1000

    def replan(self, now: float) -> Mapping[str, float]:
        return {}

    def replan_steps(self, now: float) -> Generator[None, None, Mapping[str, float]]:
        return self.replan(now)
        yield  # a generator that ends at once

    def host_state_of(self, host: str) -> dict[str, Any] | None:
        return None

    def restore_host(self, host: str, state: Mapping[str, Any]) -> None:
        pass

    def dump(self) -> dict[str, Any]:
        return {}

    def load(self, data: Mapping[str, Any]) -> None:
        pass

    def plan_state(self) -> dict[str, Any]:
        return {}

    def restore_plan(self, data: Mapping[str, Any]) -> None:
        pass

    def freshness(self, now: float) -> float | None:
        """Mean over URIs of P(no change since the last visit) = e^(-rate x age); 0 for a URI never
        captured; None with no URIs."""
        uris = self.policy.uris
        if not uris:
            return None
        total = 0.0
        for state in uris.values():
            if state.versions and state.last_visit_at is not None:
                rate = rate_estimate(
                    state, 1.0 / self.settings.initial_wait(state.content_class), self.settings.prior_changes
                )
                total += math.exp(-rate * max(0.0, now - state.last_visit_at))
        return total / len(uris)


class _Heritrix(_Strategy):
    """WaitEvaluator arithmetic, exactly (see the module docstring)."""

    def wait_after(self, uri: str, state: UriState, visit: Visit, changed: bool | None, now: float) -> int:
        s = self.settings
        state.content_class = content_class(s, visit.content_type)
        if changed is None:
            wait = s.default_wait_s * 1000
        elif state.wait_ms is None:
            wait = s.initial_wait(state.content_class) * 1000
        else:
            wait = state.wait_ms
            if s.use_overdue_time:
                wait += state.overdue_ms
            if changed:
                wait = int(wait / s.changed_factor)
            else:
                wait = int(wait * s.unchanged_factor)
        return min(max(wait, s.min_wait_s * 1000), s.max_wait_s * 1000)


class _Fixed(_Strategy):
    def wait_after(self, uri: str, state: UriState, visit: Visit, changed: bool | None, now: float) -> int:
        state.content_class = content_class(self.settings, visit.content_type)
        return self.settings.fixed_interval_s * 1000

    def first_wait_ms(self, content_class: str) -> int:
        return self.settings.fixed_interval_s * 1000


_STRATEGIES: dict[str, type[_Strategy]] = {"heritrix": _Heritrix, "fixed": _Fixed}
