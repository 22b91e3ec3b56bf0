"""The messages between the orchestrator and the harvesters (ARCHITECTURE.md, "Contracts").

Plain JSON on the wire, versioned, validated on arrival. A JobSpec is frozen when the orchestrator
generates the job, so it carries everything the crawl needs: no harvester ever asks the database.
Validation raises :class:`ContractError` with the JSON path of the offending value, so a bad trap
regex or seed is reported as ``domains[3].traps[0]: …`` rather than failing deep inside a crawl.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, overload

from harvester.defaults import (
    CONTINUOUS_MAX_URIS_PER_HOST,
    CRAWL_DEFAULTS,
    DNS_TTL_S,
    POLITENESS_SCOPES,
    ROBOTS_POLICIES,
    ROBOTS_VALIDITY_S,
    SCOPE_RULES,
    WARC_ROTATE_S,
    CrawlDefaults,
)
from harvester.patterns import PatternError, check

JOBSPEC_VERSION = 1
JOBRESULT_VERSION = 1

JOB_KINDS = ("selective", "snapshot", "continuous")
STOP_REASONS = (
    "DOWNLOAD_COMPLETE",
    "OBJECT_LIMIT",
    "SIZE_LIMIT",
    "CONFIG_OBJECT_LIMIT",
    "CONFIG_SIZE_LIMIT",
    "TIME_LIMIT",
    "DOWNLOAD_UNFINISHED",
)
#: What a harvester may report; the CONFIG_* reasons are the orchestrator's to decide.
HARVESTER_STOP_REASONS = tuple(r for r in STOP_REASONS if not r.startswith("CONFIG_"))
RESULT_STATUSES = ("DONE", "FAILED")
#: ``cancel`` is the orchestrator's fence, not a curator's command: the job has ended for good there (reaped,
#: resubmitted, rejected), so a harvester holding a stale message for it must not crawl it (harvester.runjob).
#: ``seeds`` (continuous jobs): argument JSON ``{"add": [...], "remove": [...]}``, the definition's seed edit.
CONTROL_ACTIONS = ("stop", "pause", "resume", "add_trap", "cancel", "seeds")
FILE_KINDS = ("warc", "metadata")


class ContractError(ValueError):
    """A message that does not satisfy its contract; ``str()`` names the path and the problem."""


def _fail(path: str, message: str) -> ContractError:
    return ContractError(f"{path}: {message}")


def _get(data: dict[str, Any], key: str, kind: type | tuple[type, ...], path: str, default: Any = ...) -> Any:
    if key not in data:
        if default is ...:
            raise _fail(f"{path}.{key}" if path else key, "is missing")
        return default
    value = data[key]
    # bool is an int in Python; a JSON true must not pass for a count.
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise _fail(f"{path}.{key}" if path else key, f"expected {_kind_name(kind)}, got a boolean")
    if not isinstance(value, kind):
        raise _fail(f"{path}.{key}" if path else key, f"expected {_kind_name(kind)}, got {type(value).__name__}")
    return value


def _object(data: Any, message: str) -> dict[str, Any]:
    """``data`` if it is a JSON object: every message starts as one, so each says it the same way."""
    if not isinstance(data, dict):
        raise ContractError(f"{message}: expected a JSON object, got {type(data).__name__}")
    return data


def _one_of(value: str, allowed: tuple[str, ...], path: str) -> None:
    """Refuse a value outside its closed vocabulary, naming the choices (so the sender can fix it)."""
    if value not in allowed:
        raise _fail(path, f"must be one of {', '.join(allowed)}")


def _check_jobspec_version(version: int) -> None:
    """A JobSpec and the JobRef that points at one speak the same version, refused in the same words."""
    if version != JOBSPEC_VERSION:
        raise _fail("version", f"unsupported JobSpec version {version} (this harvester speaks {JOBSPEC_VERSION})")


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def validate_regex(pattern: str, path: str) -> str:
    """Check a crawler-trap regex now with the one validator (:func:`harvester.patterns.check`:
    RE2, linear time), so a typo is a clear error and never a crash or a freeze mid-crawl."""
    try:
        return check(pattern, path)
    except PatternError as exc:
        raise ContractError(str(exc)) from None


_URL_RE = re.compile(r"^https?://[^\s/?#]+[^\s]*$", re.IGNORECASE)


def validate_seed(url: str, path: str) -> str:
    if not _URL_RE.match(url):
        raise _fail(path, f"not an http(s) URL: {url!r}")
    return url


@dataclass(frozen=True)
class CrawlSettings(CrawlDefaults):
    """A crawl template's effective settings: the fields and defaults of
    :class:`harvester.defaults.CrawlDefaults`, the one declaration, with the contract's checks."""

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: str = "settings") -> CrawlSettings:
        unknown = set(data) - set(CRAWL_DEFAULTS)
        if unknown:
            raise _fail(path, f"unknown setting(s): {', '.join(sorted(unknown))}")
        values: dict[str, Any] = {}
        for key, default in CRAWL_DEFAULTS.items():
            kind: type | tuple[type, ...] = (int, float) if isinstance(default, float) else type(default)
            values[key] = _get(data, key, kind, path, default)
        settings = cls(**values)
        settings.check(path)
        return settings

    def check(self, path: str = "settings") -> None:
        choices = {"scope": SCOPE_RULES, "robots": ROBOTS_POLICIES, "politeness_scope": POLITENESS_SCOPES}
        for key, allowed in choices.items():
            if getattr(self, key) not in allowed:
                raise _fail(f"{path}.{key}", f"must be one of {', '.join(allowed)}, got {getattr(self, key)!r}")
        for key in (
            "max_hops",
            "max_embed_hops",
            "min_delay_ms",
            "max_delay_ms",
            "max_retries",
            "retry_delay_s",
            "respect_crawl_delay_up_to_s",
        ):
            if getattr(self, key) < 0:
                raise _fail(f"{path}.{key}", "must not be negative")
        for key in ("host_valence", "connect_timeout_s", "read_timeout_s", "warc_max_bytes"):
            if getattr(self, key) < 1:
                raise _fail(f"{path}.{key}", "must be at least 1")
        if self.delay_factor < 0:
            raise _fail(f"{path}.delay_factor", "must not be negative")
        if self.min_delay_ms > self.max_delay_ms:
            raise _fail(f"{path}.min_delay_ms", "must not exceed max_delay_ms")
        if self.max_document_bytes == 0 or self.max_document_bytes < -1:
            raise _fail(f"{path}.max_document_bytes", "must be positive, or -1 for no limit")

    @property
    def effective_user_agent(self) -> str:
        return self.user_agent.replace("{operator_contact}", self.operator_contact)


