"""Finding domains among millions: by name with ``*``/``?`` wildcards, or in crawler traps and comments.

Pages are keyset pages (``name > last name seen``, ordered by name), never OFFSET and never COUNT(*):
each page costs the same whether it is the first or the ten-thousandth and whatever the table's size.
On PostgreSQL, migration 0001_squashed_0017 (was 0003_webui) adds the indexes this relies on:
``varchar_pattern_ops`` on the name (ordered prefix scans under any collation) and pg_trgm GIN indexes (on
the name, and partial ones on the few non-empty trap and comment texts) for infix patterns.
On SQLite the same queries run, by scan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import OperationalError, connection, transaction

from orchestrator.harvest.models import Domain

FIELDS = ("name", "crawler_traps", "comments")
#: How many names in index order a name search looks through before asking the indexes instead.
WINDOW = 10_000
#: The longest a search may run (PostgreSQL) before the curator is asked to narrow it.
TIMEOUT_MS = 10_000


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
            names = _window_search(query.lower(), after, limit)
            if names is not None:
                rows = list(qs.filter(name__in=names).order_by("name"))
                return DomainPage(rows[:limit], rows[limit - 1].name if len(rows) > limit else None)
            qs = qs.extra(where=["harvest_domain.name LIKE %s ESCAPE '\\'"], params=[like_pattern(query.lower())])
        else:
            op = "ILIKE" if connection.vendor == "postgresql" else "LIKE"  # SQLite's LIKE ignores ASCII case
            needle = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            # The literal ``<> ''`` lets PostgreSQL use the partial trigram index on the few non-empty texts.
            qs = qs.extra(
                where=[f"harvest_domain.{field} <> '' AND harvest_domain.{field} {op} %s ESCAPE '\\'"], params=[needle]
            )
    if after:
        qs = qs.filter(name__gt=after)
    rows = _bounded(qs.order_by("name")[: limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    return DomainPage(rows, rows[-1].name if more and rows else None)


class SearchTooBroad(Exception):
    """The search would read most of the table; the message says how to narrow it."""


def _bounded(qs: object) -> list[Domain]:
    """Run ``qs`` under a statement timeout on PostgreSQL, so one broad pattern cannot hold a web
    worker for minutes: past TIMEOUT_MS the curator is told to narrow the pattern instead."""
    if connection.vendor != "postgresql":
        return list(qs)
    try:
        with transaction.atomic(), connection.cursor() as cur:
            cur.execute(f"SET LOCAL statement_timeout = {int(TIMEOUT_MS)}")
            return list(qs)
    except OperationalError as exc:
        if "statement timeout" not in str(exc):
            raise
        raise SearchTooBroad(
            f"this search reads too much of the domain table to answer within "
            f"{TIMEOUT_MS / 1000:g} s: put more letters before the first wildcard, "
            "or at least three letters in a row between wildcards"
        ) from None


def _window_search(query: str, after: str, limit: int) -> list[str] | None:
    """The first ``limit + 1`` matching names, looked for among the next WINDOW names in index order
    (from the query's literal prefix on), or None when that window cannot tell.

    An ordered scan of the unique index finds the matches of a common pattern (``ab``, ``?b*.se``) in
    a few milliseconds, where the planner, misjudging how many rows match, would fetch and sort tens
    of thousands; a rare pattern (``*zzz*``) fills the window without enough matches and falls back
    to the indexed query (trigram or prefix index), which is fast exactly when matches are rare.
    Both are exact: the window is the consecutive run of names at or after the bound, and every match
    sorts at or after its own literal prefix.
    """
    prefix = re.split(r"[*?]", query, maxsplit=1)[0]
    window = "SELECT name FROM harvest_domain WHERE name > %s AND name >= %s ORDER BY name"
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT name FROM ({window} LIMIT %s) w WHERE name LIKE %s ESCAPE '\\' ORDER BY name LIMIT %s",
            [after, prefix, WINDOW, like_pattern(query), limit + 1],
        )
        names = [row[0] for row in cur.fetchall()]
        if len(names) > limit:
            return names
        cur.execute(f"{window} LIMIT 1 OFFSET %s", [after, prefix, WINDOW - 1])
        return None if cur.fetchone() else names  # a full window may have more matches beyond it


def estimated_count() -> int:
    """The number of domains as the planner's statistics have it (exact on SQLite, which is small)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute("SELECT reltuples::bigint FROM pg_class WHERE relname = 'harvest_domain'")
            row = cur.fetchone()
        if row and row[0] >= 0:
            return int(row[0])
    return Domain.objects.count()
