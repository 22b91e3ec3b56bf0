"""Finding domains among millions: by name with ``*``/``?`` wildcards, or in crawler traps and comments.

Pages are keyset pages (``name > last name seen``, ordered by name), never OFFSET and never COUNT(*):
each page costs the same whether it is the first or the ten-thousandth and whatever the table's size.
On PostgreSQL, migration 0003_webui adds the indexes this relies on: ``varchar_pattern_ops`` on the
name (ordered prefix scans under any collation) and pg_trgm GIN indexes (on the name, and partial ones
on the few non-empty trap and comment texts) for infix patterns. On SQLite the same queries run, by scan.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection

from orchestrator.harvest.models import Domain

FIELDS = ("name", "crawler_traps", "comments")


@dataclass
class DomainPage:
    domains: list[Domain]
    #: The name to continue after for the next page, or None on the last page.
    next_after: str | None


def like_pattern(query: str) -> str:
    """A LIKE pattern (escape ``\\``) for a curator's query: ``*`` any run, ``?`` one character.

    Without wildcards the query is a prefix (``exam`` finds ``example.fr``): the common case, served
    by an ordered index scan.
    """
    escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    pattern = escaped.replace("*", "%").replace("?", "_")
    return pattern if ("*" in query or "?" in query) else pattern + "%"


def search(query: str, field: str = "name", after: str = "", limit: int = 50) -> DomainPage:
    """One page of domains, by name, whose ``field`` matches ``query``.

    ``name``: the wildcard/prefix pattern above, case-insensitive (names are stored lower-case).
    ``crawler_traps``/``comments``: the text appears anywhere in it, any case.
    """
    if field not in FIELDS:
        raise ValueError(f"cannot search domains by {field!r}: choose one of {', '.join(FIELDS)}")
    qs = Domain.objects.only("id", "name", "alias_of_id", "comments", "crawler_traps", "created")
    query = query.strip()
    if query:
        if field == "name":
            if "*" not in query and "?" not in query:
                qs = qs.filter(name__startswith=query.lower())
            else:
                qs = qs.extra(where=["harvest_domain.name LIKE %s ESCAPE '\\'"], params=[like_pattern(query.lower())])
        else:
            op = "ILIKE" if connection.vendor == "postgresql" else "LIKE"  # SQLite's LIKE ignores ASCII case
            needle = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            # The literal ``<> ''`` lets PostgreSQL use the partial trigram index on the few non-empty texts.
            qs = qs.extra(where=[f"harvest_domain.{field} <> '' AND harvest_domain.{field} {op} %s ESCAPE '\\'"],
                          params=[needle])
    if after:
        qs = qs.filter(name__gt=after)
    rows = list(qs.order_by("name")[: limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    return DomainPage(rows, rows[-1].name if more and rows else None)


def estimated_count() -> int:
    """The number of domains as the planner's statistics have it (exact on SQLite, which is small)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute("SELECT reltuples::bigint FROM pg_class WHERE relname = 'harvest_domain'")
            row = cur.fetchone()
        if row and row[0] >= 0:
            return int(row[0])
    return Domain.objects.count()