@dataclass(frozen=True)
class DomainSpec:
    """One domain's part of a job: its configuration, seeds, budget and crawler traps."""

    name: str
    configuration: str
    seeds: tuple[str, ...]
    max_objects: int = -1
    max_bytes: int = -1
    traps: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: str) -> DomainSpec:
        seeds = _get(data, "seeds", list, path)
        traps = _get(data, "traps", list, path, [])
        spec = cls(
            name=_get(data, "name", str, path),
            configuration=_get(data, "configuration", str, path),
            seeds=tuple(
                validate_seed(_str(s, f"{path}.seeds[{i}]"), f"{path}.seeds[{i}]") for i, s in enumerate(seeds)
            ),
            max_objects=_get(data, "max_objects", int, path, -1),
            max_bytes=_get(data, "max_bytes", int, path, -1),
            traps=tuple(
                validate_regex(_str(t, f"{path}.traps[{i}]"), f"{path}.traps[{i}]") for i, t in enumerate(traps)
            ),
        )
        for key in ("max_objects", "max_bytes"):
            if getattr(spec, key) < -1:
                raise _fail(f"{path}.{key}", "must be -1 (unlimited), 0 (excluded) or positive")
        if not spec.seeds:
            raise _fail(f"{path}.seeds", "a domain needs at least one seed")
        return spec


