"""Job generation: one run of a harvest definition → Job rows with frozen JobSpecs and JobDomain rows.

Set-based, for broad crawls of millions of domains (NetarchiveSuite loads every domain as an object
and sorts only within 10,000-configuration chunks; its users report job generation as a broad-crawl
pain point). Here the database does the heavy lifting in a handful of statements whatever the size:

1. one ``CREATE TEMP TABLE … AS SELECT`` picks the run's configurations (selective: the definition's;
   snapshot: every eligible default configuration; continuation: those the previous snapshot did not
   finish), computes each one's budget and expected size from its harvest history, groups them by
   compatible crawl settings (template + budgets) and numbers them into chunks of at most
   ``NETHARVEST_MAX_CONFIGS_PER_JOB`` in order of expected size, so domains of similar size share a job;
2. one ``INSERT`` per job (a few hundred rows at most) and one ``INSERT … SELECT`` for all JobDomain rows;
3. one query, streamed through a server-side cursor, builds every job's JobSpec in turn (one job's
   domains in memory at a time).

The caller holds the transaction (the scheduler claims the run in it): a crash half-way leaves nothing.
The estimator and the continuation rules are documented in docs/JOBGEN.md.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
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
    """One job before it is written: its group's settings and budget, and its size."""

    grp: int
    chunk: int
    template_id: int
    max_objects: int
    max_bytes: int
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
    max_objects, max_bytes. Configurations with a zero budget (excluded) or no seed list are left out."""
    has_seeds = "EXISTS (SELECT 1 FROM harvest_domainconfiguration_seedlists cs WHERE cs.configuration_id = c.id)"
    if definition.kind in (HarvestDefinition.SELECTIVE, HarvestDefinition.CONTINUOUS):
        sql = (
            f"SELECT c.id AS config_id, c.template_id, c.max_objects, c.max_bytes, {CARRIED} "
            "FROM harvest_harvestdefinition_configurations hc "
            "JOIN harvest_domainconfiguration c ON c.id = hc.domainconfiguration_id "
            "JOIN harvest_domain d ON d.id = c.domain_id "
            f"WHERE hc.harvestdefinition_id = %s AND c.max_objects <> 0 AND c.max_bytes <> 0 AND {has_seeds}"
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
        "AND (d.alias_of_id IS NULL OR (d.alias_expires IS NOT NULL AND d.alias_expires <= %s)) "
        f"AND {has_seeds}"
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
    group = "template_id, max_objects, max_bytes"
    plan_cols = group
    if definition.kind == HarvestDefinition.CONTINUOUS:
        # One long-lived job per continuous definition (ARCHITECTURE.md): every configuration in it, under
        # the template of the first; budgets do not apply (a URI is visited again and again for ever).
        group, plan_cols, size = "1", "MIN(template_id), -1, -1", 1 << 62
    numbered = (
        f"SELECT s.config_id, s.template_id, s.max_objects, s.max_bytes, s.expected_objects, s.expected_bytes, "
        f"{CARRIED_COLS}, "
        f"DENSE_RANK() OVER (ORDER BY {group}) AS grp, "
        f"(ROW_NUMBER() OVER (PARTITION BY {group} ORDER BY s.expected_bytes DESC, s.config_id) - 1) / {int(size)} "
        f"AS chunk FROM ({estimate_sql('jobgen_cand')}) s"
    )
    with transaction.atomic(), connection.cursor() as cur:
        if connection.vendor == "postgresql":
            # Sorts and hash joins over a million rows stay in memory (the default 4 MB spills to disk):
            # the estimator's window sort of a million candidates with their names (~140 MB) and the spec
            # stream's sort with the seeds (~300 MB) went to disk as external merges at 128 MB
            # (docs/BENCHMARKS.md, "Job generation"). This transaction only.
            # JIT compiling the estimator's expressions cost 7 s of a 20 s statement and saved nothing.
            cur.execute(f"SET LOCAL work_mem = '{WORK_MEM}'")
            cur.execute("SET LOCAL jit = off")
        for table in ("jobgen_cand", "jobgen_rows", "jobgen_map"):
            cur.execute(f"DROP TABLE IF EXISTS {table}")
        # Materialised and analysed, so the planner knows how many candidates there are (a CTE it
        # guesses at one row, and then re-aggregates the history once per candidate).
        cur.execute(
            f"CREATE TEMP TABLE jobgen_cand AS SELECT * FROM ({candidates}) c "
            "WHERE c.max_objects <> 0 AND c.max_bytes <> 0",
            params,
        )
        cur.execute("ANALYZE jobgen_cand")
        cur.execute(f"CREATE TEMP TABLE jobgen_rows AS {numbered}")
        cur.execute("ANALYZE jobgen_rows")  # else the spec stream is planned as 300,000 index lookups × 4
        cur.execute("DROP TABLE jobgen_cand")
        grouped = "" if plan_cols != group else f", {group}"
        cur.execute(
            f"SELECT grp, chunk, {plan_cols}, COUNT(*), SUM(expected_objects), SUM(expected_bytes) "
            f"FROM jobgen_rows GROUP BY grp, chunk{grouped} ORDER BY grp, chunk"
        )
        plans = [JobPlan(*row) for row in cur.fetchall()]
        if not plans:
            cur.execute("DROP TABLE jobgen_rows")
            log.warning("%s run %d: no domain configuration to harvest", definition.name, run)
            return []
        jobs = Job.objects.bulk_create(
            [
                Job(
                    harvest=definition,
                    harvest_run=run,
                    channel_id=definition.channel_id,
                    spec={},
                    domain_count=p.domains,
                    expected_objects=p.expected_objects,
                    expected_bytes=p.expected_bytes,
                    created=now,
                )
                for p in plans
            ]
        )
        cur.execute("CREATE TEMP TABLE jobgen_map (grp bigint, chunk bigint, job_id bigint)")
        cur.executemany(
            "INSERT INTO jobgen_map (grp, chunk, job_id) VALUES (%s, %s, %s)",
            [(p.grp, p.chunk, j.pk) for p, j in zip(plans, jobs, strict=True)],
        )
        cur.execute("ANALYZE jobgen_map")
        with _without_fk_checks(cur):
            cur.execute(
                "INSERT INTO harvest_jobdomain (job_id, configuration_id, max_objects, max_bytes) "
                "SELECT m.job_id, r.config_id, r.max_objects, r.max_bytes "
                "FROM jobgen_rows r JOIN jobgen_map m ON m.grp = r.grp AND m.chunk = r.chunk"
            )
        freezer = SpecFreezer(definition, run)
        by_key = {(p.grp, p.chunk): (p, j) for p, j in zip(plans, jobs, strict=True)}
        made = []
        for key, domains in freezer.stream():
            plan, job = by_key.pop(key)
            if freezer.freeze(job, plan, domains) is not None:
                made.append(job)
        for plan, job in by_key.values():  # every configuration of the job had its seeds commented out
            freezer.freeze(job, plan, [])
        cur.execute("DROP TABLE jobgen_rows")
        cur.execute("DROP TABLE jobgen_map")
    made.sort(key=lambda j: j.pk)
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
    }


@contextmanager
def _without_fk_checks(cur: Any) -> Iterator[None]:
    """Foreign-key triggers skipped for one statement whose rows are valid by construction (jobs made in
    this transaction, configurations read in it and never deleted), where the role allows it."""
    skipped = connection.vendor == "postgresql" and skip_fk_triggers_if_allowed(cur)
    try:
        yield
    finally:
        if skipped:
            cur.execute("SET LOCAL session_replication_role = origin")


class SpecFreezer:
    """Builds and stores each job's JobSpec from its JobDomain rows: the job's frozen copy of seeds,
    budgets and traps, so a later edit of a domain or template never changes a job already made."""

    def __init__(self, definition: HarvestDefinition, run: int) -> None:
        self.definition = definition
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

    def stream(self) -> Iterator[tuple[tuple[int, int], list[dict[str, Any]]]]:
        """Every job of the run, named by its (group, chunk), with its domains as JobSpec entries, one job
        at a time (the caller knows each job's id: no join with ``jobgen_map`` over a million rows).

        One query over the run's rows (hash joins, sequential reads: a million index lookups, one per
        domain, cost ten times more), streamed through a server-side cursor on PostgreSQL. Within a
        job the domains come biggest first, so a harvester starts the long ones early.
        """
        query = (
            "SELECT r.grp, r.chunk, r.config_id, r.domain_name, r.config_name, r.traps, r.max_objects, "
            "r.max_bytes, s.seeds FROM jobgen_rows r "
            "JOIN harvest_domainconfiguration_seedlists cs ON cs.configuration_id = r.config_id "
            "JOIN harvest_seedlist s ON s.id = cs.seedlist_id "
            "ORDER BY r.grp, r.chunk, r.expected_bytes DESC, r.config_id, s.id"
        )
        if connection.vendor == "postgresql":  # generate_jobs set work_mem for its sort
            connection.ensure_connection()
            cur = connection.connection.cursor(name="jobgen_stream")
            cur.itersize = 20_000  # 50 round trips for a million rows
        else:
            cur = connection.connection.cursor()
        try:
            cur.execute(query)
            grp, chunk, domains, current_id, seeds_of = None, None, [], None, None
            active_seeds, regex_lines = validators.active_seeds, validators.regex_lines
            for row_grp, row_chunk, config_id, domain, config, traps, max_objects, max_bytes, seeds in cur:
                if config_id == current_id:  # a further seed list of the same configuration
                    seeds_of.extend(s for s in dict.fromkeys(active_seeds(seeds or "")) if s not in seeds_of)
                    continue
                if row_chunk != chunk or row_grp != grp:
                    if grp is not None:
                        yield (grp, chunk), domains
                    grp, chunk, domains = row_grp, row_chunk, []
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
            if grp is not None:
                yield (grp, chunk), domains
        finally:
            cur.close()

    def freeze(self, job: Job, plan: JobPlan, entries: list[dict[str, Any]]) -> JobSpec | None:
        """Store the job's spec; None (and the job removed) if none of its domains has a seed left."""
        domains, seedless = [], []
        for entry in entries:
            config_id = entry.pop("config_id")
            if entry["seeds"]:
                domains.append(entry)
            else:
                seedless.append(config_id)
        if seedless:  # every seed line commented out: nothing to start from
            log.warning("job %s: %d configuration(s) without an active seed left out", job.pk, len(seedless))
            job.domains.filter(configuration_id__in=seedless).delete()
        if not domains:
            job.domains.all().delete()
            Job.objects.filter(pk=job.pk).delete()
            return None
        spec = self.job_spec(job.pk, plan.template_id, domains)
        specs.store(job.pk, spec)
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
