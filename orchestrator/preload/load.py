"""Step 4 of the preload: write the result into the harvest database, set-based, in batches.

New live domains are created through ``create_domains`` (default seeds and configuration, as every
other way in). Each domain the sources gave URLs for gets a seed list named "preload" with them, on
its default configuration, replaced on every preload (this year's sources say what is current).
Existing domains whose DNS lookup failed are kept (domains are never deleted) but their default —
snapshot — configuration's object budget is set to 0, the old budget kept in its comments; a later
preload that finds the domain alive again gives that budget back (shared/seeds/001…, 2.2.4).

Every statement joins a JSON array of names; re-running a batch changes nothing more, so a batch
that was committed but not yet recorded as done before a crash is simply done again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from django.db import connection, transaction

from orchestrator.harvest.curation import attach
from orchestrator.harvest.curation.domains import _records, create_domains, skip_fk_triggers_if_allowed
from orchestrator.harvest.models import CrawlTemplate, Domain, DomainConfiguration

PRELOAD_SEEDLIST = "preload"


def existing_domain_names() -> Iterator[str]:
    """Every domain name in the database, streamed (a server-side cursor on PostgreSQL)."""
    yield from Domain.objects.order_by().values_list("name", flat=True).iterator(chunk_size=20000)


def create_new(names: list[str], template: CrawlTemplate) -> int:
    """Create the domains of ``names`` that do not exist; returns how many were created."""
    return len(create_domains(names, template).created) if names else 0


def set_seeds(seeds: dict[str, list[str]]) -> int:
    """Replace each domain's "preload" seed list with ``seeds[domain]`` and attach it to the domain's
    default configuration (:func:`orchestrator.harvest.curation.attach.replace_default_seeds`). Returns the
    number of seed lists written."""
    return attach.replace_default_seeds(PRELOAD_SEEDLIST, seeds)


def exclude(names: list[str], note: str) -> int:
    """Set the default configuration's object budget to 0 for these domains (those not at 0 already),
    noting the old budget in its comments. Returns how many configurations changed."""
    if not names:
        return 0
    c = "harvest_domainconfiguration"
    with connection.cursor() as cur:
        cur.execute(
            f"UPDATE harvest_domainconfiguration SET max_objects = 0, comments = "
            f"CASE WHEN {c}.comments = '' THEN '' ELSE {c}.comments || %s END || %s || CAST({c}.max_objects AS text) "
            f"FROM {_records('%s', {'name': 'text'})} JOIN harvest_domain d ON d.name = j.name "
            f"WHERE {c}.domain_id = d.id AND {c}.is_default AND {c}.max_objects <> 0",
            ["\n", f"{note}; max_objects was ", json.dumps([{"name": n} for n in names])],
        )
        return cur.rowcount


_EXCLUDED_RE = re.compile(r"DNS lookup failed; max_objects was (-?\d+)$")


def restore(names: list[str], note: str) -> int:
    """Give back their budget to live domains that an earlier preload excluded for a failed DNS lookup
    (only when that exclusion is still the configuration's last word: a budget of 0 an engineer set
    later, with another comment, stays). Returns how many configurations changed."""
    if not names:
        return 0
    with connection.cursor() as cur:  # joined from the batch's names, as every statement here
        cur.execute(
            f"SELECT c.id, c.comments FROM {_records('%s', {'name': 'text'})} "
            f"JOIN harvest_domain d ON d.name = j.name "
            f"JOIN harvest_domainconfiguration c ON c.domain_id = d.id AND c.is_default "
            f"WHERE c.max_objects = 0",
            [json.dumps([{"name": n} for n in names])],
        )
        candidates = cur.fetchall()
    restored = 0
    for pk, comments in candidates:
        match = _EXCLUDED_RE.search(comments.rstrip())
        if match:
            restored += DomainConfiguration.objects.filter(pk=pk, max_objects=0).update(
                max_objects=int(match.group(1)),
                comments=f"{comments.rstrip()}\n{note}; max_objects restored to {match.group(1)}",
            )
    return restored


def write_batch(
    create: list[str],
    seeds: dict[str, list[str]],
    excluded: list[str],
    note: str,
    template: CrawlTemplate,
    live_existing: list[str] | None = None,
) -> dict[str, int]:
    """One batch, all in or all out. Commits need not wait for the disk: a crash loses at most the
    batches not yet recorded as done, and those are redone on the next run. Foreign-key triggers are
    skipped where the role may (every reference is an id the same statements just read), as
    ``import-domains`` does (docs/DESIGN.md, "Creating domains in bulk")."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cur:
                cur.execute("SET LOCAL synchronous_commit = off")
                skip_fk_triggers_if_allowed(cur)
        return {
            "created": create_new(create, template),
            "seedlists": set_seeds(seeds),
            "excluded": exclude(excluded, f"{note}: DNS lookup failed"),
            "restored": restore(live_existing or [], f"{note}: DNS answers again"),
        }