class DomainRows(Sequence[DomainSpec]):
    """A job's domains as their JSON form (what :meth:`DomainSpec.from_dict` reads), typed on access.

    Job generation writes a million domains per broad crawl; one Python object per domain besides its row
    costs 15-25 % of generation's Python time (docs/DESIGN.md, "Where things are": the JobSpec). So a
    generated JobSpec keeps the rows it streamed from the database (validated there: seeds by the models,
    budgets by a CHECK constraint, each trap compiled by jobgen) and serialises them as they are; reading a
    domain still gives a :class:`DomainSpec`. Everything that *reads* a spec gets tuples from
    :meth:`JobSpec.from_dict`."""

    __slots__ = ("rows",)

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> DomainSpec: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[DomainSpec]: ...
    def __getitem__(self, index: int | slice) -> DomainSpec | Sequence[DomainSpec]:
        if isinstance(index, slice):
            return DomainRows(self.rows[index])
        row = self.rows[index]
        return DomainSpec(**{**row, "seeds": tuple(row["seeds"]), "traps": tuple(row["traps"])})

    def __iter__(self) -> Iterator[DomainSpec]:
        return (self[i] for i in range(len(self.rows)))

    def __deepcopy__(self, memo: dict[int, Any]) -> DomainRows:
        return self  # as a JobSpec: never changed once made

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


def _str(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise _fail(path, f"expected str, got {type(value).__name__}")
    return value


#: The continuous section's whole numbers that must be positive (seconds, a count), with their defaults.
_WHOLE_NUMBERS = {
    "warc_rotate_s": WARC_ROTATE_S,
    "robots_validity_s": ROBOTS_VALIDITY_S,
    "dns_ttl_s": DNS_TTL_S,
    "max_uris_per_host": CONTINUOUS_MAX_URIS_PER_HOST,
}


@dataclass(frozen=True)
class ContinuousSpec:
    """The continuous (adaptive-revisit) part of a JobSpec, present exactly when ``kind == "continuous"``.

    ``revisit`` is a :class:`harvester.revisit.policy.RevisitSettings` dict (validated by its
    ``from_dict``); ``budget_per_s`` the job's global fetch budget (None: politeness alone limits it);
    ``warc_rotate_s`` closes a WARC after that many seconds even if it is not full (a crawl that never
    ends must hand its files over while it runs); ``pinned`` fixes some URIs' revisit interval (the seed
    list's scheduling directives, seed 000); ``robots_validity_s`` how long a host's robots.txt is obeyed
    before it is fetched again (:data:`harvester.defaults.ROBOTS_VALIDITY_S`) and ``dns_ttl_s`` how long a
    lookup's answer or failure holds (:data:`harvester.defaults.DNS_TTL_S`): time constants a test web in
    accelerated time scales with the others; ``max_uris_per_host`` how many URIs of one host the job follows
    (:data:`harvester.defaults.CONTINUOUS_MAX_URIS_PER_HOST`).
    """

    revisit: dict[str, Any] = field(default_factory=dict)
    budget_per_s: float | None = None
    warc_rotate_s: int = WARC_ROTATE_S
    pinned: dict[str, float] = field(default_factory=dict)
    robots_validity_s: int = ROBOTS_VALIDITY_S
    dns_ttl_s: int = DNS_TTL_S
    max_uris_per_host: int = CONTINUOUS_MAX_URIS_PER_HOST

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: str = "continuous") -> ContinuousSpec:
        unknown = set(data) - {"revisit", "budget_per_s", "pinned", *_WHOLE_NUMBERS}
        if unknown:
            raise _fail(path, f"unknown key(s): {', '.join(sorted(unknown))}")
        revisit = _get(data, "revisit", dict, path, {})
        from harvester.revisit.policy import RevisitSettings  # the policy's own validation, one place

        revisit = RevisitSettings.from_dict(revisit, f"{path}.revisit").to_dict()
        budget = _get(data, "budget_per_s", (int, float, type(None)), path, None)
        if budget is not None and not budget > 0:
            raise _fail(f"{path}.budget_per_s", "must be positive (or null for no budget)")
        numbers = {key: _get(data, key, int, path, default) for key, default in _WHOLE_NUMBERS.items()}
        for key, number in numbers.items():
            if number < 1:
                raise _fail(f"{path}.{key}", "must be at least 1")
        pinned_in = _get(data, "pinned", dict, path, {})
        pinned: dict[str, float] = {}
        for uri, interval in pinned_in.items():
            where = f"{path}.pinned[{uri!r}]"
            validate_seed(uri, where)
            if isinstance(interval, bool) or not isinstance(interval, int | float) or not interval > 0:
                raise _fail(where, "the interval must be a positive number of seconds")
            pinned[uri] = float(interval)
        return cls(
            revisit=revisit,
            budget_per_s=None if budget is None else float(budget),
            pinned=pinned,
            **numbers,
        )


