"""Job generation: one run of a harvest definition → Job rows with frozen JobSpecs and JobDomain rows.

Set-based, for broad crawls of millions of domains (NetarchiveSuite loads every domain as an object
and sorts only within 10,000-configuration chunks;
its users report job generation as a broad-crawl pain point). Here the database does the heavy
lifting in a handful of statements whatever the size:

1. one ``CREATE TEMP TABLE … AS SELECT`` picks the run's configurations (selective: the definition's;
   snapshot: every eligible default configuration; continuation: those the previous snapshot did not
   finish) with their per-domain budgets and what their JobSpec entries need of them;
2. one query, streamed through a server-side cursor, computes each one's expected size from its harvest
   history, groups them by compatible crawl settings (template + budgets), numbers them into chunks
   of at most ``NETHARVEST_MAX_CONFIGS_PER_JOB`` in order of expected size (so domains of similar size share
   a job), and brings their seed lists, in job order: one sort;
3. as each job's rows go by, its Job row is inserted, its JobSpec built (one job's domains in memory at a
   time) and handed to a :class:`JobWriter`, which stores the spec and the job's JobDomain rows while the
   next spec is built (on PostgreSQL a thread on the same connection: the two cores work at once).

The caller holds the transaction (the scheduler claims the run in it): a crash half-way leaves nothing.
The estimator and the continuation rules are documented in docs/JOBGEN.md.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from harvester.contracts import ContinuousSpec, CrawlSettings, DomainRows, JobSpec, validate_regex
from orchestrator.harvest.chain import storage
from orchestrator.harvest.curation import validators
from orchestrator.harvest.curation.domains import skip_fk_triggers_if_allowed
from orchestrator.harvest.jobs import specs
from orchestrator.harvest.models import CrawlTemplate, GlobalCrawlerTrapList, HarvestDefinition, Job

log = logging.getLogger(__name__)

#: NetarchiveSuite's defaults when a configuration has no history.
DEFAULT_BYTES_PER_OBJECT = 38_000
DEFAULT_OBJECTS = 5_000
#: A run stopped short (a limit, the time limit, a crash) saw only part of the site: expect it to be
#: at least this many times what that run saw.
STOPPED_RUN_FACTOR = 2

#: Stop reasons of the previous snapshot that a continuation always carries on (NetarchiveSuite).
CONTINUED_REASONS = ("OBJECT_LIMIT", "SIZE_LIMIT", "TIME_LIMIT")


#: HarvestInfo rows of patch crawls (orchestrator/harvest/jobs/patch.py) say nothing of a site's size or whether a
#: snapshot finished it: the estimator and continuation leave them out.
NOT_PATCH = "job_id NOT IN (SELECT id FROM harvest_job WHERE patches_id IS NOT NULL)"


#: What the JobSpec needs of a configuration and its domain, carried from the candidates to the spec stream
#: (two joins fewer over a million rows there). An empty trap list is NULL: nothing to parse.
CARRIED = "d.name AS domain_name, c.name AS config_name, NULLIF(d.crawler_traps, '') AS traps"
CARRIED_COLS = "domain_name, config_name, traps"

#: PostgreSQL's sort memory for one generation's transaction (see generate_jobs).
WORK_MEM = "400MB"


class GenerationError(Exception):
    """A definition that cannot be turned into jobs; the message says why."""


@dataclass(frozen=True)
class JobPlan:
    """One job before it is written, summed up from its configurations as they stream by: its template (a
    continuous job's is the first template of its configurations), how many configurations, their expected size."""

    template_id: int
    domains: int
    expected_objects: int
    expected_bytes: int


def _min_limit(a: str, b: str) -> str:
    """The smaller of two limits where -1 means unlimited.

    PostgreSQL: LEAST ignores NULLs, so each argument appears once (nested CASEs repeat their
    arguments, and the planner inlines subqueries: three levels made the sort key 27 copies of the
    estimate). SQLite has no LEAST and its min() returns NULL on any NULL: a CASE there.
    """
    if connection.vendor == "postgresql":
        return f"COALESCE(LEAST(NULLIF({a}, -1), NULLIF({b}, -1)), -1)"
    return f"(CASE WHEN {a} = -1 THEN {b} WHEN {b} = -1 THEN {a} WHEN {a} < {b} THEN {a} ELSE {b} END)"


def _max(a: str, b: str) -> str:
    if connection.vendor == "postgresql":
        return f"GREATEST({a}, {b})"
    return f"max({a}, {b})"


def candidates_sql(definition: HarvestDefinition, now: datetime) -> tuple[str, list[Any]]:
    """The run's configurations with their per-domain budgets: columns config_id, template_id,
    max_objects, max_bytes, and the carried columns. Configurations with a zero budget (excluded) are left out;
    those without a seed list are left out by the stream's join with the seed lists (:func:`stream_sql`)."""
    if definition.kind in (HarvestDefinition.SELECTIVE, HarvestDefinition.CONTINUOUS):
        sql = (
            f"SELECT c.id AS config_id, c.template_id, c.max_objects, c.max_bytes, {CARRIED} "
            "FROM harvest_harvestdefinition_configurations hc "
            "JOIN harvest_domainconfiguration c ON c.id = hc.domainconfiguration_id "
            "JOIN harvest_domain d ON d.id = c.domain_id "
            "WHERE hc.harvestdefinition_id = %s AND c.max_objects <> 0 AND c.max_bytes <> 0"
        )
        return sql, [definition.pk]
    if definition.kind != HarvestDefinition.SNAPSHOT:
        raise GenerationError(f"{definition.name} is a {definition.kind} harvest: unknown kind")
    limits = (
        f"{_min_limit(str(int(definition.max_objects)), 'c.max_objects')} AS max_objects, "
        f"{_min_limit(str(int(definition.max_bytes)), 'c.max_bytes')} AS max_bytes"
    )
    params: list[Any] = []
    sql = (
        f"SELECT c.id AS config_id, c.template_id, {limits}, {CARRIED} "
        "FROM harvest_domainconfiguration c JOIN harvest_domain d ON d.id = c.domain_id "
    )
    where = (
        "WHERE c.is_default AND c.max_objects <> 0 AND c.max_bytes <> 0 "
        "AND (d.alias_of_id IS NULL OR (d.alias_expires IS NOT NULL AND d.alias_expires <= %s))"
    )
    where_params: list[Any] = [connection.ops.adapt_datetimefield_value(now)]
    if definition.previous_id:
        # The previous snapshot's last word on each domain (a resubmitted job may have reported twice).
        sql += (
            "JOIN (SELECT domain_id, job_id, configuration_id, stop_reason, "
            'ROW_NUMBER() OVER (PARTITION BY domain_id ORDER BY "date" DESC, id DESC) AS rn '
            f"FROM harvest_harvestinfo WHERE harvest_id = %s AND {NOT_PATCH}) p ON p.domain_id = c.domain_id "
            "AND p.rn = 1 "
            "LEFT JOIN harvest_jobdomain jd ON jd.job_id = p.job_id AND jd.configuration_id = p.configuration_id "
        )
        params.append(definition.previous_id)
        reasons = ", ".join(f"'{r}'" for r in CONTINUED_REASONS)
        where += (
            f" AND (p.stop_reason IN ({reasons})"
            " OR (p.stop_reason = 'CONFIG_OBJECT_LIMIT' AND (c.max_objects = -1 OR c.max_objects > jd.max_objects))"
            " OR (p.stop_reason = 'CONFIG_SIZE_LIMIT' AND (c.max_bytes = -1 OR c.max_bytes > jd.max_bytes)))"
        )
    return sql + where, params + where_params


def estimate_sql(cand: str) -> str:
    """Each candidate of table ``cand`` with its expected objects and bytes (docs/JOBGEN.md, "Expected size").

    One pass over the candidates' HarvestInfo rows: pooled bytes per object, the latest run's count
    and stop reason, the best count ever.
    """
    h = (
        "SELECT configuration_id AS cid, CAST(SUM(objects) AS BIGINT) AS sum_objects, "
        "CAST(SUM(bytes) AS BIGINT) AS sum_bytes, "
        "MAX(objects) AS best_objects, MAX(CASE WHEN rn = 1 THEN objects END) AS last_objects, "
        "MAX(CASE WHEN rn = 1 THEN stop_reason END) AS last_reason "
        "FROM (SELECT configuration_id, objects, bytes, stop_reason, ROW_NUMBER() OVER "
        '(PARTITION BY configuration_id ORDER BY "date" DESC, id DESC) AS rn FROM harvest_harvestinfo '
        f"WHERE configuration_id IN (SELECT config_id FROM {cand}) AND {NOT_PATCH}) hi GROUP BY configuration_id"
    )
    bpo = (
        f"(CASE WHEN h.sum_objects > 0 AND h.sum_bytes > 0 THEN h.sum_bytes / h.sum_objects "
        f"ELSE {DEFAULT_BYTES_PER_OBJECT} END)"
    )
    raw = (
        f"(CASE WHEN h.cid IS NULL THEN {DEFAULT_OBJECTS} "
        f"WHEN h.last_reason = 'DOWNLOAD_COMPLETE' THEN h.last_objects "
        f"ELSE {_max(f'{STOPPED_RUN_FACTOR} * h.last_objects', 'h.best_objects')} END)"
    )
    first = (
        f"SELECT cand.config_id, cand.template_id, cand.max_objects, cand.max_bytes, {CARRIED_COLS}, "
        f"{bpo} AS bpo, {raw} AS raw "
        f"FROM {cand} cand LEFT JOIN ({h}) h ON h.cid = cand.config_id"
    )
    by_bytes = "(CASE WHEN e.max_bytes = -1 THEN -1 ELSE e.max_bytes / e.bpo END)"
    objects = _min_limit(_min_limit("e.raw", "e.max_objects"), by_bytes)
    return (
        f"SELECT x.*, {_min_limit('x.expected_objects * x.bpo', 'x.max_bytes')} AS expected_bytes FROM ("
        f"SELECT e.config_id, e.template_id, e.max_objects, e.max_bytes, {CARRIED_COLS}, e.bpo, "
        f"{objects} AS expected_objects "
        f"FROM ({first}) e) x"
    )


def stream_sql(definition: HarvestDefinition, size: int) -> str:
    """Every candidate of ``jobgen_cand`` with its job's (group, chunk), its expected size, what its JobSpec
    entry needs and its seed lists (one row per list), in the order the jobs are made: by group (template +
    budgets), biggest first, a configuration's seed lists together and in their order. A configuration
    without a seed list has no row (the inner join), so it is in no job.

    One sort serves both window functions and the ORDER BY (the group's rank sorts on a prefix of the
    chunk's numbering, which the ORDER BY extends by the seed list only: an incremental sort within each
    configuration). The chunk is a *dense* rank of (expected bytes, configuration) so that a configuration's
    several seed-list rows count once. Joining the seed lists here, not in the candidates, keeps their text
    out of the temporary table.
    """
    group = "e.template_id, e.max_objects, e.max_bytes"
    order = f"{group}, "
    if definition.kind == HarvestDefinition.CONTINUOUS:
        # One long-lived job per continuous definition (ARCHITECTURE.md): every configuration in it, under
        # the template of the first; budgets do not apply (a URI is visited again and again for ever).
        group, order, size = "1", "", 1 << 62
    return (
        f"SELECT DENSE_RANK() OVER (ORDER BY {group}) AS grp, "
        f"(DENSE_RANK() OVER (PARTITION BY {group} ORDER BY e.expected_bytes DESC, e.config_id) - 1) / {int(size)} "
        "AS chunk, e.template_id, e.expected_objects, e.expected_bytes, e.config_id, e.domain_name, e.config_name, "
        "e.traps, e.max_objects, e.max_bytes, s.seeds "
        f"FROM ({estimate_sql('jobgen_cand')}) e "
        "JOIN harvest_domainconfiguration_seedlists cs ON cs.configuration_id = e.config_id "
        "JOIN harvest_seedlist s ON s.id = cs.seedlist_id "
        f"ORDER BY {order}e.expected_bytes DESC, e.config_id, s.id"
    )


def generate_jobs(
    definition: HarvestDefinition, run: int, now: datetime | None = None, max_configs: int | None = None
) -> list[int]:
    """Write the jobs of run ``run`` of ``definition``; returns their ids (all NEW), biggest first.

    Everything in one transaction (joining the caller's): the jobs of a run exist completely or not at all.
    """
    now = now or timezone.now()
    size = max_configs or settings.NETHARVEST_MAX_CONFIGS_PER_JOB
    if size < 1:
        raise GenerationError("NETHARVEST_MAX_CONFIGS_PER_JOB must be at least 1")
    candidates, params = candidates_sql(definition, now)
    made: list[Job] = []
    with transaction.atomic(), connection.cursor() as cur:
        if connection.vendor == "postgresql":
            # The stream's sort over a million rows with their names and seeds stays in memory (the default
            # 4 MB spills to disk; docs/BENCHMARKS.md, "Job generation"). This transaction only.
            # JIT compiling the estimator's expressions cost 7 s of a 20 s statement and saved nothing.
            # A cursor is planned for its first 10 % by default (fast-start plans); the stream reads it all.
            cur.execute(f"SET LOCAL work_mem = '{WORK_MEM}'")
            cur.execute("SET LOCAL jit = off")
            cur.execute("SET LOCAL cursor_tuple_fraction = 1.0")
        cur.execute("DROP TABLE IF EXISTS jobgen_cand")
        # Materialised and analysed, so the planner knows how many candidates there are (a CTE it
        # guesses at one row, and then re-aggregates the history once per candidate).
        cur.execute(
            f"CREATE TEMP TABLE jobgen_cand AS SELECT * FROM ({candidates}) c "
            "WHERE c.max_objects <> 0 AND c.max_bytes <> 0",
            params,
        )
        cur.execute("ANALYZE jobgen_cand")
        with _without_fk_checks(cur), JobWriter() as writer:
            freezer = SpecFreezer(definition, run, writer)
            for plan, domains in freezer.stream(stream_sql(definition, size)):
                job = Job.objects.create(
                    harvest=definition,
                    harvest_run=run,
                    channel_id=definition.channel_id,
                    spec={},
                    domain_count=plan.domains,
                    expected_objects=plan.expected_objects,
                    expected_bytes=plan.expected_bytes,
                    created=now,
                )
                if freezer.freeze(job, plan, domains) is not None:
                    made.append(job)
        cur.execute("DROP TABLE jobgen_cand")
    if not made:
        log.warning("%s run %d: no domain configuration to harvest", definition.name, run)
        return []
    log.info(
        "%s run %d: %d jobs, %d domain configurations",
        definition.name,
        run,
        len(made),
        sum(j.domain_count for j in made),
    )
    return [j.pk for j in made]


def continuous_section(definition: HarvestDefinition) -> dict[str, Any]:
    """The JobSpec's ``continuous`` section from the definition (harvester.contracts.ContinuousSpec)."""
    return {
        "revisit": dict(definition.revisit_settings or {}),
        "budget_per_s": definition.fetch_budget_per_s,
        "warc_rotate_s": int(definition.warc_rotate_s),
        "pinned": {},
        "max_uris_per_host": int(definition.max_uris_per_host),
        "robots_validity_s": int(definition.robots_validity_s),
        "dns_ttl_s": int(definition.dns_ttl_s),
    }


@contextmanager
def _without_fk_checks(cur: Any) -> Iterator[None]:
    """Foreign-key triggers skipped for the JobDomain rows, which are valid by construction (jobs made in this
    transaction, configurations read in it and never deleted), where the role allows it. On an error the
    transaction (or the savepoint of generate_jobs) is rolled back, and the setting with it."""
    skipped = connection.vendor == "postgresql" and skip_fk_triggers_if_allowed(cur)
    yield
    if skipped:
        cur.execute("SET LOCAL session_replication_role = origin")


class JobWriter:
    """Stores each job's spec and JobDomain rows while the stream goes on to the next job.

    On PostgreSQL in a thread of its own, on the same connection and so in the same transaction (psycopg2
    connections are thread-safe and serialise their statements; it releases the GIL while the server
    works): Zstandard compressing one job's 2.5 MB spec, PostgreSQL storing it and inserting its 10,000 JobDomain rows
    overlaps Python building the next job's spec, on the machine's other core. The rows go in as three
    arrays, with the spec, in one statement string (psycopg2's ``COPY`` lets another thread's statement in
    between its own steps). Elsewhere (SQLite) each write is done at once.

    At most one write is pending: its job's spec is the only other one in memory. Leaving the ``with``
    waits for it; a failed write is raised there (before the caller's own error, which it likely caused:
    a statement after a failed one finds the transaction aborted).
    """

    #: A job's rows share its group's budget, but for a continuous job's (each configuration's own). In order of
    #: configuration: ``jobdomain_unique`` is (configuration, job), so its B-tree is then walked in order.
    ROWS = (
        "INSERT INTO harvest_jobdomain (job_id, configuration_id, max_objects, max_bytes) "
        "SELECT %s, c, {objects}, {bytes} FROM unnest(%s::bigint[]{arrays}) AS t(c{names}) ORDER BY c; "
    )
    INSERT = "INSERT INTO harvest_jobdomain (job_id, configuration_id, max_objects, max_bytes) VALUES (%s, %s, %s, %s)"

    def __init__(self) -> None:
        self.pending: Future[None] | None = None
        threaded = connection.vendor == "postgresql"
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="jobgen-writer") if threaded else None

    def __enter__(self) -> JobWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.wait()
        finally:
            if self.pool is not None:
                self.pool.shutdown()

    def wait(self) -> None:
        pending, self.pending = self.pending, None
        if pending is not None:
            pending.result()

    def write(self, job_id: int, spec: bytes, config_ids: list[int], objects: list[int], size: list[int]) -> None:
        """Store ``spec`` (JSON bytes; compressed here, see :func:`specs.stored_form`) as job ``job_id``'s, and its
        JobDomain rows (configuration, max objects, max bytes: three columns), now or in the writer thread."""
        if self.pool is None:
            with connection.cursor() as cur:
                cur.executemany(self.INSERT, [(job_id, *row) for row in zip(config_ids, objects, size, strict=True)])
                cur.execute(specs.STORE, specs.store_params(job_id, spec, len(config_ids)))
            return
        self.wait()
        raw = connection.connection  # the psycopg2 connection of this thread's Django connection

        def store() -> None:
            # One statement string, so it runs under the connection's lock as a whole. Arrays in text form:
            # str() of a list is the cheapest way from Python ints to PostgreSQL's array input (psycopg2 adapts
            # a list one int at a time); a budget shared by every row goes once.
            params: list[Any] = [job_id, _array(config_ids)]
            if objects.count(objects[0]) == len(objects) and size.count(size[0]) == len(size):
                sql = self.ROWS.format(objects="%s", bytes="%s", arrays="", names="")
                params[1:1] = [objects[0], size[0]]
            else:
                sql = self.ROWS.format(objects="o", bytes="b", arrays=", %s::bigint[], %s::bigint[]", names=", o, b")
                params += [_array(objects), _array(size)]
            stored = specs.store_params(job_id, spec, len(config_ids))  # Zstandard releases the GIL meanwhile
            with raw.cursor() as cur:
                cur.execute(sql + specs.STORE, [*params, *stored])

        self.pending = self.pool.submit(store)


