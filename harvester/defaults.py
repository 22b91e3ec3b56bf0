"""The one source of crawl defaults, in the manner of Scrapy's ``default_settings``.

The orchestrator's CrawlTemplate model takes its field defaults from here, and a JobSpec that omits a
setting gets the value below, so a template, a trial crawl and a scheduled job always agree. Values
follow Heritrix's defaults where Heritrix has one (politeness, retries, hops), as NetarchiveSuite's
templates do.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

#: Scope rules a template may choose. ``surt``: the SURT prefixes implied by the seeds (Heritrix
#: glossary); ``host``: the seeds' hosts; ``domain``: the seeds' registrable domains and their
#: subdomains; ``path``: the seeds' host and directory prefix.
SCOPE_RULES = ("surt", "host", "domain", "path")
ROBOTS_POLICIES = ("obey", "ignore")
POLITENESS_SCOPES = ("host", "domain")


@dataclass(frozen=True)
class CrawlDefaults:
    """Every crawl template setting, typed, with its default: the one declaration.

    :class:`harvester.contracts.CrawlSettings` is this class with its checks, and :data:`CRAWL_DEFAULTS` its
    values by name (for the CrawlTemplate model's field defaults and the JobSpec reader)."""

    scope: str = "domain"
    max_hops: int = 20  # Heritrix TooManyHopsDecideRule default
    max_embed_hops: int = 2  # Heritrix TransclusionDecideRule maxTransHops default
    robots: str = "obey"
    politeness_scope: str = "host"
    delay_factor: float = 5.0  # Heritrix DispositionProcessor defaults
    min_delay_ms: int = 3000
    max_delay_ms: int = 30000
    host_valence: int = 1
    # robots.txt Crawl-delay honoured up to this many seconds (0: ignored): Heritrix's
    # DispositionProcessor respectCrawlDelayUpToSeconds default.
    respect_crawl_delay_up_to_s: int = 300
    max_retries: int = 30
    retry_delay_s: int = 900
    connect_timeout_s: int = 20
    read_timeout_s: int = 60
    max_document_bytes: int = 100 * 1024 * 1024
    warc_max_bytes: int = 1024 * 1024 * 1024  # 1 GB as the glossary counts it
    dedup: bool = True
    extract_javascript: bool = True
    # Heritrix's default canonicalisation never reorders a query (a server may answer ?b=2&a=1 and
    # ?a=1&b=2 differently); a template may ask for the two to count as one URI.
    canonicalize_query_order: bool = False
    # Heritrix's sourceTagSeeds: crawl.log's source field names the seed each URI descends from.
    source_tag_seeds: bool = False
    user_agent: str = "Mozilla/5.0 (compatible; netharvest/0.1; +{operator_contact})"
    operator_contact: str = "http://localhost/netharvest-crawler"


#: The defaults by name, in declaration order.
CRAWL_DEFAULTS: dict[str, object] = asdict(CrawlDefaults())

#: How often a running job reports progress, in seconds.
PROGRESS_INTERVAL_S = 5.0

#: A crawl child whose ``alive`` file has not been touched for this many seconds is stalled (its reactor
#: stuck: a timer in it touches the file every second, through checkpoints, pauses and idle waits alike).
#: The worker kills it and starts it again from its checkpoint (once in CHILD_RESTART_WINDOW_S); a second
#: stall fails the job (``crawl-process-stalled``), so a hostile page or a bug never holds a worker and a job
#: in limbo.
#: ``NETHARVEST_CHILD_STALL_S`` overrides it on a worker.
CHILD_STALL_S = 600.0

#: The restarts of a crawl child (after a stall, or a kill by a signal nobody in the worker sent: the kernel's
#: OOM killer, an operator's kill -9) are counted within this many seconds: one restart in any such window,
#: and the next stall or kill within it fails the job, since what ended it would most likely end it again. A
#: continuous crawl runs for months: two kills a week apart are two accidents, not a crash loop, and must not
#: stop it until a curator resubmits it. ``NETHARVEST_CHILD_RESTART_WINDOW_S`` overrides it on a worker.
CHILD_RESTART_WINDOW_S = 3600.0

#: How many URIs one crawl process fetches at once, across all its queues (Heritrix's toe threads;
#: a queue never gets more than its host valence). Not a template setting: it is the machine's.
CRAWL_CONCURRENCY = 32

#: How long a DNS answer (or a failed lookup) stays valid before ``dns:HOST`` is fetched again, in
#: seconds. The system resolver (getaddrinfo) does not return the record's TTL, so this is used for
#: every answer: Heritrix's FetchDNS ``ipValidityDurationSeconds`` default (6 h). Scrapy setting
#: ``NH_DNS_TTL_S`` overrides it for a crawl process (a continuous JobSpec's ``continuous.dns_ttl_s``).
DNS_TTL_S = 21600

#: How long a host's robots.txt (or the finding that it could not be fetched at all, -61) stays valid before
#: it is fetched again, in seconds: Heritrix's ``robotsValidityDurationSeconds`` default (1 day). A crawl that
#: runs for weeks (a broad crawl, a continuous one) obeys the rules a site has now, and a host whose robots.txt
#: did not answer is tried again instead of being shut out for the rest of the crawl. A continuous JobSpec's
#: ``continuous.robots_validity_s`` (accelerated time) and the Scrapy setting ``NH_ROBOTS_VALIDITY_S`` override it.
ROBOTS_VALIDITY_S = 86400

#: When a harvester loses the broker, it tries again after 0.5 s, doubling up to this many seconds, for
#: as long as it takes; the crawl goes on meanwhile and its messages wait in the job's outbox. The
#: orchestrator's reaper counts on it (NETHARVEST_HEARTBEAT_TIMEOUT_S > NETHARVEST_BLIND_GAP_S + this +
#: PROGRESS_INTERVAL_S; docs/DESIGN.md, "Reliability: broker outages, fencing, dead workers").
BROKER_RETRY_MAX_S = 5.0

#: With harvester-side delivery, the worker looks for the chain's receipts this often (seconds) even when
#: it runs no job, so an idle harvester frees its spool too (harvester.delivery.start_sweeper).
RECEIPT_SWEEP_S = 600.0

#: A continuous job closes its current WARC at least this often (seconds), so a crawl that never ends
#: hands its files to the indexer chain while it runs (JobSpec ``continuous.warc_rotate_s``; the
#: harvest definition's ``warc_rotate_s`` default).
WARC_ROTATE_S = 900

#: A continuous job follows at most this many URIs of one host (its queue): every URI it holds is revisited
#: for ever and kept in memory, so a site that makes up new links on every visit (a calendar, session ids in
#: URLs) would otherwise grow the job until it runs out of memory. Links found beyond it are logged ``-5003``
#: (``Q:maxUrisPerHost``) and the job raises an alert; seeds are always taken. A continuous JobSpec's
#: ``continuous.max_uris_per_host`` overrides it.
CONTINUOUS_MAX_URIS_PER_HOST = 100_000

#: The most a body is decompressed to for link extraction (a gzip bomb stops there): Scrapy's
#: ``DOWNLOAD_MAXSIZE`` for ``Content-Encoding`` (harvester/crawlsettings.py), and the bound of a
#: gzipped sitemap's decompression (harvester/links.py).
MAX_DECODED_BYTES = 100 * 1024 * 1024


#: netharvest's own Scrapy settings, each declared once with its default (as Scrapy's
#: default_settings.py): harvester/crawlsettings.py writes them for a crawl from its JobSpec; a
#: component read outside one (a plain Scrapy run, a test's settings) gets these through
#: :func:`nh_setting`, never a fallback of its own (issue 16: fetch.py's -1 had drifted from 100 MiB).
NH_SETTINGS: dict[str, bool | int | float] = {
    "NH_MAX_DOCUMENT_BYTES": CrawlDefaults.max_document_bytes,
    "NH_CONNECT_TIMEOUT": CrawlDefaults.connect_timeout_s,
    "NH_WARC_MAX_BYTES": CrawlDefaults.warc_max_bytes,
    "NH_WARC_COMPRESSLEVEL": 6,  # gzip's default: a WARC's size for its CPU time
    "NH_WARC_ROTATE_S": 0,  # 0: no time-based rotation (a continuous job's JobSpec sets it)
    "NH_DNS_TTL_S": DNS_TTL_S,
    "NH_ROBOTS_VALIDITY_S": ROBOTS_VALIDITY_S,
    "NH_KEEPALIVE_IDLE_S": 4.0,  # 0: keep-alive off; below common servers' 5 s idle timeout
    "NH_KEEPALIVE_MAX_IDLE": 256,  # idle connections kept across all hosts
    "NH_SPOOL_MEMORY_BYTES": 1024 * 1024,  # a body beyond this spools to disk while it arrives
}


def nh_setting(settings: Any, name: str) -> Any:
    """The netharvest setting ``name`` from Scrapy ``settings``, typed and defaulted as declared in
    :data:`NH_SETTINGS`."""
    default = NH_SETTINGS[name]
    getter = {bool: settings.getbool, int: settings.getint, float: settings.getfloat}[type(default)]
    return getter(name, default)


def decoded_limit(max_document_bytes: int) -> int:
    """The decompression bound of a job: its document limit, never unlimited, at most
    :data:`MAX_DECODED_BYTES`."""
    return MAX_DECODED_BYTES if max_document_bytes < 0 else min(max_document_bytes, MAX_DECODED_BYTES)


#: A job message by reference (harvester.contracts.JobRef): the harvester reads the job's JobSpec from the
#: orchestrator's API, trying this many times (1, 2, 4, 8, 16, then 30 s apart: ~1.5 minutes, enough for the
#: web service's restart) when the orchestrator does not answer or answers 5xx, each try waiting at most
#: SPEC_FETCH_TIMEOUT_S; then the job is FAILED (``jobspec-unreadable``) and may be resubmitted. A 4xx answer
#: (no such job, a bad token) fails at once.
SPEC_FETCH_TRIES = 8
SPEC_FETCH_TIMEOUT_S = 60.0