@dataclass(frozen=True)
class JobSpec:
    """Everything one crawl job needs, frozen at generation time."""

    job_id: int
    harvest_id: int
    harvest_name: str
    harvest_run: int
    kind: str
    channel: str
    template: str
    settings: CrawlSettings
    #: A tuple of DomainSpec; job generation's :class:`DomainRows` (the same domains, kept as their JSON form).
    domains: Sequence[DomainSpec]
    global_traps: tuple[str, ...] = ()
    dedup_index: str | None = None
    time_limit_s: int = 0  # 0: no limit
    #: A resubmission: the FAILED job this one carries on (optional, so v1 specs without it stay
    #: valid). A harvester holding that job's spool takes it over (:mod:`harvester.takeover`).
    continues_job: int | None = None
    #: The orchestrator recorded ``continues_job`` DONE (a continuous definition's next job): its files and
    #: statistics are archived, so only its URI states carry over. False (a FAILED job, or a job whose
    #: harvester wrote DONE but was killed before delivering it): everything carries over. Only the
    #: orchestrator's records can tell these apart, never the old spool.
    continues_done: bool = False
    #: The files of ``continues_job`` the orchestrator recorded whose spool copy its chain may still read (not
    #: yet CLEANED): the take-over leaves those where they are and carries every other file of the old spool
    #: on, listed as handed over or not (a file listed while the broker was down, or just before the worker
    #: died, never reached the archive). None (a spec that does not say): the old spool's own lists are believed.
    continues_files: tuple[str, ...] | None = None
    #: The continuous section (:class:`ContinuousSpec`): required for kind "continuous", refused otherwise.
    continuous: ContinuousSpec | None = None
    version: int = JOBSPEC_VERSION

    @classmethod
    def from_dict(cls, data: Any) -> JobSpec:
        data = _object(data, "JobSpec")
        version = _get(data, "version", int, "")
        _check_jobspec_version(version)
        kind = _get(data, "kind", str, "")
        _one_of(kind, JOB_KINDS, "kind")  # first: the rest of the spec is read as this kind's
        domains = _get(data, "domains", list, "")
        traps = _get(data, "global_traps", list, "", [])
        continuous = _get(data, "continuous", (dict, type(None)), "", None)
        _check_section(kind, continuous is not None)  # before a section is parsed
        spec = cls(
            job_id=_get(data, "job_id", int, ""),
            harvest_id=_get(data, "harvest_id", int, ""),
            harvest_name=_get(data, "harvest_name", str, ""),
            harvest_run=_get(data, "harvest_run", int, ""),
            kind=kind,
            channel=_get(data, "channel", str, ""),
            template=_get(data, "template", str, ""),
            settings=CrawlSettings.from_dict(_get(data, "settings", dict, ""), "settings"),
            domains=tuple(
                DomainSpec.from_dict(_dict(d, f"domains[{i}]"), f"domains[{i}]") for i, d in enumerate(domains)
            ),
            global_traps=tuple(
                validate_regex(_str(t, f"global_traps[{i}]"), f"global_traps[{i}]") for i, t in enumerate(traps)
            ),
            dedup_index=_get(data, "dedup_index", (str, type(None)), "", None),
            time_limit_s=_get(data, "time_limit_s", int, "", 0),
            continues_job=_get(data, "continues_job", (int, type(None)), "", None),
            continues_done=_get(data, "continues_done", bool, "", False),
            continues_files=None
            if (names := _get(data, "continues_files", (list, type(None)), "", None)) is None
            else tuple(_str(n, f"continues_files[{i}]") for i, n in enumerate(names)),
            continuous=None if continuous is None else ContinuousSpec.from_dict(continuous, "continuous"),
            version=version,
        )
        spec.check()
        return spec

    def check(self) -> JobSpec:
        """The invariants of the whole job, beyond its parts' own (returns the spec, so a builder can write
        ``JobSpec(...).check()``).

        :meth:`from_dict` ends with it; so does every builder that makes a JobSpec from typed parts whose
        validity is already established (job generation: a template's :class:`CrawlSettings` checked when it
        was read, domains from rows the models validated, each trap compiled), instead of writing a dict and
        parsing it back (docs/DESIGN.md, "Where things are": the JobSpec)."""
        _one_of(self.kind, JOB_KINDS, "kind")
        _check_section(self.kind, self.continuous is not None)
        if not self.domains:
            raise _fail("domains", "a job needs at least one domain")
        if self.time_limit_s < 0:
            raise _fail("time_limit_s", "must not be negative")
        return self

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(asdict(self))

    @property
    def seeds(self) -> list[str]:
        """Every domain's seeds, in the spec's order (the seeds the archive side reports on)."""
        return [seed for d in self.domains for seed in d.seeds]

    def __deepcopy__(self, memo: dict[int, Any]) -> JobSpec:
        """Itself: a JobSpec is frozen, and Scrapy deep-copies its settings (``NH_JOBSPEC``) for each crawler;
        a broad crawl's 10,000 domains copied for nothing."""
        return self