def _array(values: list[int]) -> str:
    """PostgreSQL's text form of an array of integers (it allows the spaces of Python's list form)."""
    return "{" + str(values)[1:-1] + "}"


class SpecFreezer:
    """Builds and stores each job's JobSpec from its JobDomain rows: the job's frozen copy of seeds,
    budgets and traps, so a later edit of a domain or template never changes a job already made."""

    def __init__(self, definition: HarvestDefinition, run: int, writer: JobWriter) -> None:
        self.definition = definition
        self.writer = writer
        self.run = run
        self.templates = {t.pk: t for t in CrawlTemplate.objects.all()}
        self.global_traps = tuple(
            dict.fromkeys(GlobalCrawlerTrapList.active_traps() + validators.regex_lines(definition.crawler_traps))
        )
        # Checked once per run, not once per job: 120,000 global traps re-checked for each job made
        # generation take tens of seconds.
        for k, trap in enumerate(self.global_traps):
            validate_regex(trap, f"global_traps[{k}]")
        self.dedup_index = storage.dedup_location()  # the one the indexer chain feeds
        self._settings: dict[int, CrawlSettings] = {}
        self.continuous = (
            ContinuousSpec.from_dict(continuous_section(definition))
            if definition.kind == HarvestDefinition.CONTINUOUS
            else None
        )

    def stream(self, query: str) -> Iterator[tuple[JobPlan, list[dict[str, Any]]]]:
        """Every job of the run with its domains as JobSpec entries, one job at a time, from ``query``
        (:func:`stream_sql`: rows in job order, with every column a JobSpec entry needs).

        Streamed through a server-side cursor on PostgreSQL. Within a job the domains come biggest first,
        so a harvester starts the long ones early.
        """
        if connection.vendor == "postgresql":  # generate_jobs set work_mem for its sort
            connection.ensure_connection()
            cur = connection.connection.cursor(name="jobgen_stream")
            cur.itersize = 20_000  # 50 round trips for a million rows
        else:
            cur = connection.connection.cursor()
        try:
            cur.execute(query)
            key, domains, current_id, seeds_of = None, [], None, []
            template, objects, size = 0, 0, 0  # the job's so far
            active_seeds, regex_lines = validators.active_seeds, validators.regex_lines
            for (
                grp,
                chunk,
                template_id,
                objects_of,
                bytes_of,
                config_id,
                domain,
                config,
                traps,
                max_objects,
                max_bytes,
                seeds,
            ) in cur:
                if config_id == current_id:  # a further seed list of the same configuration
                    seeds_of.extend(s for s in dict.fromkeys(active_seeds(seeds or "")) if s not in seeds_of)
                    continue
                if (grp, chunk) != key:
                    if key is not None:
                        yield JobPlan(template, len(domains), objects, size), domains
                    key, domains, template, objects, size = (grp, chunk), [], template_id, 0, 0
                objects += objects_of
                size += bytes_of
                if template_id < template:
                    template = template_id
                current_id = config_id
                # dict.fromkeys: a seed listed twice is kept once, in the order of its first line
                seeds_of = list(dict.fromkeys(active_seeds(seeds))) if seeds else []
                domains.append(
                    {
                        "name": domain,
                        "configuration": config,
                        "seeds": seeds_of,
                        "max_objects": max_objects,
                        "max_bytes": max_bytes,
                        "traps": regex_lines(traps) if traps else [],
                        "config_id": config_id,
                    }
                )
            if key is not None:
                yield JobPlan(template, len(domains), objects, size), domains
        finally:
            cur.close()

    def freeze(self, job: Job, plan: JobPlan, entries: list[dict[str, Any]]) -> JobSpec | None:
        """Store the job's spec and its JobDomain rows (through :attr:`writer`); None (and the job removed) if
        none of its domains has a seed left."""
        domains, config_ids, objects, size, seedless = [], [], [], [], 0  # the job's entries and JobDomain rows
        for entry in entries:
            config_id = entry.pop("config_id")
            if entry["seeds"]:
                domains.append(entry)
                config_ids.append(config_id)
                objects.append(entry["max_objects"])
                size.append(entry["max_bytes"])
            else:
                seedless += 1
        if seedless:  # every seed line commented out: nothing to start from
            log.warning("job %s: %d configuration(s) without an active seed left out", job.pk, seedless)
        if not domains:
            Job.objects.filter(pk=job.pk).delete()
            return None
        spec = self.job_spec(job.pk, plan.template_id, domains)
        self.writer.write(job.pk, specs.dumps(spec), config_ids, objects, size)
        job.domain_count = len(domains)  # the spec itself is not kept: a run holds one job's spec at a time
        return spec

    def job_spec(self, job_id: int, template_id: int, domains: list[dict[str, Any]]) -> JobSpec:
        """The job's typed JobSpec, checked whole: its frame by :meth:`JobSpec.check`, the template's settings
        and the continuous section by their own contracts (once per run, in ``__init__``), and each domain
        by what made its row — seeds validated when stored, budgets by the table's CHECK, every trap
        compiled here (first, so a refusal names the domain). The domains stay the rows :meth:`stream`
        built, in their JSON form (:class:`~harvester.contracts.DomainRows`): re-validating four million
        seeds was a third of a broad crawl's generation, and one object per domain another 15-25 %."""
        definition = self.definition
        for i, entry in enumerate(domains):
            for k, trap in enumerate(entry["traps"]):
                validate_regex(trap, f"domains[{i}].traps[{k}] (domain {entry['name']})")
        if self.continuous is not None:
            for entry in domains:  # a continuous job revisits for ever: no object or byte budget stops it
                entry["max_objects"] = entry["max_bytes"] = -1
        return JobSpec(
            job_id=job_id,
            harvest_id=definition.pk,
            harvest_name=definition.name,
            harvest_run=self.run,
            kind=definition.kind,
            channel=definition.channel.name,
            template=self.templates[template_id].name,
            settings=self.settings(template_id),
            domains=DomainRows(domains),
            global_traps=self.global_traps,
            dedup_index=self.dedup_index,
            time_limit_s=definition.max_job_running_time_s if definition.kind == definition.SNAPSHOT else 0,
            continuous=self.continuous,
        ).check()

    def settings(self, template_id: int) -> CrawlSettings:
        """A template's settings, read (and checked by the contract) once per run, not once per job."""
        if template_id not in self._settings:
            self._settings[template_id] = self.templates[template_id].crawl_settings()
        return self._settings[template_id]
