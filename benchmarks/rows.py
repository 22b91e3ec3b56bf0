"""Benchmark rows, set-based, with column lists taken from the real models: the fixture builder every
benchmark that seeds millions of rows uses.

A benchmark needs millions of rows in seconds, so it seeds with ``INSERT … SELECT`` over
``generate_series`` or a join, not row by row. Writing those statements with hand-made column lists
is what made them rot: a migration that adds a NOT NULL column (``Job.rejected_by``, three
``ArchiveFile`` columns) broke every benchmark that had not been told. Here the benchmark names only
the fields it cares about, by model field name, as SQL expressions; every other column comes from the
model as it is today, as ``Model()`` would fill it: its default (rendered by the field itself), an
empty string for a blank text field, ``now()`` for ``auto_now`` fields, NULL where the field allows
it. A field the model requires and the benchmark does not give is an error naming it, before any SQL
runs. Domains themselves come in through the product's own
``orchestrator.harvest.curation.domains.create_domains``; small sets of rows through the ORM.
"""

from __future__ import annotations

import time
from typing import Any

from django.db import connection, models


def insert_select(
    model: type[models.Model],
    values: dict[str, str],
    source: str,
    params: list[Any] | None = None,
    label: str | None = None,
) -> int:
    """``INSERT INTO <model's table> (every column) SELECT … <source>``; returns the number of rows.

    ``values`` maps field names (``harvest`` or ``harvest_id`` for a foreign key, ``objects_count``
    for a column named ``objects``) to SQL expressions over ``source`` (a ``FROM …`` clause; its ``%s``
    placeholders take ``params``; a literal ``%`` is written ``%%`` throughout). The expressions hold no
    placeholders: numbers go in as literals. The primary key is left to its sequence unless ``values``
    gives it. Prints the row count and time when ``label`` is given.
    """
    placeheld = [name for name, expression in values.items() if "%s" in expression]
    if placeheld:
        raise ValueError(f"placeholders are for the source only, not for {', '.join(placeheld)}")
    by_name = {}
    for field in model._meta.concrete_fields:
        by_name[field.name] = by_name[field.attname] = field
    unknown = set(values) - set(by_name)
    if unknown:
        raise ValueError(f"{model.__name__} has no field {', '.join(sorted(unknown))}")
    given = {by_name[name].column: expression for name, expression in values.items()}
    columns, expressions = [], []
    for field in model._meta.concrete_fields:
        if field.column in given:
            expression = given[field.column]
        elif field.primary_key:
            continue
        elif getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            expression = "now()"
        elif field.has_default() or (field.blank and field.empty_strings_allowed and not field.null):
            expression = literal(field.get_db_prep_save(field.get_default(), connection))
        elif field.null:
            expression = "NULL"
        else:
            raise ValueError(
                f"{model.__name__}.{field.name} is required and has no default: the benchmark must give it"
            )
        columns.append(connection.ops.quote_name(field.column))
        expressions.append(expression)
    sql = (
        f"INSERT INTO {connection.ops.quote_name(model._meta.db_table)} ({', '.join(columns)}) "
        f"SELECT {', '.join(expressions)} {source}"
    )
    started = time.monotonic()
    with connection.cursor() as cur:
        cur.execute(sql, params or [])
        count = cur.rowcount
    if label:
        print(f"  {label}: {count:,} rows in {time.monotonic() - started:.1f} s", flush=True)
    return count


def literal(value: Any) -> str:
    """``value`` as an SQL literal, quoted by the database driver (a default is a constant: putting it in
    the statement keeps the caller's placeholders the only ones); ``%`` doubled for the parameter pass."""
    with connection.cursor() as cur:
        text = cur.mogrify("%s", [value])
    return (text.decode() if isinstance(text, bytes) else text).replace("%", "%%")


def execute(sql: str, params: list[Any] | None = None, label: str | None = None) -> int:
    """One statement that changes rows the benchmark made (an UPDATE of a few named fields, an index);
    returns the row count and prints it with the time when ``label`` is given."""
    started = time.monotonic()
    with connection.cursor() as cur:
        cur.execute(sql, params or [])
        count = cur.rowcount
    if label:
        rows = f"{count:,} rows" if count >= 0 else "done"
        print(f"  {label}: {rows} in {time.monotonic() - started:.1f} s", flush=True)
    return count