def _check_section(kind: str, has_section: bool) -> None:
    if kind == "continuous" and not has_section:
        raise _fail("continuous", "a continuous job needs its continuous section")
    if kind != "continuous" and has_section:
        raise _fail("continuous", f"only a continuous job has a continuous section (this one is {kind})")


@dataclass(frozen=True)
class JobRef:
    """A job message by reference (issue 15, "dispatch by reference"): the job's id and where its frozen
    JobSpec is read (``spec_url``, the orchestrator's ``GET /api/v1/jobs/<id>/spec``), not 10,000
    domains of JSON through the broker. The harvester reads the spec when it takes the job
    (:mod:`harvester.specfetch`); the spec it reads must carry the same ``job_id``."""

    job_id: int
    spec_url: str
    version: int = JOBSPEC_VERSION

    @classmethod
    def from_dict(cls, data: Any) -> JobRef:
        data = _object(data, "JobRef")
        ref = cls(
            job_id=_get(data, "job_id", int, ""),
            spec_url=_get(data, "spec_url", str, ""),
            version=_get(data, "version", int, ""),
        )
        _check_jobspec_version(ref.version)
        if not ref.spec_url.startswith(("http://", "https://")):
            raise _fail("spec_url", f"expected an http(s) URL, got {ref.spec_url[:80]!r}")
        return ref

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def is_job_ref(data: Any) -> bool:
    """Whether a ``run_job`` argument is a :class:`JobRef` (it names ``spec_url``) rather than a JobSpec."""
    return isinstance(data, dict) and "spec_url" in data


def _dict(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(path, f"expected an object, got {type(value).__name__}")
    return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, DomainRows):
        return [_jsonable(row) for row in value.rows]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


@dataclass(frozen=True)
class DomainResult:
    name: str
    configuration: str
    objects: int
    bytes: int
    stop_reason: str

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: str) -> DomainResult:
        result = cls(
            name=_get(data, "name", str, path),
            configuration=_get(data, "configuration", str, path),
            objects=_get(data, "objects", int, path),
            bytes=_get(data, "bytes", int, path),
            stop_reason=_get(data, "stop_reason", str, path),
        )
        _one_of(result.stop_reason, HARVESTER_STOP_REASONS, f"{path}.stop_reason")
        if result.objects < 0 or result.bytes < 0:
            raise _fail(path, "objects and bytes must not be negative")
        return result


@dataclass(frozen=True)
class FileResult:
    """One file the job produced, as the indexer chain will ingest it."""

    name: str
    path: str
    size: int
    sha256: str
    kind: str = "warc"

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: str) -> FileResult:
        result = cls(
            name=_get(data, "name", str, path),
            path=_get(data, "path", str, path),
            size=_get(data, "size", int, path),
            sha256=_get(data, "sha256", str, path),
            kind=_get(data, "kind", str, path, "warc"),
        )
        _one_of(result.kind, FILE_KINDS, f"{path}.kind")
        if not re.fullmatch(r"[0-9a-f]{64}", result.sha256):
            raise _fail(f"{path}.sha256", "must be 64 lowercase hex digits")
        if "/" in result.name or result.size < 0:
            raise _fail(path, "name must be a bare file name and size not negative")
        return result


