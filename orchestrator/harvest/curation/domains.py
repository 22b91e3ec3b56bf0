"""Creating domains in bulk, each with its default seed list and default configuration.

One path for every way a domain comes in (the admin, ``import-domains``, the preload, pasted seeds),
and set-based: each batch is four INSERT … SELECT statements over a JSON array of names, whatever
its size, so a million domains load in seconds rather than a million round trips.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from orchestrator.harvest.models import CrawlTemplate, DomainConfiguration

DEFAULT_SEEDLIST = "defaultseeds"


def default_seeds(name: str) -> list[str]:
    """http/https × with/without www, as a curator would try them (an IP address has no www host;
    an IPv6 address goes in brackets)."""
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return [f"{scheme}://{prefix}{name}/" for scheme in ("http", "https") for prefix in ("", "www.")]
    host = f"[{address}]" if address.version == 6 else str(address)
    return [f"{scheme}://{host}/" for scheme in ("http", "https")]


def default_template() -> CrawlTemplate:
    try:
        return CrawlTemplate.objects.get(name=settings.NETHARVEST_DEFAULT_TEMPLATE)
    except CrawlTemplate.DoesNotExist:
        raise CrawlTemplate.DoesNotExist(
            f"the default crawl template {settings.NETHARVEST_DEFAULT_TEMPLATE!r} does not exist "
            "(run `netharvest migrate`, or set NETHARVEST_DEFAULT_TEMPLATE to an existing template)"
        ) from None


def _records(param: str, columns: dict[str, str]) -> str:
    """A table expression over a JSON array of objects, one row per object with typed ``columns``.

    Feeding every statement its rows directly (never ``id IN (…)`` against the domain table) keeps
    each batch's cost independent of how many millions of domains already exist.
    """
    if connection.vendor == "postgresql":
        cols = ", ".join(f"{name} {kind}" for name, kind in columns.items())
        return f"json_to_recordset({param}::json) AS j({cols})"
    cols = ", ".join(f"json_extract(value, '$.{name}') AS {name}" for name in columns)
    return f"(SELECT {cols} FROM json_each({param})) AS j"


@dataclass
class CreateResult:
    created: list[str]
    existing: int


def create_domains(names: Iterable[str], template: CrawlTemplate | None = None) -> CreateResult:
    """Create the domains of ``names`` (already validated and normalised) that do not exist yet.

    Existing names are skipped, so re-running an import or racing another one never duplicates a
    domain (ON CONFLICT DO NOTHING). Runs in one transaction: a batch is all in or all out.
    """
    names = list(dict.fromkeys(names))
    if not names:
        return CreateResult([], 0)
    template = template or default_template()
    now = timezone.now()
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute(
            f"INSERT INTO harvest_domain (name, comments, crawler_traps, extended, created) "
            f"SELECT j.name, '', '', '{{}}', %s FROM {_records('%s', {'name': 'text'})} WHERE true "
            f"ON CONFLICT (name) DO NOTHING RETURNING id, name",
            [connection.ops.adapt_datetimefield_value(now), json.dumps([{"name": n} for n in names])],
        )
        domains = cur.fetchall()
        if not domains:
            return CreateResult([], len(names))
        seedlists = json.dumps([{"id": pk, "seeds": "\n".join(default_seeds(name))} for pk, name in domains])
        cur.execute(
            f"INSERT INTO harvest_seedlist (domain_id, name, seeds, comments) "
            f"SELECT j.id, %s, j.seeds, '' FROM {_records('%s', {'id': 'bigint', 'seeds': 'text'})} "
            f"RETURNING domain_id, id",
            [DEFAULT_SEEDLIST, seedlists],
        )
        seedlist_of = dict(cur.fetchall())
        cur.execute(
            f"INSERT INTO harvest_domainconfiguration "
            f"(domain_id, name, template_id, max_objects, max_bytes, is_default, comments) "
            f"SELECT j.id, %s, %s, -1, -1, %s, '' FROM {_records('%s', {'id': 'bigint'})} "
            f"RETURNING domain_id, id",
            [DomainConfiguration.DEFAULT_NAME, template.pk, True, json.dumps([{"id": pk} for pk, _ in domains])],
        )
        pairs = json.dumps([{"c": config, "s": seedlist_of[domain]} for domain, config in cur.fetchall()])
        cur.execute(
            f"INSERT INTO harvest_domainconfiguration_seedlists (configuration_id, seedlist_id) "
            f"SELECT j.c, j.s FROM {_records('%s', {'c': 'bigint', 's': 'bigint'})}",
            [pairs],
        )
    return CreateResult([name for _, name in domains], len(names) - len(domains))


def batched(items: Iterable[str], size: int) -> Iterator[list[str]]:
    batch: list[str] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def skip_fk_triggers_if_allowed(cur: Any) -> bool:
    """For the rest of this transaction, skip PostgreSQL's per-row foreign-key triggers, as
    ``pg_restore --disable-triggers`` does, when the role may (``session_replication_role`` needs a
    superuser); returns whether they are skipped. Only for batches whose references are valid by
    construction (ids the same transaction just got back or read): the triggers are over half of a
    bulk insert's cost (docs/DESIGN.md)."""
    cur.execute("SAVEPOINT nh_replica")
    try:
        cur.execute("SET LOCAL session_replication_role = replica")
    except DatabaseError:
        cur.execute("ROLLBACK TO SAVEPOINT nh_replica")
        return False
    cur.execute("RELEASE SAVEPOINT nh_replica")
    return True