@dataclass(frozen=True)
class CrawlFigures:
    """The job's tallies the QA statistics need, as data (issue 16): what its mimetype-report.txt and
    responsecode-report.txt say in text, for people and other tools. Both come from the same functions
    (:func:`harvester.reports.mime_figures`, :func:`harvester.reports.status_figures`), so they agree.

    ``mime_types``: MIME type → ``[URIs, bytes]`` (content size) of the fetches; ``status_codes``: status
    (a string, as JSON keys are) → fetched URIs, positive codes only."""

    mime_types: dict[str, list[int]] = field(default_factory=dict)
    status_codes: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: str = "figures") -> CrawlFigures:
        mimes = _get(data, "mime_types", dict, path, {})
        codes = _get(data, "status_codes", dict, path, {})
        for mime, pair in mimes.items():
            if not (isinstance(pair, list) and len(pair) == 2 and all(_count(n) for n in pair)):
                raise _fail(f"{path}.mime_types[{mime!r}]", "expected [URIs, bytes], two counts")
        for code, n in codes.items():
            if not (code.isdigit() and _count(n)):
                raise _fail(f"{path}.status_codes[{code!r}]", "expected a positive status and a count")
        return cls(mime_types={k: list(v) for k, v in mimes.items()}, status_codes=dict(codes))


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


@dataclass(frozen=True)
class JobResult:
    """What a harvester reports once, when a job ends (well or badly)."""

    job_id: int
    status: str
    started: str | None
    ended: str
    domains: tuple[DomainResult, ...] = ()
    files: tuple[FileResult, ...] = ()
    error_category: str = ""
    error_detail: str = ""
    harvester: str = ""
    stats: dict[str, Any] = field(default_factory=dict)
    #: The QA figures as data (:class:`CrawlFigures`). None: not sent, by a failed crawl or a harvester of
    #: before issue 16 (an optional field, so JobResult stays version 1 both ways: an older orchestrator
    #: ignores it, and this one reads such a job's figures from its text reports).
    figures: CrawlFigures | None = None
    version: int = JOBRESULT_VERSION

    @classmethod
    def from_dict(cls, data: Any) -> JobResult:
        data = _object(data, "JobResult")
        version = _get(data, "version", int, "")
        if version != JOBRESULT_VERSION:
            raise _fail("version", f"unsupported JobResult version {version}")
        status = _get(data, "status", str, "")
        _one_of(status, RESULT_STATUSES, "status")
        domains = _get(data, "domains", list, "", [])
        files = _get(data, "files", list, "", [])
        figures = _get(data, "figures", (dict, type(None)), "", None)
        return cls(
            job_id=_get(data, "job_id", int, ""),
            status=status,
            started=_get(data, "started", (str, type(None)), "", None),
            ended=_get(data, "ended", str, ""),
            domains=tuple(
                DomainResult.from_dict(_dict(d, f"domains[{i}]"), f"domains[{i}]") for i, d in enumerate(domains)
            ),
            files=tuple(FileResult.from_dict(_dict(f, f"files[{i}]"), f"files[{i}]") for i, f in enumerate(files)),
            error_category=_get(data, "error_category", str, "", ""),
            error_detail=_get(data, "error_detail", str, "", ""),
            harvester=_get(data, "harvester", str, "", ""),
            stats=_get(data, "stats", dict, "", {}),
            figures=None if figures is None else CrawlFigures.from_dict(figures),
            version=version,
        )

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(asdict(self))


@dataclass(frozen=True)
class Progress:
    """A running job's heartbeat, every few seconds (also the liveness signal the reaper watches)."""

    job_id: int
    at: str
    uris_done: int = 0
    uris_queued: int = 0
    uris_failed: int = 0
    bytes: int = 0
    uri_rate: float = 0.0
    avg_uri_rate: float = 0.0
    kb_rate: float = 0.0
    avg_kb_rate: float = 0.0
    queues_active: int = 0
    queues_snoozed: int = 0
    queues_exhausted: int = 0
    paused: bool = False
    domains: dict[str, dict[str, int]] = field(default_factory=dict)
    alerts: tuple[str, ...] = ()
    #: Continuous jobs only (None otherwise): ``budget_per_s``, ``fetch_rate`` (fetches/s over the last
    #: 60 s), cumulative ``visits``, ``changed``, ``unchanged``, ``not_modified``, ``header_skipped``,
    #: ``errors``, ``validator_misses``, ``warcs_closed``; ``queues`` {ready, snoozed, busy, empty};
    #: ``hosts`` (≤ 50) {host, state, uris, next_at}; ``due_next`` (≤ 20) {uri, at, wait_s, visits,
    #: versions}; ``freshness`` (0..1 or None).
    continuous: dict[str, Any] | None = None

    @classmethod
    def from_dict(cls, data: Any) -> Progress:
        data = _object(data, "Progress")
        known = {f for f in cls.__dataclass_fields__}
        values = {k: v for k, v in data.items() if k in known}
        _get(data, "job_id", int, "")
        _get(data, "at", str, "")
        values["alerts"] = tuple(values.get("alerts", ()))
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(asdict(self))


@dataclass(frozen=True)
class Control:
    """An instruction to a running job: stop, pause, resume, or add a crawler-trap regex."""

    job_id: int
    action: str
    argument: str = ""
    id: int = 0  # the orchestrator's JobControl row, so a harvester can acknowledge it exactly once

    @classmethod
    def from_dict(cls, data: Any) -> Control:
        data = _object(data, "Control")
        control = cls(
            job_id=_get(data, "job_id", int, ""),
            action=_get(data, "action", str, ""),
            argument=_get(data, "argument", str, "", ""),
            id=_get(data, "id", int, "", 0),
        )
        _one_of(control.action, CONTROL_ACTIONS, "action")
        if control.action == "add_trap":
            validate_regex(control.argument, "argument")
        if control.action == "seeds":
            seed_changes(control.argument)
        return control

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def seed_changes(argument: str, path: str = "argument") -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ``(add, remove)`` seed lists of a ``seeds`` Control's JSON argument, each seed validated."""
    try:
        data = json.loads(argument or "{}")
    except ValueError as exc:
        raise _fail(path, f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise _fail(path, 'expected an object {"add": [...], "remove": [...]}')
    unknown = set(data) - {"add", "remove"}
    if unknown:
        raise _fail(path, f"unknown key(s): {', '.join(sorted(unknown))}")
    out = []
    for key in ("add", "remove"):
        seeds = _get(data, key, list, path, [])
        out.append(
            tuple(validate_seed(_str(s, f"{path}.{key}[{i}]"), f"{path}.{key}[{i}]") for i, s in enumerate(seeds))
        )
    return out[0], out[1]


# Where the messages travel: Celery task names and queues that both sides address by name only,
# so the harvester never imports the orchestrator and the orchestrator never imports Scrapy.
RUN_JOB_TASK = "harvester.run_job"
STARTED_TASK = "orchestrator.record_started"
PROGRESS_TASK = "orchestrator.record_progress"
RESULT_TASK = "orchestrator.record_result"
#: ``(job_id, control_id, applied_at)``: the crawl applied Control ``control_id`` (its JobControl row).
CONTROL_APPLIED_TASK = "orchestrator.record_control_applied"
#: ``(job_id, [FileResult dict, …])``: a continuous job closed these WARCs while it runs (intake
#: registers them and starts the indexer chain, idempotent by file name).
RECORD_FILES_TASK = "orchestrator.record_files"
EVENTS_QUEUE = "events"


def harvest_queue(channel: str) -> str:
    """The Celery queue of a harvest channel (ARCHITECTURE.md: ``harvest.<channel>``)."""
    return f"harvest.{channel}"


def control_queue(job_id: int) -> str:
    """The per-job queue a running job polls for Control messages."""
    return f"control.job-{job_id}"
